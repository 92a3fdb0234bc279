"""Live questions: ``durable.ask_in(store)`` holds a call open while its question is answered
elsewhere (another store object, as another process or the inbox would), against the SDK's
``MCPServer`` in process, over stdio and over streamable HTTP, in both protocol eras; its
withdrawals (a timeout, a cancelled call, a process that stopped renewing), and
``first_answer``'s race.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import anyio
import pytest

from servers.harness import FORM_TOOLS, URL_TOOLS, Era, Target, call, connect
from support.live import answering as answering_in
from support.stores import Backend
from support.values import FULL_PROFILE
from toolnexus import Answer, Request, first_answer
from toolnexus.durable import Pending, ask_in
from toolnexus.mcp import elicitation_callback

pytestmark = pytest.mark.anyio


@contextmanager
def answering(
    backend: Backend, respond: Callable[[Request], Answer | None], **options: Any
) -> Iterator[list[str]]:
    """The store's questions answered from another store object (support.live)."""
    with answering_in(backend.spec, respond, clock=None, **options) as seen:
        yield seen


def accept(request: Request) -> Answer:
    if request.kind == "authorization":
        return Answer(request.id, True)
    return Answer(request.id, True, dict(FULL_PROFILE))


@pytest.fixture
def sqlite(tmp_path: Any) -> Backend:
    return Backend("sqlite", str(tmp_path / "live.db"))


# Every tool in process; over stdio and streamable HTTP, a mid-call form and URL (2025-11-25)
# and a 2026-07-28 round, which between them cover what a transport changes.
LIVE_CASES = [("inprocess", era, tool) for era, tool in FORM_TOOLS + URL_TOOLS] + [
    (transport, era, tool)
    for transport in ("stdio", "http")
    for era, tool in (("legacy", "form_elicit"), ("legacy", "url_elicit"), ("2026", "form"))
]


@pytest.mark.parametrize(("target", "era", "tool"), LIVE_CASES, indirect=["target"])
async def test_a_question_asked_in_a_store_is_answered_elsewhere_while_the_call_waits(
    target: Target, sqlite: Backend, era: Era, tool: str
) -> None:
    store = sqlite.open(clock=None)
    wait_for = ask_in(store, server="elicit-server", target=tool)
    with answering(sqlite, accept) as answered:
        async with connect(target, era, elicitation_callback(wait_for)) as client:
            got = await call(client, tool, f"live-{era}")
    assert got["action"] == "accept"
    if tool.startswith("form"):
        assert got["content"] == FULL_PROFILE
    (key,) = answered
    call_record = store.call(key)
    assert (call_record.status, call_record.live, call_record.server) == ("answered", True, "elicit-server")
    assert call_record.pending is not None
    assert call_record.pending.target == tool
    sqlite.close()


async def test_on_postgresql_too_and_a_second_answer_is_already_answered(backend: Backend) -> None:
    from servers.elicit_server import build_server

    store = backend.open(clock=None)
    with answering(backend, accept) as answered:
        async with connect(build_server()[0], "2026", elicitation_callback(ask_in(store))) as client:
            got = await call(client, "form", "pg")
    assert got["action"] == "accept"
    (key,) = answered
    with pytest.raises(ValueError, match="already answered"):
        store.record(key, Answer(store.get(key).requests[0].id, False, None, "declined"))
    assert store.call(key).status == "answered"


async def test_a_question_unanswered_in_time_is_withdrawn_and_the_server_gets_cancel(sqlite: Backend) -> None:
    from servers.elicit_server import build_server

    store = sqlite.open(clock=None)
    with answering(sqlite, lambda request: None) as seen:
        async with connect(
            build_server()[0], "legacy", elicitation_callback(ask_in(store, timeout=0.5))
        ) as client:
            got = await call(client, "form_elicit", "late")
    assert got["action"] == "cancel"  # §10's expired
    (key,) = seen
    withdrawn = store.call(key)
    assert withdrawn.status == "withdrawn"
    assert withdrawn.error == "no answer came within 0.5 s"
    (request,) = store.get(key).requests
    with pytest.raises(ValueError, match="was withdrawn"):
        store.record(key, accept(request))
    assert store.answers(key) == {}  # recorded nowhere


async def test_a_cancelled_call_withdraws_its_question_with_the_reason(sqlite: Backend) -> None:
    from servers.elicit_server import build_server

    store = sqlite.open(clock=None)
    with answering(sqlite, lambda request: None) as seen:
        async with connect(build_server()[0], "2026", elicitation_callback(ask_in(store))) as client:
            with anyio.move_on_after(0.7):  # the host gives up on the call
                await call(client, "form", "cancelled")
    (key,) = seen
    withdrawn = store.call(key)
    assert withdrawn.status == "withdrawn"
    assert withdrawn.error is not None
    assert "ended before an answer came" in withdrawn.error


