"""``toolnexus call ... --park STORE``: when the server asks, park the call instead of asking."""

from __future__ import annotations

import argparse
import asyncio
from typing import TYPE_CHECKING, Any

from ._base import EXIT_OK, EXIT_TOOL_ERROR, CliError, Context
from ._connection import ServerTarget, run_connected, server_name
from ._results import result_json, result_text, tool_failure
from ._stores import check_era, durable_failure, open_store, refuse_inline, report_parked

if TYPE_CHECKING:
    from mcp import Client

__all__ = ["add_park_option", "call_and_park"]


def add_park_option(parser: argparse.ArgumentParser) -> None:
    """``call --park STORE``."""
    parser.add_argument(
        "--park",
        metavar="STORE",
        help="when the server asks, park the call in the store file STORE (created when absent) "
        "instead of asking here; print its key and exit 0 (protocol 2026-07-28 servers only)",
    )


def call_and_park(
    args: argparse.Namespace, context: Context, arguments: dict[str, Any] | None, server: ServerTarget
) -> int:
    """Call the tool; park it in ``--park STORE`` when the server asks; print a result as
    ``call`` does when it answers at once."""
    from ..durable import Pending, call_tool
    from ..mcp import elicitation_callback

    store = open_store(args.park, create=True)
    context.stack.callback(store.close)
    output = context.output

    async def body(client: Client) -> int:
        check_era(client, "--park", "call without --park to answer at the terminal")
        try:
            outcome = await call_tool(client, args.tool, arguments)
        except Exception as err:
            raise durable_failure(args.tool, err, server.label) from None
        if isinstance(outcome, Pending):
            name = args.server_name or await server_name(client)
            if name and outcome.server != name:
                from dataclasses import replace

                outcome = replace(outcome, server=name)
            return report_parked(output, store, outcome, "parked")
        from mcp_types import CallToolResult

        if args.json:
            output.result(result_json(outcome))
        if isinstance(outcome, CallToolResult) and outcome.is_error:
            raise CliError(EXIT_TOOL_ERROR, tool_failure(client, args.tool, outcome))
        if not args.json:
            output.result(result_text(outcome))
        return EXIT_OK

    return asyncio.run(
        run_connected(
            server,
            body,
            protocol=args.protocol,
            connect_timeout=args.connect_timeout,
            elicitation_callback=elicitation_callback(refuse_inline),
        )
    )
