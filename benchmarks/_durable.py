"""Durable benchmark: ``durable.call_tool`` + ``durable.resume`` against the SDK's own manual
loop, and ``SqliteStore`` against a raw ``sqlite3`` insert.

The round trip. A real in-process ``MCPServer`` (protocol 2026-07-28) has a tool that asks
for a form through a ``Resolve(...)`` dependency and returns a field of the answer. One
connected ``mcp.Client`` per variant makes the whole exchange: the call, which comes back
asking, then the retry with the answer.

- ``sdk``: the SDK's manual loop, ``client.session.call_tool(..., allow_input_required=True)``
  then ``client.call_tool(..., input_responses={key: ElicitResult(...)}, request_state=...)``;
- ``floor``: the same with ``client.session.call_tool(...)`` for the retry too, the least
  any client can do (``client.call_tool`` adds its own retry driver around it);
- ``durable``: ``durable.call_tool`` (a ``Pending``), then ``durable.resume`` with an
  ``Answer`` (mapped, defaults laid in, validated against the form);
- ``durable_json``: the same, with the ``Pending`` sent through ``to_dict``, ``json.dumps``,
  ``json.loads`` and ``Pending.from_dict`` between the two, as a store does.

Batches of ``--calls`` exchanges are timed in alternation (the order rotating from one round
to the next), with the garbage collector off during a batch; the best batch mean counts, by
the wall clock and by the process's CPU time. The tool is an ``async def`` (no worker
thread), so the CPU time is the work of the exchange, client and server, whatever else the
machine runs; the ratio is read from it.

The store. Operations per second, each timed over ``--ops`` operations, best of
``--rounds``, on a fresh file in a temporary directory (WAL, ``synchronous=NORMAL``, as the
store sets it): ``SqliteStore.put`` of a ``Pending``, ``record`` of one answer to it, ``get``
of it; and, as the baseline, a raw ``sqlite3`` ``INSERT`` of the same ``Pending``'s JSON text
(already serialised) into a table of the same shape, on a connection set up the same way.

Prints one JSON object. Run with the project's environment:
``python benchmarks/_durable.py [--rounds N] [--calls N] [--ops N]``.
"""

from __future__ import annotations

import argparse
import gc
import json
import sqlite3
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Annotated, Any

import anyio
from mcp import Client
from mcp.server.mcpserver import Context, Elicit, ElicitationResult, MCPServer, Resolve
from mcp_types import ElicitResult, InputRequiredResult, TextContent
from pydantic import BaseModel, Field

from toolnexus import Answer, Request, durable

CONTENT: dict[str, Any] = {"environment": "staging", "replicas": 3, "notify": True, "note": "routine deploy"}
VARIANTS = ("sdk", "floor", "durable", "durable_json")


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
    async def deploy(form: Annotated[ElicitationResult[DeployForm], Resolve(_ask)]) -> str:
        """Deploy, asking where through a form."""
        if form.action != "accept":
            return form.action
        return form.data.environment

    return server


def _check(result: Any) -> None:
    first = result.content[0] if result.content else None
    if result.is_error or not isinstance(first, TextContent) or first.text != "staging":
        raise SystemExit(f"the exchange failed: {result}")


async def sdk(client: Client) -> None:
    asked = await client.session.call_tool("deploy", {}, allow_input_required=True)
    if not isinstance(asked, InputRequiredResult) or not asked.input_requests:
        raise SystemExit(f"the server did not ask: {asked}")
    responses: dict[str, Any] = {
        key: ElicitResult(action="accept", content=CONTENT) for key in asked.input_requests
    }
    _check(await client.call_tool("deploy", {}, input_responses=responses, request_state=asked.request_state))


async def floor(client: Client) -> None:
    asked = await client.session.call_tool("deploy", {}, allow_input_required=True)
    if not isinstance(asked, InputRequiredResult) or not asked.input_requests:
        raise SystemExit(f"the server did not ask: {asked}")
    responses: dict[str, Any] = {
        key: ElicitResult(action="accept", content=CONTENT) for key in asked.input_requests
    }
    retried = await client.session.call_tool(
        "deploy", {}, input_responses=responses, request_state=asked.request_state, allow_input_required=True
    )
    _check(retried)


async def with_durable(client: Client) -> None:
    pending = await durable.call_tool(client, "deploy", {})
    if not isinstance(pending, durable.Pending):
        raise SystemExit(f"the server did not ask: {pending}")
    _check(await durable.resume(client, pending, [Answer(pending.requests[0].id, True, CONTENT)]))


