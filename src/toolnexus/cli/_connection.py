"""The one set of connection options, the server they name, and a connection's life.

Every command that connects adds its options with :func:`add_connection_options`, reads
the server with :func:`server_from` and talks to it inside :func:`run_connected`, which
turns every way a connection can end into one line naming the server and exit 3:

- the handshake does not finish within ``--connect-timeout`` seconds;
- the server cannot be started or reached;
- the connection is lost while a command works, whoever is at the prompt. It is found by
  the transport's own signal: the stdio server's output ends (its process exited), the
  streamable HTTP transport fails. On a 2026-07-28 connection over HTTP, where no request
  stays open while a question is shown, a ``server/discover`` (a request that era allows at
  any time; ``ping`` is removed in it) is sent every :data:`PROBE_EVERY` seconds while a
  question is shown, so that a server that died is found within a few seconds.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import select
import shlex
import sys
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from ._base import EXIT_CONNECTION, EXIT_USAGE, CliError
from ._output import one_line, reason

if TYPE_CHECKING:
    from mcp import Client
    from mcp_types import LoggingMessageNotificationParams

__all__ = [
    "CONNECT_TIMEOUT",
    "PROBE_EVERY",
    "ServerTarget",
    "add_connection_options",
    "connection_closed",
    "demo_target",
    "is_connection_failure",
    "make_client",
    "run_connected",
    "server_from",
    "shorten",
]

CONNECT_TIMEOUT = 30.0
"""Seconds the handshake may take (``--connect-timeout``) before the command gives up."""
PROBE_EVERY = 1.0
"""Seconds between the ``server/discover`` probes that watch a 2026-07-28 HTTP connection
while a question is shown."""
PROBE_TIMEOUT = 3.0
"""Seconds a probe may wait for its answer; a server that answers late is alive."""
SERVER_LOG_LIMIT = 1000
"""Characters of one log message from the server shown."""

_LOG = logging.getLogger(__name__)


# --- the options ---------------------------------------------------------------------------


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not (0 < value < 1e6):
        raise argparse.ArgumentTypeError(f"{text!r} must be a positive number of seconds")
    return value


def add_connection_options(parser: argparse.ArgumentParser, *, server: bool = True) -> None:
    """The options of every command that connects: with ``server``, ``--stdio``/``--url``
    (one is required), ``--env`` and ``--server-stderr``; always ``--protocol`` and
    ``--connect-timeout``."""
    if server:
        where = parser.add_mutually_exclusive_group(required=True)
        where.add_argument(
            "--stdio",
            metavar='"CMD ARGS"',
            help="start the server with this command line; it gets your environment, as in the shell",
        )
        where.add_argument(
            "--url", metavar="URL", help="connect to a streamable HTTP server at URL (http or https)"
        )
        parser.add_argument(
            "--env",
            action="append",
            metavar="KEY=VALUE",
            help="(with --stdio) set an environment variable for the server; may be repeated",
        )
        parser.add_argument(
            "--server-stderr", metavar="FILE", help="(with --stdio) append the server's stderr to FILE"
        )
    parser.add_argument(
        "--protocol",
        default="auto",
        metavar="MODE",
        help="protocol negotiation, the MCP client's mode: auto (the default: 2026-07-28 when the "
        "server speaks it, else the handshake), legacy (the initialize handshake, for protocol "
        "2025-11-25 and before; use it when a server asks its questions the 2025-11-25 way) or "
        "2026-07-28 (that version, without probing)",
    )
    parser.add_argument(
        "--connect-timeout",
        type=_seconds,
        default=CONNECT_TIMEOUT,
        metavar="SECONDS",
        help=f"give up (exit 3) when the server has not finished the handshake within SECONDS "
        f"(default {CONNECT_TIMEOUT:g})",
    )


# --- the server -------------------------------------------------------------------------------


def shorten(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True)
class ServerTarget:
    """The server to reach: a stdio command (``StdioServerParameters``) or a URL, where a
    stdio server's stderr goes, and the label failures name it by."""

    target: Any
    label: str
    errlog: TextIO | None = None

    @property
    def is_http(self) -> bool:
        return isinstance(self.target, str)


