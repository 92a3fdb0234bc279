"""Parked tasks (the tasks extension, MCP 2026-07-28): a call the server makes a task is kept
in the store by its id, a worker polls it, its questions wait in the store as any parked
question does, their answers go back with ``tasks/update``, and its end is recorded.

Against the tasks server of tests/servers/tasks_server.py, in process (a worker's
subprocesses, kills and a real peer are in test_tasks_parked_e2e.py)."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.server.mcpserver import MCPServer

from servers.tasks_server import TasksServer, build_server
from toolnexus import Answer, durable
from toolnexus.durable import Call, Pending, ResumeOutcome
from toolnexus.tasks import TasksExtension
from toolnexus.worker import Worker

pytestmark = pytest.mark.anyio

ENDS = ("done", "failed", "cancelled", "expired")


@pytest.fixture
def served() -> tuple[MCPServer, TasksServer]:
    return build_server()


@pytest.fixture
def store(tmp_path: Path) -> Iterator[durable.Store]:
    with durable.open_store(tmp_path / "calls.db") as opened:
        yield opened


def client(server: MCPServer, *, tasks: bool = True) -> Client:
    return Client(
        server, elicitation_callback=durable.park_only, extensions=[TasksExtension()] if tasks else []
    )


async def park(server: MCPServer, store: durable.Store, tool: str, **arguments: Any) -> str:
    async with client(server) as connected:
        parked = await durable.call_tool_or_park(connected, tool, arguments)
    assert isinstance(parked, Pending), parked
    assert parked.task is not None
    return store.put(parked)


@asynccontextmanager
async def working(
    server: MCPServer, store: durable.Store, *, tasks: bool = True
) -> AsyncIterator[list[ResumeOutcome]]:
    """A worker on ``store`` for the test's length; the outcomes it reported."""
    outcomes: list[ResumeOutcome] = []
    worker = Worker(store, connect=lambda: client(server, tasks=tasks), idle=0.2, on_outcome=outcomes.append)
    async with anyio.create_task_group() as group:
        group.start_soon(worker.run)
        try:
            yield outcomes
        finally:
            worker.stop()


async def until(store: durable.Store, key: str, *statuses: str) -> Call:
    with anyio.fail_after(30):
        while (call := store.call(key)).status not in statuses:
            await anyio.sleep(0.02)
    return call


async def answer_each(store: durable.Store, key: str, value: Callable[[str], Any]) -> Call:
    """Answer every question of the task under ``key`` as it comes (its form's one field:
    ``value(field)``), until it ends."""
    while (call := await until(store, key, "waiting", *ENDS)).status == "waiting":
        assert call.pending is not None
        for request in call.pending.requests:
            assert request.data is not None
            (field,) = request.data["schema"]["properties"]
            store.record(key, Answer(request.id, True, {field: value(field)}))
    return call


def text_of(call: Call) -> str:
    assert call.result is not None, call
    return str(call.result["content"][0]["text"])


def journal(tasks: TasksServer, call: Call) -> dict[str, Any]:
    assert call.pending is not None
    assert call.pending.task is not None
    entry: dict[str, Any] = tasks.journal()[call.pending.task.id]
    return entry


async def test_a_parked_task_waits_in_the_store_its_questions_answered_later(
    served: tuple[MCPServer, TasksServer], store: durable.Store
) -> None:
    server, tasks = served
    key = await park(server, store, "twice", item="x")
    parked = store.call(key)
    assert parked.status == "working"
    assert parked.pending is not None
    assert parked.pending.task is not None
    assert parked.pending.task.expires_at is not None  # the task's time to live, 60 s
    async with working(server, store) as outcomes:
        first = await until(store, key, "waiting")
        assert first.pending is not None
        assert (first.pending.input_keys, first.pending.requests[0].prompt) == (("first",), "First?")
        assert first.pending.requests[0].expiresAt == parked.pending.task.expires_at
        store.record(key, Answer(first.pending.requests[0].id, True, {"first": "one"}))
        second = await until(store, key, "waiting", "done")
        assert second.pending is not None
        assert second.pending.input_keys == ("second",)
        store.record(key, Answer(second.pending.requests[0].id, True, {"second": "two"}))
        done = await until(store, key, *ENDS)
    assert (done.status, text_of(done)) == ("done", "first=one, second=two")
    seen = journal(tasks, done)
    assert {k: len(v) for k, v in seen["answers"].items()} == {"first": 1, "second": 1}
    assert not seen["cancelled"]
    assert [o.status for o in outcomes if o.key == key][-1] == "done"
    assert "waiting" in [o.status for o in outcomes]


async def test_two_questions_at_once_a_decline_and_a_key_still_listed_are_each_answered_once(
    served: tuple[MCPServer, TasksServer], store: durable.Store
) -> None:
    server, _tasks = served
    both = await park(server, store, "two", item="y")
    repeat = await park(server, store, "repeat")
    approve = await park(server, store, "approve", item="z")
    async with working(server, store):
        asked = await until(store, both, "waiting")
        assert asked.pending is not None
        assert asked.pending.input_keys == ("a", "b")
        for request, field in zip(asked.pending.requests, asked.pending.input_keys, strict=True):
            store.record(both, Answer(request.id, True, {field: field.upper()}))
        repeated = await answer_each(store, repeat, lambda field: "v")
        waiting = await until(store, approve, "waiting")
        assert waiting.pending is not None
        store.record(approve, Answer(waiting.pending.requests[0].id, False, reason="declined"))
        declined = await until(store, approve, *ENDS)
        answered = await until(store, both, *ENDS)
    assert text_of(answered) == "a=A, b=B"
    # The server listed k for two more polls after its answer: it was sent once, asked once.
    assert text_of(repeated) == "k answered 1 time(s)"
    assert text_of(declined) == "z: {'action': 'decline'}"


