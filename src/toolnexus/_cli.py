"""The ``toolnexus`` command: answer any MCP server's elicitations at the terminal.

- ``toolnexus demo``: run the bundled demo server and call each of its tools.
- ``toolnexus call (--stdio "CMD ARGS" | --url URL) TOOL [JSON_ARGS]``: call one tool on any
  MCP server.

Questions are answered with :class:`toolnexus.console.ConsoleResolver`, wired in with
:func:`toolnexus.mcp.elicitation_callback`. The resolver runs in the main thread while the
MCP client runs its event loop in a second one: a blocking ``input()`` then has line
editing, and Ctrl-C at a prompt cancels that one question instead of killing the client;
a second Ctrl-C at a prompt, or Ctrl-D (end of input) at a terminal, stops the command.

Exit status: 0 on success, 1 when a tool reports an error, 2 for a usage error, 3 when the
server cannot be reached or the connection fails, 130 when interrupted, 141 when stdout is
closed early (``toolnexus call ... | head -3``), quietly, as a command killed by SIGPIPE.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import json
import os
import queue
import shlex
import signal
import sys
import threading
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from . import __version__
from ._cli_answers import add_options as add_answer_options
from ._cli_answers import answering
from ._log import log_traffic
from ._wire import Answer, Request
from .console import ConsoleResolver

if TYPE_CHECKING:
    from mcp import Client
    from mcp_types import CallToolResult

__all__ = ["main"]

EXIT_OK = 0
EXIT_TOOL_ERROR = 1
EXIT_USAGE = 2
EXIT_CONNECTION = 3
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, what a shell reports for a command killed by it
ERROR_LINE_LIMIT = 300

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


# --- the resolver in the main thread ---------------------------------------------------


class _MainThreadResolver:
    """Hands each Request from the event loop's thread to the main thread and back."""

    def __init__(self, wait_for: Callable[[Request], Any], quit_requested: Callable[[], bool]) -> None:
        self._wait_for = wait_for
        self._quit_requested = quit_requested
        # None: the client is done, stop serving.
        self._queue: queue.Queue[tuple[Request, concurrent.futures.Future[Any]] | None] = queue.Queue()

    async def __call__(self, request: Request) -> Any:
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self._queue.put((request, future))
        return await asyncio.wrap_future(future)

    def finish(self) -> None:
        self._queue.put(None)

    def serve(self) -> bool:
        """Answer requests in this (the main) thread until :meth:`finish` (``True``) or
        until the user asks to quit (``False``). A closed stdout stops it too
        (:class:`BrokenPipeError`): no question can be shown."""
        while True:
            item = self._queue.get()
            if item is None:
                return True
            request, future = item
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(self._wait_for(request))
            except BrokenPipeError:
                raise  # the caller stops the client, which drops the pending question
            except Exception as err:
                future.set_exception(err)
            if self._quit_requested():
                return False


def _run(
    work: Callable[[Callable[[Request], Awaitable[Any]]], Awaitable[int]],
    wait_for: Callable[[Request], Any],
    quit_requested: Callable[[], bool],
) -> int:
    """Run ``work`` on an event loop in a second thread, answering questions in this one.

    Stops the client and exits 130 on Ctrl-C outside a question, or when
    ``quit_requested()`` is true after an answer (a second Ctrl-C, Ctrl-D at a terminal).
    """
    bridge = _MainThreadResolver(wait_for, quit_requested)
    outcome: list[int | BaseException] = []
    loop_box: list[tuple[asyncio.AbstractEventLoop, asyncio.Task[int]]] = []

    async def runner() -> int:
        task = asyncio.current_task()
        assert task is not None
        loop_box.append((asyncio.get_running_loop(), task))
        return await work(bridge)

    def target() -> None:
        # Ctrl-C must reach the main thread, where the resolver reads: a process-directed
        # SIGINT taken by this thread would leave the main thread blocked in its read.
        if hasattr(signal, "pthread_sigmask"):
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            outcome.append(asyncio.run(runner()))
        except BaseException as err:
            outcome.append(err)
        finally:
            bridge.finish()

    def stop() -> None:
        if loop_box:
            loop, task = loop_box[0]
            loop.call_soon_threadsafe(task.cancel)
        thread.join(timeout=10)

    thread = threading.Thread(target=target, name="toolnexus-client", daemon=True)
    try:
        thread.start()
        finished = bridge.serve()
        if not finished:
            stop()
            raise _CliError(EXIT_INTERRUPTED, "interrupted")
        thread.join()
    except KeyboardInterrupt:
        stop()
        raise _CliError(EXIT_INTERRUPTED, "interrupted") from None
    except BrokenPipeError:
        stop()
        raise
    result = outcome[0] if outcome else _CliError(EXIT_CONNECTION, "the client stopped unexpectedly")
    if isinstance(result, BaseException):
        raise result
    return result


