"""``toolnexus pending STORE``: what waits in a store."""

from __future__ import annotations

import argparse

from .._util import escape_text
from ._base import EXIT_OK, EXIT_USAGE, CliError, Command, Context
from ._stores import add_store_argument, open_store, what_is_called

__all__ = ["COMMAND"]

_STATES = {None: "waiting", "declined": "declined", "cancelled": "cancelled", "expired": "expired"}


def _arguments(parser: argparse.ArgumentParser) -> None:
    add_store_argument(parser, key=False)


def _run(args: argparse.Namespace, context: Context) -> int:
    store = open_store(args.store, create=False)
    context.stack.callback(store.close)
    try:
        waiting = store.list()
    except ValueError as err:
        raise CliError(EXIT_USAGE, escape_text(str(err))) from None
    if not waiting:
        context.output.error(f"nothing waits in {args.store}")
        return EXIT_OK
    out: list[str] = []
    for key, pending in waiting:
        answered = store.answers(key)
        server = escape_text(pending.server) if pending.server else "(unnamed server)"
        out.append(f"{escape_text(key)}  {server}  {what_is_called(pending)}")
        for request in pending.requests:
            answer = answered.get(request.id)
            if answer is None:
                state = "waiting"
            elif answer.ok:
                state = "accepted"
            else:
                state = escape_text(str(answer.reason or "declined"))
            prompt = " ".join(escape_text(request.prompt).split()) or f"({escape_text(request.kind)})"
            line = f"  {escape_text(request.id)}  {state}  {prompt}"
            if request.expiresAt:
                line += f"  (until {escape_text(request.expiresAt)})"
            out.append(line)
    context.output.result("\n".join(out))
    return EXIT_OK


COMMAND = Command(
    name="pending",
    help="list the calls parked in a store",
    description="List the calls parked in STORE, oldest first: key, server, what was called, and each "
    "question with its state: waiting, accepted, declined, cancelled or expired.",
    arguments=_arguments,
    run=_run,
)
