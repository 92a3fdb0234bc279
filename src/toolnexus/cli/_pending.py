"""``toolnexus pending STORE``: the calls kept in a store, and where each question stands."""

from __future__ import annotations

import argparse

from .._util import escape_text
from ._base import EXIT_OK, EXIT_TOOL_ERROR, Command, Context
from ._stores import add_store_argument, open_store, shown_store, what_is_called

__all__ = ["COMMAND"]


def _arguments(parser: argparse.ArgumentParser) -> None:
    add_store_argument(parser, key=False)


def _run(args: argparse.Namespace, context: Context) -> int:
    store = open_store(args.store, read_only=True)  # writes nothing, not even the tables
    context.stack.callback(store.close)
    calls = store.calls()
    if not calls:
        context.output.error(f"nothing waits in {shown_store(args.store)}")
        return EXIT_OK
    out: list[str] = []
    unreadable = 0
    for call in calls:
        # Every text from the store is escaped, one-line items always (a line break in a
        # key or a prompt would fake the next entry); the writer escapes the rest at a terminal.
        key = escape_text(call.key)
        if call.pending is None:
            unreadable += 1
            out.append(f"{key}  {call.status}  (the record does not read: {escape_text(call.error or '')})")
            continue
        pending = call.pending
        server = escape_text(pending.server) if pending.server else "(unnamed server)"
        out.append(f"{key}  {server}  {what_is_called(pending)}  {call.status}")
        if pending.task is not None:
            line = f"  task {escape_text(pending.task.id[:80])}"
            if call.note:
                line += f": {' '.join(escape_text(call.note).split())}"
            out.append(line)
        garbled = False
        try:
            answers = store.answers(call.key) if call.answered else {}
        except (KeyError, ValueError):  # an answer that does not read: the call's error says which
            unreadable += 1
            garbled, answers = True, {}
        for request in pending.requests:
            answer = answers.get(request.id)
            if answer is None and garbled and request.id in call.answered:
                state = "answered (does not read)"
            elif answer is None:
                state = "waiting" if call.status in ("waiting", "live") else "unanswered"
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
        if call.leases_lost:
            lost = "once" if call.leases_lost == 1 else f"{call.leases_lost} times"
            out.append(f"  (a resumer's lease ran out {lost}: it was taken over)")
    context.output.result("\n".join(out))
    if unreadable:
        context.output.error(f"{unreadable} call(s) do not read: listed as failed, with the reason")
        return EXIT_TOOL_ERROR
    return EXIT_OK


COMMAND = Command(
    name="pending",
    help="list the calls kept in a store, and where each question stands",
    description="List the calls kept in STORE (a file, or a postgresql:// URL), oldest first: key, "
    "server, what was called, its status (waiting, ready, resuming, working, done, failed, expired, "
    "cancelled), and each question: waiting, accepted, declined, cancelled or expired. A call the "
    "server made a task shows the task's id and its last status message. The store is opened read-only, "
    "and never made. Exit 0; 1 when a call (or one of its answers) does not read: it is listed as "
    "failed with the reason, every other call as usual.",
    arguments=_arguments,
    run=_run,
)
