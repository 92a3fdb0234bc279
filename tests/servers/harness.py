"""Client-side helpers for the bridge tests: connect in an era, call a tool, read the journal."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, Literal

from mcp import Client, StdioServerParameters
from mcp.client.session import ElicitationFnT
from mcp.server.mcpserver import MCPServer
from mcp_types import TextContent

from toolnexus import Request
from toolnexus.mcp import WaitFor

__all__ = [
    "ERA_VERSIONS",
    "FORM_TOOLS",
    "URL_TOOLS",
    "Era",
    "Target",
    "call",
    "capabilities_seen_by_server",
    "connect",
    "resolver",
    "server_journal",
    "tag_of",
]

Era = Literal["legacy", "2026"]
"""``"legacy"``: the initialize handshake (``mode="legacy"``, 2025-11-25), elicitation as a
server-to-client request mid-call. ``"2026"``: the default ``mode="auto"``, which adopts
2026-07-28, elicitation inside an ``InputRequiredResult``."""

Target = MCPServer | StdioServerParameters | str
"""What ``mcp.Client`` connects to: an in-process server, a stdio subprocess or an HTTP URL."""

ERA_VERSIONS: dict[Era, str] = {"legacy": "2025-11-25", "2026": "2026-07-28"}
_MODES: dict[Era, Literal["legacy", "auto"]] = {"legacy": "legacy", "2026": "auto"}

FORM_TOOLS: list[tuple[Era, str]] = [("legacy", "form_elicit"), ("legacy", "form"), ("2026", "form")]
"""Every (era, tool) pair that asks for a form: ``ctx.elicit`` and ``Resolve`` in the legacy
era, ``Resolve`` (an ``InputRequiredResult`` round trip) in 2026-07-28."""

URL_TOOLS: list[tuple[Era, str]] = [("legacy", "url"), ("legacy", "url_elicit"), ("2026", "url")]
"""Every (era, tool) pair that asks the user to visit a URL."""


@asynccontextmanager
async def connect(target: Target, era: Era, callback: ElicitationFnT | None) -> AsyncIterator[Client]:
    """A connected ``mcp.Client``, checked to have negotiated the era's protocol version."""
    async with Client(target, elicitation_callback=callback, mode=_MODES[era]) as client:
        assert client.protocol_version == ERA_VERSIONS[era]
        yield client


async def call(client: Client, tool: str, tag: str) -> dict[str, Any]:
    """Call an elicitation tool and return what it reports the server received."""
    result = await client.call_tool(tool, {"tag": tag})
    assert not result.is_error, f"{tool} failed: {result.content}"
    return _json_text(result.content)


async def server_journal(client: Client) -> str:
    """Everything the server has seen, as JSON text."""
    result = await client.call_tool("journal_dump", {})
    assert not result.is_error
    text = result.content[0]
    assert isinstance(text, TextContent)
    return text.text


def _json_text(content: list[Any]) -> dict[str, Any]:
    assert len(content) == 1
    text = content[0]
    assert isinstance(text, TextContent)
    loaded = json.loads(text.text)
    assert isinstance(loaded, dict)
    return loaded


async def capabilities_seen_by_server(client: Client) -> dict[str, Any]:
    """``{"era": ..., "capabilities": ...}``: the client capabilities the server holds."""
    result = await client.call_tool("capabilities", {})
    assert not result.is_error
    return _json_text(result.content)


def tag_of(request: Request) -> str:
    """The ``tag`` argument of the tool call that asked: the last word of the prompt."""
    return request.prompt.rsplit(" ", 1)[-1]


def resolver(flavour: str, respond: Callable[[Request], Any]) -> WaitFor:
    """A resolver of the given flavour that answers with ``respond(request)``.

    ``"async"``: an ``async def``; ``"sync"``: a plain function (the bridge runs it in a
    worker thread); ``"wire"``: a plain function returning the wire mapping of the Answer
    that ``respond`` gives.
    """
    if flavour == "async":

        async def wait_for_async(request: Request) -> Any:
            return respond(request)

        return wait_for_async
    if flavour == "sync":

        def wait_for_sync(request: Request) -> Any:
            return respond(request)

        return wait_for_sync
    if flavour == "wire":

        def wait_for_wire(request: Request) -> Any:
            return respond(request).to_dict()

        return wait_for_wire
    raise ValueError(f"unknown resolver flavour {flavour!r}")
