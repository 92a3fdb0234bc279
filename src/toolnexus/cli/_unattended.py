"""``toolnexus call --answers FILE`` and ``--accept-defaults``: answers with nobody at hand.

The command adds the two options with :func:`add_options` and wraps its resolver with
:func:`answering`; each answer given without asking is reported in one line on the
dialogue stream, through the escaping writer, its values masked as the traffic log masks them.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any

from .._answering import fill, form_of
from .._log import MASK
from .._wire import Answer, Request
from ..errors import FormError
from ..forms import sensitive_fields
from ..policy import Policy
from ._output import Output

__all__ = ["add_options", "answering", "defaults_answer"]


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
        help="accept every form with its defaults where they make an answer that fits; ask the rest "
        "as call asks (at the terminal, or from stdin without one: Enter takes a default)",
    )


def answering(
    args: argparse.Namespace, resolver: Callable[[Request], Answer], output: Output
) -> Callable[[Request], Any]:
    """The resolver the command uses: ``resolver`` (the terminal) alone, or behind the
    policy of ``--answers`` or the defaults of ``--accept-defaults``, each answer they give
    reported through ``output``, masked.

    Raises ``ValueError``/``OSError`` for a policy file that cannot be read or is wrong.
    """
    answers = getattr(args, "answers", None)
    accept_defaults = getattr(args, "accept_defaults", False)
    if answers is None and not accept_defaults:
        return resolver
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
            _report(output, request, answer, "no rule matched" if rule is None else f"rule {rule}")
            return answer

        return from_policy

    def with_defaults(request: Request) -> Any:
        answer = defaults_answer(request)
        if answer is not None:
            _report(output, request, answer, "--accept-defaults")
            return answer
        # What the defaults do not answer is asked as `call` asks it: at the terminal, or one
        # line of stdin per field (and one for the review) without one; Enter takes a default.
        return resolver(request)

    return with_defaults


def defaults_answer(request: Request) -> Answer | None:
    """Accept with the form's defaults when they make an answer that fits and nothing
    looks secret; ``None`` otherwise (a URL, too)."""
    if request.kind != "input":
        return None
    try:
        form = form_of(request)
    except FormError:
        return None
    if form is None or sensitive_fields(form):
        return None
    content = fill(form, {})
    if form.problems(content):
        return None
    return Answer.accept(request, content)


def _report(output: Output, request: Request, answer: Answer, source: str) -> None:
    if answer.ok:
        masked = {str(key): MASK for key in answer.data} if isinstance(answer.data, dict) else None
        told = "accept" + (" " + json.dumps(masked, ensure_ascii=False) if masked else "")
    else:
        told = "decline" if answer.reason == "declined" else "cancel"
    prompt = request.prompt if len(request.prompt) <= 80 else request.prompt[:79] + "…"
    # repr() quotes the prompt; the writer escapes every control, format and separator character.
    output.say(f"toolnexus: {source}: {told} ({request.kind}: {prompt!r})")
