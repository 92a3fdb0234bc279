"""URL elicitation by error (-32042): ``toolnexus.mcp.call_tool_resolving_urls`` against a real server.

The server (``servers.edge_server``, in process and over stdio, legacy era: the error belongs
to protocol 2025-11-25) raises ``UrlElicitationRequiredError`` on the first call and succeeds
on the retry; visiting one of its URLs makes it send ``notifications/elicitation/complete``.
"""

from __future__ import annotations

import logging
import shlex
import sys
import threading
import urllib.request
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import pytest
from mcp import Client, MCPError, StdioServerParameters

from support import forkserver
from toolnexus import Answer, Request
from toolnexus.errors import UrlElicitationRefusedError
from toolnexus.mcp import ElicitationCompletions, call_tool_resolving_urls, elicitation_callback

pytestmark = pytest.mark.anyio

EDGE_SERVER = Path(__file__).resolve().parent / "servers" / "edge_server.py"
NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def visit(url: str) -> None:
    """What the user's browser does: load the page (the server then sends the completion)."""
    with NO_PROXY.open(url, timeout=10) as response:
        response.read()


@pytest.fixture(params=["inprocess", "stdio"])
def edge_target(request: pytest.FixtureRequest) -> Any:
    if request.param == "inprocess":
        from servers.edge_server import build_server

        return build_server()
    forkserver.start()  # the server forked by the fork server: a second of CPU less than a new one
    command, *args = shlex.split(forkserver.server_command([sys.executable, str(EDGE_SERVER)]))
    return StdioServerParameters(command=command, args=args)


@asynccontextmanager
async def edge_client(
    target: Any, completions: ElicitationCompletions | None = None
) -> AsyncIterator[Client]:
    async def never(request: Request) -> Answer:  # the -32042 path does not use the client's callback
        raise AssertionError("not asked in the middle of a call")

    async with Client(
        target, elicitation_callback=elicitation_callback(never), message_handler=completions, mode="legacy"
    ) as client:
        yield client


def text_of(result: Any) -> str:
    assert not result.is_error, result
    return str(result.content[0].text)


async def test_accepted_urls_retry_the_call_once(edge_target: Any) -> None:
    asked: list[Request] = []

    async def wait_for(request: Request) -> Answer:
        asked.append(request)
        assert request.url is not None
        await anyio.to_thread.run_sync(visit, request.url)
        return Answer(request.id, True)

    async with edge_client(edge_target) as client:
        result = await call_tool_resolving_urls(
            client, "needs_sign_in", {"tag": "a", "count": 2}, wait_for=wait_for
        )
    assert text_of(result) == "signed in: a after 2 visits"
    assert [r.kind for r in asked] == ["authorization", "authorization"]
    assert [r.prompt for r in asked] == ["Sign in (a-1)", "Sign in (a-2)"]
    assert all(r.url is not None and r.url.endswith(f"/done/a-{n}") for n, r in enumerate(asked, 1))
    assert len({r.id for r in asked}) == 2


@pytest.mark.parametrize(
    ("ok", "reason", "outcome"), [(False, "declined", "declined"), (False, None, "cancelled")]
)
async def test_a_refused_url_raises_and_names_it(
    edge_target: Any, ok: bool, reason: Any, outcome: str
) -> None:
    asked: list[Request] = []

    def wait_for(request: Request) -> Answer:  # a plain resolver: run in a worker thread
        asked.append(request)
        if len(asked) == 1:
            return Answer(request.id, True)
        return Answer(request.id, ok, None, reason)

    async with edge_client(edge_target) as client:
        with pytest.raises(UrlElicitationRefusedError) as caught:
            await call_tool_resolving_urls(
                client, "needs_sign_in", {"tag": "b", "count": 3}, wait_for=wait_for
            )
        # No retry was made: the next call is still the first the server sees for a fresh tag.
        with pytest.raises(MCPError) as again:
            await client.call_tool("needs_sign_in", {"tag": "b2"})
    assert again.value.code == -32042
    assert len(asked) == 2  # the third URL is not asked once the second is refused
    assert caught.value.tool == "needs_sign_in"
    assert len(caught.value.refused) == 1
    url, how = caught.value.refused[0]
    assert url.endswith("/done/b-2")
    assert how == outcome
    assert f"/done/b-2 ({outcome})" in str(caught.value)
    assert "/done/b-1" not in str(caught.value)


