"""The ``toolnexus`` command: answer any MCP server's elicitations at the terminal.

- ``toolnexus demo``: run the bundled demo server and call each of its tools.
- ``toolnexus call (--stdio "CMD ARGS" | --url URL) TOOL [JSON_ARGS]``: call one tool on any
  MCP server.

Questions are answered with :class:`toolnexus.console.ConsoleResolver`, wired in with
:func:`toolnexus.mcp.elicitation_callback`. The resolver runs in the main thread while the
MCP client runs its event loop in a second one: a blocking ``input()`` then has line
editing, and Ctrl-C at a prompt cancels that one question instead of killing the client;
a second Ctrl-C at a prompt within a few seconds, or Ctrl-D (end of input) at a terminal,
stops the command. When the connection ends while a question waits, the question is
withdrawn (a signal interrupts the main thread's read): at once on a 2025-11-25 connection,
whose call stays open; on 2026-07-28, where no request is open between rounds, a ping every
:data:`PING_EVERY` seconds while the question is shown finds it.

Output: the result goes to stdout; questions, prompts and notices go to stdout too when it
is a terminal, else to the terminal (``/dev/tty``) or, without one, to stderr, so that
``toolnexus call ... > out.json`` or ``| jq`` gets the result alone. Failures are one line
each on stderr; library warnings are formatted to one line each by :func:`_configure_logging`.
Whatever a server sent is escaped (control and bidi characters) when it is written to a
terminal; to a pipe or a file it is written as it came.

Exit status: 0 on success, 1 when a tool reports an error, 2 for a usage error, 3 when the
server cannot be reached or the connection fails, 130 when interrupted, 141 when stdout is
closed early (``toolnexus call ... | head -3``), quietly, as a command killed by SIGPIPE.

For whoever adds a subcommand: register it in :data:`COMMANDS` (a name, its help, a
function adding its arguments and one running it). The shared pieces are
:func:`_server_options` and :func:`_answer_options` (the options of every command that
talks to a server and answers its questions), :func:`_server` (the server to reach, with
the label failures name), :func:`_answering` (connect, answer questions in the main thread,
run your body with the client), :func:`_call` (a tool call, ``-32042`` and failures mapped
to exit statuses), :class:`_Output` (where results and notices go, escaped when they reach
a terminal), :class:`_CliError` (raise it with an exit status and one line), and the
``EXIT_*`` statuses. :func:`_connected` connects without the main-thread bridge (for a
command that asks nobody). ``_cli_answers`` (``--answers``, ``--accept-defaults``) and
``_cli_durable`` (``--park``, ``pending``, ``answer``, ``resume``) plug in at marked lines.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import contextlib
import json
import logging
import os
import queue
import shlex
import signal
import sys
import threading
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from . import __version__
from ._cli_answers import add_options as add_answer_options
from ._cli_answers import answering
from ._log import log_traffic
from ._util import escape_text
from ._wire import Request
from .console import ConsoleResolver

if TYPE_CHECKING:
    from mcp import Client
    from mcp_types import CallToolResult, LoggingMessageNotificationParams

    from ._callback import OnResult
    from ._url_required import ElicitationCompletions

__all__ = ["COMMANDS", "build_parser", "main"]

EXIT_OK = 0
EXIT_TOOL_ERROR = 1
EXIT_USAGE = 2
EXIT_CONNECTION = 3
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, what a shell reports for a command killed by it
ERROR_LINE_LIMIT = 300
SERVER_LOG_LIMIT = 1000  # characters of one log message from the server shown

LEGACY_HINT = (
    "the server asks its questions the 2025-11-25 way (elicitation/create in the middle of the "
    "call), which this 2026-07-28 connection cannot carry: run again with --protocol legacy"
)
# How the SDK (NoBackChannelError) and FastMCP word the failure of a server that asks the
# 2025-11-25 way on a 2026-07-28 connection.
_BACK_CHANNEL_MARKERS = ("no back-channel", "NoBackChannelError", "unavailable on 2026-07-28 connections")

DEMO_TOOLS: tuple[tuple[str, str], ...] = (
    ("deploy", "a form: an enum, a bounded integer, a boolean and a string with a default"),
    ("sign_in", "a URL to open (URL mode)"),
    ("connect_database", "a form that asks for a password, which the spec forbids"),
)


class _CliError(Exception):
    """A reason to stop, with the exit status and the one line to print."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class _Withdrawn(BaseException):
    """Raised in the main thread (by a signal) when the question it shows is no longer wanted.

    A BaseException, so that the resolver's own ``except Exception`` lets it through."""


# --- output ------------------------------------------------------------------------------


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


