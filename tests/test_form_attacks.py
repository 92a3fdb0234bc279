"""Hostile forms, sent by a real in-process MCPServer in both eras, answered through
``elicitation_callback``: each is read (or refused) and checked in milliseconds.

Each attack once froze or crashed the host when answers were checked by a general-purpose
JSON Schema evaluator: a ``patternProperties`` regex run under ``unevaluatedProperties``, a
``$ref``/``anyOf`` fan-out (exponential time and memory, then a stack overflow), 100,000
unused ``$defs``, a 30,000-choice multi-select whose default is every choice (quadratic).

What is measured is the bridge's own time inside the callback: the callback's time less the
resolver's. The SDK's time to carry a large schema is not the bridge's. The bound asserted is
deliberately loose (a regression from milliseconds to the seconds these attacks used to
cost, not a benchmark: the figures are in benchmarks/forms.py).
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from mcp import Client
from mcp_types import ElicitRequestParams

from servers.raw_form_server import build_raw_server
from toolnexus import Answer, Request, elicitation_callback

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


@pytest.fixture(scope="module")
def server() -> Any:
    return build_raw_server({name: schema for name, (schema, _, _) in ATTACKS.items()})


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

    async def resolver(request: Request) -> Answer:
        started = time.perf_counter()
        try:
            return Answer(request.id, True, answer)
        finally:
            resolver_seconds.append(time.perf_counter() - started)

    callback = elicitation_callback(resolver)

    async def timed(context: Any, params: ElicitRequestParams) -> Any:
        started = time.perf_counter()
        result = await callback(context, params)
        bridge_seconds.append(time.perf_counter() - started - sum(resolver_seconds))
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
    started = time.perf_counter()
    result = await elicitation_callback(resolver)(None, params)  # type: ignore[arg-type]
    assert time.perf_counter() - started < BRIDGE_BOUND
    assert result.model_dump(exclude_none=True) == {"action": "cancel"}
    assert asked == []
