"""What a test does when a real part it needs is missing (a database, a browser, Redis, an
environment it could not make): on a developer's machine it is skipped, saying why (the test
command lists the skips at its end); in CI (``CI=true``, which ``.ci/run`` sets) it fails."""

from __future__ import annotations

import os
from typing import NoReturn

import pytest

__all__ = ["in_ci", "unavailable"]


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() == "true"


def unavailable(what: str, reason: str) -> NoReturn:
    """Skip the test whose real part ``what`` is missing, saying ``reason``; fail it in CI."""
    if in_ci():
        pytest.fail(f"{what} is needed in CI and {reason}", pytrace=False)
    pytest.skip(f"{what}: {reason} (bash scripts/test installs it; in CI this fails)")
