"""An MCP server that asks for input the 2026-07-28 way, for the durable tests.

Its ``requestState`` is sealed with a key the caller may give
(``RequestStateSecurity(keys=[key])``), so two instances built with one key accept each
other's state, as a server restarted with the same key does. It runs in process
(``build_server(key)``) and over streamable HTTP (``python -m servers.durable_server http
--fd N --key HEX``).

Tools (each answers with a JSON object of what it received):

- ``profile(tag)``: a form through a ``Resolve(...)``/``Elicit(...)`` dependency.
- ``regional(region)``: the same, from a tool whose argument is mirrored in an HTTP header
  (``x-mcp-header``): over streamable HTTP a connection must have listed it to call it.
- ``link(tag)``: URL mode, an ``InputRequiredResult`` by hand.
- ``two_rounds()``: asks for a name, then, in a second round, whether to go on; the name
  travels in its (sealed) ``requestState``.
- ``pair()``: one round that asks two forms at once.
- ``with_roots()``: one round that asks a form and lists the client's roots.
- ``roots_only()``: one round that only lists the client's roots.

A prompt ``greeting`` and a resource template ``note://{name}`` ask for a form too.

Every request's method and raw params are journaled (a middleware, outside the
request-state boundary), so a test can see the ``requestState`` exactly as it arrived.
"""

from __future__ import annotations

import argparse
import json
from typing import Annotated, Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import Context, Elicit, ElicitationResult, MCPServer, Resolve
from mcp.server.request_state import RequestStateSecurity
from mcp_types import (
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitRequestURLParams,
    ElicitResult,
    InputRequiredResult,
    ListRootsRequest,
    ListRootsResult,
)
from pydantic import BaseModel, ConfigDict, Field

__all__ = ["NAME_SCHEMA", "Profile", "build_server"]

NAME_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 2, "description": "Your name"},
        "team": {"type": "string", "default": "platform"},
    },
    "required": ["name"],
}
CONFIRM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"go": {"type": "boolean"}},
    "required": ["go"],
}


class Profile(BaseModel):
    """The ``profile`` tool's form."""

    model_config = ConfigDict(strict=True)

    name: str = Field(min_length=2, max_length=40)
    age: int = Field(ge=0, le=150)
    newsletter: bool = False


def _ask_profile(tag: str) -> Elicit[Profile]:
    return Elicit(f"Profile for {tag}", Profile)


def _ask_profile_for_region(region: str) -> Elicit[Profile]:
    return Elicit(f"Profile for {region}", Profile)


def _form(message: str, schema: dict[str, Any]) -> ElicitRequest:
    return ElicitRequest(params=ElicitRequestFormParams(message=message, requested_schema=schema))


def _elicit(ctx: Context, key: str) -> dict[str, Any] | None:
    """The answer under ``key`` as ``{"action", "content"}``, or ``None`` before it is given."""
    response = (ctx.input_responses or {}).get(key)
    if not isinstance(response, ElicitResult):
        return None
    return {"action": response.action, "content": response.content}