def _url_target(url: str) -> ServerTarget:
    from urllib.parse import urlsplit

    shown = one_line(shorten(url, 200))
    try:
        parts = urlsplit(url)
        _ = parts.port  # a port that is not a number raises ValueError
    except ValueError:
        raise CliError(EXIT_USAGE, f"--url: {shown} is not a URL") from None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        hint = f" (did you mean http://{shown}?)" if "://" not in url else ""
        raise CliError(EXIT_USAGE, f"--url: {shown} is not an http:// or https:// URL{hint}")
    # The label names the server; a user name or password in the URL is not repeated.
    host = parts.hostname + (f":{parts.port}" if parts.port is not None else "")
    label = one_line(parts._replace(netloc=host, query="", fragment="").geturl())
    return ServerTarget(url, label)


def _environment(pairs: Sequence[str]) -> dict[str, str]:
    """The user's environment, as a shell would give it to the server, with ``--env`` over it."""
    env = dict(os.environ)
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise CliError(EXIT_USAGE, f"--env: {one_line(pair)!r} is not KEY=VALUE")
        env[key] = value
    return env


def _stdio_target(args: argparse.Namespace, stack: contextlib.ExitStack) -> ServerTarget:
    from mcp import StdioServerParameters

    try:
        argv = shlex.split(args.stdio)
    except ValueError as err:
        raise CliError(EXIT_USAGE, f"--stdio: {err}") from None
    if not argv:
        raise CliError(EXIT_USAGE, "--stdio needs a command")
    params = StdioServerParameters(
        command=argv[0], args=argv[1:], cwd=os.getcwd(), env=_environment(args.env or ())
    )
    label = f"the server `{one_line(shorten(args.stdio))}`"
    if args.server_stderr is None:
        return ServerTarget(params, label)
    try:
        errlog = open(args.server_stderr, "a", encoding="utf-8")  # noqa: SIM115 - closed by the stack
    except OSError as err:
        raise CliError(
            EXIT_USAGE, f"--server-stderr: cannot open {one_line(args.server_stderr)}: {err.strerror}"
        ) from None
    stack.callback(errlog.close)
    return ServerTarget(params, label, errlog)


def server_from(args: argparse.Namespace, stack: contextlib.ExitStack) -> ServerTarget:
    """The server the options of :func:`add_connection_options` name."""
    if args.url is not None:
        if args.env:
            raise CliError(EXIT_USAGE, "--env applies to a server started with --stdio, not to --url")
        if args.server_stderr is not None:
            raise CliError(
                EXIT_USAGE, "--server-stderr applies to a server started with --stdio, not to --url"
            )
        return _url_target(args.url)
    return _stdio_target(args, stack)


def demo_target() -> ServerTarget:
    """The bundled demo server, over stdio."""
    from mcp import StdioServerParameters

    # The demo server is this package's module; make it importable in the child even when
    # toolnexus runs from a source tree that is not installed.
    root = str(Path(__file__).resolve().parent.parent.parent)
    path = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH", "")) if p)
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "toolnexus._demo_server"], env={"PYTHONPATH": path}
    )
    return ServerTarget(params, "the demo server")


def make_client(
    server: ServerTarget, *, protocol: str, elicitation_callback: Any = None, extensions: Sequence[Any] = ()
) -> Client:
    """An ``mcp.Client`` for ``server`` that honours ``--server-stderr``, for a command that
    manages its connections itself (the worker); ``run_connected`` is the usual way."""
    from mcp import Client

    return Client(
        _watched_transport(server, _Watch()),
        elicitation_callback=elicitation_callback,
        logging_callback=_server_log,
        mode=protocol,
        extensions=list(extensions),
    )


def check_protocol(protocol: str) -> None:
    """Raise the usage error for a ``--protocol`` the SDK's client does not take."""
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

    if protocol in ("auto", "legacy", *MODERN_PROTOCOL_VERSIONS):
        return
    if protocol in HANDSHAKE_PROTOCOL_VERSIONS:
        why = f"{protocol} is reached through the initialize handshake: use --protocol legacy"
    else:
        modes = ", ".join(("auto", "legacy", *MODERN_PROTOCOL_VERSIONS))
        why = f"must be one of {modes}, not {one_line(protocol)!r}"
    raise CliError(EXIT_USAGE, f"--protocol: {why}")


# --- how a connection ends -------------------------------------------------------------------

_TRANSPORT_MESSAGES = ("Connection closed", "SSE stream ended without a response")


def connection_closed(err: BaseException) -> bool:
    """The SDK's own word that the connection ended (not a server's error reusing its code)."""
    from mcp import MCPError
    from mcp_types import CONNECTION_CLOSED

    return (
        isinstance(err, MCPError)
        and err.code == CONNECTION_CLOSED
        and (err.message in _TRANSPORT_MESSAGES or err.message.startswith("SSE stream failed"))
    )


