"""Hostile forms, sent by a real in-process MCPServer in both eras, answered through
``elicitation_callback``: each is read (or refused) and checked in milliseconds.

Each attack once froze or crashed the host when answers were checked by a general-purpose
JSON Schema evaluator: a ``patternProperties`` regex run under ``unevaluatedProperties``, a
``$ref``/``anyOf`` fan-out (exponential time and memory, then a stack overflow), 100,000
unused ``$defs``, a 30,000-choice multi-select whose default is every choice (quadratic).

What is measured is the bridge's own time inside the callback: the callback's CPU time less
the resolver's. The SDK's time to carry a large schema is not the bridge's. The bound asserted is
deliberately loose (a regression from milliseconds to the seconds these attacks used to
cost, not a benchmark: the figures are in benchmarks/forms.py).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp_types import ElicitRequestParams

from servers.raw_form_server import build_raw_server
from support import cpu
from toolnexus import Answer, Request, elicitation_callback
from toolnexus.forms import sensitive_fields

BRIDGE_BOUND = 0.25  # seconds; each attack took from 2.8 s to a crash before the form model


def _ref_fan_out(levels: int) -> dict[str, Any]:
    defs: dict[str, Any] = {
        f"d{i}": {"anyOf": [{"$ref": f"#/$defs/d{i + 1}"}, {"$ref": f"#/$defs/d{i + 1}"}]}
        for i in range(levels)
    }
    defs[f"d{levels}"] = {"type": "string"}
    return {"type": "object", "properties": {"x": {"$ref": "#/$defs/d0"}}, "$defs": defs}


def _deep(levels: int) -> dict[str, Any]:
    node: dict[str, Any] = {"type": "string"}
    for _ in range(levels):
        node = {"anyOf": [node]}
    return {"type": "object", "properties": {"x": node}}


CHOICES = [f"c{i}" for i in range(30_000)]
LONG_KEY = "a" * 24 + "!"  # 25 characters that ^(a+)+$ fails on, after backtracking 2**24 ways
ESCAPES = "\x1b[2J\x1b]0;pwned\x07\x1b[8m\u202e"

# name: (schema, what the resolver answers when asked, the action the server must get in the
# legacy era and in 2026-07-28). From 2026-07-28 on the SDK's client reads the schema into
# its typed model first, which drops the top-level keywords it does not know
# (patternProperties, $defs): what reaches the bridge is then a plain form, or one whose
# $ref points to nothing.
ATTACKS: dict[str, tuple[dict[str, Any], dict[str, Any], tuple[str, str]]] = {
    "pattern-properties-long-key": (
        {
            "type": "object",
            "properties": {LONG_KEY: {"type": "string"}},
            "patternProperties": {"^(a+)+$": {"type": "string"}},
            "unevaluatedProperties": False,
        },
        {LONG_KEY: "x"},
        ("cancel", "accept"),
    ),
    # An answer that fits no branch makes an evaluator try both at every level: 2**levels.
    "ref-any-of-fan-out-18": (_ref_fan_out(18), {"x": 5}, ("cancel", "cancel")),
    "ref-any-of-fan-out-40": (_ref_fan_out(40), {"x": 5}, ("cancel", "cancel")),
    "unused-defs-100000": (
        {
            "type": "object",
            "properties": {"a": {"type": "string"}},
            "$defs": {f"d{i}": {"type": "string"} for i in range(100_000)},
        },
        {"a": "fine"},
        ("accept", "accept"),
    ),
    "multi-select-30000-every-default": (
        {
            "type": "object",
            "properties": {
                "m": {"type": "array", "items": {"type": "string", "enum": CHOICES}, "default": CHOICES}
            },
        },
        {"m": CHOICES},  # the default, as a client that fills it in would send it
        ("cancel", "cancel"),
    ),
    "properties-100000": (
        {"type": "object", "properties": {f"p{i}": {"type": "string"} for i in range(100_000)}},
        {},
        ("cancel", "cancel"),
    ),
    # The SDK's server will not serialise much deeper (see the test below for 10,000 levels).
    "nesting-50": (_deep(50), {"x": "y"}, ("cancel", "cancel")),
    "integer-400-digits-answer": (
        {"type": "object", "properties": {"n": {"type": "integer"}}},
        {"n": 10**400},
        ("cancel", "cancel"),
    ),
    "escape-sequences-in-choices": (
        {"type": "object", "properties": {ESCAPES: {"type": "string", "enum": [ESCAPES, "ok"]}}},
        {ESCAPES: "nope"},
        ("cancel", "cancel"),
    ),
}


def _refs(uses: int, target: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {f"p{i}": {"$ref": "#/$defs/t"} for i in range(uses)},
        "$defs": {"t": target},
    }


def _top_one_of_chain(levels: int) -> dict[str, Any]:
    node: dict[str, Any] = {"properties": {"a": {"type": "string"}}}
    for _ in range(levels):
        node = {"oneOf": [node, {"properties": {"a": {"minLength": 1}}}]}
    return {"type": "object", "properties": {"a": {"type": "string"}}, **node}


EVIL = "^(a+)+$"

# Issue 20: shapes that multiply what is read (a $ref target read once per use) or hide
# conditions where the form model used not to look (the top level). Each is refused, or read,
# in milliseconds, without holding the event loop. From 2026-07-28 on the SDK's client drops
# the top-level keywords it does not know ($defs, allOf, oneOf) before the bridge sees them:
# the $refs then point to nothing (cancel) and the top-level conditions are gone (a plain
# form, answered).
AMPLIFIED: dict[str, tuple[dict[str, Any], dict[str, Any], tuple[str, str]]] = {
    "ref-1000-uses-of-1000-choices": (
        _refs(1000, {"type": "string", "enum": [f"c{i}" for i in range(1000)]}),
        {},
        ("cancel", "cancel"),
    ),
    "ref-1000-uses-of-a-1mb-description": (
        _refs(1000, {"type": "string", "description": "your password " * 80_000}),
        {},
        ("cancel", "cancel"),
    ),
    "top-level-all-of-with-a-pattern": (
        {
            "type": "object",
            "properties": {"a": {"type": "string", "default": "a" * 24 + "!"}},
            "allOf": [{"properties": {"a": {"pattern": EVIL}}}],
        },
        {},
        ("cancel", "accept"),
    ),
    "top-level-one-of-chain-20": (_top_one_of_chain(20), {"a": "x"}, ("cancel", "accept")),
    "top-level-ref": (
        {"type": "object", "properties": {"a": {"type": "string"}}, "$ref": "#/$defs/t", "$defs": {"t": {}}},
        {"a": "x"},
        ("cancel", "accept"),
    ),
}
ATTACKS.update(AMPLIFIED)


@pytest.fixture(scope="module")
def server() -> Any:
    return build_raw_server({name: schema for name, (schema, _, _) in ATTACKS.items()})


@asynccontextmanager
async def loop_watch() -> AsyncIterator[list[float]]:
    """The longest stretch of CPU time the event loop's thread spent between two ticks of a
    task that asks to run every millisecond: how long something held the loop. CPU time,
    so that a loaded machine pausing the process does not count, less the interpreter's
    garbage collections (support/cpu.py), which a whole suite's heap makes long."""
    worst = [0.0]
    done = anyio.Event()

    async def tick() -> None:
        last = cpu.thread_time()
        while not done.is_set():
            await anyio.sleep(0.001)
            now = cpu.thread_time()
            worst[0] = max(worst[0], now - last)
            last = now

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(tick)
        try:
            yield worst
        finally:
            done.set()


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "auto"])
@pytest.mark.parametrize("attack", list(ATTACKS))
async def test_an_attack_is_answered_in_milliseconds(
    server: Any, attack: str, mode: str, caplog: pytest.LogCaptureFixture
) -> None:
    _, answer, (legacy, modern) = ATTACKS[attack]
    expected = legacy if mode == "legacy" else modern
    resolver_seconds: list[float] = []
    bridge_seconds: list[float] = []

    # CPU time of the loop's thread: a loaded machine pausing the process is not the bridge.
    async def resolver(request: Request) -> Answer:
        started = cpu.thread_time()
        try:
            return Answer(request.id, True, answer)
        finally:
            resolver_seconds.append(cpu.thread_time() - started)

    callback = elicitation_callback(resolver)

    async def timed(context: Any, params: ElicitRequestParams) -> Any:
        started = cpu.thread_time()
        result = await callback(context, params)
        bridge_seconds.append(cpu.thread_time() - started - sum(resolver_seconds))
        return result

    async with Client(server, elicitation_callback=timed, mode=mode) as client:
        result = await client.call_tool("ask", {"schema": attack})
    received = json.loads(result.content[0].text)  # type: ignore[union-attr]

    assert received["action"] == expected
    assert bridge_seconds, "the elicitation never reached the bridge"
    assert max(bridge_seconds) < BRIDGE_BOUND, f"the bridge took {max(bridge_seconds):.3f} s"
    for line in caplog.messages:  # what the bridge logged about the form is escaped
        assert "\x1b" not in line
        assert "\u202e" not in line