class _Output:
    """Where the result goes (stdout) and where the dialogue goes.

    The dialogue (questions, prompts, notices) shares stdout when it is a terminal; else it
    goes to the terminal (``/dev/tty``) when there is one, or to stderr.
    """

    def __init__(self, stack: contextlib.ExitStack) -> None:
        self.result: TextIO = sys.stdout
        self.result_is_terminal = _isatty(sys.stdout)
        self.dialogue: TextIO = sys.stdout if self.result_is_terminal else self._terminal(stack)

    @staticmethod
    def _terminal(stack: contextlib.ExitStack) -> TextIO:
        if os.name == "posix":
            try:
                tty = open("/dev/tty", "w", encoding="utf-8", errors="replace")  # noqa: SIM115
            except OSError:  # no controlling terminal
                pass
            else:
                stack.callback(tty.close)
                return tty
        return sys.stderr

    def say(self, text: str = "") -> None:
        """One of our own notices, on the dialogue stream."""
        self.dialogue.write(text + "\n")
        self.dialogue.flush()

    def show(self, text: str) -> None:
        """Server text on stdout: escaped at a terminal, as it came to a pipe or a file."""
        if self.result_is_terminal:
            text = escape_text(text, lines=True)
        self.result.write(text + ("\n" if text and not text.endswith("\n") else ""))
        self.result.flush()


def _line(text: str) -> str:
    """Text (a server's, often) as one escaped line for stderr: line breaks escaped too."""
    return escape_text(text)


class _OneLineFormatter(logging.Formatter):
    """``toolnexus: warning: <message>``: one line, escaped, no traceback."""

    def format(self, record: logging.LogRecord) -> str:
        try:
            text = record.getMessage()
        except Exception:  # a library's broken format string must not break the command
            text = str(record.msg)
        if record.exc_info and record.exc_info[1] is not None:
            text += f" ({type(record.exc_info[1]).__name__})"
        return f"toolnexus: {record.levelname.lower()}: {escape_text(text)}"


def _configure_logging(verbose: int, stack: contextlib.ExitStack) -> None:
    """Warnings (and, with ``-v``, info; ``-vv``, debug) as one formatted line each on stderr."""
    root = logging.getLogger()
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_OneLineFormatter())
    saved_level = root.level
    root.addHandler(handler)
    root.setLevel(logging.WARNING if verbose <= 0 else logging.INFO if verbose == 1 else logging.DEBUG)
    logging.captureWarnings(True)
    saved_hook = threading.excepthook

    def thread_failed(failure: threading.ExceptHookArgs) -> None:  # one line, not a traceback
        if failure.exc_value is not None and not isinstance(failure.exc_value, SystemExit):
            logging.getLogger("toolnexus").error("a thread failed: %s", _reason(failure.exc_value))

    threading.excepthook = thread_failed

    def restore() -> None:
        threading.excepthook = saved_hook
        logging.captureWarnings(False)
        root.removeHandler(handler)
        root.setLevel(saved_level)

    stack.callback(restore)


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


# --- the resolver in the main thread ---------------------------------------------------


class _MainThreadResolver:
    """Hands each Request from the event loop's thread to the main thread and back."""

    def __init__(self, wait_for: Callable[[Request], Any], quit_requested: Callable[[], bool]) -> None:
        self._wait_for = wait_for
        self._quit_requested = quit_requested
        # None: the client is done, stop serving.
        self._queue: queue.Queue[tuple[Request, concurrent.futures.Future[Any]] | None] = queue.Queue()
        self.asking = threading.Event()  # set while the main thread shows a question
        self.withdrawn = False

    async def __call__(self, request: Request) -> Any:
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self._queue.put((request, future))
        return await asyncio.wrap_future(future)

    def finish(self) -> None:
        self._queue.put(None)

    def serve(self) -> bool:
        """Answer requests in this (the main) thread until :meth:`finish` (``True``) or
        until the user asks to quit (``False``). A closed stdout stops it too
        (:class:`BrokenPipeError`): no question can be shown. :class:`_Withdrawn` (the
        client ended while a question was shown) ends it too, as finished."""
        try:
            while True:
                item = self._queue.get()
                if item is None:
                    return True
                request, future = item
                if not future.set_running_or_notify_cancel():
                    continue
                self.asking.set()
                try:
                    future.set_result(self._wait_for(request))
                except BrokenPipeError:
                    raise  # the caller stops the client, which drops the pending question
                except Exception as err:
                    future.set_exception(err)
                finally:
                    self.asking.clear()
                if self._quit_requested():
                    return False
        except _Withdrawn:
            self.withdrawn = True
            return True


_WITHDRAW_SIGNAL: int | None = getattr(signal, "SIGUSR1", None)


