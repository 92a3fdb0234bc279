"""The string formats of the subset: fixed checks of ours, each linear in the length of
the text (no regular expression of the server's is ever compiled)."""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Callable

FORMATS: dict[str, str] = {
    "email": "an email address",
    "uri": "an absolute URI (such as https://example.com)",
    "date": "a date (YYYY-MM-DD)",
    "date-time": "a date and time (RFC 3339, such as 2026-01-31T09:30:00Z)",
}
"""The string formats of the subset, each with the words a message uses for it."""

_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:\S*")
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_DATE_TIME = re.compile(
    r"([0-9]{4}-[0-9]{2}-[0-9]{2})[Tt ]([0-9]{2}):([0-9]{2}):([0-9]{2})(\.[0-9]+)?"
    r"(?:[Zz]|[+-]([0-9]{2}):([0-9]{2}))"
)


def _is_email(value: str) -> bool:
    """A name, one ``@`` and a domain with a dot, no white space anywhere."""
    local, at, domain = value.partition("@")
    if not (at and local and "@" not in domain) or value.split(None, 1) != [value]:
        return False  # (split: any white space, in one pass)
    head, dot, tail = domain.rpartition(".")
    return bool(dot and head and tail)


def _is_uri(value: str) -> bool:
    # RFC 3986: an absolute URI is a scheme, a colon and the rest, with no white space.
    return _SCHEME.fullmatch(value) is not None


def _is_date(value: str) -> bool:
    if _DATE.fullmatch(value) is None:
        return False
    try:
        _dt.date.fromisoformat(value)
    except ValueError:
        return False
    return True


def _is_date_time(value: str) -> bool:
    # RFC 3339 ``date-time``: a full date, a time and a zone offset (``Z`` or ``±hh:mm``).
    match = _DATE_TIME.fullmatch(value)
    if match is None or not _is_date(match.group(1)):
        return False
    hour, minute, second = (int(match.group(i)) for i in (2, 3, 4))
    if match.group(6) is not None and not (int(match.group(6)) < 24 and int(match.group(7)) < 60):
        return False  # the zone offset's hours and minutes
    return hour < 24 and minute < 60 and second <= 60  # 60: a leap second


FORMAT_CHECKS: dict[str, Callable[[str], bool]] = {
    "email": _is_email,
    "uri": _is_uri,
    "date": _is_date,
    "date-time": _is_date_time,
}
"""Whether a text is of each format of [`FORMATS`][toolnexus.forms.FORMATS]."""
