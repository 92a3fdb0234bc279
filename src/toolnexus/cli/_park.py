"""``toolnexus call ... --park STORE``: when the server asks, park the call instead of asking."""

from __future__ import annotations

import argparse
import asyncio
import logging
from typing import TYPE_CHECKING, Any

from .._util import escape_text
from ._base import EXIT_OK, EXIT_TOOL_ERROR, CliError, Context, print_result
from ._connection import ServerTarget, run_connected, server_name
from ._results import asks_the_legacy_way, tool_failure
from ._stores import (
    check_can_create,
    check_era,
    durable_failure,
    open_store,
    refuse_inline,
    report_parked,
)

if TYPE_CHECKING:
    from mcp import Client

    from ..durable import Pending

__all__ = ["add_park_option", "call_and_park"]

_LOG = logging.getLogger(__name__)

LIVE_HINT = (
    "ask it live instead: --inbox STORE in place of --park STORE (the call stays open while its "
    "question waits in STORE, answered in `toolnexus inbox STORE` or with `toolnexus answer`), "
    "or call without --park to answer at the terminal"
)


def add_park_option(parser: argparse.ArgumentParser) -> None:
    """``call --park STORE``."""
    parser.add_argument(
        "--park",
        metavar="STORE",
        help="when the server asks, park the call in STORE (a file, created when a call is parked, "
        "or a postgresql:// URL) instead of asking here; print its key and exit 0 (protocol "
        "2026-07-28 servers only). A call the server makes a task is parked too, at once: "
        "`toolnexus worker STORE` polls it and parks its questions. Over --stdio, a second server "
        "process is shown the parked state, and a warning says when it would refuse it",
    )


async def _probe_resumable(server: ServerTarget, protocol: str, pending: Pending) -> None:
    """Warn when a new server process would refuse the parked call's ``requestState``.

    Over stdio, ``toolnexus resume`` starts a new server process; a server that seals its
    state with a key of its own process (the SDK's default) refuses it there, and the call
    can never be resumed. The check: the state is presented, with no answers, to a second
    process of the same server; a refusal of the state is the warning (any other outcome,
    the questions asked again included, means it is accepted). The probe's own failures
    are ignored: it is advice, not the command's work.
    """
    from mcp import MCPError

    from ..mcp import elicitation_callback

    async def probe(client: Client) -> int:
        try:
            await client.session.call_tool(
                pending.target,
                dict(pending.arguments or {}),
                input_responses={},
                request_state=pending.request_state,
                allow_input_required=True,
            )
        except MCPError as err:
            if "requeststate" in err.message.lower().replace("_", "").replace(" ", ""):
                _LOG.warning(
                    "%s refused the parked call's state on a new connection (%s): a server that "
                    "keeps its request-state key per process cannot resume it; give the server a "
                    "fixed key (RequestStateSecurity) or answer here without --park",
                    server.label,
                    err.message,
                )
        return EXIT_OK

    import dataclasses
    import os

    try:
        with open(os.devnull, "w", encoding="utf-8") as quiet:  # the second process's log is no news
            await run_connected(
                dataclasses.replace(server, errlog=quiet),
                probe,
                protocol=protocol,
                connect_timeout=30,
                elicitation_callback=elicitation_callback(refuse_inline),
            )
    except Exception as err:  # advice only
        _LOG.debug("the resumability probe failed: %s", err)


def call_and_park(
    args: argparse.Namespace, context: Context, arguments: dict[str, Any] | None, server: ServerTarget
) -> int:
    """Call the tool; park it in ``--park STORE`` when the server asks; print a result as
    ``call`` does when it answers at once."""
    from ..durable import Pending, call_tool_or_park
    from ..mcp import elicitation_callback
    from ..tasks import TasksExtension

    check_can_create(args.park)  # the store itself is made only when there is a call to park
    output = context.output

    async def body(client: Client) -> int:
        check_era(client, "--park", LIVE_HINT)
        try:
            outcome = await call_tool_or_park(client, args.tool, arguments)
        except Exception as err:
            from mcp import MCPError

            if isinstance(err, MCPError) and asks_the_legacy_way(err.message, client):
                raise CliError(
                    EXIT_TOOL_ERROR,
                    f"{escape_text(args.tool)}: the server asks its questions the 2025-11-25 way, in the "
                    "middle of the call, where a call cannot be parked; "
                    "run again with --protocol legacy and " + LIVE_HINT,
                ) from None
            raise durable_failure(args.tool, err, server.label) from None
        if isinstance(outcome, Pending):
            name = args.server_name or await server_name(client)
            if name and outcome.server != name:
                from dataclasses import replace

                outcome = replace(outcome, server=name)
            store = open_store(args.park, create=True)
            context.stack.callback(store.close)
            key = store.put(outcome)
            status = report_parked(output, args.park, key, outcome, "parked")
            if not server.is_http and outcome.method == "tools/call" and outcome.request_state:
                await _probe_resumable(server, args.protocol, outcome)
            return status
        return print_result(
            output,
            outcome,
            as_json=args.json,
            failure=lambda failed: tool_failure(client, args.tool, failed),
        )

    return asyncio.run(
        run_connected(
            server,
            body,
            protocol=args.protocol,
            connect_timeout=args.connect_timeout,
            elicitation_callback=elicitation_callback(refuse_inline),
            extensions=[TasksExtension()],
        )
    )
