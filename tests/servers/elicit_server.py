"""An MCP server whose tools elicit, in both protocol eras, and remember what they saw.

The same server runs in process (``mcp.Client(build_server()[0])``), as a stdio subprocess
(``python -m servers.elicit_server stdio``, run from the ``tests`` directory) and over
streamable HTTP (``python -m servers.elicit_server http --fd N``, serving on a listening
socket the parent bound and handed down).

Tools:

- ``form(tag)``: form mode through a ``Resolve(...)``/``Elicit(...)`` dependency. Works in both
  eras: under 2026-07-28 the SDK returns an ``InputRequiredResult`` and resumes on the retry;
  under 2025-11-25 and before it sends ``elicitation/create`` mid-call.
- ``form_elicit(tag)``: form mode through ``ctx.elicit(message, Profile)`` (legacy era only).
- ``url(tag)``: URL mode. Legacy era: ``elicitation/create`` via ``ctx.session.elicit_url``
  (the call ``ctx.elicit_url`` wraps; used here because it hands back the raw ``ElicitResult``,
  content included). 2026-07-28: returns an ``InputRequiredResult`` and reads
  ``ctx.input_responses`` on the retry.
- ``url_elicit(tag)``: URL mode through ``ctx.elicit_url(...)`` (legacy era only).
- ``capabilities()``: the client capabilities the server holds for this request.
- ``journal_dump()``: everything the server has seen so far, as JSON.

Every elicitation tool answers with a JSON object ``{"era", "tool", "action", "content"}``
(``content`` is what arrived with an accept, ``None`` otherwise), or ``{"era", "tool",
"action": "error", "error"}`` when the elicitation failed on the server side. ``Profile``
validates strictly, so accepted content is reported exactly as it arrived, never coerced.

The journal records every inbound request and notification (method and raw params, through
a server middleware), every outcome and failure a tool saw, and, on stdio and HTTP, every
raw line or request body that reached the process. A test asserts that a secret is absent
from it.
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from typing import Annotated, Any, cast

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import Context, Elicit, ElicitationResult, MCPServer, Resolve
from mcp_types import ElicitRequest, ElicitRequestURLParams, InputRequiredResult
from mcp_types.version import is_version_at_least
from pydantic import BaseModel, ConfigDict, Field

__all__ = ["LINK_KEY", "Journal", "Profile", "build_server", "profile_message", "url_for"]

LINK_KEY = "link"
"""The ``input_requests`` key of the 2026-07-28 URL elicitation."""

INPUT_REQUIRED_VERSION = "2026-07-28"
"""The first protocol version that elicits through ``InputRequiredResult``."""


class Profile(BaseModel):
    """What the form tools ask for: a string, an integer, a formatted string, a boolean."""

    model_config = ConfigDict(strict=True)

    name: str = Field(min_length=2, max_length=40, description="Your name")
    age: int = Field(ge=0, le=150)
    email: str = Field(json_schema_extra={"format": "email"})
    newsletter: bool = False


def profile_message(tag: str) -> str:
    return f"Profile for {tag}"


def url_for(tag: str) -> str:
    return f"https://auth.example.com/authorize?tag={tag}"


def ask_profile(tag: str) -> Elicit[Profile]:
    """The ``Resolve`` dependency of the ``form`` tool: one form question per call."""
    return Elicit(profile_message(tag), Profile)


class Journal:
    """Everything the server saw, in arrival order. Thread-safe; values kept as JSON text."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: list[str] = []

    def add(self, kind: str, **data: Any) -> None:
        entry = json.dumps({"kind": kind, **data}, default=repr, sort_keys=True)
        with self._lock:
            self._entries.append(entry)

    def dump(self) -> str:
        with self._lock:
            return "[" + ",".join(self._entries) + "]"


def _error_chain(exc: BaseException) -> list[str]:
    """The type and text of an exception and everything it was raised from."""
    chain: list[str] = []
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        chain.append(f"{type(current).__name__}: {current}")
        data = getattr(current, "error", None)
        if data is not None:
            chain.append(repr(data))
        current = current.__cause__ or current.__context__
    return chain


