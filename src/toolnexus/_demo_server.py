"""The bundled demo MCP server that ``toolnexus demo`` talks to.

A real :class:`mcp.server.mcpserver.MCPServer` whose tools elicit, in both protocol eras:

- ``deploy``: a form with an enum, a bounded integer, a boolean and a string with a default.
- ``sign_in``: a URL-mode elicitation (an OAuth-style sign-in page).
- ``connect_database``: a form that asks for a password, which the MCP spec forbids; it is
  here to show the client's guard.

Forms are asked through a ``Resolve`` dependency returning an ``Elicit`` marker: the SDK
sends ``elicitation/create`` mid-call on a 2025-11-25 (legacy) connection and returns an
``InputRequiredResult`` on a 2026-07-28 one. URL mode has no such marker, so ``sign_in``
branches on ``ctx.protocol_version``: ``ctx.elicit_url`` in the legacy era, a returned
``InputRequiredResult`` (read back from ``ctx.input_responses`` on the retry) in the new one.

Run it over stdio with ``python -m toolnexus._demo_server``, or over streamable HTTP with
``python -m toolnexus._demo_server --http PORT`` (on 127.0.0.1, path ``/mcp``), or
``--http-fd FD`` to serve on a listening socket inherited from the parent.
"""

from __future__ import annotations

import argparse
import uuid
from typing import TYPE_CHECKING, Annotated, Literal

from mcp.server.mcpserver import Context, Elicit, ElicitationResult, MCPServer, Resolve
from mcp_types import ElicitRequest, ElicitRequestURLParams, ElicitResult, InputRequiredResult
from pydantic import BaseModel, Field

if TYPE_CHECKING:
    import socket

from ._protocol import asks_between_rounds

__all__ = ["DEFAULT_SIGN_IN_URL", "build_server", "main"]

DEFAULT_SIGN_IN_URL = "https://auth.example.com/authorize?client_id=toolnexus-demo&scope=deploy"
"""Where ``sign_in`` sends the user unless its ``url`` argument says otherwise."""

_SIGN_IN_KEY = "sign_in"


# No class docstrings on the forms: pydantic would send them as the schema's description.
class DeployForm(BaseModel):  # what ``deploy`` asks for
    environment: Literal["staging", "production"] = Field(title="Environment", description="Where to deploy")
    replicas: int = Field(title="Replicas", description="How many instances to run", ge=1, le=10)
    notify: bool = Field(default=True, title="Notify the team", description="Post in the team channel")
    note: str = Field(default="routine deploy", title="Note", description="Shown in the deploy log")


class DatabaseLogin(BaseModel):  # a password: the spec forbids this in a form
    username: str = Field(title="User name")
    password: str = Field(title="Password", description="The database password")


def _ask_deploy(ctx: Context) -> Elicit[DeployForm]:
    return Elicit("Where should the demo service be deployed?", DeployForm)


def _ask_login(ctx: Context) -> Elicit[DatabaseLogin]:
    return Elicit("Log in to the demo database", DatabaseLogin)


def _outcome(result: ElicitationResult[DeployForm] | ElicitationResult[DatabaseLogin]) -> str:
    return "declined" if result.action == "decline" else "cancelled"


def build_server() -> MCPServer:
    """Build the demo server with its three tools."""
    server = MCPServer("toolnexus-demo", log_level="WARNING")

    @server.tool()
    def deploy(form: Annotated[ElicitationResult[DeployForm], Resolve(_ask_deploy)]) -> str:
        """Deploy the demo service, asking where and how through a form."""
        if form.action != "accept":
            return f"Deploy {_outcome(form)}: nothing was deployed."
        data = form.data
        notify = "the team is notified" if data.notify else "nobody is notified"
        return (
            f"Deployed to {data.environment} with {data.replicas} "
            f"replica{'s' if data.replicas != 1 else ''}; {notify}; note: {data.note}."
        )

    @server.tool()
    async def sign_in(ctx: Context, url: str = DEFAULT_SIGN_IN_URL) -> str | InputRequiredResult:
        """Ask the user to sign in on a web page (a URL-mode elicitation)."""
        message = "Sign in to the demo service to authorize deploys"
        version = ctx.protocol_version
        if not asks_between_rounds(version):
            outcome = await ctx.elicit_url(message, url, uuid.uuid4().hex)
            action = outcome.action
        else:
            responses = ctx.input_responses or {}
            response = responses.get(_SIGN_IN_KEY)
            if response is None:
                params = ElicitRequestURLParams(message=message, url=url, elicitation_id=uuid.uuid4().hex)
                return InputRequiredResult(input_requests={_SIGN_IN_KEY: ElicitRequest(params=params)})
            if not isinstance(response, ElicitResult):
                raise ValueError("the sign-in response is not an elicitation result")
            action = response.action
        if action == "accept":
            return "Sign-in page opened; the demo service waits for the sign-in to complete."
        return f"Sign-in {'declined' if action == 'decline' else 'cancelled'}."

    @server.tool()
    def connect_database(login: Annotated[ElicitationResult[DatabaseLogin], Resolve(_ask_login)]) -> str:
        """Connect to a database, asking for a password in a form (which the spec forbids)."""
        if login.action != "accept":
            return f"Database login {_outcome(login)}: not connected."
        return f"Connected to the demo database as {login.data.username}."

    return server


def tcp_listener(sock: socket.socket) -> socket.socket:
    """A listening socket as asyncio needs it to serve keep-alive connections without delay.

    asyncio sets ``TCP_NODELAY`` on an accepted connection only when the listening socket's
    ``proto`` is ``IPPROTO_TCP``, and a socket made with ``socket.socket(family,
    SOCK_STREAM)`` has ``proto`` 0: Nagle's algorithm then holds each response's last
    segment until the client's delayed ACK, about 40 ms a request on Linux. A TCP socket
    is returned as one of ``IPPROTO_TCP`` (the same descriptor); another is returned as it
    is. (The inbox makes its own socket so: ``toolnexus.inbox._serve.listen``.)
    """
    import socket

    if sock.family not in (socket.AF_INET, socket.AF_INET6) or sock.proto == socket.IPPROTO_TCP:
        return sock
    return socket.socket(sock.family, sock.type, socket.IPPROTO_TCP, fileno=sock.detach())


def _serve_socket(server: MCPServer, fd: int) -> None:
    import socket

    import uvicorn

    sock = tcp_listener(socket.socket(fileno=fd))  # whoever made it
    config = uvicorn.Config(server.streamable_http_app(), log_level="warning", lifespan="on")
    uvicorn.Server(config).run(sockets=[sock])


def main(argv: list[str] | None = None) -> None:
    """Run the demo server: over stdio, or streamable HTTP with ``--http PORT`` or ``--http-fd FD``."""
    parser = argparse.ArgumentParser(
        prog="python -m toolnexus._demo_server", description="The toolnexus demo MCP server."
    )
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--http", type=int, metavar="PORT", help="serve streamable HTTP on 127.0.0.1:PORT (path /mcp)"
    )
    where.add_argument(
        "--http-fd", type=int, metavar="FD", help="serve streamable HTTP on an inherited listening socket"
    )
    args = parser.parse_args(argv)
    server = build_server()
    if args.http is not None:
        server.run("streamable-http", host="127.0.0.1", port=args.http)
    elif args.http_fd is not None:
        _serve_socket(server, args.http_fd)
    else:
        server.run()


if __name__ == "__main__":
    main()
