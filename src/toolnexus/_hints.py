"""What a form field takes, in words: the one wording of a field's type, bounds, lengths and
format, which the terminal (``ConsoleResolver``) and the inbox both show, so that a person
reads the same hint wherever a question is asked. Pure: no I/O."""

from __future__ import annotations

from ._util import format_number
from .forms import FORMATS, Field

__all__ = ["bounds", "count_hint", "takes"]


def bounds(low: object, high: object, unit: str = "") -> str:
    """`` from 1 to 10``, `` of at least 1``, `` of at most 10`` (with ``unit``), or ``""``."""
    lo = format_number(low) if isinstance(low, (int, float)) and not isinstance(low, bool) else None
    hi = format_number(high) if isinstance(high, (int, float)) and not isinstance(high, bool) else None
    if lo is not None and hi is not None:
        return f" from {lo} to {hi}{unit}"
    if lo is not None:
        return f" of at least {lo}{unit}"
    if hi is not None:
        return f" of at most {hi}{unit}"
    return ""


def count_hint(spec: Field) -> str:
    """How many of a multi-select's choices to pick: ``choose from 1 to 2``, ``choose at
    least 1``, ``choose any``."""
    count = bounds(spec.min_items, spec.max_items).replace(" of ", " ")
    return f"choose{count or ' any'}"


def takes(spec: Field) -> str:
    """What a field that is not a choice takes: ``a whole number from 1 to 10``, ``a number
    of at least 0 (the lower bound excluded)``, ``an email address, length from 3 to 80``,
    ``text``, ``yes or no``. (A choice is drawn with its choices: see ``count_hint``.)"""
    if spec.type == "boolean":
        return "yes or no"
    if spec.type in ("integer", "number"):
        words = "a whole number" if spec.type == "integer" else "a number"
        text = words + bounds(spec.minimum, spec.maximum)
        if spec.exclusive_minimum and spec.exclusive_maximum:
            text += " (bounds excluded)"
        elif spec.exclusive_minimum:
            text += " (the lower bound excluded)"
        elif spec.exclusive_maximum:
            text += " (the upper bound excluded)"
        return text
    text = FORMATS[spec.format] if spec.format is not None and spec.format in FORMATS else "text"
    length = bounds(spec.min_length, spec.max_length, " characters")
    return text + (f", length{length.replace(' of ', ' ')}" if length else "")
