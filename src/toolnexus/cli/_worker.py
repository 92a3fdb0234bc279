"""``toolnexus worker STORE (--stdio CMD | --url URL)``: resume parked calls as they become ready.

One line per call on stdout (key, what was called, what came of it) until interrupted
(Ctrl-C, or SIGTERM: the call in hand is finished first); ``--once`` resumes what is ready
and exits. The store or the server unreachable at start: one line and exit 3. After that
the worker carries on through a restarted database or server (see ``toolnexus.worker``).
"""

from __future__ import annotations

import argparse
import signal

from .._util import escape_text
from ._base import EXIT_CONNECTION, EXIT_OK, EXIT_USAGE, CliError, Command, Context
from ._connection import add_connection_options, make_client, server_from
from ._output import reason
from ._stores import open_store

__all__ = ["COMMAND"]


def _arguments(parser: argparse.ArgumentParser) -> None:
    from ..worker import add_worker_options

    parser.add_argument("store", metavar="STORE", help="the store: a file, or a postgresql:// URL")
    add_connection_options(parser)
    add_worker_options(parser)


def _run(args: argparse.Namespace, context: Context) -> int:
    import anyio
    from mcp import Client

    from ..durable import ANY_SERVER, Outcome, StoreError, StoreUnavailableError, park_only
    from ..worker import Worker, outcome_line

    server = server_from(args, context.stack)
    store = open_store(args.store, create=True)  # made on first use, as every command that writes
    context.stack.callback(store.close)

    def connect() -> Client:
        return make_client(server, protocol=args.protocol, elicitation_callback=park_only)

    def printed(outcome: Outcome) -> None:
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
    "what came of it. Any number of workers may share a store; each call is resumed by one of "
    "them. Runs until interrupted; --once resumes what is ready and exits.",
    arguments=_arguments,
    run=_run,
)