@contextlib.contextmanager
def _withdrawal(armed: threading.Event) -> Any:
    """While inside, the withdraw signal raises :class:`_Withdrawn` in the main thread when
    ``armed`` is set (and is ignored otherwise)."""
    if _WITHDRAW_SIGNAL is None or threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: object) -> None:
        if armed.is_set():
            armed.clear()
            raise _Withdrawn

    previous = signal.signal(_WITHDRAW_SIGNAL, handler)
    try:
        yield
    finally:
        armed.clear()
        signal.signal(_WITHDRAW_SIGNAL, previous)


def _run(
    work: Callable[[Callable[[Request], Awaitable[Any]]], Awaitable[int]],
    wait_for: Callable[[Request], Any],
    quit_requested: Callable[[], bool],
    output: _Output,
) -> int:
    """Run ``work`` on an event loop in a second thread, answering questions in this one.

    Stops the client and exits 130 on Ctrl-C outside a question, or when
    ``quit_requested()`` is true after an answer (a second Ctrl-C, Ctrl-D at a terminal).
    When ``work`` ends while a question is shown, the question is withdrawn.
    """
    bridge = _MainThreadResolver(wait_for, quit_requested)
    outcome: list[int | BaseException] = []
    loop_box: list[tuple[asyncio.AbstractEventLoop, asyncio.Task[int]]] = []
    armed = threading.Event()
    main_id = threading.main_thread().ident

    async def runner() -> int:
        task = asyncio.current_task()
        assert task is not None
        loop_box.append((asyncio.get_running_loop(), task))
        return await work(bridge)

    def target() -> None:
        # Ctrl-C must reach the main thread, where the resolver reads: a process-directed
        # SIGINT taken by this thread would leave the main thread blocked in its read.
        blocked = {signal.SIGINT} | ({_WITHDRAW_SIGNAL} if _WITHDRAW_SIGNAL is not None else set())
        if hasattr(signal, "pthread_sigmask"):
            signal.pthread_sigmask(signal.SIG_BLOCK, blocked)
        try:
            outcome.append(asyncio.run(runner()))
        except BaseException as err:
            outcome.append(err)
        finally:
            bridge.finish()
            if bridge.asking.is_set() and _WITHDRAW_SIGNAL is not None and main_id is not None:
                armed.set()  # the question on screen is no longer wanted: interrupt its read
                with contextlib.suppress(OSError, ValueError):
                    signal.pthread_kill(main_id, _WITHDRAW_SIGNAL)

    def stop() -> None:
        if loop_box:
            loop, task = loop_box[0]
            loop.call_soon_threadsafe(task.cancel)
        thread.join(timeout=10)

    thread = threading.Thread(target=target, name="toolnexus-client", daemon=True)
    with _withdrawal(armed):
        try:
            thread.start()
            finished = bridge.serve()
            if not finished:
                stop()
                raise _CliError(EXIT_INTERRUPTED, "interrupted")
            try:
                thread.join()
            except _Withdrawn:  # the question ended just before the signal came
                thread.join()
        except KeyboardInterrupt:
            stop()
            raise _CliError(EXIT_INTERRUPTED, "interrupted") from None
        except BrokenPipeError:
            stop()
            raise
    if bridge.withdrawn:
        output.say()
        output.say("(question withdrawn: the connection ended)")
    result = outcome[0] if outcome else _CliError(EXIT_CONNECTION, "the client stopped unexpectedly")
    if isinstance(result, BaseException):
        raise result
    return result


# --- the server -------------------------------------------------------------------------


@dataclass(frozen=True)
class _ServerTarget:
    """What ``mcp.Client`` connects to, and how failures name it."""

    target: Any
    label: str


def _reason(err: BaseException) -> str:
    """The innermost, most specific cause of a failure, as one line."""
    # An exception group (anyio's task groups raise them): its first member.
    while isinstance(getattr(err, "exceptions", None), tuple) and err.exceptions:  # type: ignore[attr-defined]
        err = err.exceptions[0]  # type: ignore[attr-defined]
    while err.__cause__ is not None and not str(err).strip():
        err = err.__cause__
    text = " ".join(str(err).split())
    name = type(err).__name__
    return _line(f"{name}: {text}" if text else name)


