"""``toolnexus answer STORE KEY``: ask a parked call's questions here and record the answers."""

from __future__ import annotations

import argparse
import datetime as dt

from .._util import escape_text
from .._wire import Answer
from ._base import EXIT_INTERRUPTED, EXIT_OK, CliError, Command, Context
from ._stores import add_store_argument, get_pending, open_store

__all__ = ["COMMAND"]


def _arguments(parser: argparse.ArgumentParser) -> None:
    add_store_argument(parser, key=True)
    parser.add_argument("--no-browser", action="store_true", help="never open a browser")
    parser.add_argument("--server-name", help="the name shown for the server that asks (default: its own)")


def _passed(expires_at: str) -> bool:
    """Whether an RFC 3339 deadline has passed; one that cannot be read never has."""
    text = expires_at[:-1] + "+00:00" if expires_at.endswith(("Z", "z")) else expires_at
    try:
        moment = dt.datetime.fromisoformat(text)
    except ValueError:
        return False
    if moment.tzinfo is None:
        return False
    return moment < dt.datetime.now(dt.timezone.utc)


def _run(args: argparse.Namespace, context: Context) -> int:
    from ..console import ConsoleResolver

    output = context.output
    store = open_store(args.store, create=False)
    context.stack.callback(store.close)
    pending = get_pending(store, args.key)
    answered = store.answers(args.key)
    todo = [request for request in pending.requests if request.id not in answered]
    resolver = ConsoleResolver(args.server_name or pending.server, open_browser=not args.no_browser)
    for request in todo:
        if request.expiresAt is not None and _passed(request.expiresAt):
            output.error(f"{request.id} expired at {request.expiresAt}")
            store.record(args.key, Answer(request.id, False, None, "expired"))
            continue
        while True:
            with output.question():
                answer = resolver(request)
            try:
                store.record(args.key, answer)
                break
            except ValueError as err:
                output.error(f"{err}; asked again")
        if resolver.quit_requested:
            raise CliError(EXIT_INTERRUPTED, "interrupted (the answers given so far are kept)")
    how = "already answered" if not todo else "answered"
    output.error(
        f"{escape_text(args.key)} is {how}; resume with: toolnexus resume {args.store} {args.key} "
        "(--stdio CMD | --url URL)"
    )
    return EXIT_OK


COMMAND = Command(
    name="answer",
    help="answer a parked call's questions here",
    description="Ask the questions of the call parked under KEY at the terminal and record the "
    "answers in STORE; then resume it with 'toolnexus resume'.",
    arguments=_arguments,
    run=_run,
)
