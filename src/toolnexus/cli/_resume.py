"""``toolnexus resume STORE KEY (--stdio CMD | --url URL)``: resume a parked call with its
recorded answers and print its result as ``call`` does."""

from __future__ import annotations

import argparse
import asyncio
from typing import TYPE_CHECKING

from .._log import log_traffic
from .._util import escape_text
from .._wire import Answer, Request
from ..errors import NotClaimableError, ServerMismatchError
from ._base import EXIT_CONNECTION, EXIT_TOOL_ERROR, EXIT_USAGE, CliError, Command, Context, print_result
from ._connection import add_connection_options, run_connected, server_from
from ._interactive import add_answer_options, add_output_options, open_log
from ._results import error_line, result_text
from ._stores import (
    add_store_argument,
    check_era,
    durable_failure,
    get_pending,
    open_store,
    refuse_inline,
    report_parked,
    shown_store,
    what_is_called,
)

if TYPE_CHECKING:
    from mcp import Client

__all__ = ["COMMAND"]


def _arguments(parser: argparse.ArgumentParser) -> None:
    add_store_argument(parser, key=True)
    add_connection_options(parser)
    add_output_options(parser)
    add_answer_options(parser)
    parser.add_argument(
        "--renamed-server",
        action="store_true",
        help="resume even though the server's name differs from the one the call was parked from "
        "(a server that was renamed); without it such a resume is refused and nothing is sent",
    )


def _run(args: argparse.Namespace, context: Context) -> int:

    from .._pending import elicit_results
    from ..durable import resume_key
    from ..mcp import elicitation_callback

    output = context.output
    server = server_from(args, context.stack)
    store = open_store(args.store)
    context.stack.callback(store.close)
    pending = get_pending(store, args.key)
    call = store.call(args.key)
    if call.status in ("resuming", "done", "failed", "expired"):
        said = {"resuming": "being resumed elsewhere", "done": "done already"}.get(call.status, call.status)
        why = f" ({escape_text(call.error)})" if call.status == "failed" and call.error else ""
        raise CliError(EXIT_USAGE, f"{escape_text(args.key)} is {said}{why}: nothing to resume")
    answers = store.answers(args.key)
    try:
        elicit_results(pending, answers)
    except ValueError as err:
        raise CliError(
            EXIT_USAGE,
            f"{err}; answer with: toolnexus answer {shown_store(args.store)} {escape_text(args.key)}",
        ) from None
    what = f"{args.key} ({what_is_called(pending)})"
    write = open_log(args, context)
    if write is not None:  # the traffic log: each question and the answer now sent for it

        def recorded(request: Request) -> Answer:
            return answers[request.id]

        logged = log_traffic(recorded, write, values=args.log_values)
        for request in pending.requests:
            if request.id in answers:
                logged(request)

    async def body(client: Client) -> int:
        check_era(client, "resume", "resume without --protocol legacy")
        try:  # claimed in the store's lifecycle, as a worker claims: one resumer gets the call
            done = await resume_key(client, store, args.key, allow_renamed_server=args.renamed_server)
        except ServerMismatchError as err:
            raise CliError(
                EXIT_USAGE, f"{err}".replace("pass allow_renamed_server=True", "use --renamed-server")
            ) from None
        except NotClaimableError as err:
            raise CliError(EXIT_USAGE, escape_text(str(err))) from None
        except KeyError:
            raise CliError(EXIT_USAGE, f"no call is parked under {escape_text(args.key)!r}") from None
        except Exception as err:
            raise durable_failure(what, err, server.label) from None
        if done.status == "lost":
            raise CliError(EXIT_CONNECTION, f"{what}: {done.error}; another resumer may have it now")
        if done.status != "done":
            if done.exception is not None:
                raise durable_failure(what, done.exception, server.label)
            raise CliError(EXIT_TOOL_ERROR, f"{what}: {escape_text(done.error or 'failed')}")
        if done.next is not None:
            return report_parked(
                output, args.store, done.next, store.get(done.next), "the server asks again: parked"
            )
        outcome = done.result
        assert outcome is not None  # done, and not parked anew: the server's result
        return print_result(
            output,
            outcome,
            as_json=args.json,
            failure=lambda failed: f"{what} failed: {error_line(result_text(failed))}",
        )

    return asyncio.run(
        run_connected(
            server,
            body,
            protocol=args.protocol,
            connect_timeout=args.connect_timeout,
            elicitation_callback=elicitation_callback(refuse_inline),
        )
    )


COMMAND = Command(
    name="resume",
    help="resume a parked call with its recorded answers",
    description="Resume the call parked under KEY with the answers recorded in STORE and print "
    "its result as 'call' does. The call is claimed first, as a worker claims it (a call being "
    "resumed elsewhere is refused); its outcome is recorded: done with the result, done pointing "
    "at a new parked call when the server asks again (its key is printed), or failed.",
    arguments=_arguments,
    run=_run,
)