def _shorten(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _url_target(url: str) -> _ServerTarget:
    from urllib.parse import urlsplit

    shown = _line(_shorten(url, 200))
    try:
        parts = urlsplit(url)
        _ = parts.port  # a port that is not a number raises ValueError
    except ValueError:
        raise _CliError(EXIT_USAGE, f"--url: {shown} is not a URL") from None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        hint = f" (did you mean http://{shown}?)" if "://" not in url else ""
        raise _CliError(EXIT_USAGE, f"--url: {shown} is not an http:// or https:// URL{hint}")
    # The label names the server; a user name or password in the URL is not repeated.
    host = parts.hostname + (f":{parts.port}" if parts.port is not None else "")
    label = _line(parts._replace(netloc=host, query="", fragment="").geturl())
    return _ServerTarget(url, label)


def _environment(pairs: Sequence[str]) -> dict[str, str]:
    """The user's environment, as a shell would give it to the server, with ``--env`` over it."""
    env = dict(os.environ)
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise _CliError(EXIT_USAGE, f"--env: {_line(pair)!r} is not KEY=VALUE")
        env[key] = value
    return env


def _stdio_target(command: str) -> Any:
    """The ``StdioServerParameters`` for ``--stdio COMMAND`` alone (for ``_cli_durable``)."""
    from mcp import StdioServerParameters

    try:
        argv = shlex.split(command)
    except ValueError as err:
        raise _CliError(EXIT_USAGE, f"--stdio: {err}") from None
    if not argv:
        raise _CliError(EXIT_USAGE, "--stdio needs a command")
    return StdioServerParameters(command=argv[0], args=argv[1:], cwd=os.getcwd(), env=_environment(()))


def _stdio_server(args: argparse.Namespace, stack: contextlib.ExitStack) -> _ServerTarget:
    from mcp import StdioServerParameters

    try:
        argv = shlex.split(args.stdio)
    except ValueError as err:
        raise _CliError(EXIT_USAGE, f"--stdio: {err}") from None
    if not argv:
        raise _CliError(EXIT_USAGE, "--stdio needs a command")
    params = StdioServerParameters(
        command=argv[0], args=argv[1:], cwd=os.getcwd(), env=_environment(args.env or ())
    )
    label = f"the server `{_line(_shorten(args.stdio))}`"
    if args.server_stderr is None:
        return _ServerTarget(params, label)
    from mcp.client.stdio import stdio_client

    try:
        errlog = open(args.server_stderr, "a", encoding="utf-8")  # noqa: SIM115 - closed by the stack
    except OSError as err:
        raise _CliError(
            EXIT_USAGE, f"--server-stderr: cannot open {_line(args.server_stderr)}: {err.strerror}"
        ) from None
    stack.callback(errlog.close)
    return _ServerTarget(stdio_client(params, errlog=errlog), label)


def _server(args: argparse.Namespace, stack: contextlib.ExitStack) -> _ServerTarget:
    """The server the options of :func:`_server_options` name."""
    if args.url is not None:
        if args.env:
            raise _CliError(EXIT_USAGE, "--env applies to a server started with --stdio, not to --url")
        if args.server_stderr is not None:
            raise _CliError(
                EXIT_USAGE, "--server-stderr applies to a server started with --stdio, not to --url"
            )
        return _url_target(args.url)
    return _stdio_server(args, stack)


def _demo_target() -> _ServerTarget:
    from mcp import StdioServerParameters

    # The demo server is this package's module; make it importable in the child even when
    # toolnexus runs from a source tree that is not installed.
    root = str(Path(__file__).resolve().parent.parent)
    path = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH", "")) if p)
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "toolnexus._demo_server"], env={"PYTHONPATH": path}
    )
    return _ServerTarget(params, "the demo server")


# --- talking to the server -------------------------------------------------------------


def _result_text(result: CallToolResult) -> str:
    """The text of a tool's result: its text content, or its structured content as JSON."""
    texts: list[str] = []
    for item in result.content:
        text = getattr(item, "text", None)
        if isinstance(text, str):
            texts.append(text)
        else:
            texts.append(f"[{getattr(item, 'type', type(item).__name__)} content]")
    if not texts and result.structured_content is not None:
        texts.append(json.dumps(result.structured_content, ensure_ascii=False))
    return "\n".join(texts)


def _result_json(result: CallToolResult) -> str:
    """``--json``: the structured content when the tool gives one, else ``{"content", "isError"}``."""
    if result.structured_content is not None:
        value: Any = result.structured_content
    else:
        value = result.model_dump(
            mode="json", by_alias=True, include={"content", "is_error"}, exclude_none=True
        )
    return json.dumps(value, ensure_ascii=False, indent=2)


def _client(target: _ServerTarget, protocol: str, callback: Any, completions: Any) -> Client:
    from mcp import Client
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

    try:
        return Client(
            target.target,
            elicitation_callback=callback,
            message_handler=completions,
            logging_callback=_server_log,
            mode=protocol,
        )
    except ValueError:
        if protocol in HANDSHAKE_PROTOCOL_VERSIONS:
            reason = f"{protocol} is reached through the initialize handshake: use --protocol legacy"
        else:
            modes = ", ".join(("auto", "legacy", *MODERN_PROTOCOL_VERSIONS))
            reason = f"must be one of {modes}, not {_line(protocol)!r}"
        raise _CliError(EXIT_USAGE, f"--protocol: {reason}") from None