# --- talking to the server -------------------------------------------------------------


def _reason(err: BaseException) -> str:
    """The innermost, most specific cause of a failure, as one line."""
    # An exception group (anyio's task groups raise them): its first member.
    while isinstance(getattr(err, "exceptions", None), tuple) and err.exceptions:  # type: ignore[attr-defined]
        err = err.exceptions[0]  # type: ignore[attr-defined]
    while err.__cause__ is not None and not str(err).strip():
        err = err.__cause__
    text = " ".join(str(err).split())
    name = type(err).__name__
    return f"{name}: {text}" if text else name


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


def _demo_target() -> Any:
    from mcp import StdioServerParameters

    # The demo server is this package's module; make it importable in the child even when
    # toolnexus runs from a source tree that is not installed.
    root = str(Path(__file__).resolve().parent.parent)
    path = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH", "")) if p)
    return StdioServerParameters(
        command=sys.executable, args=["-m", "toolnexus._demo_server"], env={"PYTHONPATH": path}
    )


def _stdio_target(command: str) -> Any:
    from mcp import StdioServerParameters

    try:
        argv = shlex.split(command)
    except ValueError as err:
        raise _CliError(EXIT_USAGE, f"--stdio: {err}") from None
    if not argv:
        raise _CliError(EXIT_USAGE, "--stdio needs a command")
    return StdioServerParameters(command=argv[0], args=argv[1:], cwd=os.getcwd())


def _client(target: Any, protocol: str, callback: Any) -> Client:
    from mcp import Client
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

    try:
        return Client(target, elicitation_callback=callback, mode=protocol)
    except ValueError:
        if protocol in HANDSHAKE_PROTOCOL_VERSIONS:
            reason = f"{protocol} is reached through the initialize handshake: use --protocol legacy"
        else:
            modes = ", ".join(("auto", "legacy", *MODERN_PROTOCOL_VERSIONS))
            reason = f"must be one of {modes}, not {protocol!r}"
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


async def _connected(
    target: Any,
    protocol: str,
    wait_for: Callable[[Request], Awaitable[Any]],
    resolver: ConsoleResolver,
    body: Callable[[Client], Awaitable[int]],
) -> int:
    from .mcp import elicitation_callback

    client = _client(target, protocol, elicitation_callback(wait_for))
    try:
        await client.__aenter__()
    except Exception as err:
        raise _CliError(
            EXIT_CONNECTION, f"cannot connect to the server: {_connect_reason(target, err)}"
        ) from None
    try:
        if resolver.server_name is None:
            resolver.server_name = await _server_name(client)
        return await body(client)
    finally:
        try:
            await client.__aexit__(None, None, None)
        except Exception as err:  # a failing shutdown must not hide the result
            print(f"toolnexus: closing the connection failed: {_reason(err)}", file=sys.stderr)


async def _call(client: Client, tool: str, arguments: dict[str, Any] | None) -> CallToolResult:
    from mcp import MCPError

    try:
        return await client.call_tool(tool, arguments)
    except MCPError as err:
        raise _CliError(EXIT_TOOL_ERROR, f"{tool}: {_reason(err)}") from None
    except Exception as err:
        raise _CliError(EXIT_CONNECTION, f"{tool}: the connection failed: {_reason(err)}") from None


def _connect_reason(target: Any, err: BaseException) -> str:
    """Why connecting failed; for a stdio server whose output closed, that it exited."""
    from mcp import MCPError, StdioServerParameters
    from mcp_types import CONNECTION_CLOSED

    inner = err
    while isinstance(getattr(inner, "exceptions", None), tuple) and inner.exceptions:  # type: ignore[attr-defined]
        inner = inner.exceptions[0]  # type: ignore[attr-defined]
    if (
        isinstance(target, StdioServerParameters)
        and isinstance(inner, MCPError)
        and inner.code == CONNECTION_CLOSED
    ):
        # The SDK does not hand out the process's exit status; a closed connection
        # before the handshake is the server process ending (or closing its stdout).
        return "the server process exited before it answered"
    return _reason(err)


def _error_line(text: str) -> str:
    """A tool's error as one line: its lines joined with "; ", capped, so that a
    validation error keeps the field it is about."""
    lines = [" ".join(line.split()) for line in text.splitlines()]
    lines = [line for line in lines if line and not line.startswith("For further information visit")]
    if not lines:
        return "the tool reported an error without a message"
    joined = "; ".join(lines)
    if len(joined) > ERROR_LINE_LIMIT:
        joined = joined[: ERROR_LINE_LIMIT - 1].rstrip() + "…"
    return joined


# --- commands --------------------------------------------------------------------------


