"""The notification options ``toolnexus inbox`` and ``toolnexus worker`` share: ``--notify URL``
(an Apprise URL) and ``--webhook URL`` with ``--webhook-secret-file FILE`` (each repeatable),
``--public-url URL`` and ``--remind-after DURATION``."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from .._util import escape_text
from ._base import EXIT_USAGE, CliError

if TYPE_CHECKING:
    from ..durable import Store
    from ..notify import Notifier

__all__ = ["add_notify_options", "notifier_from"]


def add_notify_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--notify",
        metavar="URL",
        action="append",
        default=[],
        help="tell a person's channel, an Apprise URL (mailto://, slack://, msteams://, ntfy://, ...), "
        "when a question starts waiting, is answered or withdrawn, and when a call ends (repeatable; "
        "the notify extra)",
    )
    parser.add_argument(
        "--webhook",
        metavar="URL",
        action="append",
        default=[],
        help="POST a signed JSON notification to URL when a question starts waiting, is answered "
        "or withdrawn, and when a call ends (repeatable; needs --webhook-secret-file)",
    )
    parser.add_argument(
        "--webhook-secret-file",
        metavar="FILE",
        help="the file holding the webhooks' signing secret (at least 16 characters; its first line)",
    )
    parser.add_argument(
        "--public-url",
        metavar="URL",
        help="the inbox's address as people open it: each waiting question's notification then "
        "carries a link that opens that question alone, without the inbox's token",
    )
    parser.add_argument(
        "--remind-after",
        metavar="DURATION",
        type=_duration,
        help="notify again of a question still unanswered after DURATION (90, 90s, 30m, 2h, 1d), "
        "and again after as long while it waits",
    )
    parser.add_argument(  # how long a notifier that died holds its targets; tests shorten it
        "--webhook-lease", type=float, default=30.0, metavar="SECONDS", help=argparse.SUPPRESS
    )


def notifier_from(args: argparse.Namespace, store: Store) -> Notifier | None:
    """The notifier the options ask for, or ``None``; a usage error for a missing or short
    secret, or a URL that is not one (the secret is never shown)."""
    if args.notify:
        import importlib.util

        if importlib.util.find_spec("apprise") is None:  # said now, not at the first send
            raise CliError(EXIT_USAGE, "--notify needs Apprise: pip install 'toolnexus-mcp[notify]'")
    if not args.webhook and not args.notify:
        if args.webhook_secret_file is not None:
            raise CliError(EXIT_USAGE, "--webhook-secret-file: no --webhook to sign for")
        if args.public_url is not None:
            raise CliError(EXIT_USAGE, "--public-url: no --webhook or --notify to send its links to")
        if args.remind_after is not None:
            raise CliError(EXIT_USAGE, "--remind-after: no --webhook or --notify to remind")
        return None
    secret = ""
    if args.webhook:
        if args.webhook_secret_file is None:
            raise CliError(EXIT_USAGE, "--webhook needs --webhook-secret-file FILE (the signing secret)")
        try:
            with open(args.webhook_secret_file, encoding="utf-8") as secret_file:
                secret = secret_file.readline().strip()
        except OSError as err:
            name = escape_text(args.webhook_secret_file)
            raise CliError(EXIT_USAGE, f"--webhook-secret-file: cannot read {name}: {err.strerror}") from None
    from ..notify import Channel, Notifier, Webhook

    try:
        hooks = [Webhook(url, secret) for url in args.webhook]
        channels = [Channel(url) for url in args.notify]
        return Notifier(
            store,
            hooks,
            channels=channels,
            public_url=args.public_url,
            remind_after=args.remind_after,
            lease=args.webhook_lease,
            timeout=min(10.0, args.webhook_lease / 2),
        )
    except (TypeError, ValueError) as err:
        raise CliError(EXIT_USAGE, f"--webhook: {escape_text(str(err))}") from None


_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def _duration(text: str) -> float:
    """``90``, ``90s``, ``30m``, ``2h``, ``1d``: seconds (argparse says the error)."""
    number, unit = (text[:-1], text[-1]) if text[-1:] in _UNITS else (text, "s")
    try:
        seconds = float(number) * _UNITS[unit]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a duration: {text[:40]!r} (90, 90s, 30m, 2h, 1d)") from None
    if not 0 < seconds <= 365 * 86400:
        raise argparse.ArgumentTypeError(f"a duration from a second to a year, not {text[:40]!r}")
    return seconds
