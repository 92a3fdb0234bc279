"""The parser built from the registry, and ``run``: the one place failures become exit statuses
(``toolnexus.cli.main`` loads this module, and through it the SDK, then calls ``run``)."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Sequence

from .. import __version__
from ._base import EXIT_BROKEN_PIPE, EXIT_INTERRUPTED, EXIT_TOOL_ERROR, CliError, Context
from ._commands import COMMANDS
from ._output import Output, configure_logging, reason

__all__ = ["build_parser", "run"]

EPILOG = (
    "Exit status: 0 success, 1 tool error, 2 usage error, 3 connection failure, 130 interrupted, "
    "141 stdout closed early."
)


def build_parser() -> argparse.ArgumentParser:
    """The ``toolnexus`` argument parser: one subparser per registered command."""
    parser = argparse.ArgumentParser(
        prog="toolnexus",
        description="Answer an MCP server's elicitations (forms and URLs) at the terminal.",
        epilog=EPILOG,
    )
    parser.add_argument("--version", action="version", version=f"toolnexus {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for command in COMMANDS:
        sub = commands.add_parser(command.name, help=command.help, description=command.description)
        sub.set_defaults(run=command.run)
        command.arguments(sub)
    return parser


def _stdout_gone() -> int:
    # Whoever read our output stopped (``| head``): say nothing more, and point stdout at
    # devnull so that the flush at exit does not fail again (the Python docs' recipe).
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    return EXIT_BROKEN_PIPE


def run(argv: Sequence[str] | None = None) -> int:
    """Run the ``toolnexus`` command with ``argv`` (default: ``sys.argv[1:]``); return the exit status."""
    args = build_parser().parse_args(argv)
    with contextlib.ExitStack() as stack:
        output = Output(stack)
        try:
            configure_logging(getattr(args, "verbose", 0), output, stack)
            status: int = args.run(args, Context(output, stack))
            sys.stdout.flush()  # a closed stdout is found here at the latest, not at exit
            return status
        except CliError as failure:
            output.error(failure.message)
            return failure.status
        except KeyboardInterrupt:
            output.error("interrupted")
            return EXIT_INTERRUPTED
        except BrokenPipeError:
            return _stdout_gone()
        except Exception as err:  # a bug of ours or a library's: one line, never a traceback
            output.error(f"unexpected failure: {reason(err)}")
            return EXIT_TOOL_ERROR