async def with_durable_json(client: Client) -> None:
    pending = await durable.call_tool(client, "deploy", {})
    if not isinstance(pending, durable.Pending):
        raise SystemExit(f"the server did not ask: {pending}")
    stored = durable.Pending.from_dict(json.loads(json.dumps(pending.to_dict())))
    _check(await durable.resume(client, stored, [Answer(stored.requests[0].id, True, CONTENT)]))


EXCHANGES = {"sdk": sdk, "floor": floor, "durable": with_durable, "durable_json": with_durable_json}


async def measure_exchange(rounds: int, calls: int) -> dict[str, dict[str, float]]:
    """Best mean ns per exchange of each variant: ``"wall"`` (``perf_counter``) and ``"cpu"``
    (``process_time``, the process's CPU time, which a busy machine's other processes do not
    inflate)."""
    server = build_server()
    best = {clock: dict.fromkeys(VARIANTS, float("inf")) for clock in ("wall", "cpu")}
    async with AsyncExitStack() as stack:
        clients: dict[str, Client] = {}
        for name in VARIANTS:
            client = await stack.enter_async_context(Client(server, elicitation_callback=durable.park_only))
            if client.protocol_version != "2026-07-28":
                raise SystemExit(f"{name}: negotiated {client.protocol_version}, not 2026-07-28")
            for _ in range(max(3, calls // 10)):  # warm up: first-use imports, caches
                await EXCHANGES[name](client)
            clients[name] = client
        for r in range(rounds):
            order = VARIANTS[r % len(VARIANTS) :] + VARIANTS[: r % len(VARIANTS)]
            for name in order:
                exchange, client = EXCHANGES[name], clients[name]
                gc.collect()
                gc.disable()
                try:
                    start, start_cpu = time.perf_counter_ns(), time.process_time_ns()
                    for _ in range(calls):
                        await exchange(client)
                    elapsed, cpu = time.perf_counter_ns() - start, time.process_time_ns() - start_cpu
                finally:
                    gc.enable()
                best["wall"][name] = min(best["wall"][name], elapsed / calls)
                best["cpu"][name] = min(best["cpu"][name], cpu / calls)
    return best


# --- the store -----------------------------------------------------------------------------


def sample_pending() -> durable.Pending:
    """A Pending as the round trip above parks it (no server needed to make one)."""
    schema = DeployForm.model_json_schema()
    prompt = "Where should the demo service be deployed?"
    request = Request("elc-bench-1", "input", prompt, None, {"schema": schema})
    return durable.Pending("tools/call", "deploy", {}, "v1." + "x" * 400, ("form",), (request,), {}, "bench")


def measure_store(rounds: int, ops: int) -> dict[str, float]:
    """Best operations per second of each store operation, and of the raw insert."""
    pending = sample_pending()
    text = json.dumps(pending.to_dict(), ensure_ascii=False, separators=(",", ":"))
    answer = Answer(pending.requests[0].id, True, CONTENT)
    best = dict.fromkeys(("raw_insert", "put", "record", "get"), 0.0)
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(rounds):
            raw = sqlite3.connect(Path(tmp) / f"raw-{r}.db", isolation_level=None)
            raw.execute("PRAGMA journal_mode = WAL")
            raw.execute("PRAGMA synchronous = NORMAL")
            raw.execute(
                "CREATE TABLE t (seq INTEGER PRIMARY KEY AUTOINCREMENT, key TEXT NOT NULL UNIQUE,"
                " created TEXT NOT NULL, pending TEXT NOT NULL)"
            )
            store = durable.SqliteStore(Path(tmp) / f"store-{r}.db")
            try:
                timings: dict[str, float] = {}
                start = time.perf_counter()
                for i in range(ops):
                    raw.execute(
                        "INSERT INTO t (key, created, pending) VALUES (?, ?, ?)",
                        (f"{i:016x}", "2026-11-30T00:00:00.000Z", text),
                    )
                timings["raw_insert"] = time.perf_counter() - start
                start = time.perf_counter()
                keys = [store.put(pending) for _ in range(ops)]
                timings["put"] = time.perf_counter() - start
                start = time.perf_counter()
                for key in keys:
                    store.record(key, answer)
                timings["record"] = time.perf_counter() - start
                start = time.perf_counter()
                for key in keys:
                    store.get(key)
                timings["get"] = time.perf_counter() - start
            finally:
                raw.close()
                store.close()
            for name, seconds in timings.items():
                best[name] = max(best[name], ops / seconds)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--calls", type=int, default=10)
    parser.add_argument("--ops", type=int, default=300)
    args = parser.parse_args()
    exchange = anyio.run(measure_exchange, args.rounds, args.calls)
    store = measure_store(max(3, args.rounds // 6), args.ops)
    print(json.dumps({"exchange": exchange, "store": store}))


if __name__ == "__main__":
    main()
