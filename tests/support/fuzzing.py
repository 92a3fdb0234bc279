"""How many examples a property test draws, and the Hypothesis settings of every test run.

A test names the examples it wants (``examples(400)``), which a run draws by default. The test
command runs the quick tests on the oldest and newest Pythons: the newest draws every example
(it searches wide), the oldest with ``TOOLNEXUS_EXAMPLES`` set to a fraction (``0.125``): that
run looks for what differs between Pythons, which a few dozen examples find. Timing checks are
off everywhere: the test command runs several suites side by side on two cores, where a slow
draw is the machine, not the code.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

__all__ = ["examples", "register_profile"]


def examples(wanted: int) -> int:
    """``wanted`` scaled by ``TOOLNEXUS_EXAMPLES`` (a fraction, default 1), at least 10."""
    raw = os.environ.get("TOOLNEXUS_EXAMPLES", "1")
    try:
        fraction = float(raw)
    except ValueError:
        raise ValueError(f"TOOLNEXUS_EXAMPLES must be a number such as 0.125, not {raw!r}") from None
    if not 0 < fraction <= 1:
        raise ValueError(f"TOOLNEXUS_EXAMPLES must be more than 0 and at most 1, not {raw!r}")
    return max(10, round(wanted * fraction))


def register_profile() -> None:
    """No deadline and no "too slow" health check, on every run (see the module's text)."""
    settings.register_profile(
        "toolnexus", deadline=None, suppress_health_check=[HealthCheck.too_slow], max_examples=examples(100)
    )
    settings.load_profile("toolnexus")