def _resolver_and_log(args: argparse.Namespace, stack: list[TextIO]) -> tuple[ConsoleResolver, Any]:
    resolver = ConsoleResolver(args.server_name, open_browser=not args.no_browser)
    # --answers / --accept-defaults (call only): see _cli_answers.
    try:
        wait_for: Callable[[Request], Answer] = answering(args, resolver)
    except (OSError, ValueError) as err:
        raise _CliError(EXIT_USAGE, f"--answers: {err}") from None
    if args.log:
        try:
            log_file = open(args.log, "a", encoding="utf-8")  # noqa: SIM115 - closed by main
        except OSError as err:
            raise _CliError(EXIT_USAGE, f"--log: cannot open {args.log}: {err.strerror}") from None
        stack.append(log_file)

        def write(line: str) -> None:
            log_file.write(line + "\n")
            log_file.flush()

        wait_for = log_traffic(wait_for, write, values=args.log_values)
    return resolver, wait_for


def _cmd_demo(args: argparse.Namespace, stack: list[TextIO]) -> int:
    resolver, wait_for = _resolver_and_log(args, stack)
    out = sys.stdout

    async def body(client: Client) -> int:
        status = EXIT_OK
        for number, (tool, what) in enumerate(DEMO_TOOLS, 1):
            out.write(f"\n[{number}/{len(DEMO_TOOLS)}] {tool}: {what}\n")
            out.flush()
            result = await _call(client, tool, None)
            text = _result_text(result)
            if result.is_error:
                print(f"toolnexus: {tool} failed: {_error_line(text)}", file=sys.stderr)
                status = EXIT_TOOL_ERROR
            else:
                out.write(f"Result: {text}\n")
                out.flush()
        return status

    async def work(bridge: Callable[[Request], Awaitable[Any]]) -> int:
        return await _connected(_demo_target(), args.protocol, bridge, resolver, body)

    print("toolnexus demo: the bundled demo MCP server asks; you answer here.")
    return _run(work, wait_for, lambda: resolver.quit_requested)


def _cmd_call(args: argparse.Namespace, stack: list[TextIO]) -> int:
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
    target: Any = args.url if args.url is not None else _stdio_target(args.stdio)
    if args.park is not None:  # durable: park instead of asking here (_cli_durable)
        from . import _cli_durable

        return _cli_durable.cmd_call_park(args, arguments, target)
    resolver, wait_for = _resolver_and_log(args, stack)

    async def body(client: Client) -> int:
        result = await _call(client, args.tool, arguments)
        text = _result_text(result)
        if result.is_error:
            raise _CliError(EXIT_TOOL_ERROR, f"{args.tool} failed: {_error_line(text)}")
        sys.stdout.write(text + ("\n" if text else ""))
        sys.stdout.flush()
        return EXIT_OK

    async def work(bridge: Callable[[Request], Awaitable[Any]]) -> int:
        return await _connected(target, args.protocol, bridge, resolver, body)

    return _run(work, wait_for, lambda: resolver.quit_requested)


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--protocol",
        default="auto",
        metavar="MODE",
        help="protocol negotiation, the MCP client's mode: auto (the default: 2026-07-28 when the "
        "server speaks it, else the handshake), legacy (the initialize handshake, for protocol "
        "2025-11-25 and before) or 2026-07-28 (that version, without probing)",
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
    demo = commands.add_parser(
        "demo",
        help="run the bundled demo server and answer its questions",
        description="Start the bundled demo MCP server over stdio and call each of its tools: a form, "
        "a URL-mode sign-in and a form that asks for a password. Answers come from the terminal; "
        "without a terminal, one line of stdin per question (end of input cancels).",
    )
    _common(demo)
    call = commands.add_parser(
        "call",
        help="call one tool on any MCP server, answering its questions here",
        description="Call one tool on an MCP server, answer its elicitations at the terminal and "
        "print the tool's result.",
    )
    where = call.add_mutually_exclusive_group(required=True)
    where.add_argument("--stdio", metavar='"CMD ARGS"', help="start the server with this command line")
    where.add_argument("--url", metavar="URL", help="connect to a streamable HTTP server at URL")
    call.add_argument("tool", metavar="TOOL", help="the tool to call")
    call.add_argument(
        "arguments", metavar="JSON_ARGS", nargs="?", help="the tool's arguments as a JSON object"
    )
    _common(call)
    # durable: call --park, and the pending, answer and resume commands (_cli_durable)
    from . import _cli_durable

    _cli_durable.add_park_option(call)
    _cli_durable.add_commands(commands)
    add_answer_options(call)  # --answers FILE, --accept-defaults: see _cli_answers
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``toolnexus`` command with ``argv`` (default: ``sys.argv[1:]``); return the exit status."""
    args = build_parser().parse_args(argv)
    stack: list[TextIO] = []
    try:
        if args.command == "demo":
            return _cmd_demo(args, stack)
        if args.command in ("pending", "answer", "resume"):  # durable (_cli_durable)
            from . import _cli_durable

            return _cli_durable.run(args, stack)
        return _cmd_call(args, stack)
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
    finally:
        for stream in stack:
            stream.close()