async def _server_name(client: Client) -> str | None:
    """The name the server gives itself, or ``None``.

    A connection pinned to a 2026-era version (``--protocol 2026-07-28``) skips the
    ``server/discover`` probe that carries the server's name (its ``serverInfo`` stamp),
    so it is asked for here; the answer is for display only, and a failure is ignored.
    """
    info = client.server_info
    if info is None and client.mode not in ("auto", "legacy"):
        from mcp_types import SERVER_INFO_META_KEY, DiscoverResult, Implementation

        try:
            raw = await client.session.send_discover(client.protocol_version)
            stamp = (DiscoverResult.model_validate(raw).meta or {}).get(SERVER_INFO_META_KEY)
            info = Implementation.model_validate(stamp) if stamp is not None else None
        except Exception:  # display only: the call goes on without a name
            info = None
    return info.name if info is not None and info.name else None


@dataclass
class _Connection:
    """What a command's body gets: the client, the resolver the questions go to (for
    :func:`toolnexus.mcp.call_tool`), and where completions are heard."""

    client: Client
    wait_for: Callable[[Request], Awaitable[Any]]
    completions: ElicitationCompletions
    server: _ServerTarget
    on_result: OnResult | None = None


def _connect_reason(target: _ServerTarget, err: BaseException) -> str:
    """Why connecting failed; for a stdio server whose output closed, that it exited."""
    from mcp import MCPError

    inner = err
    while isinstance(getattr(inner, "exceptions", None), tuple) and inner.exceptions:  # type: ignore[attr-defined]
        inner = inner.exceptions[0]  # type: ignore[attr-defined]
    if not isinstance(target.target, str) and _connection_closed(inner):
        # The SDK does not hand out the process's exit status; a closed connection
        # before the handshake is the server process ending (or closing its stdout).
        return "the server process exited before it answered"
    if isinstance(inner, MCPError):
        return _reason(inner)
    return _reason(err)


def _connection_closed(err: BaseException) -> bool:
    """The SDK's own "Connection closed" (not a server's error that reuses its code)."""
    from mcp import MCPError
    from mcp_types import CONNECTION_CLOSED

    return isinstance(err, MCPError) and err.code == CONNECTION_CLOSED and err.message == "Connection closed"


def _answering(
    args: argparse.Namespace,
    stack: contextlib.ExitStack,
    output: _Output,
    server: _ServerTarget,
    body: Callable[[_Connection], Awaitable[int]],
) -> int:
    """Connect to ``server``, answer its questions at the terminal, run ``body``; the exit status."""
    from ._url_required import ElicitationCompletions

    completions = ElicitationCompletions()
    resolver = _console(args, output, completions)
    wait_for, on_result = _logged(args, stack, resolver, output)

    async def work(bridge: Callable[[Request], Awaitable[Any]]) -> int:
        async def with_connection(client: Client) -> int:
            connection = _Connection(client, bridge, completions, server, on_result)
            asking = getattr(bridge, "asking", None)
            if not isinstance(asking, threading.Event) or not _open_between_rounds(client):
                return await body(connection)
            return await _watched(connection, asking)

        async def _watched(connection: _Connection, asking: threading.Event) -> int:
            import anyio

            lost: list[bool] = []
            outcome: list[int | Exception] = []
            async with anyio.create_task_group() as group:

                async def watch() -> None:
                    if await _lost_while_asking(connection.client, asking):
                        lost.append(True)
                        group.cancel_scope.cancel()  # ends the call, and so the question

                group.start_soon(watch)
                try:  # the body's own failure is kept out of the group, which would wrap it
                    outcome.append(await body(connection))
                except Exception as err:
                    outcome.append(err)
                finally:
                    group.cancel_scope.cancel()
            if lost:
                raise _CliError(EXIT_CONNECTION, f"the connection to {server.label} was lost")
            if isinstance(outcome[0], Exception):
                raise outcome[0]
            return outcome[0]

        return await _connected(
            server,
            args.protocol,
            bridge,
            resolver,
            with_connection,
            completions=completions,
            on_result=on_result,
        )

    return _run(work, wait_for, lambda: resolver.quit_requested, output)


PING_EVERY = 2.0
"""Seconds between the pings that watch a 2026-07-28 connection while a question waits."""


def _open_between_rounds(client: Client) -> bool:
    """Whether no request stays open while a question is shown (2026-07-28 and later): the
    server returned its questions, and a server that dies is not noticed by any request."""
    from mcp_types.version import is_version_at_least

    try:
        return is_version_at_least(client.protocol_version, "2026-07-28")
    except Exception:  # a version the SDK cannot compare: no watch, as before
        return False


