"""Connecting and answering the server's questions here, at the terminal.

:func:`answer_here` is what a command that asks the user runs: the terminal resolver
(:class:`toolnexus.console.ConsoleResolver`, or behind ``--answers``/``--accept-defaults``),
the traffic log of ``--log``, the main-thread bridge, and the connection, watched while a
question is shown. Its body gets a :class:`Connection` and calls tools with :func:`call_tool`.
"""

from __future__ import annotations

import argparse
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._log import log_traffic
from .._wire import Request
from ..console import ConsoleResolver
from ..errors import TaskError, UrlElicitationRefusedError
from . import _unattended
from ._base import EXIT_CONNECTION, EXIT_INTERRUPTED, EXIT_TOOL_ERROR, EXIT_USAGE, CliError, Context
from ._bridge import Bridge, run_answering_here
from ._connection import ServerTarget, connection_closed, is_connection_failure, run_connected, server_name
from ._output import one_line, reason
from ._results import LEGACY_HINT, asks_the_legacy_way, error_line
from ._tasks import TaskProgress

if TYPE_CHECKING:
    from mcp import Client
    from mcp_types import CallToolResult

    from ..durable import LiveResolver
    from ..mcp import ElicitationCompletions, OnResult
    from ..tasks import TasksExtension

__all__ = ["Connection", "add_answer_options", "add_output_options", "answer_here", "call_tool"]


def add_output_options(parser: argparse.ArgumentParser, *, json_option: bool = True) -> None:
    """``--json`` (with ``json_option``) and ``-v``."""
    if json_option:
        parser.add_argument(
            "--json",
            action="store_true",
            help="print the result as JSON: a tool's structured content when it has one, else "
            '{"content", "isError"}',
        )
    parser.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=0,
        help="say more on stderr: -v adds information, -vv debugging detail",
    )


def add_answer_options(parser: argparse.ArgumentParser) -> None:
    """The options of every command that answers a server's questions."""
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


def open_log(args: argparse.Namespace, context: Context) -> Callable[[str], None] | None:
    """The writer of ``--log FILE`` (one line each), or ``None`` without it."""
    if not getattr(args, "log", None):
        return None
    try:
        log_file = open(args.log, "a", encoding="utf-8")  # noqa: SIM115 - closed by the stack
    except OSError as err:
        raise CliError(EXIT_USAGE, f"--log: cannot open {one_line(args.log)}: {err.strerror}") from None
    context.stack.callback(log_file.close)

    def write(line: str) -> None:
        log_file.write(line + "\n")
        log_file.flush()

    return write


@dataclass
class Connection:
    """What a command's body gets: the client, the resolver the questions go to (for
    ``-32042``), where completions are heard, the server, and the log's observer."""

    client: Client
    wait_for: Callable[[Request], Awaitable[Any]]
    completions: ElicitationCompletions
    server: ServerTarget
    on_result: OnResult | None = None
    tasks: TasksExtension | None = None
    """The tasks extension the client declares (2026-07-28), whose settings a 2025-11-25 task
    of the call uses too."""


def _console(
    args: argparse.Namespace, context: Context, completions: ElicitationCompletions
) -> ConsoleResolver:
    output = context.output
    if output.dialogue is output.result_stream and output.result_is_terminal:  # input() with line editing
        return ConsoleResolver(args.server_name, open_browser=not args.no_browser, completions=completions)
    import sys

    return ConsoleResolver(
        args.server_name,
        stdin=sys.stdin,
        stdout=output.dialogue,
        open_browser=not args.no_browser,
        completions=completions,
    )


