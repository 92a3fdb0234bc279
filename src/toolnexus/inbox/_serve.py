"""``toolnexus inbox STORE``: the inbox served by uvicorn on one address, with a token."""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import secrets
import socket
from collections.abc import Callable, Iterable
from typing import Any

__all__ = ["serve"]

logger = logging.getLogger("toolnexus.inbox")


def _loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return host == "localhost"


def allowed_hosts(host: str, port: int, extra: Iterable[str] = ()) -> list[str]:
    """The ``Host`` headers an inbox bound to ``host``:``port`` answers."""
    shown = f"[{host}]" if ":" in host else host
    names = {f"{shown}:{port}", *(f"{name}:{port}" if ":" not in name else name for name in extra)}
    if _loopback(host):
        names.update({f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}"})
    return sorted(names)


def listen(host: str, port: int) -> socket.socket:
    """The inbox's listening socket on ``host``:``port`` (0: a free port). A TCP socket by
    its ``proto`` too, so that asyncio turns Nagle's algorithm off on each connection (see
    ``toolnexus._demo_server.tcp_listener``): a browser's keep-alive requests are not held
    40 ms each."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    sock.listen(128)
    return sock


def serve(
    store: Any,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    token: str | None = None,
    allow_hosts: Iterable[str] = (),
    on_ready: Callable[[str], None] | None = None,
    **options: Any,
) -> None:
    """Serve the inbox for ``store`` until interrupted (Ctrl-C, SIGTERM).

    Binds ``host``:``port`` (``port=0``: a free one); once it answers, gives ``on_ready``
    (default: print it on stdout) one line: the address to open, with the access token
    (``token``, or a fresh random one). ``allow_hosts``: more ``Host`` names to answer (a
    proxy's), besides the bound address (and ``localhost`` on a loopback one). Logs go to
    the ``toolnexus.inbox`` logger; the access log shows paths without their query string.
    Another address than a loopback one is served only when asked, with a warning: put it
    behind TLS. ``options`` go to [`app`][toolnexus.inbox.app].
    """
    import uvicorn

    from ._app import app

    token = token or secrets.token_urlsafe(32)
    sock = listen(host, port)
    port = sock.getsockname()[1]
    hosts = allowed_hosts(host, port, allow_hosts)
    if not _loopback(host):
        logger.warning(
            "serving on %s, not a loopback address: anyone who can reach it and holds the token can answer; "
            "put it behind TLS (a reverse proxy) before you share the address, and name the host people "
            "open with --allow-host (answered now: %s)",
            host,
            ", ".join(hosts),
        )
    application = app(store, token=token, allowed_hosts=hosts, **options)
    config = uvicorn.Config(
        application,
        access_log=False,  # the inbox logs its own access lines, without query strings
        log_config=None,
        lifespan="off",
        timeout_graceful_shutdown=2,
        server_header=False,
    )
    server = uvicorn.Server(config)
    shown = f"[{host}]" if ":" in host else host
    address = f"http://{shown}:{port}/?token={token}"
    ready = on_ready if on_ready is not None else (lambda line: print(line, flush=True))

    async def announce() -> None:
        while not server.started:
            if server.should_exit:
                return
            await asyncio.sleep(0.02)
        ready(address)
        logger.info("inbox ready on http://%s:%d/", shown, port)

    async def main() -> None:
        waiter = asyncio.ensure_future(announce())
        try:
            await server.serve(sockets=[sock])
        finally:
            waiter.cancel()

    try:
        asyncio.run(main())
    finally:
        sock.close()