async def _lost_while_asking(client: Client, asking: threading.Event) -> bool:
    """Ping the server every :data:`PING_EVERY` seconds while a question is shown; ``True``
    when the connection has ended. A server that answers, however slowly, or that answers
    ping with an error of its own, is alive; such a server is not pinged again."""
    import anyio
    from mcp import MCPError

    while True:
        await anyio.sleep(PING_EVERY)
        if not asking.is_set():
            continue
        try:
            with anyio.move_on_after(PING_EVERY * 5):
                await client.send_ping()
        except MCPError as err:  # the SDK's own "closed", or the server's answer: not ping
            return _connection_closed(err)
        except Exception:  # the transport failed: a refused HTTP connection, a closed pipe
            return True


async def _connected(
    target: Any,
    protocol: str,
    wait_for: Callable[[Request], Awaitable[Any]],
    resolver: ConsoleResolver,
    body: Callable[[Client], Awaitable[int]],
    *,
    completions: ElicitationCompletions | None = None,
    on_result: OnResult | None = None,
) -> int:
    """Connect to ``target`` (a :class:`_ServerTarget`, or what ``mcp.Client`` takes), name
    the server for ``resolver``, run ``body(client)``, close; the body's exit status.

    Questions go to ``wait_for`` through :func:`toolnexus.mcp.elicitation_callback`. Also
    used by ``_cli_durable`` (``call --park``, ``resume``), which needs no main-thread bridge.
    """
    from .mcp import elicitation_callback

    server = target if isinstance(target, _ServerTarget) else _ServerTarget(target, _label_of(target))
    client = _client(server, protocol, elicitation_callback(wait_for, on_result=on_result), completions)
    try:
        await client.__aenter__()
    except Exception as err:
        raise _CliError(
            EXIT_CONNECTION, f"cannot connect to {server.label}: {_connect_reason(server, err)}"
        ) from None
    logging.getLogger("toolnexus").info("connected to %s, protocol %s", server.label, client.protocol_version)
    try:
        if resolver.server_name is None:
            resolver.server_name = await _server_name(client)
        return await body(client)
    finally:
        try:
            await client.__aexit__(None, None, None)
        except Exception as err:  # a failing shutdown must not hide the result
            logging.getLogger("toolnexus").warning("closing the connection failed: %s", _reason(err))


def _label_of(target: Any) -> str:
    """How failures name a server given as ``mcp.Client`` takes it."""
    from mcp import StdioServerParameters

    if isinstance(target, str):
        try:
            return _url_target(target).label
        except _CliError:
            return _line(_shorten(target, 200))
    if isinstance(target, StdioServerParameters):
        return f"the server `{_line(_shorten(shlex.join([target.command, *target.args])))}`"
    return "the server"


def _asks_the_legacy_way(text: str, client: Client) -> bool:
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    return client.protocol_version in MODERN_PROTOCOL_VERSIONS and any(
        marker in text for marker in _BACK_CHANNEL_MARKERS
    )


async def _call(connection: _Connection, tool: str, arguments: dict[str, Any] | None) -> CallToolResult:
    """Call ``tool``; a ``-32042`` is answered at the terminal (and the call retried once).

    Raises :class:`_CliError`: 1 for a JSON-RPC error of the call (said in one line, with
    the advice to use ``--protocol legacy`` when the server asks the 2025-11-25 way) or
    refused URLs, 3 when the connection fails or is lost. A tool error result is returned.
    """
    from mcp import MCPError

    from ._url_required import UrlElicitationRefusedError, call_tool

    client = connection.client
    try:
        return await call_tool(
            client,
            tool,
            arguments,
            wait_for=connection.wait_for,
            completions=connection.completions,
            on_result=connection.on_result,
        )
    except UrlElicitationRefusedError as err:
        raise _CliError(EXIT_TOOL_ERROR, _line(str(err))) from None
    except MCPError as err:
        if _connection_closed(err):
            raise _CliError(
                EXIT_CONNECTION, f"{_line(tool)}: the connection to {connection.server.label} was lost"
            ) from None
        if _asks_the_legacy_way(err.message, client):
            raise _CliError(EXIT_TOOL_ERROR, f"{_line(tool)} failed: {LEGACY_HINT}") from None
        raise _CliError(EXIT_TOOL_ERROR, f"{_line(tool)} failed: {_error_line(err.message)}") from None
    except Exception as err:
        raise _CliError(
            EXIT_CONNECTION,
            f"{_line(tool)}: the connection to {connection.server.label} failed: {_reason(err)}",
        ) from None


def _tool_failure(connection: _Connection, tool: str, result: CallToolResult) -> str:
    """The one line that says a tool reported an error."""
    text = _result_text(result)
    if _asks_the_legacy_way(text, connection.client):
        return f"{_line(tool)} failed: {LEGACY_HINT}"
    return f"{_line(tool)} failed: {_error_line(text)}"


