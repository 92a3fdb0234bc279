"""``toolnexus answer STORE KEY``: ask a parked call's questions here and record the answers.

Quitting is not answering: Ctrl-C, Ctrl-D or the end of piped input stops the command
(exit 130) and records nothing for the question on screen nor for those after it; the
answers given before stay. When another answerer records a question first, the refused
record is followed by a fresh read of the store: the user is told the question was answered
elsewhere, and the next one is asked.
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

from .._time import read_expires_at
from .._util import escape_text
from .._wire import Answer
from ._base import EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, CliError, Command, Context
from ._stores import add_store_argument, get_pending, open_store, shown_store

__all__ = ["COMMAND", "TRIES"]

TRIES = 3
"""Times one question is asked when its answer cannot be recorded, before it is left open."""


def _arguments(parser: argparse.ArgumentParser) -> None:
    add_store_argument(parser, key=True)
    parser.add_argument("--no-browser", action="store_true", help="never open a browser")
    parser.add_argument("--server-name", help="the name shown for the server that asks (default: its own)")


def _passed(expires_at: str) -> bool:
    """Whether a deadline has passed, read as everywhere else (one that does not read never has)."""
    moment = read_expires_at(expires_at)
    return moment is not None and moment < time.time()


class _Stop:
    """Whether the user stopped: Ctrl-C, or the end of the input (read through :meth:`stdin`)."""

    def __init__(self) -> None:
        self.interrupted = False
        self.ended = False

    @contextlib.contextmanager
    def on_ctrl_c(self) -> Iterator[None]:
        """While inside, Ctrl-C is noted (and still interrupts the read, as always)."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return

        def handler(signum: int, frame: object) -> None:
            self.interrupted = True
            raise KeyboardInterrupt

        previous = signal.signal(signal.SIGINT, handler)
        try:
            yield
        finally:
            signal.signal(signal.SIGINT, previous)

    def stdin(self, stream: Any) -> Any:
        """``stream``, with its end noted when a read finds it."""
        stop = self

        class Noted:
            def readline(self, *args: Any) -> str:
                line: str = stream.readline(*args)
                if not line:
                    stop.ended = True
                return line

            def __getattr__(self, name: str) -> Any:
                return getattr(stream, name)

        return Noted()


def _run(args: argparse.Namespace, context: Context) -> int:
    from .._store import OPEN
    from ..console import ConsoleResolver

    output = context.output
    store = open_store(args.store, create=True)  # a command that writes makes its store
    context.stack.callback(store.close)
    pending = get_pending(store, args.key)
    who = _terminal_user()
    key = escape_text(args.key)
    try:
        answered = store.answers(args.key)
    except ValueError as err:  # an answer row that does not read: the call's problem, said
        raise CliError(EXIT_USAGE, f"{key} does not read: {escape_text(str(err))}") from None
    todo = [request for request in pending.requests if request.id not in answered]
    call = store.call(args.key)
    if call.status == "withdrawn":  # the call that asked it no longer waits: nothing can be recorded
        why = f" ({escape_text(call.error)})" if call.error else ""
        raise CliError(EXIT_USAGE, f"{key} was withdrawn{why}: nothing to answer")
    stop = _Stop()
    piped = not sys.stdin.isatty()
    resolver = ConsoleResolver(
        args.server_name or pending.server,
        open_browser=not args.no_browser,
        stdin=stop.stdin(sys.stdin) if piped else None,
        stdout=sys.stdout if piped else None,
    )
    left: list[str] = []
    with stop.on_ctrl_c():
        for number, request in enumerate(todo):
            if request.expiresAt is not None and _passed(request.expiresAt):
                output.error(f"{request.id} expired at {request.expiresAt}")
                store.record(args.key, Answer.expire(request), by=who, via="terminal")
                continue
            for _ in range(TRIES):
                with output.question():
                    answer = resolver(request)
                if stop.interrupted or stop.ended or resolver.quit_requested:
                    open_count = len(todo) - number
                    raise CliError(
                        EXIT_INTERRUPTED,
                        f"stopped: nothing recorded for the {open_count} question(s) not answered; "
                        "the answers given before are kept "
                        f"(toolnexus pending {shown_store(args.store)} shows them)",
                    )
                try:
                    store.record(args.key, answer, by=who, via="terminal")
                    break
                except KeyError:
                    raise CliError(EXIT_USAGE, f"{key} is no longer in the store") from None
                except ValueError as err:
                    # Another answerer may have been first: read the store again.
                    if request.id in store.answers(args.key):
                        output.error(f"{request.id} was answered elsewhere meanwhile; going on")
                        break
                    status = store.call(args.key).status
                    if status not in OPEN:
                        raise CliError(EXIT_USAGE, f"{key} is {status} now: nothing more to answer") from None
                    output.error(f"{err}; asked again")
            else:
                left.append(request.id)
                output.error(f"{request.id}: no answer could be recorded; it stays open")
    if left:
        again = f"toolnexus answer {shown_store(args.store)} {key}"
        output.error(f"{key}: {len(left)} question(s) stay open; answer later with: {again}")
        return EXIT_OK
    how = "already answered" if not todo else "answered"
    if call.live:  # the call that asked it is still open, and takes the answer itself
        output.error(f"{key} is {how}: the call that asked it goes on")
        return EXIT_OK
    resume = f"toolnexus resume {shown_store(args.store)} {key} (--stdio CMD | --url URL)"
    output.error(f"{key} is {how}; resume with: {resume}")
    return EXIT_OK


COMMAND = Command(
    name="answer",
    help="answer a parked call's (or a live question's) questions here",
    description="Ask the questions of the call parked under KEY at the terminal and record the "
    "answers in STORE; then resume it with 'toolnexus resume'. A live question (a call held open "
    "elsewhere, asked with --inbox) takes its answer at once; a withdrawn one takes none. Ctrl-C, "
    "Ctrl-D or the end of piped input stops (exit 130) and records nothing for the questions not "
    "answered yet; the answers given before are kept. Without a terminal, one line of stdin is "
    "read per field, and one for the review of each form.",
    arguments=_arguments,
    run=_run,
)


def _terminal_user() -> str | None:
    """The name of the user at this terminal, for the call's history (``None`` when the
    system has none to give)."""
    import getpass

    try:
        return getpass.getuser()
    except (OSError, KeyError, ImportError):
        return None