async def test_a_task_ends_failed_cancelled_or_expired_and_says_so(
    served: tuple[MCPServer, TasksServer], store: durable.Store
) -> None:
    server, _tasks = served
    failed = await park(server, store, "fail")
    cancelled = await park(server, store, "server_cancels")
    expired = await park(server, store, "forever", ttl_ms=1500)
    progress = await park(server, store, "progress", steps=3)
    notes: list[str | None] = []
    async with working(server, store) as outcomes:
        ends = {key: await until(store, key, *ENDS) for key in (failed, cancelled, expired, progress)}
        notes = [o.note for o in outcomes if o.key == progress and o.status == "working"]
    assert (ends[failed].status, ends[failed].error) == (
        "failed",
        "the task failed: the report could not be built (error -32050)",
    )
    assert (ends[cancelled].status, ends[cancelled].error) == ("cancelled", "the server cancelled the task")
    assert ends[expired].status == "expired"
    assert ends[expired].error == "the task's time to live ran out before it ended"
    assert ends[progress].status == "done"
    assert {"step 1 of 3", "step 2 of 3", "step 3 of 3"} <= set(notes)  # each status message seen


@pytest.mark.parametrize(
    ("tool", "problem"),
    [
        ("garbage", "tasks/get answered with something that is not a task (status: "),
        ("bad_result", "its result is not a tool's result (content: "),
        ("bad_question", "its question 'q' does not read (message: "),
    ],
)
async def test_a_task_that_breaks_the_protocol_is_failed_and_cancelled(
    served: tuple[MCPServer, TasksServer], store: durable.Store, tool: str, problem: str
) -> None:
    server, tasks = served
    key = await park(server, store, tool)
    async with working(server, store):
        call = await until(store, key, *ENDS)
    assert call.status == "failed"
    assert call.error is not None
    assert call.error.startswith(f"the task {journal_id(call)}: {problem}")
    assert journal(tasks, call)["cancelled"] is True


def journal_id(call: Call) -> str:
    assert call.pending is not None
    assert call.pending.task is not None
    return call.pending.task.id


async def test_a_task_that_asks_for_ever_is_cut_off(
    served: tuple[MCPServer, TasksServer], store: durable.Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolnexus import _task_park

    monkeypatch.setattr(_task_park, "MAX_TASK_QUESTIONS", 3)
    server, tasks = served
    key = await park(server, store, "many")
    async with working(server, store):
        call = await answer_each(store, key, lambda field: "x")
    assert (call.status, call.error) == (
        "failed",
        f"the task {journal_id(call)}: it asked more than 3 questions",
    )
    seen = journal(tasks, call)
    assert seen["cancelled"] is True
    # It replaces its question on every poll: each answer came after the server stopped
    # asking it, so none was sent (a key it no longer lists is not answered).
    assert seen["answers"] == {}
    assert seen["polls"] <= 8


async def test_poll_intervals_of_zero_and_of_a_billion_seconds_are_held_between_bounds(
    served: tuple[MCPServer, TasksServer], store: durable.Store
) -> None:
    server, _ = served
    now = anyio.current_time
    fast = await park(server, store, "interval", ms=0, polls=2)
    slow = await park(server, store, "interval", ms=10**12, polls=2)
    assert store.call(slow).poll_at is not None
    start = now()
    async with working(server, store):
        done = await until(store, fast, *ENDS)
    assert done.status == "done"
    assert now() - start >= 0.25
    call = store.call(slow)

    assert call.status == "working"
    assert call.poll_at is not None
    assert 250 < call.poll_at - time.time() <= 300  # the ceiling: 300 s, not 31 years


async def test_a_worker_whose_client_did_not_declare_tasks_fails_the_task_with_the_servers_refusal(
    served: tuple[MCPServer, TasksServer], store: durable.Store
) -> None:
    server, _ = served
    key = await park(server, store, "approve", item="q")
    async with working(server, store, tasks=False):
        call = await until(store, key, *ENDS)
    assert (call.status, call.error) == ("failed", "Missing required client capability")


async def test_a_parked_task_is_not_resumed_by_hand_and_an_optional_tool_without_tasks_runs_at_once(
    served: tuple[MCPServer, TasksServer], store: durable.Store
) -> None:
    server, _ = served
    key = await park(server, store, "approve", item="q")
    async with client(server, tasks=False) as connected:
        with pytest.raises(ValueError, match="a worker polls it"):
            await durable.resume(connected, store.get(key), {})
        result = await durable.call_tool_or_park(connected, "optional", {"item": "now"})
    assert not isinstance(result, Pending)
    assert json.loads(result.model_dump_json())["content"][0]["text"] == "now: ran in the foreground"
