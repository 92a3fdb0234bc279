"""``toolnexus worker STORE (--stdio CMD | --url URL)``: resume parked calls as they become ready.

One line per call on stdout (key, what was called, what came of it) until interrupted
(Ctrl-C, or SIGTERM: the call in hand is finished first); ``--once`` resumes what is ready
and exits. The store or the server unreachable at start: one line and exit 3. After that
the worker carries on through a restarted database or server (see ``toolnexus.worker``).
"""

from __future__ import annotations

import argparse
import signal
from typing import TYPE_CHECKING

from .._util import escape_text
from ..errors import StoreError, StoreUnavailableError
from ._base import EXIT_CONNECTION, EXIT_OK, EXIT_USAGE, CliError, Command, Context
from ._connection import add_connection_options, make_client, server_from
from ._notify import add_notify_options, notifier_from
from ._output import reason
from ._stores import open_store

if TYPE_CHECKING:
    from ..durable import ResumeOutcome

__all__ = ["COMMAND", "outcome_line"]


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("store", metavar="STORE", help="the store: a file, or a postgresql:// URL")
    add_connection_options(parser)
    add_worker_options(parser)
    add_notify_options(parser)


def _run(args: argparse.Namespace, context: Context) -> int:
    import anyio
    from mcp import Client

    from .._store import ANY_SERVER
    from ..durable import park_only
    from ..tasks import TasksExtension
    from ..worker import Worker

    server = server_from(args, context.stack)
    store = open_store(args.store, create=True)  # made on first use, as every command that writes
    context.stack.callback(store.close)
    notifier = notifier_from(args, store)

    def connect() -> Client:
        return make_client(
            server, protocol=args.protocol, elicitation_callback=park_only, extensions=[TasksExtension()]
        )

    said: dict[str, str | None] = {}  # a working task's last status message printed, by key

    def printed(outcome: ResumeOutcome) -> None:
        if outcome.status == "working":  # a poll: a line only when its status message changes
            if outcome.key in said and said[outcome.key] == outcome.note:
                return
            said[outcome.key] = outcome.note
        else:
            said.pop(outcome.key, None)
        context.output.result(outcome_line(outcome))

    worker = Worker(
        store,
        connect=connect,
        lease=args.lease,
        server_name=args.server_name if args.server_name is not None else ANY_SERVER,
        idle=args.idle,
        retries=args.retries,
        on_outcome=printed,
        connect_timeout=args.connect_timeout,
        notifier=notifier,
    )
    previous = signal.signal(signal.SIGTERM, lambda *_: worker.stop())
    context.stack.callback(signal.signal, signal.SIGTERM, previous)
    try:
        anyio.run(lambda: worker.run(once=args.once))
    except StoreUnavailableError as err:
        raise CliError(EXIT_CONNECTION, f"cannot reach the store: {escape_text(str(err))}") from None
    except (StoreError, ValueError, TypeError) as err:
        raise CliError(EXIT_USAGE, escape_text(str(err))) from None
    except TimeoutError:
        raise CliError(
            EXIT_CONNECTION,
            f"cannot connect to {server.label}: "
            f"no answer within {args.connect_timeout:g} s (--connect-timeout)",
        ) from None
    except Exception as err:
        raise CliError(EXIT_CONNECTION, f"cannot connect to {server.label}: {reason(err)}") from None
    return EXIT_OK


COMMAND = Command(
    name="worker",
    help="resume parked calls as their questions are answered",
    description="Resume the calls parked in STORE from the server given by --stdio or --url as they "
    "become ready (every question answered, anywhere), one line per call: key, what was called, "
    "what came of it. A call the server made a task is polled here too: its status message is "
    "printed when it changes, its questions are parked (answered as any other), and its end is "
    "recorded. Any number of workers may share a store; each call is resumed by one of "
    "them. Runs until interrupted; --once resumes what is ready and exits.",
    arguments=_arguments,
    run=_run,
)


def outcome_line(outcome: ResumeOutcome) -> str:
    """One line for an outcome: key, what was called, what came of it; server text escaped."""
    kind = {"tools/call": "tool", "prompts/get": "prompt", "resources/read": "resource"}[outcome.method]
    what = f"{kind} {escape_text(outcome.target)}"
    if outcome.status == "done":
        if outcome.next is not None:
            said = f"done: the server asks again, parked as {outcome.next}"
        else:
            is_error = getattr(outcome.result, "is_error", False)
            said = "done (the tool reported an error)" if is_error else "done"
    elif outcome.status == "retry":
        said = f"failed, will retry: {escape_text(outcome.error or '')}"
    elif outcome.status == "failed":
        said = f"failed: {escape_text(outcome.error or '')}"
    elif outcome.status in ("cancelled", "expired"):
        said = f"{outcome.status}: {escape_text(outcome.error or '')}"
    elif outcome.status == "working":
        said = "working" + (f": {escape_text(outcome.note)}" if outcome.note else "")
    elif outcome.status == "waiting":
        said = "asks: its questions wait for answers"
    else:
        said = "lost: the lease ran out; another worker may resume it"
    return f"{outcome.key}  {what}  {said}"


def add_worker_options(parser: argparse.ArgumentParser) -> None:
    """The options of a worker alone (for a command that has its own connection options)."""
    parser.add_argument("--once", action="store_true", help="resume what is ready, then exit")
    parser.add_argument(
        "--lease", type=float, default=60.0, metavar="SECONDS", help="how long a claim holds unrenewed (60)"
    )
    parser.add_argument(
        "--server-name",
        metavar="NAME",
        help="resume the calls parked from the server of this name (default: the connected server's own; "
        "give the old name of a renamed server)",
    )
    parser.add_argument(
        "--retries",
        type=int,
        default=0,
        metavar="N",
        help="put a failed call back N times before it stays failed",
    )
    parser.add_argument(
        "--idle", type=float, default=5.0, metavar="SECONDS", help=argparse.SUPPRESS
    )  # the longest sleep between two looks; tests shorten it
