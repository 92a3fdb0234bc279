"""Small helpers shared by the layers above the mapping. Standard library only."""

from __future__ import annotations

import datetime as _dt
import inspect

__all__ = ["is_async_callable", "utc_timestamp"]


def is_async_callable(fn: object) -> bool:
    """Whether calling ``fn`` gives a coroutine: an ``async def`` (or a partial of one), or
    an object whose ``__call__`` is one."""
    if inspect.iscoroutinefunction(fn):
        return True
    call = getattr(type(fn), "__call__", None)  # noqa: B004 - a callable object's method
    return call is not None and inspect.iscoroutinefunction(call)


def utc_timestamp(seconds_from_now: float = 0.0) -> str:
    """A moment as RFC 3339 UTC with milliseconds, the way JavaScript's
    ``Date.prototype.toISOString`` writes it (``2026-11-29T19:40:00.123Z``), the form the
    other toolnexus ports use for ``expiresAt``."""
    at = _dt.datetime.now(_dt.timezone.utc) + _dt.timedelta(seconds=seconds_from_now)
    return at.strftime("%Y-%m-%dT%H:%M:%S.") + f"{at.microsecond // 1000:03d}Z"
