"""Issue 20: nothing evaluates a hostile server's schema on the host's loop through
``toolnexus.fastmcp``: through the real FastMCP ``Client`` (in process, both eras) and through
FastMCP's own handler wrapper, each measuring the loop's longest stall."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any, cast

import anyio
import fastmcp
import pytest
from fastmcp import Client as FastMCPClient
from fastmcp.client.elicitation import create_elicitation_callback
from mcp.client.session import ClientRequestContext
from mcp_types import ElicitRequestFormParams, ElicitResult

from servers.raw_form_server import build_raw_server
from support import cpu
from toolnexus import Answer, Request
from toolnexus.fastmcp import ANSWERS_BELOW_FASTMCP, elicitation_handler
from toolnexus.mcp import CallbackOptions, elicitation_callback

pytestmark = pytest.mark.anyio

LOOP_HELD_MAX = 0.05  # the issue's bound: the loop is never held longer than 50 ms

# FastMCP 4.2 and later check an accepted answer with jsonschema after the handler returns,
# running the server's pattern; 4.1 (the newest on Python 3.10) does not, so there the
# handler has nothing to defend and passes the answer on as it is.
FASTMCP_CHECKS_CONTENT = tuple(int(part) for part in fastmcp.__version__.split(".")[:2]) >= (4, 2)

# A server-chosen pattern that backtracks exponentially, and a default of its choosing that
# does not match: Python's re takes about 0.7 s at 24 characters, doubling with each one.
EVIL_DEFAULT = "a" * 26 + "!"
BACKTRACKING = {
    "type": "object",
    "properties": {"code": {"type": "string", "pattern": "^(a+)+$", "default": EVIL_DEFAULT}},
}


def one_of_chain(depth: int) -> dict[str, Any]:
    """A top-level ``oneOf`` chain, each level an object whose first choice is the level below:
    about 2 KB at 18 levels (FastMCP's jsonschema check of it held the loop 37 to 146 s)."""
    node: dict[str, Any] = {"type": "object", "properties": {"x": {"type": "string"}}}
    for n in range(depth):
        other = {"type": "object", "properties": {f"g{n}": {"type": "string"}}, "required": [f"g{n}"]}
        node = {"type": "object", "properties": {f"f{n}": {"type": "string"}}, "oneOf": [node, other]}
    return node


PLAIN = {"type": "object", "properties": {"name": {"type": "string", "default": "Ada"}}}
SCHEMAS = {"backtracking": BACKTRACKING, "chain": one_of_chain(18), "plain": PLAIN}


async def longest_stall(work: Callable[[], Awaitable[Any]]) -> tuple[Any, float]:
    """``work()``'s result and the longest the event loop went without running a ticker,
    counted in the loop thread's CPU time: what the loop itself did between two ticks, not
    the time a loaded machine left the process waiting for a core, nor the interpreter's
    garbage collections (support/cpu.py)."""
    longest = 0.0
    done = anyio.Event()

    async def ticker() -> None:
        nonlocal longest
        last = cpu.thread_time()
        while not done.is_set():
            await anyio.sleep(0.002)
            now = cpu.thread_time()
            longest = max(longest, now - last)
            last = now

    result: Any = None
    async with anyio.create_task_group() as group:
        group.start_soon(ticker)
        try:
            result = await work()
        finally:
            done.set()
    return result, longest


def takes_defaults(request: Request) -> Answer:
    return Answer.accept(request, {})  # every default laid in: the server's own values


def test_the_handler_takes_the_callbacks_options_from_one_definition() -> None:
    import inspect

    keywords = {
        name
        for name, parameter in inspect.signature(elicitation_callback).parameters.items()
        if parameter.kind is inspect.Parameter.KEYWORD_ONLY
    }
    assert keywords == set(CallbackOptions.__annotations__)
    seen: list[Any] = []
    handler = elicitation_handler(takes_defaults, on_result=lambda *args: seen.append(args))
    assert callable(handler)
    with pytest.raises(TypeError, match="unknown option 'retries'"):
        elicitation_handler(takes_defaults, retries=3)  # type: ignore[call-arg]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
@pytest.mark.parametrize("name", ["backtracking", "chain"])
async def test_a_hostile_schema_never_holds_the_loop_through_the_fastmcp_client(mode: str, name: str) -> None:
    assert ANSWERS_BELOW_FASTMCP  # the installed FastMCP is laid out as toolnexus expects
    seen: list[tuple[ElicitResult, Any]] = []
    handler = elicitation_handler(takes_defaults, on_result=lambda r, result, why: seen.append((result, why)))

    async with FastMCPClient(build_raw_server(SCHEMAS), elicitation_handler=handler, mode=mode) as client:

        async def ask(schema: str) -> dict[str, Any]:
            result = await client.call_tool("ask", {"schema": schema})
            outcome = json.loads(result.content[0].text)
            assert isinstance(outcome, dict)
            return outcome

        # A plain question first: the first call of a session imports what it needs, which
        # holds the loop too; the measurement is of the hostile question alone.
        assert (await ask("plain"))["action"] == "accept"
        seen.clear()
        with anyio.fail_after(30):
            outcome, stall = await longest_stall(lambda: ask(name))
    assert stall < LOOP_HELD_MAX, f"the loop was held {stall:.3f} s"
    assert outcome["action"] in ("accept", "cancel")
    assert seen, "the bridge answered, below FastMCP's wrapper"
    if name == "backtracking":  # the server's default went back as its own value, unchecked here
        assert outcome == {"action": "accept", "content": {"code": EVIL_DEFAULT}}


@pytest.mark.parametrize("validate", [True, False])
async def test_through_fastmcps_own_wrapper_a_server_pattern_never_runs_on_its_default(
    validate: bool,
) -> None:
    """Where FastMCP's wrapper calls the handler (and 4.2 then runs jsonschema on an accepted
    answer), the handler cancels an answer whose value for a patterned field the server chose."""
    wrapped = create_elicitation_callback(elicitation_handler(takes_defaults, validate=validate))
    params = ElicitRequestFormParams(message="Code?", requested_schema=BACKTRACKING)

    async def ask() -> Any:
        return await wrapped(cast(ClientRequestContext, None), params)

    result, stall = await longest_stall(ask)
    if FASTMCP_CHECKS_CONTENT:
        assert result == ElicitResult(action="cancel")
    else:
        assert result == ElicitResult(action="accept", content={"code": EVIL_DEFAULT})
    assert stall < LOOP_HELD_MAX, f"the loop was held {stall:.3f} s"


@pytest.mark.filterwarnings("ignore:Pattern .* is not supported:UserWarning")  # FastMCP's, on (x)\\1
async def test_through_fastmcps_own_wrapper_patterns_are_decided_in_linear_time() -> None:
    schema = {
        "type": "object",
        "properties": {
            "code": {"type": "string", "pattern": "^(a+)+$"},
            "ref": {"type": "string", "pattern": "(x)\\1"},  # a back-reference: no linear engine reads it
        },
    }

    def answers(value: dict[str, str]) -> Callable[[Request], Answer]:
        return lambda request: Answer.accept(request, value)

    async def through_wrapper(value: dict[str, str]) -> Any:
        wrapped = create_elicitation_callback(elicitation_handler(answers(value)))
        return await wrapped(
            cast(ClientRequestContext, None), ElicitRequestFormParams(message="?", requested_schema=schema)
        )

    no_match: dict[str, str] = {"code": "a" * 40 + "!"}
    result, stall = await longest_stall(lambda: through_wrapper(no_match))
    assert stall < LOOP_HELD_MAX
    assert await through_wrapper({"code": "aaaa"}) == ElicitResult(action="accept", content={"code": "aaaa"})
    if FASTMCP_CHECKS_CONTENT:
        assert result == ElicitResult(action="cancel")  # no match, decided by the linear engine
        assert await through_wrapper({"ref": "xx"}) == ElicitResult(action="cancel")  # undecidable
    else:  # no pattern runs after the handler: nothing to decide
        assert result == ElicitResult(action="accept", content=dict(no_match))
