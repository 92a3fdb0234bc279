"""Regression guard for the benchmarks: ratios measured in the same run, never wall-clock bounds.

Not part of the default test run (``testpaths = ["tests"]``). Run it with::

    .venv/bin/pytest benchmarks -p no:cacheprovider

It needs pytest-benchmark, which records each mapping function's time (so that
``--benchmark-autosave`` and ``--benchmark-compare`` keep a history). The assertions are
ratios to a reference timed in the same process, the two sampled in alternation, the best
sample of each counting:

- ``answer_to_elicit_result`` against the floor, the SDK's ``ElicitResult(...)`` alone:
  at most 1.25x, the target of issue 5;
- ``elicitation_to_request`` against what a plain implementation cannot avoid: a fresh id
  and a ``Request`` built through its checked constructor. At most 1.0x: the fast path
  must never cost more than the obvious code. It takes 0.6 to 0.7x of it today; the
  upstream, which this guard cannot run, takes about 2.3x on the machine in
  docs/performance.md, so the guard trips just before the 0.45x target would be lost;
- ``import toolnexus.mcp`` against ``import mcp_types``, fresh interpreters, at most 1.25x;
- the round trip through ``elicitation_callback`` against a bare callback, at most 5 %:
  CPU per call, the two taking turns call by call, the median of the paired ratios over
  the quietest quarter of the rounds; the guard fails when the low end of its 95 %
  interval is above 5 % (``run.py`` passes the target only when the high end is under);
- ``durable.call_tool_or_park`` + ``durable.resume`` against the SDK's own manual loop, at most 10 %:
  CPU per exchange, paired the same way, the same guard at 10 %.

``python benchmarks/run.py`` is the full comparison with the upstream.
"""

from __future__ import annotations

import subprocess
import sys
import timeit
from collections.abc import Callable
from typing import Any

import anyio
import pytest
from _micro import DATA, ELICITATION_ID, FORM_MESSAGE, SCHEMA, URL, URL_MESSAGE, WIRE_FORM, WIRE_URL
from _roundtrip import measure
from mcp_types import ElicitRequestFormParams, ElicitRequestURLParams, ElicitResult

from toolnexus import Answer, Request
from toolnexus.mcp import answer_to_elicit_result, elicitation_to_request, new_request_id

pytest.importorskip("pytest_benchmark")


def interleaved_ratio(
    ours: Callable[[], object], reference: Callable[[], object]
) -> tuple[float, float, float]:
    """Best ns per call of ``ours()`` over that of ``reference()``, sampled in alternation,
    ``timeit``'s way (garbage collector off): ``(ratio, ours_ns, reference_ns)``."""
    number, best = 20_000, {ours: float("inf"), reference: float("inf")}
    for r in range(9):
        for fn in (ours, reference) if r % 2 == 0 else (reference, ours):
            best[fn] = min(best[fn], timeit.timeit(fn, number=number) / number * 1e9)
    return best[ours] / best[reference], best[ours], best[reference]


def guard(benchmark: Any, reference: Callable[[], object], fn: Callable[..., object], arg: object) -> float:
    """Record ``fn(arg)`` with pytest-benchmark (for ``--benchmark-compare``), and return its
    ratio to ``reference``, both timed the same way in alternation."""
    benchmark.pedantic(fn, args=(arg,), iterations=2_000, rounds=15, warmup_rounds=1)
    ratio, ours_ns, reference_ns = interleaved_ratio(lambda: fn(arg), reference)
    benchmark.extra_info.update(ours_ns=ours_ns, reference_ns=reference_ns, ratio=ratio)
    return ratio


FORM = ElicitRequestFormParams(message=FORM_MESSAGE, requested_schema=SCHEMA)
URL_PARAMS = ElicitRequestURLParams(message=URL_MESSAGE, url=URL, elicitation_id=ELICITATION_ID)


def plain_form() -> Request:
    return Request(new_request_id(), "input", FORM_MESSAGE, None, {"schema": SCHEMA})


