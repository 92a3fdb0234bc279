"""Time rules, one home each: reading a §10 ``expiresAt``, writing one, and the checks of every
argument that is a number of seconds (a timeout, a lease, a retention, a deadline).

Standard library only, and no other toolnexus module: the stores, the command and the inbox
all read a deadline here, so that one call is never answerable in one place and expired in
another.
"""

from __future__ import annotations

import datetime as _dt
import math
import re
from collections.abc import Callable
from typing import Final, TypeAlias

__all__ = [
    "MAX_EXPIRES_AT",
    "Clock",
    "check_seconds",
    "read_expires_at",
    "span",
    "utc_timestamp",
]

Clock: TypeAlias = Callable[[], float]
"""A clock: seconds since the epoch, as ``time.time`` gives them. The stores take one, so
that tests move time instead of sleeping."""

MAX_EXPIRES_AT: Final = 64
"""The longest ``expiresAt`` that is read (an RFC 3339 time is at most 35 characters)."""

# RFC 3339's date-time (section 5.6), with ASCII digits only (``re.ASCII``: a ``²`` or a
# fullwidth digit is no digit here). Written here, run on bounded text: no server's pattern.
_RFC3339: Final = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))?",
    re.ASCII,
)


def read_expires_at(text: object) -> float | None:
    """The moment a §10 ``expiresAt`` names, in seconds since the epoch; ``None`` for none.

    The one reading every part of toolnexus uses (the stores' sweep, ``toolnexus answer``, the
    inbox):

    - an RFC 3339 date and time, ``2026-12-01T10:00:00.000Z`` or with an offset
      (``+02:00``), is that moment;
    - a date and time without an offset (``2026-12-01T10:00:00``) is read as UTC: §10
      deadlines are UTC, and every toolnexus port writes them with ``Z``;
    - anything else (not text, longer than [`MAX_EXPIRES_AT`][toolnexus._time.MAX_EXPIRES_AT]
      characters, not a date and time, a date that is not in the calendar) sets **no
      deadline**: the question stays answerable, and where a deadline is shown it is shown
      as one that does not read. A deadline nobody can read cannot have passed; refusing the
      answer would end a call for a formatting slip, while the server still refuses a late
      answer itself.
    """
    if not isinstance(text, str) or len(text) > MAX_EXPIRES_AT:
        return None
    found = _RFC3339.fullmatch(text)
    if found is None:
        return None
    year, month, day, hour, minute, second, fraction, _zulu, sign, off_h, off_m = found.groups()
    offset = _dt.timedelta(0)
    if sign is not None:
        if int(off_h) > 23 or int(off_m) > 59:
            return None
        offset = _dt.timedelta(hours=int(off_h), minutes=int(off_m)) * (1 if sign == "+" else -1)
    try:
        moment = _dt.datetime(
            int(year), int(month), int(day), int(hour), int(minute), int(second), tzinfo=_dt.timezone.utc
        )
    except ValueError:  # the 31st of February, the 25th hour, a leap second
        return None
    seconds = moment.timestamp() - offset.total_seconds()
    if fraction:
        seconds += int(fraction) / 10 ** len(fraction)
    return seconds


def utc_timestamp(seconds_from_now: float = 0.0, *, now: float | None = None) -> str:
    """A moment as RFC 3339 UTC with milliseconds, the way JavaScript's
    ``Date.prototype.toISOString`` writes it (``2026-11-29T19:40:00.123Z``), the form the
    other toolnexus ports use for ``expiresAt``. ``now`` (seconds since the epoch) is the
    moment counted from; by default the machine's clock."""
    if now is None:
        at = _dt.datetime.now(_dt.timezone.utc)
    else:
        at = _dt.datetime.fromtimestamp(now, _dt.timezone.utc)
    at += _dt.timedelta(seconds=seconds_from_now)
    return at.strftime("%Y-%m-%dT%H:%M:%S.") + f"{at.microsecond // 1000:03d}Z"


def check_seconds(
    value: object,
    *,
    caller: str,
    name: str,
    none: bool = True,
    zero: bool = False,
    most: float | None = None,
    whole: bool = False,
    least: float | None = None,
) -> float | None:
    """``value`` as a number of seconds: the one check of every argument that is one.

    Raises ``TypeError`` for what is not a number (a ``bool`` is not one), ``ValueError`` for a
    number that is not finite, not positive (0 allowed with ``zero``), below ``least``, above
    ``most``, not whole (with ``whole``), or, without ``most``, so large that the moment it
    ends is past the year 9999 (a deadline must be a date a calendar has). ``None`` is
    returned as is, or refused without ``none``. Each message names ``caller`` and ``name``.
    """
    label = f"{caller}: {name}" if caller else name
    if value is None:
        if none:
            return None
        raise TypeError(f"{label} must be a number of seconds, not None")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        kind = "a number of seconds or None" if none else "a number of seconds"
        raise TypeError(f"{label} must be {kind}, not {type(value).__name__}")
    if not math.isfinite(value) or value < 0 or (value == 0 and not zero):
        kind = "a finite number of seconds, 0 or more" if zero else "a positive, finite number of seconds"
        raise ValueError(f"{label} must be {kind}, not {value!r}")
    if least is not None and value < least:
        raise ValueError(f"{label} must be at least {least:g} seconds, not {value!r}")
    if most is not None and value > most:
        raise ValueError(f"{label} must be at most {most:g} seconds, not {value!r}")
    if whole and value != int(value):
        raise ValueError(f"{label} must be a whole number of seconds, not {value!r}")
    if most is None:
        try:
            utc_timestamp(value)
        except OverflowError:
            raise ValueError(
                f"{label} {value!r} s ends after the year 9999; use None for no deadline"
            ) from None
    return float(value)


def span(seconds: float, *, to_the_second: bool = False) -> str:
    """A duration in words a glance reads: ``40 s``, ``12 min``, ``3 h 5 min``, ``2 d 4 h``;
    ``to_the_second`` keeps the seconds under an hour (``1 min 05 s``, for a line redrawn
    each second)."""
    seconds = max(0, int(seconds))
    if seconds < 60:
        return f"{seconds} s"
    minutes, left = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {left:02d} s" if to_the_second else f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    if hours < 24:
        return f"{hours} h {minutes} min" if minutes else f"{hours} h"
    days, hours = divmod(hours, 24)
    return f"{days} d {hours} h" if hours else f"{days} d"
