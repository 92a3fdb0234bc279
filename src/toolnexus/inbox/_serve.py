"""``toolnexus inbox STORE``: the inbox served by uvicorn on one address, with a token."""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import secrets
import socket
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

__all__ = ["Serving", "serve", "serving"]

logger = logging.getLogger("toolnexus.inbox")

if TYPE_CHECKING:
    from ..notify import Notifier


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


class _Server:
    """The inbox's uvicorn server on its own listening socket, with the address to open."""

    def __init__(
        self,
        store: Any,
        *,
        host: str,
        port: int,
        token: str | None,
        allow_hosts: Iterable[str],
        options: dict[str, Any],
    ) -> None:
        import uvicorn

        from ._app import app

        token = token or secrets.token_urlsafe(32)
        self.sock = listen(host, port)
        port = self.sock.getsockname()[1]
        hosts = allowed_hosts(host, port, allow_hosts)
        if not _loopback(host):
            logger.warning(
                "serving on %s, not a loopback address: anyone who can reach it and holds the token can "
                "answer; put it behind TLS (a reverse proxy) before you share the address, and name the "
                "host people open with --allow-host (answered now: %s)",
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
        self.server = uvicorn.Server(config)
        self.shown = f"[{host}]" if ":" in host else host
        self.port = port
        self.address = f"http://{self.shown}:{port}/?token={token}"

    async def run(self, on_ready: Callable[[str], None], notifier: Any = None) -> None:
        server = self.server
        telling = asyncio.ensure_future(notifier.run()) if notifier is not None else None

        async def announce() -> None:
            while not server.started:
                if server.should_exit:
                    return
                await asyncio.sleep(0.02)
            on_ready(self.address)
            logger.info("inbox ready on http://%s:%d/", self.shown, self.port)

        waiter = asyncio.ensure_future(announce())
        try:
            await server.serve(sockets=[self.sock])
        finally:
            waiter.cancel()
            if telling is not None:
                notifier.stop()
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(telling, 5)
            self.sock.close()


def serve(
    store: Any,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    token: str | None = None,
    allow_hosts: Iterable[str] = (),
    on_ready: Callable[[str], None] | None = None,
    notifier: Notifier | None = None,
    **options: Any,
) -> None:
    """Serve the inbox for ``store`` until interrupted (Ctrl-C, SIGTERM); with ``notifier``
    (a [`Notifier`][toolnexus.notify.Notifier] of the same store), send its notifications
    meanwhile.

    Binds ``host``:``port`` (``port=0``: a free one); once it answers, gives ``on_ready``
    (default: print it on stdout) one line: the address to open, with the access token
    (``token``, or a fresh random one). ``allow_hosts``: more ``Host`` names to answer (a
    proxy's), besides the bound address (and ``localhost`` on a loopback one). Logs go to
    the ``toolnexus.inbox`` logger; the access log shows paths without their query string.
    Another address than a loopback one is served only when asked, with a warning: put it
    behind TLS. ``options`` go to [`app`][toolnexus.inbox.app].
    """
    served = _Server(store, host=host, port=port, token=token, allow_hosts=allow_hosts, options=options)
    ready = on_ready if on_ready is not None else (lambda line: print(line, flush=True))
    try:
        asyncio.run(served.run(ready, notifier))
    finally:
        served.sock.close()


class Serving:
    """The inbox served in a thread of this process, for as long as a host needs it (made by
    [`serving`][toolnexus.inbox.serving]): ``address`` is the link to open, with its token."""

    def __init__(self, served: _Server) -> None:
        self._served = served
        self.address = served.address
        """``http://127.0.0.1:PORT/?token=...``: the page to open."""
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name="toolnexus inbox", daemon=True)

    def _run(self) -> None:
        asyncio.run(self._served.run(lambda _: self._ready.set()))

    def start(self) -> None:
        self._thread.start()
        if not self._ready.wait(30):
            self.stop()
            raise OSError("the inbox did not start within 30 s")

    def stop(self) -> None:
        """Stop serving (open pages are closed within two seconds)."""
        self._served.server.should_exit = True
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(10)
        self._served.sock.close()


@contextlib.contextmanager
def serving(
    store: Any, *, host: str = "127.0.0.1", port: int = 0, token: str | None = None, **options: Any
) -> Iterator[Serving]:
    """Serve the inbox for ``store`` in a background thread while inside: for a host (or
    ``toolnexus call --browser``) that shows its own questions in a browser for as long as a
    call runs.

    ```python
    with inbox.serving(store) as served:
        print("answer at", served.address)
        ...  # the call, asking with durable.ask_in(store)
    ```

    Bound and answering when the block starts (``port=0``: a free port); stopped when it
    ends. ``options`` go to [`app`][toolnexus.inbox.app].
    """
    served = Serving(_Server(store, host=host, port=port, token=token, allow_hosts=(), options=options))
    served.start()
    try:
        yield served
    finally:
        served.stop()