def build_server(name: str = "elicit-server") -> tuple[MCPServer, Journal]:
    """A fresh server and the journal it writes to."""
    journal = Journal()

    async def record_inbound(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        journal.add("inbound", method=ctx.method, params=ctx.params)
        try:
            return await call_next(ctx)
        except Exception as exc:
            journal.add("inbound-failed", method=ctx.method, error=_error_chain(exc))
            raise

    server = MCPServer(name, middleware=[record_inbound])

    def report(ctx: Context, tool: str, action: str, content: Any) -> str:
        outcome = {"era": ctx.protocol_version, "tool": tool, "action": action, "content": content}
        journal.add("outcome", **outcome)
        return json.dumps(outcome, sort_keys=True)

    def report_error(ctx: Context, tool: str, exc: BaseException) -> str:
        chain = _error_chain(exc)
        journal.add("failure", tool=tool, error=chain)
        return json.dumps({"era": ctx.protocol_version, "tool": tool, "action": "error", "error": chain})

    @server.tool()
    async def form(
        tag: str, ctx: Context, answer: Annotated[ElicitationResult[Profile], Resolve(ask_profile)]
    ) -> str:
        """Ask for a Profile through a Resolve dependency (both eras)."""
        if ctx.input_responses:
            raw = {
                key: value.model_dump(mode="json", by_alias=True)
                for key, value in ctx.input_responses.items()
            }
            journal.add("input-responses", tool="form", responses=raw)
        content = answer.data.model_dump(exclude_unset=True) if answer.action == "accept" else None
        return report(ctx, "form", answer.action, content)

    @server.tool()
    async def form_elicit(tag: str, ctx: Context) -> str:
        """Ask for a Profile with ctx.elicit (legacy era)."""
        try:
            answer = await ctx.elicit(profile_message(tag), Profile)
        except Exception as exc:
            return report_error(ctx, "form_elicit", exc)
        content = answer.data.model_dump(exclude_unset=True) if answer.action == "accept" else None
        return report(ctx, "form_elicit", answer.action, content)

    @server.tool()
    async def url(tag: str, ctx: Context) -> str | InputRequiredResult:
        """Ask the user to visit a URL (both eras); report the raw result, content included."""
        if ctx.protocol_version is not None and is_version_at_least(
            ctx.protocol_version, INPUT_REQUIRED_VERSION
        ):
            if not ctx.input_responses or LINK_KEY not in ctx.input_responses:
                params = ElicitRequestURLParams(
                    message=f"Link for {tag}", url=url_for(tag), elicitation_id=f"elicit-{tag}"
                )
                return InputRequiredResult(input_requests={LINK_KEY: ElicitRequest(params=params)})
            raw = ctx.input_responses[LINK_KEY].model_dump(mode="json", by_alias=True)
            journal.add("input-responses", tool="url", responses={LINK_KEY: raw})
            return report(ctx, "url", raw.get("action", "?"), raw.get("content"))
        try:
            result = await ctx.session.elicit_url(
                message=f"Link for {tag}",
                url=url_for(tag),
                elicitation_id=f"elicit-{tag}",
                related_request_id=ctx.request_id,
            )
        except Exception as exc:
            return report_error(ctx, "url", exc)
        return report(ctx, "url", result.action, result.content)

    @server.tool()
    async def url_elicit(tag: str, ctx: Context) -> str:
        """Ask the user to visit a URL with ctx.elicit_url (legacy era)."""
        try:
            result = await ctx.elicit_url(f"Link for {tag}", url_for(tag), f"elicit-{tag}")
        except Exception as exc:
            return report_error(ctx, "url_elicit", exc)
        return report(ctx, "url_elicit", result.action, None)

    @server.tool()
    async def capabilities(ctx: Context) -> str:
        """The client's declared capabilities, as the server holds them."""
        caps = ctx.client_capabilities
        dumped = None if caps is None else caps.model_dump(mode="json", by_alias=True, exclude_none=True)
        return json.dumps({"era": ctx.protocol_version, "capabilities": dumped})

    @server.tool()
    async def journal_dump() -> str:
        """Everything this server has seen."""
        return journal.dump()

    return server, journal


# --- running it as a process -------------------------------------------------------------


class _RecordedLines:
    """An async line iterator that journals each raw line before handing it on."""

    def __init__(self, lines: Any, journal: Journal) -> None:
        self._lines = lines
        self._journal = journal

    def __aiter__(self) -> AsyncIterator[str]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[str]:
        async for line in self._lines:
            self._journal.add("wire", line=line)
            yield line


async def _serve_stdio() -> None:
    import io

    import anyio
    from mcp.server.stdio import stdio_server

    server, journal = build_server()
    stdin = anyio.wrap_file(io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8"))
    recorded = cast("anyio.AsyncFile[str]", _RecordedLines(stdin, journal))
    async with stdio_server(stdin=recorded) as (read_stream, write_stream):
        # What MCPServer.run_stdio_async does, with the recording stdin in place of its own.
        lowlevel = server._lowlevel_server
        await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())


ASGIApp = Callable[
    [MutableMapping[str, Any], Callable[[], Awaitable[Any]], Callable[[Any], Awaitable[None]]],
    Awaitable[None],
]


def _record_bodies(app: ASGIApp, journal: Journal) -> ASGIApp:
    """Wrap an ASGI app so the body of every HTTP request is journaled as it arrives."""

    async def wrapped(
        scope: MutableMapping[str, Any],
        receive: Callable[[], Awaitable[Any]],
        send: Callable[[Any], Awaitable[None]],
    ) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return

        async def recording_receive() -> Any:
            message = await receive()
            body = message.get("body") if isinstance(message, dict) else None
            if body:
                journal.add("wire", method=scope.get("method"), body=body.decode("utf-8", "replace"))
            return message

        await app(scope, recording_receive, send)

    return wrapped


def _serve_http(fd: int) -> None:
    from servers.serving import serve_http

    server, journal = build_server()
    serve_http(server, fd, lambda app: _record_bodies(cast(ASGIApp, app), journal))


def main(argv: list[str] | None = None) -> None:
    from servers.serving import http_fd

    fd = http_fd(argv, __doc__.splitlines()[0] if __doc__ else None)
    if fd is None:
        import anyio

        anyio.run(_serve_stdio)
    else:
        _serve_http(fd)


if __name__ == "__main__":
    main()