def _leaves(err: BaseException) -> list[BaseException]:
    group = getattr(err, "exceptions", None)
    if isinstance(group, tuple) and group:
        return [leaf for member in group for leaf in _leaves(member)]
    return [err]


def is_connection_failure(err: BaseException) -> bool:
    """Whether ``err`` (or any member of a group) says the connection failed or ended."""
    import anyio

    for leaf in _leaves(err):
        if connection_closed(leaf):
            return True
        if isinstance(leaf, BrokenPipeError):
            continue  # our own stdout, closed by its reader: not the connection
        if isinstance(
            leaf, (OSError, anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError)
        ):
            return True
        if type(leaf).__module__.split(".")[0] in ("httpx", "httpx2", "httpcore"):
            return True  # the HTTP client's transport errors
    return False


class _Watch:
    """What the watched transport tells: that the server's side ended."""

    def __init__(self) -> None:
        self.ended = False
        self.closing = False
        self.event: Any = None  # an anyio.Event, made on the loop

    def end(self) -> None:
        if not self.ended and not self.closing:
            self.ended = True
            if self.event is not None:
                self.event.set()


class _WatchedRead:
    """A transport's read stream that tells :class:`_Watch` when it ends."""

    def __init__(self, inner: Any, watch: _Watch) -> None:
        self._inner = inner
        self._watch = watch

    @property
    def last_context(self) -> Any:
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        import anyio

        try:
            return await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._watch.end()
            raise

    def __aiter__(self) -> _WatchedRead:
        return self

    async def __anext__(self) -> Any:
        import anyio

        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _WatchedRead:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> bool | None:
        result: bool | None = await self._inner.__aexit__(*exc)
        return result


@contextlib.asynccontextmanager
async def _watched_transport(
    server: ServerTarget, watch: _Watch, errlog: TextIO | None = None
) -> AsyncIterator[Any]:
    if server.is_http:
        from mcp.client.streamable_http import streamable_http_client

        transport: Any = streamable_http_client(server.target)
    else:
        from mcp.client.stdio import stdio_client

        transport = stdio_client(server.target, errlog=server.errlog or errlog or sys.stderr)
    async with transport as (read_stream, write_stream):
        yield _WatchedRead(read_stream, watch), write_stream


class _StderrGate:
    """A stdio server's stderr, passed on to ours, but held until the handshake is over.

    Under ``--protocol auto`` the command first probes ``server/discover``, which a server
    on an older SDK (``mcp`` 1.x) refuses by logging a validation dump of a hundred lines or
    more to its stderr before it answers the handshake; once the connection fell back to the
    handshake, what was held is dropped when it is that dump, and one line says so.

    The server wrote the dump before its answer, so when the answer is read the dump is in
    the pipe, but perhaps not yet read from it: ``release`` reads what the pipe holds itself
    (the pipe is non-blocking, and read under the lock by whichever thread gets there), so
    the decision sees all of it however late the reading thread runs."""

    HELD_LIMIT = 1 << 20

    def __init__(self) -> None:
        read_fd, write_fd = os.pipe()
        os.set_blocking(read_fd, False)
        self.errlog = os.fdopen(write_fd, "w", encoding="utf-8", errors="replace")
        self._read_fd = read_fd
        self._lock = threading.Lock()
        self._held = bytearray()
        self._passing = False
        self._closed = False
        self._thread = threading.Thread(target=self._pump, name="toolnexus-server-stderr", daemon=True)
        self._thread.start()

    def _drain(self) -> tuple[bytes, bool]:
        """What the pipe holds now (at most ``HELD_LIMIT`` bytes a call: a server that writes
        without a pause is read in bounded steps), and whether it ended. Under the lock."""
        chunks: list[bytes] = []
        size = 0
        while size < self.HELD_LIMIT:
            try:
                chunk = os.read(self._read_fd, 65536)
            except BlockingIOError:
                break
            if not chunk:
                return b"".join(chunks), True
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks), False

    def _take(self, data: bytes) -> None:
        """Hold ``data`` or pass it on. Under the lock, so that what is passed keeps its order."""
        if self._passing:
            self._write(data)
        elif len(self._held) < self.HELD_LIMIT:
            self._held += data[: self.HELD_LIMIT - len(self._held)]

    def _pump(self) -> None:
        try:
            waiting = select.poll()  # (not select(): any descriptor number)
            waiting.register(self._read_fd, select.POLLIN)
            ended = False
            while not ended:
                waiting.poll()
                with self._lock:
                    if self._closed:
                        return
                    data, ended = self._drain()
                    if data:
                        self._take(data)
        except OSError:  # closed by close() while waiting
            pass

    @staticmethod
    def _write(data: bytes) -> None:
        with contextlib.suppress(OSError):
            sys.stderr.flush()
            os.write(sys.stderr.fileno(), data)

    def release(self, *, refused_probe: bool) -> None:
        """Pass on what was held (not a refused probe's validation dump) and all that follows."""
        with self._lock:
            if self._passing or self._closed:
                return
            data, _ = self._drain()
            if data:
                self._take(data)
            held, self._held = bytes(self._held), bytearray()
            self._passing = True
            if refused_probe and b"validat" in held.lower():
                _LOG.warning(
                    "the server refused the protocol probe (server/discover) and logged it on its "
                    "stderr (left out here); --protocol legacy skips the probe, --server-stderr FILE "
                    "keeps the log"
                )
            elif held:
                self._write(held)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.errlog.close()
        self._thread.join(timeout=2)
        with self._lock:  # (the pipe is read under the lock only: no read of a closed number)
            self._closed = True
            os.close(self._read_fd)


