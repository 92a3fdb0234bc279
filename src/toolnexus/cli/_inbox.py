"""``toolnexus inbox STORE``: serve the web inbox for a store until Ctrl-C."""

from __future__ import annotations

import argparse
import logging

from .._util import escape_text
from ._base import EXIT_OK, EXIT_USAGE, CliError, Command, Context
from ._notify import add_notify_options, notifier_from
from ._stores import open_store

__all__ = ["COMMAND"]


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("store", metavar="STORE", help="the store: a file, or a postgresql:// URL")
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        help="the address to listen on (default 127.0.0.1; another is served with a warning: "
        "put it behind TLS)",
    )
    parser.add_argument("--port", type=int, default=0, help="the port (default: a free one)")
    parser.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="also answer requests for this host name (a proxy's); repeatable",
    )
    add_notify_options(parser)


def _run(args: argparse.Namespace, context: Context) -> int:
    from ..inbox import serve

    if not 0 <= args.port <= 65535:
        raise CliError(EXIT_USAGE, f"--port must be from 0 to 65535, not {args.port}")
    # The command's one opening, made on first use (it writes answers): a usage error, or exit
    # 3 when its database cannot be reached.
    store = open_store(args.store, create=True)
    context.stack.callback(store.close)
    notifier = notifier_from(args, store)
    logging.getLogger("toolnexus.inbox").setLevel(logging.INFO)  # its access lines, on stderr
    try:
        serve(
            store,
            host=args.host,
            port=args.port,
            allow_hosts=args.allow_host,
            on_ready=context.output.result,
            notifier=notifier,
        )
    except OSError as err:
        raise CliError(
            EXIT_USAGE, f"cannot listen on {escape_text(args.host)}:{args.port}: {err.strerror}"
        ) from None
    except KeyboardInterrupt:
        pass
    context.output.error("inbox stopped")
    return EXIT_OK


COMMAND = Command(
    name="inbox",
    help="serve a web page where people answer the calls parked in a store",
    description="Serve the toolnexus inbox for STORE: a page listing the parked calls, where people "
    "answer their questions in a browser. Prints one line, the address to open with its access token; "
    "logs to stderr; Ctrl-C stops it.",
    arguments=_arguments,
    run=_run,
)
