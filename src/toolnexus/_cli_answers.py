"""``toolnexus call --answers FILE`` and ``--accept-defaults``: answers with nobody at hand.

Kept apart from ``_cli`` so that the command only adds its two options and one wrapper:
[`add_options`][toolnexus._cli_answers.add_options] and
[`answering`][toolnexus._cli_answers.answering].
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any, TextIO

from ._log import _answer_wire
from ._wire import Answer, Request
from .forms import FormError, read_form, sensitive_fields
from .policy import Policy

__all__ = ["add_options", "answering"]


def add_options(parser: argparse.ArgumentParser) -> None:
    """Add ``--answers FILE`` and ``--accept-defaults`` (one or the other) to ``parser``."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--answers",
        metavar="FILE",
        help="answer from the rules of a policy file (JSON, or TOML on Python 3.11+); a rule that says "
        "ask asks here at a terminal, and is cancelled without one",
    )
    group.add_argument(
        "--accept-defaults",
        action="store_true",
        help="accept every form with its defaults where they make an answer that fits; ask the rest here "
        "at a terminal (cancelled without one)",
    )


def answering(
    args: argparse.Namespace,
    resolver: Callable[[Request], Answer],
    out: TextIO | None = None,
) -> Callable[[Request], Any]:
    """The resolver the command uses: ``resolver`` (the terminal) alone, or behind the
    policy of ``--answers`` or the defaults of ``--accept-defaults``, each answer they give
    printed to ``out`` (stderr) masked as the traffic log masks it.

    Raises ``ValueError``/``OSError`` for a policy file that cannot be read or is wrong.
    """
    answers = getattr(args, "answers", None)
    accept_defaults = getattr(args, "accept_defaults", False)
    if answers is None and not accept_defaults:
        return resolver
    stream = sys.stderr if out is None else out
    fallback = resolver if sys.stdin.isatty() else None
    server = getattr(resolver, "server_name", None)  # the console learns it on connecting
    if answers is not None:
        policy = Policy.from_file(answers, fallback=fallback)

        def from_policy(request: Request) -> Any:
            name = getattr(resolver, "server_name", server)
            chosen = policy if name is None else policy.for_server(name)
            rule, answer = chosen.decide(request)
            if answer is None:
                return chosen(request)  # ask: the terminal
            _report(stream, request, answer, "no rule matched" if rule is None else f"rule {rule}")
            return answer

        return from_policy

    def with_defaults(request: Request) -> Any:
        answer = _defaults_answer(request)
        if answer is not None:
            _report(stream, request, answer, "--accept-defaults")
            return answer
        if fallback is not None:
            return fallback(request)
        answer = Answer(request.id, False, None, "cancelled")
        _report(stream, request, answer, "--accept-defaults, no terminal to ask")
        return answer

    return with_defaults


def _defaults_answer(request: Request) -> Answer | None:
    """Accept with the form's defaults when they make an answer that fits and nothing
    looks secret; ``None`` otherwise (a URL, too)."""
    if request.kind != "input" or request.data is None:
        return None
    try:
        form = read_form(request.data.get("schema"))
    except FormError:
        return None
    if sensitive_fields(form):
        return None
    content = form.with_defaults({})
    if form.problems(content):
        return None
    return Answer(request.id, True, {name: content[name] for name in form.names if name in content})


def _report(stream: TextIO, request: Request, answer: Answer, source: str) -> None:
    wire = _answer_wire(answer, values=False) or {}
    if answer.ok:
        data = wire.get("data")
        told = "accept" + (" " + json.dumps(data, ensure_ascii=False) if data else "")
    else:
        told = "decline" if answer.reason == "declined" else "cancel"
    prompt = request.prompt if len(request.prompt) <= 80 else request.prompt[:79] + "…"
    # repr() writes every control, format and separator character of the server's text as an escape.
    stream.write(f"toolnexus: {source}: {told} ({request.kind}: {prompt!r})\n")
    stream.flush()