async def test_a_failing_resolver_counts_as_cancelled(caplog: pytest.LogCaptureFixture) -> None:
    from servers.edge_server import build_server

    def wait_for(request: Request) -> Answer:
        raise RuntimeError("vault locked: SECRET-123")

    async with edge_client(build_server()) as client:
        with (
            caplog.at_level(logging.ERROR, logger="toolnexus"),
            pytest.raises(UrlElicitationRefusedError) as caught,
        ):
            await call_tool_resolving_urls(client, "needs_sign_in", {"tag": "c"}, wait_for=wait_for)
    assert caught.value.refused[0][1] == "cancelled"
    assert "SECRET" not in str(caught.value)


async def test_other_errors_and_results_pass_through() -> None:
    from servers.edge_server import build_server

    def wait_for(request: Request) -> Answer:
        raise AssertionError("nothing to ask")

    async with edge_client(build_server()) as client:
        result = await call_tool_resolving_urls(client, "structured", {"n": 2}, wait_for=wait_for)
        assert result.structured_content == {"n": 2, "double": 4}
        failed = await call_tool_resolving_urls(client, "hostile_error", wait_for=wait_for)
        assert failed.is_error
        with pytest.raises(MCPError) as caught:
            await call_tool_resolving_urls(client, "hostile_rpc_error", wait_for=wait_for)
    assert caught.value.code == -32001


async def test_completion_notification_reaches_the_waiting_resolver(edge_target: Any) -> None:
    completions = ElicitationCompletions()
    seen: list[bool] = []

    def wait_for(request: Request) -> Answer:
        event = completions.completion(request.id)
        assert event is not None
        assert not event.is_set()
        assert request.url is not None
        visit(request.url)  # the user signs in; the server then says so
        seen.append(event.wait(timeout=30))
        return Answer(request.id, True)

    async with edge_client(edge_target, completions) as client:
        result = await call_tool_resolving_urls(
            client, "needs_sign_in", {"tag": "d"}, wait_for=wait_for, completions=completions
        )
    assert text_of(result) == "signed in: d after 1 visits"
    assert seen == [True]
    assert completions._by_request == {}  # released once answered


async def test_unknown_completion_ids_are_ignored_and_others_pass_on() -> None:
    from servers.edge_server import build_server

    passed_on: list[Any] = []

    async def inner(message: Any) -> None:
        passed_on.append(message)

    completions = ElicitationCompletions(inner)
    events: list[threading.Event] = []

    def wait_for(request: Request) -> Answer:
        event = completions.completion(request.id)
        assert event is not None
        events.append(event)
        assert request.url is not None
        # A completion for an id the client never heard of: ignored, this one stays unset.
        visit(request.url.rsplit("/", 1)[0] + "/unknown")
        return Answer(request.id, True)

    async with edge_client(build_server(), completions) as client:
        result = await call_tool_resolving_urls(
            client,
            "needs_sign_in",
            {"tag": "e", "complete": False},
            wait_for=wait_for,
            completions=completions,
        )
        await client.call_tool("hostile_text", {})  # sends a log message: passed on
    assert text_of(result) == "signed in: e after 0 visits"
    assert not events[0].is_set()
    assert completions.completion("elc-nope") is None
    assert passed_on  # the completion for "unknown" and the log message went on to the inner handler


async def test_a_malformed_or_oversized_error_is_raised_as_it_came() -> None:
    from mcp.server.mcpserver import MCPServer
    from mcp.shared.exceptions import MCPError as ServerMCPError

    server = MCPServer("bad")

    @server.tool()
    async def bad(kind: str) -> str:
        if kind == "many":
            elicitations = [
                {"mode": "url", "url": f"https://x.example/{n}", "message": "m", "elicitationId": str(n)}
                for n in range(100)
            ]
            raise ServerMCPError(-32042, "many", {"elicitations": elicitations})
        raise ServerMCPError(-32042, "malformed", {"elicitations": [{"mode": "url", "url": 3}]})

    def wait_for(request: Request) -> Answer:
        raise AssertionError("never asked")

    async with edge_client(server) as client:
        for kind in ("many", "malformed"):
            with pytest.raises(MCPError) as caught:
                await call_tool_resolving_urls(client, "bad", {"kind": kind}, wait_for=wait_for)
            assert caught.value.code == -32042
            assert caught.value.message == kind


def test_bad_arguments_are_type_errors() -> None:
    async def go() -> None:
        with pytest.raises(TypeError, match="wait_for must be callable"):
            await call_tool_resolving_urls(None, "t", wait_for=3)  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="completions must be an ElicitationCompletions"):
            await call_tool_resolving_urls(None, "t", wait_for=print, completions=object())  # type: ignore[arg-type]

    anyio.run(go)
    with pytest.raises(TypeError, match="message_handler must be callable"):
        ElicitationCompletions(3)  # type: ignore[arg-type]
