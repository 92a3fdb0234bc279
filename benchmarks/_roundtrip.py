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

Every variant keeps its own connected client open. Batches of ``--calls`` tool calls are
timed in alternation (the order rotating from one round to the next), with the garbage
collector off during a batch; the best batch mean of ``--rounds`` is kept. Both eras are
measured: ``2026-07-28`` (the default ``mode="auto"``: the elicitation rides in an
``InputRequiredResult`` and the call is retried) and ``2025-11-25`` (``mode="legacy"``:
``elicitation/create`` mid-call). Prints one JSON object: ns per round trip. With
``--clock cpu`` batches are timed by the process's CPU time instead of the wall clock.

Run with the project's environment: ``python benchmarks/_roundtrip.py [--rounds N] [--calls N]``.
"""

from __future__ import annotations

import argparse
import gc
import json
import time
from contextlib import AsyncExitStack
from typing import Annotated, Any

import anyio
from mcp import Client
from mcp.server.mcpserver import Context, Elicit, ElicitationResult, MCPServer, Resolve
from mcp_types import ElicitResult, TextContent
from pydantic import BaseModel, Field

from toolnexus import Answer, Request
from toolnexus.mcp import elicitation_callback

CONTENT: dict[str, Any] = {"environment": "staging", "replicas": 3, "notify": True, "note": "routine deploy"}
MODES = {"2026-07-28": "auto", "2025-11-25": "legacy"}
VARIANTS = ("bare", "bridge", "bridge_novalidate", "bridge_sync")


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


async def measure(rounds: int, calls: int, clock: str = "wall") -> dict[str, dict[str, float]]:
    now = time.process_time_ns if clock == "cpu" else time.perf_counter_ns
    server = build_server()
    out: dict[str, dict[str, float]] = {}
    for era, mode in MODES.items():
        best = dict.fromkeys(VARIANTS, float("inf"))
        async with AsyncExitStack() as stack:
            clients: dict[str, Client] = {}
            for name, callback in callbacks().items():
                client = await stack.enter_async_context(
                    Client(server, elicitation_callback=callback, mode=mode)
                )
                if client.protocol_version != era:
                    raise SystemExit(f"{name}: negotiated {client.protocol_version}, not {era}")
                for _ in range(max(3, calls // 10)):  # warm up: first-use imports, caches
                    await _call(client)
                clients[name] = client
            for r in range(rounds):
                order = VARIANTS[r % len(VARIANTS) :] + VARIANTS[: r % len(VARIANTS)]
                for name in order:
                    client = clients[name]
                    gc.collect()
                    gc.disable()
                    try:
                        start = now()
                        for _ in range(calls):
                            await _call(client)
                        elapsed = now() - start
                    finally:
                        gc.enable()
                    best[name] = min(best[name], elapsed / calls)
        out[era] = best
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--calls", type=int, default=40)
    parser.add_argument(
        "--clock",
        choices=("wall", "cpu"),
        default="wall",
        help="time batches by the wall clock (default) or by the process's CPU time, which a "
        "loaded machine pausing the process does not inflate (client and server share it)",
    )
    args = parser.parse_args()
    print(json.dumps(anyio.run(measure, args.rounds, args.calls, args.clock)))


if __name__ == "__main__":
    main()
