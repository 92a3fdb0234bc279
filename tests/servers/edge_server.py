"""An MCP server for the edges: URL elicitation by error (-32042), questions asked the 2025-11-25
way, hostile text, structured results, the environment and stderr.

It runs in process (``mcp.Client(build_server())``), as a stdio subprocess (``python
path/to/edge_server.py``; it needs only the SDK) or over streamable HTTP on a listening
socket the parent hands down (``python path/to/edge_server.py --http-fd N``). Each process
also serves a small "sign-in site" over HTTP on 127.0.0.1: the URLs its ``-32042`` errors
carry point there, and a GET of one (the user "finishing in the browser") makes the server
send ``notifications/elicitation/complete`` for that elicitation, as a real server does
when its OAuth callback arrives.

Tools:

- ``needs_sign_in(tag, count=1, complete=True)``: the first call for a ``tag`` raises
  ``UrlElicitationRequiredError`` with ``count`` URL elicitations; the next call for that tag
  succeeds (``"signed in: <tag> after <n> visits"``, counting the URLs visited). With
  ``complete=False`` a visit does not send the completion notification; a visit to
  ``/done/unknown`` sends one for an id nobody asked about.
- ``ask_legacy_way()``: ``ctx.elicit`` without catching its failure: under 2026-07-28 the
  tool fails with the SDK's "no back-channel" error; under the legacy era it asks a name.
- ``hostile_text()``: a result, a log message and nothing else, full of terminal escapes
  and bidi controls.
- ``hostile_error()``, ``hostile_rpc_error()``: fail with such text (a tool error, a JSON-RPC
  error).
- ``structured(n)``: a result with structured content ``{"n": n, "double": 2n}``.
- ``env(name)``: ``repr`` of an environment variable in the server process (no structured
  content).
- ``to_stderr(text)``: writes ``text`` to the server's stderr and returns ``"written"``.
- ``slow_ask(delay, mark)``: creates the file ``mark``, waits ``delay`` seconds, then asks a
  name as ``ask_new_way`` does (a server killed during the wait dies before its question).
- ``die_on_answer()``: asks a name as ``ask_new_way`` does; the answer kills the process
  before the tool returns (a server that dies while the answer is sent).
- ``plain_hostile()``: returns the hostile text, nothing else (either era, no log).
- ``hostile_after_asking()``: asks a name, then returns the hostile text and the name.
- ``big(lines)``: ``lines`` numbered lines of text.
- ``hostile_form()``: (2026-07-28) a form whose field names hold U+202E, U+009B and U+200B,
  each with a default; returns the answer's action and content as JSON.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import threading
import warnings
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Annotated, Any

from mcp.server.mcpserver import Context, Elicit, ElicitationResult, MCPServer, Resolve
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError, UrlElicitationRequiredError
from mcp_types import (
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitRequestURLParams,
    ElicitResult,
    InputRequiredResult,
)
from pydantic import BaseModel

__all__ = ["HOSTILE", "HOSTILE_FIELDS", "build_server"]

HOSTILE = "\x1b]0;pwned\x07\x1b[2J\x1b[8mhidden\x1b[0m Password: \u202eevil\u202c end"
"""Text that would retitle the window, clear the screen, conceal text and reverse it."""
HOSTILE_FIELDS = ("rev\u202eersed", "csi\u009b2J", "zero\u200bwidth")
"""Field names with a bidi override, a C1 control sequence introducer and a zero-width space."""


class Name(BaseModel):
    name: str


class _SignInSite:
    """The HTTP side of the sign-in: a visit to ``/done/<id>`` completes elicitation ``id``."""

    def __init__(self) -> None:
        self.visits: dict[str, int] = {}
        self.waiting: dict[str, tuple[Any, asyncio.AbstractEventLoop, bool]] = {}
        self._lock = threading.Lock()
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                site.visit(self.path.rsplit("/", 1)[-1])
                body = b"signed in; you may close this page\n"
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self._http.server_address[1]}"
        threading.Thread(target=self._http.serve_forever, daemon=True).start()

    def visit(self, elicitation_id: str) -> None:
        with self._lock:
            self.visits[elicitation_id] = self.visits.get(elicitation_id, 0) + 1
            entry = self.waiting.get(elicitation_id)
            if elicitation_id == "unknown" and self.waiting:
                entry = next(iter(self.waiting.values()))
        if entry is None:
            return
        session, loop, complete = entry
        if complete:
            future = asyncio.run_coroutine_threadsafe(session.send_elicit_complete(elicitation_id), loop)
            future.result(timeout=10)

    def expect(self, elicitation_id: str, session: Any, complete: bool) -> None:
        with self._lock:
            self.waiting[elicitation_id] = (session, asyncio.get_running_loop(), complete)


def _ask_name() -> Elicit[Name]:
    return Elicit("What is your name?", Name)


async def _ask_name_later(delay: float, mark: str) -> Elicit[Name]:
    with open(mark, "w"):  # the call has reached the server
        pass
    await asyncio.sleep(delay)
    return Elicit("What is your name?", Name)


def build_server(name: str = "edge-server") -> MCPServer:
    server = MCPServer(name)
    site = _SignInSite()
    issued: dict[str, list[str]] = {}

    @server.tool()
    async def needs_sign_in(tag: str, ctx: Context, count: int = 1, complete: bool = True) -> str:
        """Needs the user to sign in at a URL first (-32042), then succeeds."""
        if tag in issued:
            visited = sum(site.visits.get(eid, 0) for eid in issued.pop(tag))
            return f"signed in: {tag} after {visited} visits"
        ids = [f"{tag}-{n}" for n in range(1, count + 1)]
        issued[tag] = ids
        for eid in ids:
            site.expect(eid, ctx.session, complete)
        raise UrlElicitationRequiredError(
            [
                ElicitRequestURLParams(
                    message=f"Sign in ({eid})", url=f"{site.base}/done/{eid}", elicitation_id=eid
                )
                for eid in ids
            ]
        )

    @server.tool()
    async def ask_new_way(answer: Annotated[ElicitationResult[Name], Resolve(_ask_name)]) -> str:
        """Asks through a Resolve dependency: an InputRequiredResult from 2026-07-28 on."""
        return f"{answer.action}: {answer.data.name if answer.action == 'accept' else ''}"

    @server.tool()
    async def ask_legacy_way(ctx: Context) -> str:
        """Asks with ctx.elicit, and lets its failure through."""
        answer = await ctx.elicit("What is your name?", Name)
        return f"{answer.action}: {answer.data.name if answer.action == 'accept' else ''}"

    @server.tool()
    async def hostile_text(ctx: Context) -> str:
        """Text full of terminal escapes, as a result and as a log message."""
        with warnings.catch_warnings():  # logging is deprecated in 2026-07-28; this is a legacy-era test
            warnings.simplefilter("ignore")
            await ctx.warning(f"log: {HOSTILE}")
        return f"result: {HOSTILE}"

    @server.tool()
    async def slow_ask(
        delay: float, mark: str, answer: Annotated[ElicitationResult[Name], Resolve(_ask_name_later)]
    ) -> str:
        """Waits, then asks (the wait is in the question's resolver, before it is sent)."""
        return f"{answer.action}: {answer.data.name if answer.action == 'accept' else ''}"

    @server.tool()
    async def die_on_answer(answer: Annotated[ElicitationResult[Name], Resolve(_ask_name)]) -> str:
        """Asks; dies on the answer, before returning."""
        os.kill(os.getpid(), signal.SIGKILL)
        return "never"

    @server.tool()
    async def plain_hostile() -> str:
        """Text full of terminal escapes, and nothing else."""
        return f"result: {HOSTILE}"

    @server.tool()
    async def hostile_after_asking(answer: Annotated[ElicitationResult[Name], Resolve(_ask_name)]) -> str:
        """Asks, then returns text full of terminal escapes."""
        return f"result: {HOSTILE} {answer.action}"

    @server.tool()
    async def big(lines: int) -> str:
        """Many lines of text."""
        return "\n".join(f"line {n}" for n in range(1, lines + 1))

    @server.tool()
    async def hostile_form(ctx: Context) -> str | InputRequiredResult:
        """A form with hostile field names, each with a default (2026-07-28 only)."""
        response = (ctx.input_responses or {}).get("form")
        if isinstance(response, ElicitResult):
            return json.dumps({"action": response.action, "content": response.content})
        fields = {name: {"type": "string", "default": "x"} for name in HOSTILE_FIELDS}
        schema = {"type": "object", "properties": fields}
        params = ElicitRequestFormParams(message="Hostile names", requested_schema=schema)
        return InputRequiredResult(input_requests={"form": ElicitRequest(params=params)})

    @server.tool()
    async def hostile_error() -> str:
        """Fails (a tool error) with text full of terminal escapes."""
        raise ToolError(f"error: {HOSTILE}")

    @server.tool()
    async def hostile_rpc_error() -> str:
        """Fails (a JSON-RPC error) with text full of terminal escapes."""
        raise MCPError(-32001, f"rpc error: {HOSTILE}")

    @server.tool()
    async def structured(n: int) -> dict[str, int]:
        """A structured result."""
        return {"n": n, "double": 2 * n}

    @server.tool(structured_output=False)
    async def env(name: str) -> str:
        """An environment variable of the server process."""
        return repr(os.environ.get(name))

    @server.tool()
    async def to_stderr(text: str) -> str:
        """Writes to the server's stderr."""
        sys.stderr.write(text + "\n")
        sys.stderr.flush()
        return "written"

    return server


def _serve_http(fd: int) -> None:
    import socket

    import uvicorn

    config = uvicorn.Config(build_server().streamable_http_app(), log_level="warning", lifespan="on")
    uvicorn.Server(config).run(sockets=[socket.socket(fileno=fd)])


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http-fd":
        _serve_http(int(sys.argv[2]))
    else:
        build_server().run("stdio")
