"""durable.resume_ready and the Worker, on both stores, against the SDK's MCPServer in process:
claims, outcomes kept, a call the server asks again about, a server of another name, failures
kept or retried, rows that do not read, and a worker woken by an answer recorded elsewhere."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult, TextContent

from servers.counting_server import build_server as counting_server
from servers.durable_server import build_server
from support.stores import Backend, Store
from toolnexus import Answer, durable
from toolnexus.cli._worker import outcome_line
from toolnexus.durable import Event, Pending, ResumeOutcome
from toolnexus.errors import ServerMismatchError
from toolnexus.worker import Worker

pytestmark = pytest.mark.anyio

KEY = os.urandom(32)


@asynccontextmanager
async def connect(server: MCPServer) -> AsyncIterator[Client]:
    async with Client(server, elicitation_callback=durable.park_only) as client:
        yield client


async def park(store: Store, server: MCPServer, count: int, tool: str = "job") -> list[str]:
    keys = []
    async with connect(server) as client:
        for n in range(count):
            outcome = await durable.call_tool_or_park(client, tool, {"n": n})
            assert isinstance(outcome, Pending)
            keys.append(store.put(outcome))
    return keys


def answer(store: Store, key: str, word: str = "go") -> None:
    (request,) = store.get(key).requests
    store.record(key, Answer(request.id, True, {"word": word}))


def text_of(result: object) -> str:
    assert isinstance(result, CallToolResult)
    first = result.content[0]
    assert isinstance(first, TextContent)
    return first.text


async def test_ready_calls_are_resumed_once_and_their_results_kept(backend: Backend, tmp_path: Any) -> None:
    store = backend.open()
    count_file = tmp_path / "count"
    server = counting_server(KEY, str(count_file))
    keys = await park(store, server, 4)
    for key in keys[:3]:
        answer(store, key, f"w{key[:4]}")
    seen: list[ResumeOutcome] = []
    async with connect(server) as client:
        outcomes = await durable.resume_ready(client, store, on_outcome=seen.append)
        assert await durable.resume_ready(client, store) == []  # nothing more is ready
    assert outcomes == seen
    assert [(o.key, o.status, o.attempt) for o in outcomes] == [(key, "done", 1) for key in keys[:3]]
    assert [text_of(o.result) for o in outcomes] == [f"job {n}: w{keys[n][:4]}" for n in range(3)]
    assert sorted(count_file.read_text().split("\n")[:-1]) == sorted(
        f"{n} {os.getppid()} w{keys[n][:4]}" for n in range(3)
    )
    for n, key in enumerate(keys[:3]):
        call = store.call(key)
        assert call.status == "done"
        assert call.result is not None
        assert call.result["content"][0]["text"] == f"job {n}: w{key[:4]}"
    assert store.call(keys[3]).status == "waiting"
    assert outcome_line(outcomes[0]) == f"{keys[0]}  tool job  done"


async def test_limit_resumes_at_most_that_many(backend: Backend) -> None:
    store = backend.open()
    server = counting_server(KEY, None)
    keys = await park(store, server, 3)
    for key in keys:
        answer(store, key)
    async with connect(server) as client:
        first = await durable.resume_ready(client, store, limit=2)
        rest = await durable.resume_ready(client, store, limit=2)
    assert [o.key for o in first] == keys[:2]
    assert [o.key for o in rest] == keys[2:]


async def test_a_call_the_server_asks_again_about_is_done_pointing_at_the_new_one(backend: Backend) -> None:
    store = backend.open()
    server, _ = build_server(KEY)
    async with connect(server) as client:
        outcome = await durable.call_tool_or_park(client, "two_rounds", {})
    assert isinstance(outcome, Pending)
    key = store.put(outcome)
    store.record(key, Answer(outcome.requests[0].id, True, {"name": "Ada"}))
    async with connect(server) as client:
        (first,) = await durable.resume_ready(client, store)
        assert (first.status, first.result) == ("done", None)
        assert first.next is not None
        assert "asks again, parked as " + first.next in outcome_line(first)
        new = store.call(first.next)
        assert (new.status, new.follows) == ("waiting", key)
        assert store.call(key).next == first.next
        assert new.pending is not None
        store.record(first.next, Answer(new.pending.requests[0].id, True, {"go": True}))
        (second,) = await durable.resume_ready(client, store)
    assert (second.key, second.status, second.next) == (first.next, "done", None)
    assert "Ada" in text_of(second.result)


async def test_another_servers_calls_are_left_and_a_rename_needs_saying(backend: Backend) -> None:
    store = backend.open()
    original = counting_server(KEY, None, name="counter")
    renamed = counting_server(KEY, None, name="counter-v2")
    (key,) = await park(store, original, 1)
    answer(store, key)
    pending = store.get(key)
    async with connect(renamed) as client:
        assert await durable.resume_ready(client, store) == []  # not this server's
        with pytest.raises(ServerMismatchError, match=r"'counter'.*'counter-v2'.*nothing was sent"):
            await durable.resume(client, pending, store.answers(key))
        assert store.call(key).status == "ready"  # the record kept
        (outcome,) = await durable.resume_ready(client, store, server="counter")  # the override
    # Sent this time: an SDK server binds its requestState to its name (the audience), so this
    # one refuses it; a server renamed with its state's audience kept would have run it.
    assert outcome.status == "failed"
    assert outcome.error is not None
    assert "requestState" in outcome.error


async def test_a_refused_resume_is_failed_with_the_error_or_retried(backend: Backend) -> None:
    store = backend.open()
    (key,) = await park(store, counting_server(KEY, None), 1)
    answer(store, key)
    stranger = counting_server(os.urandom(32), None)  # same name, another key: the state is refused
    async with connect(stranger) as client:
        first, second = await durable.resume_ready(client, store, retries=1)  # tried again at once
        assert await durable.resume_ready(client, store, retries=1) == []
    assert (first.status, first.attempt) == ("retry", 1)
    assert (second.status, second.attempt) == ("failed", 2)
    assert second.error is not None
    assert "requestState" in second.error
    call = store.call(key)
    assert (call.status, call.error) == ("failed", second.error)
    assert outcome_line(second).startswith(f"{key}  tool job  failed: ")


async def test_a_row_that_does_not_read_fails_and_the_others_are_resumed(backend: Backend) -> None:
    store = backend.open()
    server = counting_server(KEY, None)
    keys = await park(store, server, 3)
    for key in keys:
        answer(store, key)
    backend.sql(
        'UPDATE toolnexus_call SET pending = \'{"format": "toolnexus.pending", "ver\' WHERE key = ?',
        'UPDATE toolnexus_call SET pending = \'{"format": "toolnexus.pending", "ver\' WHERE key = %s',
        (keys[1],),
    )
    async with connect(server) as client:
        outcomes = await durable.resume_ready(client, store)
    assert [(o.key, o.status) for o in outcomes] == [(keys[0], "done"), (keys[2], "done")]
    bad = store.call(keys[1])
    assert bad.status == "failed"
    assert bad.error is not None
    assert "not JSON" in bad.error


async def test_a_worker_drains_with_once_and_tells_its_hook(backend: Backend) -> None:
    store = backend.open()
    server = counting_server(KEY, None)
    keys = await park(store, server, 3)
    for key in keys:
        answer(store, key)
    events: list[Event] = []
    lines: list[str] = []
    worker = Worker(
        store, server, lease=10, on_event=events.append, on_outcome=lambda o: lines.append(outcome_line(o))
    )
    assert await worker.run(once=True) == 3
    assert lines == [f"{key}  tool job  done" for key in keys]
    assert [(e.kind, e.key, e.status) for e in events] == [("finished", key, "done") for key in keys]


async def test_a_waiting_worker_is_woken_by_an_answer_recorded_by_another_store_object(
    backend: Backend,
) -> None:
    store = backend.open()
    server = counting_server(KEY, None)
    (key,) = await park(store, server, 1)
    done: list[tuple[ResumeOutcome, float]] = []
    worker = Worker(
        backend.open(), server, lease=10, idle=30, on_outcome=lambda o: done.append((o, time.monotonic()))
    )
    answered_at: list[float] = []

    def answer_later() -> None:
        time.sleep(0.5)
        answered_at.append(time.monotonic())
        answer(backend.open(), key)

    async with anyio.create_task_group() as group:
        group.start_soon(worker.run)
        thread = threading.Thread(target=answer_later)
        thread.start()
        with anyio.fail_after(20):
            while not done:
                await anyio.sleep(0.02)
        worker.stop()
        group.cancel_scope.cancel()
    thread.join()
    ((outcome, at),) = done
    assert (outcome.key, outcome.status) == (key, "done")
    # Woken by the answer (a watcher's wake-up: a 50 ms poll, or NOTIFY), long before the
    # 30 s idle; a second allows for a loaded machine.
    assert at - answered_at[0] < 1.0, at - answered_at[0]


async def test_a_stopped_worker_ends_soon_though_it_waits_a_long_idle(backend: Backend) -> None:
    """A store's ``wait`` runs in a thread that cancelling cannot interrupt: the worker
    waits in short slices, so ``stop()`` ends an idle worker long before ``idle`` runs out."""
    worker = Worker(backend.open(), counting_server(KEY, None), lease=10, idle=120)
    ended: list[int] = []

    async def run() -> None:
        ended.append(await worker.run())

    async with anyio.create_task_group() as group:
        group.start_soon(run)
        await anyio.sleep(1)  # connected, nothing ready: the worker waits on the store
        worker.stop()
        with anyio.fail_after(10):  # loose: far below the 120 s idle
            while not ended:
                await anyio.sleep(0.02)
    assert ended == [0]


async def test_a_first_connection_slower_than_connect_timeout_raises_timeout_error(backend: Backend) -> None:
    @asynccontextmanager
    async def never() -> AsyncIterator[Client]:
        await anyio.sleep_forever()
        yield  # type: ignore[misc]  # never reached

    worker = Worker(backend.open(), connect=never, connect_timeout=0.3)
    with anyio.fail_after(30), pytest.raises(TimeoutError, match=r"no answer within 0\.3 s"):
        await worker.run()
    with pytest.raises(ValueError, match="connect_timeout"):
        Worker(backend.open(), connect=never, connect_timeout=0)


async def test_a_cancelled_resume_key_gives_the_call_back_without_holding_the_loop(tmp_path: Any) -> None:
    """Cancelled while the tool works (the host's timeout, a lost connection), ``resume_key``
    gives the call back. Another process holds the file's write lock meanwhile: the release
    waits for it in a worker thread, and the event loop keeps running (it ran on the loop,
    up to SQLite's busy timeout)."""
    import sqlite3

    path = tmp_path / "p.db"
    store = durable.SqliteStore(path, timeout=10)
    server = counting_server(KEY, None, delay=1.0)
    (key,) = await park(store, server, 1)
    answer(store, key)
    blocker = sqlite3.connect(path, isolation_level=None, check_same_thread=False)

    def hold_the_write_lock() -> None:
        blocker.execute("BEGIN IMMEDIATE")
        time.sleep(1.5)
        blocker.execute("COMMIT")

    gaps: list[float] = []

    async def tick() -> None:
        last = time.monotonic()
        while True:
            await anyio.sleep(0.01)
            now = time.monotonic()
            gaps.append(now - last)
            last = now

    holder = threading.Timer(0.3, hold_the_write_lock)
    async with anyio.create_task_group() as group:
        group.start_soon(tick)
        async with connect(server) as client:
            holder.start()
            with anyio.move_on_after(0.6) as scope:  # while the tool body works
                await durable.resume_key(client, store, key, lease=30)
            assert scope.cancelled_caught
        group.cancel_scope.cancel()
    holder.join()
    blocker.close()
    assert store.call(key).status == "ready"  # given back, once the lock was free
    assert max(gaps) < 0.5, max(gaps)  # the loop never waited for the lock
    store.close()


def test_a_worker_refuses_a_lease_or_an_idle_that_is_not_seconds(tmp_path: Any) -> None:
    store = durable.SqliteStore(tmp_path / "p.db")
    server = counting_server(KEY, None)
    for options, error, message in (
        ({"lease": 0}, ValueError, "lease"),
        ({"lease": "60"}, TypeError, "lease"),
        ({"idle": -1}, ValueError, "Worker: idle"),
        ({"idle": float("nan")}, ValueError, "Worker: idle"),
    ):
        with pytest.raises(error, match=message):
            Worker(store, server, **options)
    store.close()
