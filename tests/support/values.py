"""Values many tests share: the protocol eras and an answer to the elicitation server's profile form."""

from __future__ import annotations

from servers.harness import Era

__all__ = ["ERAS", "FULL_PROFILE", "PROFILE"]

ERAS: list[Era] = ["legacy", "2026"]
"""Both protocol eras of the test servers (``servers.harness.Era``): 2025-11-25 and 2026-07-28."""

PROFILE: dict[str, str | int | float | bool | list[str] | None] = {
    "name": "Ada Lovelace",
    "age": 36,
    "email": "ada@example.com",
}
"""An answer to the profile form of ``servers.elicit_server`` that fits it, leaving out
``newsletter`` (whose default, ``False``, the bridge fills in)."""

FULL_PROFILE: dict[str, str | int | float | bool | list[str] | None] = {**PROFILE, "newsletter": True}
"""An answer to every field of the profile form, ``newsletter`` set away from its default."""