def build_server(key: bytes | None = None, name: str = "durable-server") -> tuple[MCPServer, list[Any]]:
    """A fresh server and its journal: ``(method, params)`` of every request, in order."""
    journal: list[Any] = []

    async def record(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        journal.append((ctx.method, json.loads(json.dumps(ctx.params, default=repr))))
        return await call_next(ctx)

    security = RequestStateSecurity(keys=[key]) if key is not None else None
    server = MCPServer(name, request_state_security=security)
    # Outermost, before the SDK's request-state boundary: the journal sees the wire form.
    server._lowlevel_server.middleware.insert(0, record)

    @server.tool()
    async def profile(tag: str, answer: Annotated[ElicitationResult[Profile], Resolve(_ask_profile)]) -> str:
        """A form through Resolve."""
        content = answer.data.model_dump() if answer.action == "accept" else None
        return json.dumps({"tool": "profile", "tag": tag, "action": answer.action, "content": content})

    @server.tool()
    async def regional(
        region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})],
        answer: Annotated[ElicitationResult[Profile], Resolve(_ask_profile_for_region)],
    ) -> str:
        """A form, from a tool whose argument travels in an HTTP header too (Mcp-Param-Region)."""
        content = answer.data.model_dump() if answer.action == "accept" else None
        return json.dumps({"tool": "regional", "region": region, "action": answer.action, "content": content})

    @server.tool()
    async def link(tag: str, ctx: Context) -> str | InputRequiredResult:
        """URL mode."""
        got = _elicit(ctx, "link")
        if got is None:
            params = ElicitRequestURLParams(
                message=f"Sign in for {tag}", url=f"https://auth.example.com/?tag={tag}", elicitation_id=tag
            )
            return InputRequiredResult(input_requests={"link": ElicitRequest(params=params)})
        return json.dumps({"tool": "link", "tag": tag, **got})

    @server.tool()
    async def two_rounds(ctx: Context) -> str | InputRequiredResult:
        """A name, then, with the name kept in the request state, a confirmation."""
        confirm = _elicit(ctx, "confirm")
        if confirm is not None and ctx.request_state is not None:
            return json.dumps({"tool": "two_rounds", "name": json.loads(ctx.request_state), **confirm})
        name = _elicit(ctx, "name")
        if name is None:
            return InputRequiredResult(input_requests={"name": _form("Who are you?", NAME_SCHEMA)})
        if name["action"] != "accept":
            return json.dumps({"tool": "two_rounds", "name": None, **name})
        return InputRequiredResult(
            input_requests={"confirm": _form("Go on?", CONFIRM_SCHEMA)},
            request_state=json.dumps(name["content"]),
        )

    @server.tool()
    async def pair(ctx: Context) -> str | InputRequiredResult:
        """Two forms in one round."""
        first, second = _elicit(ctx, "first"), _elicit(ctx, "second")
        if first is None or second is None:
            return InputRequiredResult(
                input_requests={
                    "first": _form("First person?", NAME_SCHEMA),
                    "second": _form("Second person?", NAME_SCHEMA),
                }
            )
        return json.dumps({"tool": "pair", "first": first, "second": second})

    @server.tool()
    async def with_roots(ctx: Context) -> str | InputRequiredResult:
        """A form and the client's roots in one round."""
        answer = _elicit(ctx, "who")
        roots = (ctx.input_responses or {}).get("roots")
        if answer is None or not isinstance(roots, ListRootsResult):
            return InputRequiredResult(
                input_requests={"who": _form("Who are you?", NAME_SCHEMA), "roots": ListRootsRequest()}
            )
        return json.dumps({"tool": "with_roots", "roots": [str(r.uri) for r in roots.roots], **answer})

    @server.tool()
    async def roots_only(ctx: Context) -> str | InputRequiredResult:
        """Only the client's roots: nothing for a human."""
        roots = (ctx.input_responses or {}).get("roots")
        if not isinstance(roots, ListRootsResult):
            return InputRequiredResult(input_requests={"roots": ListRootsRequest()})
        return json.dumps({"tool": "roots_only", "roots": [str(r.uri) for r in roots.roots]})

    @server.prompt()
    async def greeting(ctx: Context) -> str | InputRequiredResult:
        """A prompt that asks for a name."""
        answer = _elicit(ctx, "name")
        if answer is None:
            return InputRequiredResult(input_requests={"name": _form("Greet whom?", NAME_SCHEMA)})
        return f"Hello, {(answer['content'] or {}).get('name')}!"

    @server.resource("note://{title}")
    async def note(title: str, ctx: Context) -> str | InputRequiredResult:
        """A resource that asks for a name."""
        answer = _elicit(ctx, "name")
        if answer is None:
            return InputRequiredResult(input_requests={"name": _form(f"Who reads {title}?", NAME_SCHEMA)})
        return f"{title} for {(answer['content'] or {}).get('name')}"

    return server, journal


def _serve_http(fd: int, key: bytes) -> None:
    from servers.serving import serve_http

    serve_http(build_server(key)[0], fd)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="the durable tests' server over streamable HTTP")
    sub = parser.add_subparsers(dest="transport", required=True)
    http = sub.add_parser("http")
    http.add_argument("--fd", type=int, required=True, help="file descriptor of a listening TCP socket")
    http.add_argument("--key", required=True, help="the request-state key, as hex")
    args = parser.parse_args(argv)
    _serve_http(args.fd, bytes.fromhex(args.key))


if __name__ == "__main__":
    main()