# --- the connection ---------------------------------------------------------------------------

_SERVER_LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "notice": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
    "alert": logging.CRITICAL,
    "emergency": logging.CRITICAL,
}


async def _server_log(params: LoggingMessageNotificationParams) -> None:
    """A log message from the server, on the ``toolnexus.server`` logger (escaped by the handler)."""
    data = params.data if isinstance(params.data, str) else json.dumps(params.data, default=repr)
    if len(data) > SERVER_LOG_LIMIT:
        data = data[: SERVER_LOG_LIMIT - 1] + "…"
    logging.getLogger("toolnexus.server").log(
        _SERVER_LEVELS.get(str(params.level), logging.INFO), "the server logs: %s", data
    )


def _connect_reason(server: ServerTarget, err: BaseException) -> str:
    """Why connecting failed; for a stdio server whose output closed, that it exited."""
    import anyio

    inner = _leaves(err)[0]
    ended = (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError)
    if not server.is_http and (connection_closed(inner) or isinstance(inner, ended)):
        # The SDK does not hand out the process's exit status; a closed connection
        # before the handshake is the server process ending (or closing its stdout).
        return "the server process exited before it answered"
    return reason(inner)


DISCOVER_ATTEMPTS = 3
"""How many ``server/discover`` probes (10 s each, the SDK's) ask a pinned 2026-era server its name."""


async def server_name(client: Client) -> str | None:
    """The name the server gives itself, or ``None``.

    A connection pinned to a 2026-era version (``--protocol 2026-07-28``) skips the
    ``server/discover`` probe that carries the server's name (its ``serverInfo`` stamp),
    so it is asked for here; the answer is for display only, and a failure is ignored.
    """
    info = client.server_info
    if info is None and client.mode not in ("auto", "legacy"):
        from mcp import MCPError
        from mcp_types import REQUEST_TIMEOUT, SERVER_INFO_META_KEY, DiscoverResult, Implementation

        # This is the connection's first request: it waits for a stdio server to start,
        # which on a loaded machine can outlast the SDK's 10 s for one probe.
        for _ in range(DISCOVER_ATTEMPTS):
            try:
                raw = await client.session.send_discover(client.protocol_version)
                stamp = (DiscoverResult.model_validate(raw).meta or {}).get(SERVER_INFO_META_KEY)
                info = Implementation.model_validate(stamp) if stamp is not None else None
                break
            except MCPError as err:
                if err.code != REQUEST_TIMEOUT:
                    break  # display only: the call goes on without a name
            except Exception:
                break
    return info.name if info is not None and info.name else None


def is_modern(client: Client) -> bool:
    """Whether the connection speaks 2026-07-28 or later (no request stays open between rounds)."""
    from .._protocol import asks_between_rounds

    return asks_between_rounds(client.protocol_version)


