"""Round-trip benchmark: one elicitation through ``elicitation_callback`` against a bare callback.

A real in-process ``MCPServer`` has a tool that asks for a form (a ``Resolve(...)``
dependency returning ``Elicit(...)``, which works in both protocol eras) and returns a field
of the answer. A real ``mcp.Client`` calls it; the only thing that differs between the
variants is the client's ``elicitation_callback``:

- ``bare``: a hand-written ``async def`` returning ``ElicitResult(action="accept", content=...)``;
- ``bridge``: ``toolnexus.mcp.elicitation_callback(wait_for)`` with the defaults, where
  ``wait_for`` is an ``async def`` returning ``Answer(request.id, True, content)``;
- ``bridge_novalidate``: the same with ``validate=False``;
- ``bridge_sync``: the defaults with a plain (non-async) ``wait_for``, which the bridge
  runs in a worker thread.

Every variant keeps its own connected client open. The method is built to resolve a few
per cent on a loaded machine, where batch means moved by ±10 % and more from run to run:

- each tool call is timed on its own, by the process's CPU time (``process_time_ns``:
  client and server share the process; other processes' load does not count, as it does
  on the wall clock, though it still slows ours through shared caches and cores);
- the variants take turns call by call: a round is one call of each, the order rotating
  (and reversed every other cycle), so the calls compared are milliseconds apart and
  whatever the machine does to one it does to the other;
- the overhead of a variant is the median, over rounds, of its call's time over the bare
  callback's call in the same round, minus one, with the distribution-free 95 % interval
  of a median (binomial order statistics);
- the target's figure is read over the quietest quarter of the rounds: those whose pair of
  calls took the least CPU in all (chosen by the sum, which favours neither call). Load
  inflates the rest of a round trip more than the bridge's own work, so the ratio over
  all rounds reads lower the busier the machine; the quietest rounds are the nearest to
  an idle machine. Both figures are given;
- the garbage collector is off while calls are timed and collects, untimed, every 50 rounds.

Three phases per era: ``bare`` against ``bridge`` alone (``--rounds``, the target's
figures); every variant (``--reference`` rounds, for reference); and the CPU spent inside
the callback, ``bare`` and ``bridge`` wrapped alike (``--inside`` rounds): what the
bridge's own work costs in the middle of a round trip, caches cold, as opposed to a tight
loop.

Both eras are measured: ``2026-07-28`` (the default ``mode="auto"``: the elicitation rides
in an ``InputRequiredResult`` and the call is retried) and ``2025-11-25``
(``mode="legacy"``: ``elicitation/create`` mid-call). Prints one JSON object, per era:
``rounds``, ``ns`` and ``quiet_ns`` (median ns per call of each variant, over all rounds
and over the quietest quarter), ``overhead`` (``{"all": [estimate, low, high], "quiet":
[...]}`` of ``bridge``), ``reference`` (the same for every variant) and ``inside`` (median
ns inside the callback, ``bare`` and ``bridge``, and the median paired difference with its
interval). ``--clock wall`` times by the wall clock instead.

Run with the project's environment: ``python benchmarks/_roundtrip.py [--rounds N]`` (3000 rounds:
several minutes on a loaded 2-core machine).
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import time
from collections.abc import Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Annotated, Any

import anyio
from mcp import Client
from mcp.server.mcpserver import Context, Elicit, ElicitationResult, MCPServer, Resolve
from mcp_types import ElicitResult, TextContent
from pydantic import BaseModel, Field

from toolnexus import Answer, Request
from toolnexus.mcp import elicitation_callback

# Run with -I, which leaves the script's folder off the path: put it back, for _paired.
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _paired import median_interval, orders, overhead, quiet_rounds

CONTENT: dict[str, Any] = {"environment": "staging", "replicas": 3, "notify": True, "note": "routine deploy"}
MODES = {"2026-07-28": "auto", "2025-11-25": "legacy"}
VARIANTS = ("bare", "bridge", "bridge_novalidate", "bridge_sync")
GC_EVERY = 50  # rounds between (untimed) collections
WARM_UP = 50  # untimed calls per client first: imports, caches


class DeployForm(BaseModel):  # no docstring: pydantic would send it as the schema's description
    environment: str = Field(title="Environment", json_schema_extra={"enum": ["staging", "production"]})
    replicas: int = Field(title="Replicas", ge=1, le=10)
    notify: bool = Field(default=True, title="Notify the team")
    note: str = Field(default="routine deploy", title="Note")


def _ask(ctx: Context) -> Elicit[DeployForm]:
    return Elicit("Where should the demo service be deployed?", DeployForm)


def build_server() -> MCPServer:
    server = MCPServer("toolnexus-bench", log_level="WARNING")

    @server.tool()
    def deploy(form: Annotated[ElicitationResult[DeployForm], Resolve(_ask)]) -> str:
        """Deploy, asking where through a form."""
        if form.action != "accept":
            return form.action
        return form.data.environment

    return server


async def bare(context: Any, params: Any) -> ElicitResult:
    return ElicitResult(action="accept", content=CONTENT)


async def answer_async(request: Request) -> Answer:
    return Answer(request.id, True, CONTENT)


def answer_sync(request: Request) -> Answer:
    return Answer(request.id, True, CONTENT)


def callbacks() -> dict[str, Any]:
    return {
        "bare": bare,
        "bridge": elicitation_callback(answer_async),
        "bridge_novalidate": elicitation_callback(answer_async, validate=False),
        "bridge_sync": elicitation_callback(answer_sync),
    }


async def _call(client: Client) -> None:
    result = await client.call_tool("deploy", {})
    first = result.content[0] if result.content else None
    if result.is_error or not isinstance(first, TextContent) or first.text != "staging":
        raise SystemExit(f"the round trip failed: {result}")


async def _paired(
    clients: dict[str, Client], rounds: int, now: Callable[[], int], times: dict[str, list[int]]
) -> None:
    """``rounds`` rounds of one timed call per client, appended to ``times``."""
    gc.collect()
    gc.disable()
    try:
        for r, order in enumerate(orders(list(clients), rounds)):
            if r and r % GC_EVERY == 0:
                gc.collect()
            for name in order:
                client = clients[name]
                start = now()
                await _call(client)
                times[name].append(now() - start)
    finally:
        gc.enable()


def _timed_inside(callback: Any, now: Callable[[], int], into: list[int]) -> Any:
    async def inside(context: Any, params: Any) -> Any:
        start = now()
        result = await callback(context, params)
        into.append(now() - start)
        return result

    return inside


async def _connect(
    stack: AsyncExitStack, server: MCPServer, era: str, callbacks: dict[str, Any]
) -> dict[str, Client]:
    clients: dict[str, Client] = {}
    for name, callback in callbacks.items():
        client = await stack.enter_async_context(
            Client(server, elicitation_callback=callback, mode=MODES[era])
        )
        if client.protocol_version != era:
            raise SystemExit(f"{name}: negotiated {client.protocol_version}, not {era}")
        for _ in range(WARM_UP):
            await _call(client)
        clients[name] = client
    return clients


async def _phase(
    server: MCPServer, era: str, made: dict[str, Any], rounds: int, now: Callable[[], int]
) -> dict[str, list[int]]:
    """CPU (or wall) ns of each call of ``rounds`` rounds, one connected client per callback."""
    times: dict[str, list[int]] = {name: [] for name in made}
    async with AsyncExitStack() as stack:
        clients = await _connect(stack, server, era, made)
        await _paired(clients, rounds, now, times)
    return times


def _summary(times: dict[str, list[int]]) -> dict[str, Any]:
    bare = times["bare"]
    return {
        "rounds": len(bare),
        "ns": {name: statistics.median(t) for name, t in times.items()},
        "quiet_ns": {
            name: statistics.median([t[r] for r in quiet_rounds(t, bare)]) for name, t in times.items()
        },
        "overhead": {name: overhead(t, bare) for name, t in times.items() if name != "bare"},
    }


async def measure(
    rounds: int, clock: str = "cpu", reference: int | None = None, inside: int | None = None
) -> dict[str, dict[str, Any]]:
    """Per era: ``bare`` against ``bridge`` over ``rounds`` rounds (the target's figures);
    every variant over ``reference`` rounds (default ``rounds // 4``); the CPU inside the
    callback over ``inside`` rounds (default ``rounds // 8``). 0 skips a phase."""
    now = time.process_time_ns if clock == "cpu" else time.perf_counter_ns
    reference = rounds // 4 if reference is None else reference
    inside = rounds // 8 if inside is None else inside
    server = build_server()
    out: dict[str, dict[str, Any]] = {}
    for era in MODES:
        made = callbacks()
        target = {name: made[name] for name in ("bare", "bridge")}
        result = _summary(await _phase(server, era, target, rounds, now))
        if reference:
            result["reference"] = _summary(await _phase(server, era, made, reference, now))
        if inside:
            spent: dict[str, list[int]] = {"bare": [], "bridge": []}
            wrapped = {name: _timed_inside(made[name], now, spent[name]) for name in spent}
            await _phase(server, era, wrapped, inside, now)
            spent = {name: t[-inside:] for name, t in spent.items()}  # the warm-up calls left out
            extra = [a - b for a, b in zip(spent["bridge"], spent["bare"], strict=True)]
            result["inside"] = {
                "rounds": inside,
                "bare": statistics.median(spent["bare"]),
                "bridge": statistics.median(spent["bridge"]),
                "extra": list(median_interval(extra)),
            }
        out[era] = result
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--rounds", type=int, default=3000, help="rounds of bare against bridge (default 3000)"
    )
    parser.add_argument(
        "--reference", type=int, help="rounds of every variant (default rounds // 4; 0: none)"
    )
    parser.add_argument(
        "--inside", type=int, help="rounds timing the CPU inside the callback (default rounds // 8; 0: none)"
    )
    parser.add_argument(
        "--clock",
        choices=("wall", "cpu"),
        default="cpu",
        help="time calls by the process's CPU time (default), which other processes' load does "
        "not inflate (client and server share it), or by the wall clock",
    )
    args = parser.parse_args()
    print(json.dumps(anyio.run(measure, args.rounds, args.clock, args.reference, args.inside)))


if __name__ == "__main__":
    main()
