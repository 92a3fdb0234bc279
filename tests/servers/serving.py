"""How the tests' servers serve streamable HTTP: on a listening socket the parent bound and
handed down (support/http_process.py), with ``GET /health`` answering ``ok`` once it serves."""

from __future__ import annotations

import socket
from collections.abc import Callable
from typing import Any

from mcp.server.mcpserver import MCPServer


def serve_http(server: MCPServer, fd: int, wrap: Callable[[Any], Any] | None = None) -> None:
    """Serve ``server`` over streamable HTTP on the listening socket ``fd`` until stopped;
    ``wrap`` wraps the ASGI app (a recorder of request bodies, say)."""
    import uvicorn
    from starlette.requests import Request
    from starlette.responses import PlainTextResponse, Response

    async def health(request: Request) -> Response:
        return PlainTextResponse("ok")

    app = server.streamable_http_app()
    app.add_route("/health", health, methods=["GET"])
    config = uvicorn.Config(app if wrap is None else wrap(app), log_level="warning", lifespan="on")
    uvicorn.Server(config).run(sockets=[socket.socket(fileno=fd)])


def http_fd(argv: list[str] | None, description: str | None) -> int | None:
    """The command line of a test server, ``stdio`` or ``http --fd N``: the listening socket's
    file descriptor to serve HTTP on, or ``None`` for stdio."""
    import argparse

    parser = argparse.ArgumentParser(description=description)
    sub = parser.add_subparsers(dest="transport", required=True)
    sub.add_parser("stdio", help="serve MCP on stdin/stdout")
    http = sub.add_parser("http", help="serve streamable HTTP on an inherited listening socket")
    http.add_argument("--fd", type=int, required=True, help="file descriptor of a listening TCP socket")
    args = parser.parse_args(argv)
    fd: int | None = getattr(args, "fd", None)
    return fd
