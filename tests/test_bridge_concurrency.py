"""Blocking resolvers and concurrent elicitations, against real MCP servers.

A plain-function resolver runs in a worker thread: while it blocks, the event loop keeps
serving (other calls on the same session complete). Several elicitations outstanding at
once, on one session or on several, each get their own answer.
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import pytest
from mcp import Client

from servers.harness import (
    ERA_VERSIONS,
    Era,
    Target,
    call,
    capabilities_seen_by_server,
    connect,
    tag_of,
)
from support.values import ERAS, PROFILE
from toolnexus import Answer, Request
from toolnexus.mcp import WaitFor, elicitation_callback

pytestmark = pytest.mark.anyio

FORM_TOOL: dict[Era, str] = {"legacy": "form_elicit", "2026": "form"}
GUARD = 10.0
"""Seconds a resolver waits for its peers (or for release) before giving up and answering
with a value that fails the test: a guard against a hang, not a speed bound."""


@pytest.mark.parametrize("era", ERAS)
async def test_a_blocking_sync_resolver_leaves_the_event_loop_running(target: Target, era: Era) -> None:
    loop_thread = threading.get_ident()
    resolver_threads: list[int] = []
    entered = threading.Event()
    release = threading.Event()

    def wait_for(request: Request) -> Answer:
        resolver_threads.append(threading.get_ident())
        entered.set()
        released = release.wait(GUARD)  # blocks, like input() or a modal dialog
        return Answer(request.id, True, {**PROFILE, "name": "released" if released else "loop-was-blocked"})

    served_while_blocked = 0

    async def meanwhile(client: Client) -> None:
        nonlocal served_while_blocked
        while not entered.is_set():
            await anyio.sleep(0.005)
        for _ in range(3):  # real round trips to the server while the resolver blocks
            seen = await capabilities_seen_by_server(client)
            assert seen["era"] == ERA_VERSIONS[era]
            served_while_blocked += 1
        release.set()

    async with (
        connect(target, era, elicitation_callback(wait_for)) as client,
        anyio.create_task_group() as tg,
    ):
        tg.start_soon(meanwhile, client)
        outcome = await call(client, FORM_TOOL[era], "blocking")

    assert served_while_blocked == 3
    assert outcome["action"] == "accept"
    assert outcome["content"]["name"] == "released"
    assert resolver_threads
    assert loop_thread not in resolver_threads, "the plain-function resolver ran on the event loop thread"


def _answer_for(request: Request) -> Answer:
    """Each request's own answer: forms get the tag as the name; URLs are accepted when the
    tag ends in an even digit and declined otherwise, so a crossed answer shows."""
    tag = tag_of(request)
    if request.kind == "authorization":
        return (
            Answer(request.id, True) if int(tag[-1]) % 2 == 0 else Answer(request.id, False, None, "declined")
        )
    return Answer(request.id, True, {**PROFILE, "name": tag})


def _expected(tool: str, tag: str) -> tuple[str, Any]:
    if tool.startswith("url"):
        return ("accept" if int(tag[-1]) % 2 == 0 else "decline"), None
    return "accept", {**PROFILE, "name": tag, "newsletter": False}  # the form's default, filled in


def _all_at_once(flavour: str, parties: int) -> WaitFor:
    """A resolver that answers no request until ``parties`` of them are waiting together."""
    if flavour == "sync":
        barrier = threading.Barrier(parties)

        def wait_for_sync(request: Request) -> Answer:
            try:
                barrier.wait(GUARD)
            except threading.BrokenBarrierError:
                return Answer(request.id, True, {**PROFILE, "name": "not-concurrent"})
            return _answer_for(request)

        return wait_for_sync

    arrived = 0
    everyone = anyio.Event()

    async def wait_for_async(request: Request) -> Answer:
        nonlocal arrived
        arrived += 1
        if arrived == parties:
            everyone.set()
        with anyio.move_on_after(GUARD):
            await everyone.wait()
        if not everyone.is_set():
            return Answer(request.id, True, {**PROFILE, "name": "not-concurrent"})
        return _answer_for(request)

    return wait_for_async


PARALLEL_TOOLS: dict[Era, list[str]] = {
    "legacy": ["form_elicit", "form", "url", "url_elicit", "form_elicit", "url"],
    "2026": ["form", "url", "form", "url", "form", "url"],
}


@pytest.mark.parametrize("flavour", ["async", "sync"])
@pytest.mark.parametrize("era", ERAS)
async def test_parallel_elicitations_on_one_session_resolve_independently(
    target: Target, era: Era, flavour: str
) -> None:
    tools = PARALLEL_TOOLS[era]
    outcomes: dict[str, dict[str, Any]] = {}

    async with connect(target, era, elicitation_callback(_all_at_once(flavour, len(tools)))) as client:

        async def one(tool: str, tag: str) -> None:
            outcomes[tag] = await call(client, tool, tag)

        async with anyio.create_task_group() as tg:
            for i, tool in enumerate(tools):
                tg.start_soon(one, tool, f"p{i}")

    assert len(outcomes) == len(tools), "an elicitation was lost"
    for i, tool in enumerate(tools):
        tag = f"p{i}"
        action, content = _expected(tool, tag)
        assert outcomes[tag] == {"era": ERA_VERSIONS[era], "tool": tool, "action": action, "content": content}


@pytest.mark.parametrize("era", ERAS)
async def test_elicitations_on_several_sessions_resolve_independently(target: Target, era: Era) -> None:
    # In process the sessions share one server object; over HTTP one server process; over
    # stdio each session has its own process.
    sessions = ["alice", "bob", "carol"]
    arrived: list[str] = []
    everyone = anyio.Event()

    def resolver_for(session: str) -> Callable[[Request], Awaitable[Answer]]:
        async def wait_for(req: Request) -> Answer:
            arrived.append(session)
            if len(arrived) == len(sessions):
                everyone.set()
            with anyio.move_on_after(GUARD):
                await everyone.wait()
            # Each session answers with its own name, whatever the server asked.
            return Answer(req.id, True, {**PROFILE, "name": session})

        return wait_for

    outcomes: dict[str, dict[str, Any]] = {}

    async def session_run(session: str) -> None:
        async with connect(target, era, elicitation_callback(resolver_for(session))) as client:
            outcomes[session] = await call(client, FORM_TOOL[era], f"for-{session}")

    async with anyio.create_task_group() as tg:
        for session in sessions:
            tg.start_soon(session_run, session)

    assert everyone.is_set(), "the sessions' elicitations were not outstanding at the same time"
    for session in sessions:
        assert outcomes[session]["action"] == "accept"
        assert outcomes[session]["content"] == {**PROFILE, "name": session, "newsletter": False}