@pytest.mark.anyio
async def test_a_form_nested_10000_deep_is_refused_at_once() -> None:
    # Deeper than the SDK's server serialises: given to the callback directly, as a server
    # of another SDK could send it.
    from mcp_types import ElicitRequestFormParams

    asked: list[Request] = []

    def resolver(request: Request) -> Answer:
        asked.append(request)
        return Answer(request.id, True, {"x": "y"})

    params = ElicitRequestFormParams.model_construct(mode="form", message="m", requested_schema=_deep(10_000))
    started = cpu.thread_time()  # CPU time, as above: a paused process is not the bridge
    result = await elicitation_callback(resolver)(None, params)  # type: ignore[arg-type]
    assert cpu.thread_time() - started < BRIDGE_BOUND
    assert result.model_dump(exclude_none=True) == {"action": "cancel"}
    assert asked == []


LOOP_BOUND = 0.05  # seconds: issue 20's bound on how long any of these may hold the loop


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "auto"])
@pytest.mark.parametrize("attack", list(AMPLIFIED))
@pytest.mark.parametrize("validate", [True, False])
async def test_an_amplified_schema_never_holds_the_loop(
    server: Any, attack: str, mode: str, validate: bool
) -> None:
    _, answer, (legacy, modern) = AMPLIFIED[attack]
    flagged: list[list[str]] = []

    async def resolver(request: Request) -> Answer:
        # What a console or a policy does first: look for secrets. It reads the form with
        # the same bounds, so an amplified schema gives nothing to scan.
        flagged.append(sensitive_fields((request.data or {}).get("schema")))
        return Answer(request.id, True, answer)

    callback = elicitation_callback(resolver, validate=validate)
    async with Client(server, elicitation_callback=callback, mode=mode) as client, loop_watch() as worst:
        result = await client.call_tool("ask", {"schema": attack})
    received = json.loads(result.content[0].text)  # type: ignore[union-attr]

    if validate:
        assert received["action"] == (legacy if mode == "legacy" else modern)
    assert all(names == [] for names in flagged)
    assert worst[0] < LOOP_BOUND, f"the loop was held for {worst[0] * 1000:.1f} ms of CPU time"


def test_the_cpu_clock_leaves_out_garbage_collections() -> None:
    """The clock these bounds use (support/cpu.py) counts the thread's own work, not the
    interpreter's collections of the whole process's heap, which it can run at any moment."""
    import gc
    import time

    heap = [[n] for n in range(300_000)]  # a heap worth walking
    total, ours, collected = time.thread_time(), cpu.thread_time(), cpu.collecting()
    gc.collect()
    total, ours = time.thread_time() - total, cpu.thread_time() - ours
    assert cpu.collecting() - collected > total / 2  # the collection was seen, and was most of it
    assert ours < total / 2
    assert len(heap) == 300_000
