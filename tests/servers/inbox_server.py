"""An MCP server that asks what the inbox tests answer in a browser, the 2026-07-28 way.

Every tool returns an ``InputRequiredResult`` built by hand (so the schema is exactly the one
written here) and, on the retry, a JSON object of what it received:

- ``every_field(ticket)``: one form with every field type of the elicitation subset.
- ``sign_in(tag)``: URL mode.
- ``secret()``: a form that asks for an API key (the inbox warns).
- ``hostile()``: a prompt, titles and choices holding ``<script>``, HTML, bidi and escapes.
- ``pair()``: two questions in one round.

Its ``requestState`` is sealed with a key the caller may give, so a call parked through one
instance resumes through another built with the same key.
"""

from __future__ import annotations

import json
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.request_state import RequestStateSecurity
from mcp_types import (
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitRequestURLParams,
    ElicitResult,
    InputRequiredResult,
)

__all__ = ["EVERY_FIELD", "HOSTILE", "build_server"]

EVERY_FIELD: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {
            "type": "string",
            "title": "Your name",
            "description": "As it appears on the ticket",
            "minLength": 2,
            "maxLength": 40,
            "pattern": "^[A-Z].*$",
        },
        "email": {"type": "string", "title": "Email", "format": "email"},
        "homepage": {"type": "string", "title": "Home page", "format": "uri"},
        "start": {"type": "string", "title": "Start date", "format": "date"},
        "window": {"type": "string", "title": "Maintenance window", "format": "date-time"},
        "replicas": {"type": "integer", "title": "Replicas", "minimum": 1, "maximum": 9, "default": 2},
        "ratio": {"type": "number", "title": "Traffic ratio", "minimum": 0, "maximum": 1},
        "notify": {"type": "boolean", "title": "Notify the team", "default": True},
        "environment": {
            "type": "string",
            "title": "Environment",
            "oneOf": [
                {"const": "staging", "title": "Staging"},
                {"const": "production", "title": "Production"},
            ],
        },
        "region": {
            "type": "string",
            "title": "Region",
            "enum": ["eu-west-1", "eu-central-1", "us-east-1", "us-west-2", "ap-south-1", "ap-northeast-1"],
        },
        "checks": {
            "type": "array",
            "title": "Checks to run",
            "minItems": 1,
            "maxItems": 2,
            "items": {"type": "string", "enum": ["lint", "unit", "e2e"]},
        },
    },
    "required": ["name", "email", "environment", "checks"],
}
SECRET: dict[str, Any] = {
    "type": "object",
    "properties": {"api_key": {"type": "string", "title": "API key"}, "note": {"type": "string"}},
    "required": ["api_key"],
}
HOSTILE_TEXT = "<script>alert('prompt')</script><b>bold</b> \u202eevil\u202c \x1b[31mred\u200b"
HOSTILE: dict[str, Any] = {
    "type": "object",
    "title": "<img src=x onerror=alert('title')>",
    "properties": {
        "<i>field</i>": {
            "type": "string",
            "title": "<script>alert('field')</script>\u202etitle",
            "description": "<img src=x onerror=alert('desc')>\x1b]8;;https://evil.example\x07link",
        },
        "pick": {
            "type": "string",
            "title": "Pick",
            "oneOf": [
                {"const": "a", "title": "<script>alert('choice')</script>"},
                {"const": "b", "title": "\u202egnp.exe"},
            ],
        },
    },
}


def _form(message: str, schema: dict[str, Any]) -> ElicitRequest:
    return ElicitRequest(params=ElicitRequestFormParams(message=message, requested_schema=schema))


def _got(ctx: Context, key: str) -> dict[str, Any] | None:
    response = (ctx.input_responses or {}).get(key)
    if not isinstance(response, ElicitResult):
        return None
    return {"action": response.action, "content": response.content}


