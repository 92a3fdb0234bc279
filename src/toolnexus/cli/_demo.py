"""``toolnexus demo``: run the bundled demo server and call each of its tools."""

from __future__ import annotations

import argparse

from ._base import EXIT_OK, EXIT_TOOL_ERROR, Command, Context
from ._connection import add_connection_options, demo_target
from ._interactive import Connection, add_answer_options, add_output_options, answer_here, call_tool
from ._results import result_text, tool_failure

__all__ = ["COMMAND", "DEMO_TOOLS"]

DEMO_TOOLS: tuple[tuple[str, str], ...] = (
    ("deploy", "a form: an enum, a bounded integer, a boolean and a string with a default"),
    ("sign_in", "a URL to open (URL mode)"),
    ("connect_database", "a form that asks for a password, which the spec forbids"),
)


def _arguments(parser: argparse.ArgumentParser) -> None:
    add_connection_options(parser, server=False)
    add_answer_options(parser)
    add_output_options(parser, json_option=False)


def _run(args: argparse.Namespace, context: Context) -> int:
    output = context.output

    async def body(connection: Connection) -> int:
        status = EXIT_OK
        for number, (tool, what) in enumerate(DEMO_TOOLS, 1):
            output.say(f"\n[{number}/{len(DEMO_TOOLS)}] {tool}: {what}")
            result = await call_tool(connection, tool, None)
            if result.is_error:
                output.error(tool_failure(connection.client, tool, result))
                status = EXIT_TOOL_ERROR
            else:  # a walk-through: the results are part of the dialogue
                output.say(f"Result: {result_text(result)}")
        return status

    output.say("toolnexus demo: the bundled demo MCP server asks; you answer here.")
    return answer_here(args, context, demo_target(), body)


COMMAND = Command(
    name="demo",
    help="run the bundled demo server and answer its questions",
    description="Start the bundled demo MCP server over stdio and call each of its tools: a form, "
    "a URL-mode sign-in and a form that asks for a password. Answers come from the terminal; "
    "without a terminal, from stdin, one line per field and one for the review of each form "
    "(end of input cancels).",
    arguments=_arguments,
    run=_run,
)
