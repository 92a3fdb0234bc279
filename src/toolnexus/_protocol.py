"""The one check of a protocol version: does its server ask between rounds or mid-call?

Up to 2025-11-25 a server asks in the middle of ``tools/call`` (``elicitation/create``); from
2026-07-28 (``INPUT_REQUIRED_VERSION``) on it returns an
``InputRequiredResult`` and the call is retried. Parking a call, watching a connection while a
question waits and the demo server's choice of how to ask all turn on this one question.

Only the SDK's ``mcp_types.version`` is imported: its comparison knows the released versions
and compares an unknown one conservatively.
"""

from __future__ import annotations

from typing import Final

from mcp_types.version import is_version_at_least

__all__ = ["INPUT_REQUIRED_VERSION", "asks_between_rounds"]

INPUT_REQUIRED_VERSION: Final = "2026-07-28"
"""The first MCP protocol version in which a server asks through ``InputRequiredResult``."""


def asks_between_rounds(version: object) -> bool:
    """Whether a connection on protocol ``version`` has its server ask between rounds
    (``InputRequiredResult``, ``INPUT_REQUIRED_VERSION`` and later) rather than in the middle
    of the call. ``False`` for a version that cannot be compared (``None``, a malformed string)."""
    if not isinstance(version, str):
        return False
    try:
        return is_version_at_least(version, INPUT_REQUIRED_VERSION)
    except Exception:  # a version the SDK cannot compare
        return False
