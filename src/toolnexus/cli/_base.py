"""What every subcommand shares: the exit statuses, the one-line failure, the registry entry,
and how a server's result is printed.

Standard library only at import, so that building the parser (``--help``) imports nothing heavy.
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcp_types import CallToolResult, GetPromptResult, ReadResourceResult

    from ._output import Output

__all__ = [
    "EXIT_BROKEN_PIPE",
    "EXIT_CONNECTION",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_TOOL_ERROR",
    "EXIT_USAGE",
    "CliError",
    "Command",
    "Context",
    "print_result",
]

EXIT_OK = 0
EXIT_TOOL_ERROR = 1
EXIT_USAGE = 2
EXIT_CONNECTION = 3
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, what a shell reports for a command killed by it


class CliError(Exception):
    """A reason to stop: the exit status and the one line to print (already escaped)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(frozen=True)
class Context:
    """What a running subcommand gets besides its arguments: the one output writer, and
    the exit stack that closes what the command opens (files, the terminal)."""

    output: Output
    stack: contextlib.ExitStack


@dataclass(frozen=True)
class Command:
    """A subcommand: its name, help, the arguments it adds, and what runs it.

    ``run(args, context)`` returns the exit status, or raises :class:`CliError`.
    """

    name: str
    help: str
    description: str
    arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace, Context], int]


def print_result(
    output: Output,
    result: CallToolResult | GetPromptResult | ReadResourceResult,
    *,
    as_json: bool,
    failure: Callable[[CallToolResult], str],
) -> int:
    """Print a server's result as every command does: its JSON with ``--json`` (an error
    result too), else its text; a tool's error result is exit 1 with the line ``failure``
    makes of it."""
    from mcp_types import CallToolResult

    from ._results import result_json, result_text

    if as_json:
        output.result(result_json(result))
    if isinstance(result, CallToolResult) and result.is_error:
        raise CliError(EXIT_TOOL_ERROR, failure(result))
    if not as_json:
        output.result(result_text(result))
    return EXIT_OK
