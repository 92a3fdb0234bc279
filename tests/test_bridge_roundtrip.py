"""elicitation_callback against real MCP servers: every outcome, every transport, both eras.

Each test opens one ``mcp.Client(target, elicitation_callback=elicitation_callback(wait_for))``
to the SDK's own ``MCPServer`` (in process, a stdio subprocess, streamable HTTP) and runs every
case through it, one subtest per case; each tool reports back what the server received.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from mcp.shared.exceptions import MCPError
from mcp_types import MISSING_REQUIRED_CLIENT_CAPABILITY

from servers.elicit_server import profile_message, url_for
from servers.harness import (
    ERA_VERSIONS,
    FORM_TOOLS,
    URL_TOOLS,
    Era,
    Target,
    call,
    capabilities_seen_by_server,
    connect,
    resolver,
    server_journal,
    tag_of,
)
from support.values import ERAS, FULL_PROFILE
from toolnexus import Answer, Request
from toolnexus.mcp import elicitation_callback

pytestmark = pytest.mark.anyio


@dataclass(frozen=True)
class Case:
    """One elicitation: which tool asks, how the resolver answers, what the server must see."""

    tool: str
    outcome: str
    answer: Callable[[Request], Answer]
    action: str
    content: dict[str, Any] | None

    @property
    def tag(self) -> str:
        return f"{self.tool}-{self.outcome}"


def _refuse(reason: str | None) -> Callable[[Request], Answer]:
    return lambda request: Answer(request.id, False, None, reason)


def cases(era: Era, url_secret: str) -> list[Case]:
    """Every outcome of every elicitation tool of the era."""
    out: list[Case] = []
    for tool_era, tool in FORM_TOOLS:
        if tool_era != era:
            continue
        out += [
            Case(
                tool,
                "accept",
                lambda request: Answer(request.id, True, dict(FULL_PROFILE)),
                "accept",
                FULL_PROFILE,
            ),
            Case(tool, "declined", _refuse("declined"), "decline", None),
            Case(tool, "cancelled", _refuse("cancelled"), "cancel", None),
            Case(tool, "expired", _refuse("expired"), "cancel", None),
            Case(tool, "no-reason", _refuse(None), "cancel", None),
        ]
    for tool_era, tool in URL_TOOLS:
        if tool_era != era:
            continue
        out += [
            # The resolver sends data with its accept: URL mode must not carry it to the server.
            Case(
                tool,
                "accept",
                lambda request: Answer(request.id, True, {"token": url_secret}),
                "accept",
                None,
            ),
            Case(tool, "declined", _refuse("declined"), "decline", None),
            Case(tool, "cancelled", _refuse("cancelled"), "cancel", None),
        ]
    return out


def _check_request(case: Case, request: Request) -> None:
    """The §10 Request the resolver was given for ``case``."""
    assert request.expiresAt is None  # no timeout, no deadline
    assert request.id.startswith("elc-")
    if case.tool.startswith("url"):
        assert request.kind == "authorization"
        assert request.prompt == f"Link for {case.tag}"
        assert request.url == url_for(case.tag)
        assert request.data is None
        return
    assert request.kind == "input"
    assert request.prompt == profile_message(case.tag)
    assert request.url is None
    assert request.data is not None
    schema = request.data["schema"]
    assert schema["type"] == "object"
    assert set(schema["properties"]) == {"name", "age", "email", "newsletter"}
    assert set(schema["required"]) == {"name", "age", "email"}
    assert schema["properties"]["email"]["format"] == "email"


@pytest.mark.parametrize("flavour", ["async", "sync", "wire"])
@pytest.mark.parametrize("era", ERAS)
async def test_every_outcome_reaches_the_server(
    target: Target, era: Era, flavour: str, subtests: pytest.Subtests
) -> None:
    """Form accept, decline, cancel; URL accept (no content) and decline; all resolver kinds."""
    url_secret = f"url-mode-data-{uuid.uuid4().hex}"
    by_tag = {case.tag: case for case in cases(era, url_secret)}
    seen: dict[str, list[Request]] = {}

    def respond(request: Request) -> Answer:
        seen.setdefault(tag_of(request), []).append(request)
        return by_tag[tag_of(request)].answer(request)

    async with connect(target, era, elicitation_callback(resolver(flavour, respond))) as client:
        for case in by_tag.values():
            with subtests.test(msg=case.tag):
                outcome = await call(client, case.tool, case.tag)
                assert outcome == {
                    "era": ERA_VERSIONS[era],
                    "tool": case.tool,
                    "action": case.action,
                    "content": case.content,
                }
                [request] = seen[case.tag]  # asked once, even across a 2026-07-28 retry
                _check_request(case, request)
        journal = await server_journal(client)

    assert url_secret not in journal, "data given with a URL-mode accept reached the server"


@pytest.mark.parametrize("era", ERAS)
async def test_with_a_callback_the_server_sees_the_elicitation_capability(target: Target, era: Era) -> None:
    async def never_called(request: Request) -> Answer:  # pragma: no cover - nothing elicits here
        raise AssertionError("no elicitation expected")

    async with connect(target, era, elicitation_callback(never_called)) as client:
        seen_by_server = await capabilities_seen_by_server(client)

    assert seen_by_server["era"] == ERA_VERSIONS[era]
    assert seen_by_server["capabilities"]["elicitation"] == {"form": {}, "url": {}}


@pytest.mark.parametrize("era", ERAS)
async def test_without_a_callback_the_server_sees_no_elicitation_capability(target: Target, era: Era) -> None:
    async with connect(target, era, None) as client:
        seen_by_server = await capabilities_seen_by_server(client)
        # So the server degrades: its SDK refuses to ask a client that cannot answer.
        with pytest.raises(MCPError) as refused:
            await client.call_tool("form", {"tag": "no-callback"})

    assert seen_by_server["era"] == ERA_VERSIONS[era]
    assert "elicitation" not in (seen_by_server["capabilities"] or {})
    assert refused.value.error.code == MISSING_REQUIRED_CLIENT_CAPABILITY