def _error_line(text: str) -> str:
    """A tool's error as one line: its lines joined with "; ", capped, escaped, so that a
    validation error keeps the field it is about."""
    lines = [" ".join(line.split()) for line in text.splitlines()]
    lines = [line for line in lines if line and not line.startswith("For further information visit")]
    if not lines:
        return "the tool reported an error without a message"
    joined = "; ".join(lines)
    if len(joined) > ERROR_LINE_LIMIT:
        joined = joined[: ERROR_LINE_LIMIT - 1].rstrip() + "…"
    return escape_text(joined)


# --- the console and the log -----------------------------------------------------------


def _console(
    args: argparse.Namespace, output: _Output, completions: ElicitationCompletions
) -> ConsoleResolver:
    if output.dialogue is sys.stdout:  # at a terminal: input() with line editing
        return ConsoleResolver(args.server_name, open_browser=not args.no_browser, completions=completions)
    return ConsoleResolver(
        args.server_name,
        stdin=sys.stdin,
        stdout=output.dialogue,
        open_browser=not args.no_browser,
        completions=completions,
    )


def _logged(
    args: argparse.Namespace, stack: contextlib.ExitStack, resolver: ConsoleResolver, output: _Output
) -> tuple[Callable[[Request], Any], OnResult | None]:
    """The resolver (the terminal, or behind ``--answers``/``--accept-defaults``: see
    ``_cli_answers``), wrapped in the traffic log with ``--log``, and the log's observer of
    what the server got (``None`` without ``--log``)."""
    try:
        wait_for: Callable[[Request], Any] = answering(args, resolver, output.dialogue)
    except (OSError, ValueError) as err:
        raise _CliError(EXIT_USAGE, f"--answers: {_line(str(err))}") from None
    if args.log:
        try:
            log_file = open(args.log, "a", encoding="utf-8")  # noqa: SIM115 - closed by the stack
        except OSError as err:
            raise _CliError(EXIT_USAGE, f"--log: cannot open {_line(args.log)}: {err.strerror}") from None
        stack.callback(log_file.close)

        def write(line: str) -> None:
            log_file.write(line + "\n")
            log_file.flush()

        logged = log_traffic(wait_for, write, values=args.log_values)
        return logged, logged.sent
    return wait_for, None


# --- commands --------------------------------------------------------------------------


def _run_demo(args: argparse.Namespace, stack: contextlib.ExitStack, output: _Output) -> int:
    async def body(connection: _Connection) -> int:
        status = EXIT_OK
        for number, (tool, what) in enumerate(DEMO_TOOLS, 1):
            output.say(f"\n[{number}/{len(DEMO_TOOLS)}] {tool}: {what}")
            result = await _call(connection, tool, None)
            if result.is_error:
                print(f"toolnexus: {_tool_failure(connection, tool, result)}", file=sys.stderr)
                status = EXIT_TOOL_ERROR
            else:  # a walk-through: the results are part of the dialogue
                output.say(escape_text(f"Result: {_result_text(result)}", lines=True))
        return status

    output.say("toolnexus demo: the bundled demo MCP server asks; you answer here.")
    return _answering(args, stack, output, _demo_target(), body)


def _run_call(args: argparse.Namespace, stack: contextlib.ExitStack, output: _Output) -> int:
    arguments: dict[str, Any] | None = None
    if args.arguments is not None:
        try:
            parsed = json.loads(args.arguments)
        except json.JSONDecodeError as err:
            reason = f"JSON_ARGS is not valid JSON: {err.msg} at position {err.pos}"
            raise _CliError(EXIT_USAGE, reason) from None
        if not isinstance(parsed, dict):
            raise _CliError(EXIT_USAGE, "JSON_ARGS must be a JSON object of the tool's arguments")
        arguments = parsed
    if getattr(args, "park", None) is not None and (
        getattr(args, "answers", None) is not None or getattr(args, "accept_defaults", False)
    ):  # parking asks nobody: answers given now would be silently unused
        raise _CliError(EXIT_USAGE, "--park cannot be used with --answers or --accept-defaults")
    server = _server(args, stack)
    if getattr(args, "park", None) is not None:  # durable: park instead of asking here (_cli_durable)
        from . import _cli_durable

        return _cli_durable.cmd_call_park(args, arguments, server)

    async def body(connection: _Connection) -> int:
        result = await _call(connection, args.tool, arguments)
        if args.json:
            output.result.write(_result_json(result) + "\n")
            output.result.flush()
        if result.is_error:
            raise _CliError(EXIT_TOOL_ERROR, _tool_failure(connection, args.tool, result))
        if not args.json:
            output.show(_result_text(result))
        return EXIT_OK

    return _answering(args, stack, output, server, body)


def _server_options(parser: argparse.ArgumentParser) -> None:
    """``--stdio``/``--url`` (one is required), ``--env`` and ``--server-stderr``."""
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


