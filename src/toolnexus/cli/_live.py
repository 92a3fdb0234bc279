"""``call ... --inbox STORE`` and ``--browser``: the call's questions asked *live*, in a store,
while the call waits (``durable.ask_in``); at a terminal also asked here, the first answer
winning (``first_answer``). ``--browser`` serves an inbox on 127.0.0.1 for this call alone."""

from __future__ import annotations

import argparse
import os
import tempfile
from typing import TYPE_CHECKING

from .._util import escape_text
from .._wire import Request
from ._base import EXIT_USAGE, CliError, Context
from ._stores import open_store, shown_store

if TYPE_CHECKING:
    from ..durable import LiveResolver

__all__ = ["add_live_options", "start_live"]


def add_live_options(parser: argparse.ArgumentParser) -> None:
    """``--inbox STORE`` and ``--browser``."""
    parser.add_argument(
        "--inbox",
        metavar="STORE",
        help="ask the call's questions live in STORE (a file or a postgresql:// URL, made on first "
        "use) while the call waits: answer them in `toolnexus inbox STORE` or with `toolnexus answer "
        "STORE KEY`; at a terminal they are asked here too, and the first answer wins",
    )
    parser.add_argument(
        "--browser",
        action="store_true",
        help="serve an inbox on 127.0.0.1 for this call alone (in a temporary store, or in --inbox "
        "STORE) and print its link on stderr; it stops when the call ends",
    )


def start_live(args: argparse.Namespace, context: Context) -> LiveResolver | None:
    """The live resolver of ``--inbox``/``--browser`` (``None`` without them): the store
    opened (made on first use), the browser's inbox served, each closed when the command
    ends."""
    if args.inbox is None and not args.browser:
        return None
    if getattr(args, "park", None) is not None:
        raise CliError(
            EXIT_USAGE, "--park cannot be used with --inbox or --browser: a call is parked or asked live"
        )
    if getattr(args, "answers", None) is not None or getattr(args, "accept_defaults", False):
        raise CliError(EXIT_USAGE, "--inbox and --browser cannot be used with --answers or --accept-defaults")
    from ..durable import ask_in

    output = context.output
    if args.inbox is not None:
        spec = args.inbox
        shown = shown_store(spec)
    else:
        folder = context.stack.enter_context(tempfile.TemporaryDirectory(prefix="toolnexus-call-"))
        spec = os.path.join(folder, "questions.db")
        shown = ""
    store = open_store(spec, create=True)
    context.stack.callback(store.close)
    if args.browser:
        from ..inbox import serving

        try:
            served = context.stack.enter_context(serving(store, title="toolnexus: this call's questions"))
        except OSError as err:
            raise CliError(
                EXIT_USAGE, f"--browser: cannot serve the inbox: {escape_text(str(err))}"
            ) from None
        output.error(f"answer this call's questions in your browser: {served.address}")

    def told(request: Request, key: str) -> None:
        if shown:
            output.error(f"a question waits in {shown} as {key}: toolnexus answer {shown} {key}")

    return ask_in(store, target=args.tool, on_asked=told)