def build_server(key: bytes | None = None, name: str = "inbox-test-server") -> MCPServer:
    security = RequestStateSecurity(keys=[key]) if key is not None else None
    server = MCPServer(name, request_state_security=security)

    def asking(
        ctx: Context, tool: str, question: str, request: ElicitRequest, **arguments: Any
    ) -> str | InputRequiredResult:
        got = _got(ctx, question)
        if got is None:
            return InputRequiredResult(input_requests={question: request})
        return json.dumps({"tool": tool, "arguments": arguments, **got}, sort_keys=True)

    @server.tool()
    async def every_field(ticket: str, ctx: Context) -> str | InputRequiredResult:
        """A form with every field type."""
        return asking(
            ctx, "every_field", "form", _form(f"Deploy ticket {ticket}", EVERY_FIELD), ticket=ticket
        )

    @server.tool()
    async def sign_in(tag: str, ctx: Context) -> str | InputRequiredResult:
        """URL mode."""
        params = ElicitRequestURLParams(
            message=f"Sign in to continue ({tag})",
            url=f"https://auth.example.com/login?tag={tag}&next=%2Fhome",
            elicitation_id=tag,
        )
        return asking(ctx, "sign_in", "link", ElicitRequest(params=params), tag=tag)

    @server.tool()
    async def secret(ctx: Context) -> str | InputRequiredResult:
        """A form that asks for a secret."""
        return asking(ctx, "secret", "key", _form("Your API key, please", SECRET))

    @server.tool()
    async def hostile(ctx: Context) -> str | InputRequiredResult:
        """Hostile text everywhere."""
        return asking(ctx, "hostile", "h", _form(HOSTILE_TEXT, HOSTILE))

    @server.tool()
    async def pair(ctx: Context) -> str | InputRequiredResult:
        """Two questions in one round."""
        first, second = _got(ctx, "first"), _got(ctx, "second")
        if first is None or second is None:
            schema = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
            return InputRequiredResult(
                input_requests={
                    "first": _form("First person?", schema),
                    "second": _form("Second person?", schema),
                }
            )
        return json.dumps({"tool": "pair", "first": first, "second": second}, sort_keys=True)

    return server


KEY = bytes(range(32))
"""The request-state key of the tests' instances: a call parked through one resumes through another."""


def _target(url: str | None) -> Any:
    """The server to connect to: the one at ``url`` (streamable HTTP), or a fresh one in process."""
    return url if url is not None else build_server(KEY)


async def park(
    store: Any, tool: str, arguments: dict[str, Any] | None = None, *, url: str | None = None, **options: Any
) -> str:
    """Call ``tool`` (on the server at ``url``, or on a fresh in-process one), park what it
    asks in ``store``; its key."""
    from mcp import Client

    from toolnexus import durable

    async with Client(_target(url), elicitation_callback=durable.park_only) as client:
        outcome = await durable.call_tool_or_park(client, tool, arguments or {}, **options)
    assert isinstance(outcome, durable.Pending), outcome
    key: str = store.put(outcome)
    return key


def in_a_thread(fn: Any, *args: Any) -> Any:
    """``anyio.run(fn, *args)`` in a thread of its own: a test whose thread holds an event loop
    (Playwright's sync API does) can still run the MCP client."""
    from concurrent.futures import ThreadPoolExecutor

    import anyio

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(anyio.run, fn, *args).result()


async def resume(store: Any, key: str, *, url: str | None = None) -> dict[str, Any]:
    """Resume the call parked under ``key`` with its recorded answers (through the server at
    ``url``, or a fresh in-process one); the tool's JSON result."""
    from mcp import Client
    from mcp_types import CallToolResult, TextContent

    from toolnexus import durable

    async with Client(_target(url), elicitation_callback=durable.park_only) as client:
        result = await durable.resume(client, store.get(key), store.answers(key))
    assert isinstance(result, CallToolResult), result
    (content,) = result.content
    assert isinstance(content, TextContent)
    parsed: dict[str, Any] = json.loads(content.text)
    return parsed


def _serve_http(fd: int) -> None:
    from servers.serving import serve_http

    serve_http(build_server(KEY), fd)


if __name__ == "__main__":  # python -m servers.inbox_server http --fd N
    import argparse

    parser = argparse.ArgumentParser(description="the inbox tests' server over streamable HTTP")
    parser.add_argument("transport", choices=["http"])
    parser.add_argument("--fd", type=int, required=True, help="a listening TCP socket's file descriptor")
    _serve_http(parser.parse_args().fd)
