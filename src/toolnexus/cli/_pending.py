"""``toolnexus pending STORE``: the calls kept in a store, and where each question stands."""

from __future__ import annotations

import argparse

from .._util import escape_text
from ._base import EXIT_OK, EXIT_USAGE, CliError, Command, Context
from ._stores import add_store_argument, open_store, what_is_called

__all__ = ["COMMAND"]


def _arguments(parser: argparse.ArgumentParser) -> None:
    add_store_argument(parser, key=False)


def _run(args: argparse.Namespace, context: Context) -> int:
    store = open_store(args.store, read_only=True)  # writes nothing, not even the tables
    context.stack.callback(store.close)
    try:
        calls = store.calls()
    except ValueError as err:
        raise CliError(EXIT_USAGE, escape_text(str(err))) from None
    if not calls:
        context.output.error(f"nothing waits in {args.store}")
        return EXIT_OK
    out: list[str] = []
    for call in calls:
        # Every text from the store is escaped, one-line items always (a line break in a
        # key or a prompt would fake the next entry); the writer escapes the rest at a terminal.
        key = escape_text(call.key)
        if call.pending is None:
            out.append(f"{key}  {call.status}  (the record does not read: {escape_text(call.error or '')})")
            continue
        pending = call.pending
        server = escape_text(pending.server) if pending.server else "(unnamed server)"
        out.append(f"{key}  {server}  {what_is_called(pending)}  {call.status}")
        answers = store.answers(call.key) if call.answered else {}
        for request in pending.requests:
            answer = answers.get(request.id)
            if answer is None:
                state = "waiting" if call.status == "waiting" else "unanswered"
            elif answer.ok:
                state = "accepted"
            else:
                state = escape_text(str(answer.reason or "declined"))
            prompt = " ".join(escape_text(request.prompt).split()) or f"({escape_text(request.kind)})"
            line = f"  {escape_text(request.id)}  {state}  {prompt}"
            if request.expiresAt:
                line += f"  (until {escape_text(request.expiresAt)})"
            out.append(line)
        if call.error:
            out.append(f"  ({escape_text(call.error)})")
    context.output.result("\n".join(out))
    return EXIT_OK


COMMAND = Command(
    name="pending",
    help="list the calls kept in a store, and where each question stands",
    description="List the calls kept in STORE (a file, or a postgresql:// URL), oldest first: key, "
    "server, what was called, its status (waiting, ready, resuming, done, failed, expired), and each "
    "question: waiting, accepted, declined, cancelled or expired. The store is opened read-only.",
    arguments=_arguments,
    run=_run,
)