def test_a_holder_that_stops_renewing_lapses_and_a_sweep_records_it(backend: Backend) -> None:
    """A process killed -9 stops renewing: once its lease runs out, its question reads
    withdrawn everywhere and takes no answer; a sweep records it."""
    store = backend.open()
    request = Request("elc-1", "authorization", "Sign in", "https://auth.example.com/")
    pending = Pending("tools/call", "t", None, None, ("question",), (request,), {}, "srv")
    token = "t" * 32
    key = store.put_live(pending, token=token, lease=5)
    backend.clock.advance(4)
    assert store.renew_held(token, 5) == 1
    assert store.held(token) == {key: "live"}
    backend.clock.advance(6)  # no renewal: the holder is gone
    assert store.held(token) == {key: "withdrawn"}
    assert store.call(key).status == "withdrawn"
    assert "stopped" in (store.call(key).error or "")
    with pytest.raises(ValueError, match="was withdrawn"):
        store.record(key, Answer(request.id, True))
    store.sweep()
    assert backend.query(f"SELECT status FROM toolnexus_call WHERE key = '{key}'") == [("withdrawn",)]


async def test_first_answer_takes_the_first_and_withdraws_the_others(sqlite: Backend) -> None:
    from servers.elicit_server import build_server

    store = sqlite.open(clock=None)
    live = ask_in(store, server="elicit-server")

    async def quick(request: Request) -> Answer:
        await anyio.sleep(0.3)
        return accept(request)

    def broken(request: Request) -> Answer:
        raise RuntimeError("this resolver fails")

    with answering(sqlite, lambda request: None) as seen:
        callback = elicitation_callback(first_answer(broken, live, quick))
        async with connect(build_server()[0], "2026", callback) as client:
            got = await call(client, "form", "race")
    assert got["action"] == "accept"
    assert got["content"] == FULL_PROFILE
    (key,) = seen
    lost = store.call(key)
    assert (lost.status, lost.error) == ("withdrawn", "answered elsewhere")


async def test_first_answer_raises_when_every_resolver_fails() -> None:
    def broken(request: Request) -> Answer:
        raise RuntimeError("no")

    async def also_broken(request: Request) -> Answer:
        raise ValueError("no either")

    race = first_answer(broken, also_broken)
    with pytest.raises((RuntimeError, ValueError)):
        await race(Request("elc-1", "input", "x?"))
    with pytest.raises(TypeError, match="at least one"):
        first_answer()
    with pytest.raises(TypeError, match="resolver 1 must be callable"):
        first_answer(broken, "nope")  # type: ignore[arg-type]


async def test_many_questions_in_one_process_cost_one_read_per_change(sqlite: Backend) -> None:
    """Each answer wakes every waiting question, but the process reads the store once per
    change for all of them (``held``), not once per question."""
    store = sqlite.open(clock=None)
    reads = 0
    real_held = store.held

    def counted(token: str) -> Any:
        nonlocal reads
        reads += 1
        return real_held(token)

    store.held = counted  # type: ignore[method-assign]
    wait_for = ask_in(store)
    requests = [
        Request(f"elc-{n}", "authorization", f"Sign in {n}", "https://a.example/") for n in range(200)
    ]
    results: dict[str, Answer] = {}

    async def one(request: Request) -> None:
        results[request.id] = await wait_for(request)

    def one_at_a_time(request: Request) -> Answer:
        time.sleep(0.005)  # 200 changes spread out, not one batch
        return Answer(request.id, True)

    with answering(sqlite, one_at_a_time):
        with anyio.fail_after(120):
            async with anyio.create_task_group() as group:
                for request in requests:
                    group.start_soon(one, request)
    assert {answer.id for answer in results.values()} == {r.id for r in requests}
    assert all(answer.ok for answer in results.values())
    # A read per question would be 200 at the least (and one per question per change, 20,000);
    # one read per change for all of them stays below the number of questions.
    assert reads < len(requests), reads


def test_ask_in_checks_its_arguments(sqlite: Backend) -> None:
    store = sqlite.open()
    with pytest.raises(TypeError, match="store must be a toolnexus Store"):
        ask_in("calls.db")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="ask_in: timeout"):
        ask_in(store, timeout=-1)
    with pytest.raises(ValueError, match="lease"):
        ask_in(store, lease=0)
    with pytest.raises(TypeError, match="server must be a str"):
        ask_in(store, server=3)  # type: ignore[arg-type]
