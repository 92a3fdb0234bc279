"""JSON values as the form model reads and words them: what a JSON number is, a choice's
key, and how a name, a value or a JSON type is written in a message (quoted and escaped,
never more of the server's text than that)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TypeAlias

Scalar: TypeAlias = str | int | float | bool
"""A choice's value: a string in the spec's subset, a number or a boolean beyond it."""

FLOAT_MAX = 1.7976931348623157e308
"""The largest finite 64-bit float: a JSON number beyond it is not one every reader holds."""

TYPE_WORDS: dict[str, str] = {
    "string": "a string",
    "number": "a number",
    "integer": "an integer",
    "boolean": "true or false",
    "choice": "one of the choices",
    "choices": "a list of choices",
}
"""What each field type asks for, in the words of a message."""


def number_problem(value: object, *, integer: bool) -> str | None:
    """Why ``value`` is not a JSON number (a whole one with ``integer``), or ``None``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"must be {TYPE_WORDS['integer' if integer else 'number']}"
    if isinstance(value, float):
        if not math.isfinite(value):
            return "must be a finite number"
        if integer and not value.is_integer():
            return f"must be {TYPE_WORDS['integer']}"
    elif not -FLOAT_MAX <= value <= FLOAT_MAX:  # exact: Python compares int and float exactly
        return "must be a number a 64-bit float can hold"
    return None


def choice_key(value: object) -> tuple[str, Scalar] | None:
    """``value`` as a set key that keeps ``True``, ``1`` and ``"1"`` apart; ``None`` for
    what cannot be a choice."""
    if isinstance(value, bool):
        return ("b", value)
    if isinstance(value, str):
        return ("s", value)
    if isinstance(value, (int, float)) and number_problem(value, integer=False) is None:
        return ("n", value)
    return None


def text(value: object) -> str:
    """A value written as text: JSON's ``true``/``false``, a whole float without ``.0``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def quote(name: str, limit: int = 80) -> str:
    """A name as it appears in a message: quoted, escaped (``repr`` writes every
    control, format and separator character as an escape), and cut when long."""
    return repr(name if len(name) <= limit else name[:limit] + "…")


def json_type(value: object, *, show: bool = False) -> str:
    """The JSON type of ``value`` in words, for a message; with ``show``, a short string is
    quoted (escaped) instead. Never more of the server's text than that."""
    if show and isinstance(value, str) and len(value) <= 40:
        return quote(value)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (list, tuple)):
        return "an array"
    if isinstance(value, Mapping):
        return "an object"
    return f"a {type(value).__name__}"