async def _probe_while_asking(client: Client, asking: Callable[[], bool], watch: _Watch) -> None:
    """Every :data:`PROBE_EVERY` seconds while a question is shown, a ``server/discover``:
    a transport that fails ends the watched read stream (or raises), which is the signal."""
    import anyio
    from mcp import MCPError

    while not watch.ended:
        await anyio.sleep(PROBE_EVERY)
        if not asking():
            continue
        try:
            with anyio.move_on_after(PROBE_TIMEOUT):
                await client.session.send_discover(client.protocol_version)
        except MCPError as err:  # the server's own answer is a live server; the SDK's "closed" is not
            if connection_closed(err):
                watch.end()
        except Exception:  # the transport failed: a refused connection, a reset
            watch.end()


async def run_connected(
    server: ServerTarget,
    body: Callable[[Client], Awaitable[int]],
    *,
    protocol: str,
    connect_timeout: float,
    elicitation_callback: Any = None,
    message_handler: Any = None,
    asking: Callable[[], bool] | None = None,
    extensions: Sequence[Any] = (),
) -> int:
    """Connect to ``server``, run ``body(client)``, close; the body's exit status.

    Raises :class:`CliError` with exit 3 and one line naming the server when the handshake
    fails or takes longer than ``connect_timeout`` seconds, and when the connection is lost
    while ``body`` runs (``asking``, true while a question is shown or waits live in a store,
    makes a 2026-07-28 HTTP connection watched by a probe). ``extensions`` are the
    client's (``mcp.Client(extensions=...)``: the tasks extension, for a command that calls
    tools). Other failures of ``body`` are raised as they are; a failure while closing, after
    ``body`` gave its status, is a warning.
    """
    import anyio
    from mcp import Client

    check_protocol(protocol)
    watch = _Watch()
    gate = _StderrGate() if protocol == "auto" and not server.is_http and server.errlog is None else None
    client = Client(
        _watched_transport(server, watch, gate.errlog if gate is not None else None),
        elicitation_callback=elicitation_callback,
        message_handler=message_handler,
        logging_callback=_server_log,
        mode=protocol,
        extensions=list(extensions),
    )
    phase = ["connecting"]
    status: list[int] = []
    failure: list[BaseException] = []
    timed_out = [False]

    async with anyio.create_task_group() as group:
        watch.event = anyio.Event()
        connected = anyio.Event()

        async def deadline() -> None:
            with anyio.move_on_after(connect_timeout):
                await connected.wait()
                return
            timed_out[0] = True
            group.cancel_scope.cancel()

        async def lost() -> None:
            await watch.event.wait()
            if phase[0] == "working":
                group.cancel_scope.cancel()

        async def host() -> None:
            try:
                async with client:
                    phase[0] = "working"
                    connected.set()
                    if gate is not None:
                        gate.release(refused_probe=not is_modern(client))
                    _LOG.info("connected to %s, protocol %s", server.label, client.protocol_version)
                    if asking is not None and server.is_http and is_modern(client):
                        group.start_soon(_probe_while_asking, client, asking, watch)
                    try:  # the body's own failure is kept out of the transport's task groups
                        status.append(await body(client))
                    except Exception as err:
                        failure.append(err)
                    finally:
                        watch.closing = True
                        phase[0] = "closing"
            except Exception as err:
                failure.append(err)
            finally:
                group.cancel_scope.cancel()

        group.start_soon(deadline)
        group.start_soon(lost)
        group.start_soon(host)

    if gate is not None:
        gate.release(refused_probe=False)  # a failed connection: its stderr may say why
        gate.close()

    if timed_out[0]:
        raise CliError(
            EXIT_CONNECTION,
            f"cannot connect to {server.label}: no answer within {connect_timeout:g} s (--connect-timeout)",
        )
    if status:
        if failure:
            _LOG.warning("closing the connection failed: %s", reason(failure[0]))
        return status[0]
    err = failure[0] if failure else None  # the body's failure comes before the closing's
    leaves = _leaves(err) if err is not None else []
    for leaf in leaves:
        if isinstance(leaf, BrokenPipeError):
            raise leaf  # our stdout closed: 141, whatever else happened
    if phase[0] == "connecting":
        if isinstance(err, CliError):
            raise err
        why = f": {_connect_reason(server, err)}" if err is not None else ""
        raise CliError(EXIT_CONNECTION, f"cannot connect to {server.label}{why}")
    if isinstance(err, CliError):
        raise err  # the body's own word (a tool error, a lost connection it named)
    if err is None or watch.ended or is_connection_failure(err):
        raise CliError(EXIT_CONNECTION, f"the connection to {server.label} was lost")
    raise err