def _is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def answer_here(
    args: argparse.Namespace,
    context: Context,
    server: ServerTarget,
    body: Callable[[Connection], Awaitable[int]],
    live: LiveResolver | None = None,
) -> int:
    """Connect to ``server``, answer its questions at the terminal, run ``body``; the exit status.

    With ``live`` (``--inbox``, ``--browser``) each question is asked live in its store as
    well, the first answer winning, or only there when standard input is not a terminal."""
    import sys

    import anyio

    from ..mcp import ElicitationCompletions, elicitation_callback, first_answer

    completions = ElicitationCompletions()
    resolver = _console(args, context, completions)
    try:
        wait_for: Callable[[Request], Any] = _unattended.answering(args, resolver, context.output)
    except (OSError, ValueError) as err:
        raise CliError(EXIT_USAGE, f"--answers: {one_line(str(err))}") from None
    on_result: OnResult | None = None
    write = open_log(args, context)
    here = live is None or sys.stdin.isatty()
    progress = TaskProgress(context.output.dialogue, terminal=_is_terminal(context.output.dialogue))
    tasks = progress.extension()

    async def work(bridge: Bridge) -> int:
        asking: Callable[[Request], Awaitable[Any]] = bridge
        if live is not None:
            asking = first_answer(bridge, live) if here else live
        observer = on_result
        if write is not None:
            logged = log_traffic(asking, write, values=args.log_values)
            asking, observer = logged, logged.sent

        async def with_client(client: Client) -> int:
            if resolver.server_name is None:
                resolver.server_name = await server_name(client)
            if live is not None:
                live.server = resolver.server_name
            # Ctrl-C ends the call alone first (bridge.end_call), so that what ending it sends
            # (a task's tasks/cancel) still has its connection.
            call = anyio.CancelScope()
            bridge.end_call = call.cancel
            try:
                with call:
                    return await body(Connection(client, asking, completions, server, observer, tasks))
                return EXIT_INTERRUPTED
            finally:
                bridge.end_call = None
                progress.clear()

        async def ticking() -> None:
            while True:
                await anyio.sleep(1)
                progress.tick()

        # The task's line is redrawn every second; what run_connected raises is raised as
        # it is (a task group would wrap it in an exception group).
        outcome: list[int | Exception] = []
        async with anyio.create_task_group() as group:
            group.start_soon(ticking)
            try:
                outcome.append(
                    await run_connected(
                        server,
                        with_client,
                        protocol=args.protocol,
                        connect_timeout=args.connect_timeout,
                        elicitation_callback=elicitation_callback(asking, on_result=observer),
                        message_handler=completions,
                        asking=lambda: bridge.asking.is_set() or bool(live is not None and live.asked),
                        extensions=[tasks],
                    )
                )
            except Exception as err:
                outcome.append(err)
            group.cancel_scope.cancel()
        if isinstance(outcome[0], Exception):
            raise outcome[0]
        return outcome[0]

    return run_answering_here(work, wait_for, lambda: resolver.quit_requested, context.output)


async def call_tool(connection: Connection, tool: str, arguments: dict[str, Any] | None) -> CallToolResult:
    """Call ``tool``; a ``-32042`` is answered at the terminal (and the call retried once).

    Raises :class:`CliError`: 1 for a JSON-RPC error of the call (said in one line, with
    the advice to use ``--protocol legacy`` when the server asks the 2025-11-25 way) or
    refused URLs, 3 when the connection fails or is lost. A tool error result is returned.
    """
    from mcp import MCPError
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    from ..mcp import call_tool_resolving_urls
    from ..tasks import call_tool_as_task, task_support

    client = connection.client
    try:
        legacy = connection.tasks is not None and client.protocol_version not in MODERN_PROTOCOL_VERSIONS
        if legacy and await task_support(client, tool) == "required":  # 2025-11-25: ask for a task
            return await call_tool_as_task(client, tool, arguments, tasks=connection.tasks, as_task=True)
        return await call_tool_resolving_urls(
            client,
            tool,
            arguments,
            wait_for=connection.wait_for,
            completions=connection.completions,
            on_result=connection.on_result,
        )
    except (UrlElicitationRefusedError, TaskError) as err:
        raise CliError(EXIT_TOOL_ERROR, one_line(str(err))) from None
    except MCPError as err:
        if connection_closed(err):
            raise CliError(EXIT_CONNECTION, f"the connection to {connection.server.label} was lost") from None
        if asks_the_legacy_way(err.message, client):
            raise CliError(EXIT_TOOL_ERROR, f"{one_line(tool)} failed: {LEGACY_HINT}") from None
        raise CliError(EXIT_TOOL_ERROR, f"{one_line(tool)} failed: {error_line(err.message)}") from None
    except BrokenPipeError:
        raise
    except Exception as err:
        if is_connection_failure(err):
            raise CliError(EXIT_CONNECTION, f"the connection to {connection.server.label} was lost") from None
        raise CliError(
            EXIT_CONNECTION,
            f"{one_line(tool)}: the connection to {connection.server.label} failed: {reason(err)}",
        ) from None
