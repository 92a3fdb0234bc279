"""``toolnexus call (--stdio "CMD ARGS" | --url URL) TOOL [JSON_ARGS]``: call one tool on any
MCP server, answering its questions here (or, with ``--park STORE``, parking them)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from . import _live, _park, _unattended
from ._base import EXIT_USAGE, CliError, Command, Context, print_result
from ._connection import add_connection_options, server_from
from ._interactive import Connection, add_answer_options, add_output_options, answer_here, call_tool
from ._results import tool_failure

__all__ = ["COMMAND", "parse_arguments"]


def parse_arguments(text: str | None) -> dict[str, Any] | None:
    """``JSON_ARGS`` as the tool's arguments (a usage error when it is not a JSON object)."""
    if text is None:
        return None
    try:
        parsed = json.loads(text)
    except json.JSONDecodeError as err:
        raise CliError(EXIT_USAGE, f"JSON_ARGS is not valid JSON: {err.msg} at position {err.pos}") from None
    if not isinstance(parsed, dict):
        raise CliError(EXIT_USAGE, "JSON_ARGS must be a JSON object of the tool's arguments")
    return parsed


def _arguments(parser: argparse.ArgumentParser) -> None:
    add_connection_options(parser)
    parser.add_argument("tool", metavar="TOOL", help="the tool to call")
    parser.add_argument(
        "arguments", metavar="JSON_ARGS", nargs="?", help="the tool's arguments as a JSON object"
    )
    add_output_options(parser)
    add_answer_options(parser)
    _park.add_park_option(parser)
    _live.add_live_options(parser)
    _unattended.add_options(parser)


def _run(args: argparse.Namespace, context: Context) -> int:
    arguments = parse_arguments(args.arguments)
    if args.park is not None and (args.answers is not None or args.accept_defaults):
        # parking asks nobody: answers given now would be silently unused
        raise CliError(EXIT_USAGE, "--park cannot be used with --answers or --accept-defaults")
    live = _live.start_live(args, context)  # usage errors first, before anything connects
    server = server_from(args, context.stack)
    if args.park is not None:
        return _park.call_and_park(args, context, arguments, server)
    output = context.output

    async def body(connection: Connection) -> int:
        result = await call_tool(connection, args.tool, arguments)
        return print_result(
            output,
            result,
            as_json=args.json,
            failure=lambda failed: tool_failure(connection.client, args.tool, failed),
        )

    return answer_here(args, context, server, body, live)


COMMAND = Command(
    name="call",
    help="call one tool on any MCP server, answering its questions here",
    description="Call one tool on an MCP server, answer its elicitations at the terminal and "
    "print the tool's result. When stdout is not a terminal, the questions go to the "
    "terminal (or stderr) and stdout gets the result alone.",
    arguments=_arguments,
    run=_run,
)