def _answer_options(parser: argparse.ArgumentParser) -> None:
    """The options of every command that answers a server's questions."""
    parser.add_argument(
        "--protocol",
        default="auto",
        metavar="MODE",
        help="protocol negotiation, the MCP client's mode: auto (the default: 2026-07-28 when the "
        "server speaks it, else the handshake), legacy (the initialize handshake, for protocol "
        "2025-11-25 and before; use it when a server asks its questions the 2025-11-25 way) or "
        "2026-07-28 (that version, without probing)",
    )
    parser.add_argument("--log", metavar="FILE", help="append the elicitation traffic to FILE as JSON lines")
    parser.add_argument(
        "--log-values",
        action="store_true",
        help="write the answers' values to the log (masked as *** by default)",
    )
    parser.add_argument(
        "--no-browser",
        action="store_true",
        help="never open a browser: print an accepted URL to open by hand",
    )
    parser.add_argument("--server-name", help="the name shown for the server that asks (default: its own)")
    parser.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=0,
        help="say more on stderr: -v adds information, -vv debugging detail",
    )


def _demo_arguments(parser: argparse.ArgumentParser) -> None:
    _answer_options(parser)


def _call_arguments(parser: argparse.ArgumentParser) -> None:
    _server_options(parser)
    parser.add_argument("tool", metavar="TOOL", help="the tool to call")
    parser.add_argument(
        "arguments", metavar="JSON_ARGS", nargs="?", help="the tool's arguments as a JSON object"
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help="print the tool's result as JSON: its structured content when it has one, else "
        '{"content", "isError"}',
    )
    _answer_options(parser)
    from . import _cli_durable

    _cli_durable.add_park_option(parser)  # --park STORE: see _cli_durable
    add_answer_options(parser)  # --answers FILE, --accept-defaults: see _cli_answers


@dataclass(frozen=True)
class _Command:
    """A subcommand: its help, the arguments it adds, and what runs it."""

    help: str
    description: str
    arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace, contextlib.ExitStack, _Output], int]


COMMANDS: dict[str, _Command] = {
    "demo": _Command(
        help="run the bundled demo server and answer its questions",
        description="Start the bundled demo MCP server over stdio and call each of its tools: a form, "
        "a URL-mode sign-in and a form that asks for a password. Answers come from the terminal; "
        "without a terminal, one line of stdin per question (end of input cancels).",
        arguments=_demo_arguments,
        run=_run_demo,
    ),
    "call": _Command(
        help="call one tool on any MCP server, answering its questions here",
        description="Call one tool on an MCP server, answer its elicitations at the terminal and "
        "print the tool's result. When stdout is not a terminal, the questions go to the "
        "terminal (or stderr) and stdout gets the result alone.",
        arguments=_call_arguments,
        run=_run_call,
    ),
}
"""The subcommands, in the order ``--help`` lists them. Add one here."""


def build_parser() -> argparse.ArgumentParser:
    """The ``toolnexus`` argument parser."""
    parser = argparse.ArgumentParser(
        prog="toolnexus",
        description="Answer an MCP server's elicitations (forms and URLs) at the terminal.",
        epilog="Exit status: 0 success, 1 tool error, 2 usage error, 3 connection failure, 130 interrupted, "
        "141 stdout closed early.",
    )
    parser.add_argument("--version", action="version", version=f"toolnexus {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, command in COMMANDS.items():
        sub = commands.add_parser(name, help=command.help, description=command.description)
        command.arguments(sub)
    # durable: the pending, answer and resume commands (_cli_durable)
    from . import _cli_durable

    _cli_durable.add_commands(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``toolnexus`` command with ``argv`` (default: ``sys.argv[1:]``); return the exit status."""
    args = build_parser().parse_args(argv)
    with contextlib.ExitStack() as stack:
        try:
            _configure_logging(getattr(args, "verbose", 0), stack)
            output = _Output(stack)
            command = COMMANDS.get(args.command)
            if command is None:  # pending, answer, resume (_cli_durable)
                from . import _cli_durable

                return _cli_durable.run(args, [])
            return command.run(args, stack, output)
        except _CliError as failure:
            print(f"toolnexus: {failure.message}", file=sys.stderr)
            return failure.status
        except KeyboardInterrupt:
            print("toolnexus: interrupted", file=sys.stderr)
            return EXIT_INTERRUPTED
        except BrokenPipeError:
            # Whoever read our output stopped (``| head``): say nothing more, and point stdout at
            # devnull so that the flush at exit does not fail again (the Python docs' recipe).
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            os.close(devnull)
            return EXIT_BROKEN_PIPE
        except Exception as err:  # a bug of ours or a library's: one line, never a traceback
            print(f"toolnexus: unexpected failure: {_reason(err)}", file=sys.stderr)
            return EXIT_TOOL_ERROR
