"""Paired CPU timings, shared by the round-trip and durable benchmarks.

Two (or more) variants are timed call by call in the same rounds, the order rotating, and a
variant's overhead over the baseline is the median of the paired ratios, with the
distribution-free 95 % interval of a median, over all rounds and over the quietest quarter
(the rounds whose pair took the least CPU in all: load inflates the rest of a call more than
a variant's own work, so the quietest rounds give the larger, stricter figure).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

QUIET = 0.25  # the share of rounds the targets read: those the machine disturbed least


def median_interval(values: Sequence[float], confidence: float = 0.95) -> tuple[float, float, float]:
    """The median of ``values`` and its distribution-free ``confidence`` interval: the
    order statistics ``k`` and ``n - 1 - k`` (0-based) for the largest ``k`` with
    ``P(Binomial(n, 1/2) < k + 1) <= (1 - confidence) / 2``, about ``n/2 -+ sqrt(n)``."""
    ordered = sorted(values)
    n = len(ordered)
    tail, k, cdf = (1 - confidence) / 2, -1, 0.0
    while k + 1 < n // 2:
        cdf += math.comb(n, k + 1) / 2**n
        if cdf > tail:
            break
        k += 1
    if k < 0:  # too few values for the interval: it is the whole range
        return statistics.median(ordered), ordered[0], ordered[-1]
    return statistics.median(ordered), ordered[k], ordered[n - 1 - k]


def quiet_rounds(times: Sequence[int], base: Sequence[int], share: float = QUIET) -> list[int]:
    """The ``share`` of rounds whose pair (this variant's call and the base one) took the
    least CPU in all: the rounds the machine disturbed least. Chosen by the pair's sum,
    which treats the two calls alike, so the choice favours neither."""
    rounds = sorted(range(len(times)), key=lambda r: times[r] + base[r])
    return rounds[: max(1, round(len(rounds) * share))]


def overhead(times: Sequence[int], base: Sequence[int]) -> dict[str, list[float]]:
    """The overhead of ``times`` over ``base``, call by call in the same rounds: the median of
    the paired ratios minus one, with its 95 % interval, ``[estimate, low, high]``; over all
    the rounds (``all``) and over the quietest quarter (``quiet``: the target's figure)."""
    ratios = [a / b for a, b in zip(times, base, strict=True)]
    quiet = [ratios[r] for r in quiet_rounds(times, base)]
    return {
        "all": [q - 1 for q in median_interval(ratios)],
        "quiet": [q - 1 for q in median_interval(quiet)],
    }


def orders(variants: Sequence[str], rounds: int) -> list[list[str]]:
    """The order of each round: rotated by one each round, reversed every other cycle, so
    that every variant comes first, last and after every other equally often."""
    out = []
    for r in range(rounds):
        k = r % len(variants)
        order = [*variants[k:], *variants[:k]]
        out.append(order[::-1] if (r // len(variants)) % 2 else order)
    return out