def plain_url() -> Request:
    return Request(new_request_id(), "authorization", URL_MESSAGE, URL, None)


@pytest.mark.parametrize(
    ("params", "plain"),
    [(FORM, plain_form), (URL_PARAMS, plain_url), (WIRE_FORM, plain_form), (WIRE_URL, plain_url)],
    ids=["form-model", "url-model", "form-wire", "url-wire"],
)
def test_elicitation_to_request_costs_no_more_than_plain_construction(
    benchmark: Any, params: Any, plain: Callable[[], Request]
) -> None:
    assert elicitation_to_request(params).to_dict() | {"id": "x"} == plain().to_dict() | {"id": "x"}
    assert guard(benchmark, plain, elicitation_to_request, params) <= 1.0


@pytest.mark.parametrize(
    ("answer", "floor"),
    [
        (Answer("a", True, dict(DATA)), lambda: ElicitResult(action="accept", content=DATA)),
        (Answer("a", False, None, "declined"), lambda: ElicitResult(action="decline")),
    ],
    ids=["accept", "decline"],
)
def test_answer_to_elicit_result_within_a_quarter_of_the_floor(
    benchmark: Any, answer: Answer, floor: Callable[[], ElicitResult]
) -> None:
    assert answer_to_elicit_result(answer) == floor()
    assert guard(benchmark, floor, answer_to_elicit_result, answer) <= 1.25


def _import_ns(module: str) -> int:
    code = f"import time\nt = time.perf_counter_ns()\nimport {module}\nprint(time.perf_counter_ns() - t)"
    out = subprocess.run(
        [sys.executable, "-I", "-c", code], capture_output=True, text=True, check=True
    ).stdout
    return int(out.split()[-1])


def test_import_within_a_quarter_of_mcp_types() -> None:
    modules = ["toolnexus.mcp", "mcp_types"]
    best = dict.fromkeys(modules, float("inf"))
    for module in modules:  # bytecode caches written first
        _import_ns(module)
    for r in range(7):
        for module in modules if r % 2 == 0 else modules[::-1]:
            best[module] = min(best[module], _import_ns(module))
    assert best["toolnexus.mcp"] <= 1.25 * best["mcp_types"], best


@pytest.fixture(scope="module")
def roundtrip() -> dict[str, dict[str, Any]]:
    result: dict[str, dict[str, Any]] = anyio.run(measure, 1500, "cpu", 500, 0)
    return result


@pytest.mark.parametrize("era", ["2026-07-28", "2025-11-25"])
@pytest.mark.parametrize("variant", ["bridge", "bridge_novalidate"])
def test_roundtrip_overhead_at_most_5_percent(
    roundtrip: dict[str, dict[str, Any]], era: str, variant: str
) -> None:
    # The defaults from their own phase (bare and bridge only), validate=False from the
    # phase of every variant. The guard trips when the overhead is shown to be over 5 %:
    # the low end of its 95 % interval (quietest quarter of the rounds) above 5 %.
    t = roundtrip[era] if variant == "bridge" else roundtrip[era]["reference"]
    estimate, low, high = t["overhead"][variant]["quiet"]
    assert low <= 0.05, (
        f"{variant}: {estimate:+.1%} ({low:+.1%} to {high:+.1%}) over the bare callback, "
        f"CPU per call, quietest quarter of {t['rounds']} rounds"
    )


def test_durable_call_and_resume_within_10_percent_of_the_sdks_manual_loop() -> None:
    from _durable import measure_exchange

    # As the round trip's guard: it trips when the overhead is shown to be over 10 %, the low
    # end of its 95 % interval (quietest quarter of the rounds) above 10 %.
    exchange = anyio.run(measure_exchange, 400)
    estimate, low, high = exchange["overhead"]["durable"]["quiet"]
    assert low <= 0.10, (
        f"durable: {estimate:+.1%} ({low:+.1%} to {high:+.1%}) over the SDK's manual loop, "
        f"CPU per exchange, quietest quarter of {exchange['rounds']} rounds"
    )
