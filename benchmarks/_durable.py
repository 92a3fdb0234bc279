"""Durable benchmark: ``durable.call_tool_or_park`` + ``durable.resume`` against the SDK's own manual
loop, and ``SqliteStore`` against a raw ``sqlite3`` insert.

The round trip. A real in-process ``MCPServer`` (protocol 2026-07-28) has a tool that asks
for a form through a ``Resolve(...)`` dependency and returns a field of the answer. One
connected ``mcp.Client`` per variant makes the whole exchange: the call, which comes back
asking, then the retry with the answer.

- ``sdk``: the SDK's manual loop, ``client.session.call_tool(..., allow_input_required=True)``
  then ``client.call_tool(..., input_responses={key: ElicitResult(...)}, request_state=...)``;
- ``floor``: the same with ``client.session.call_tool(...)`` for the retry too, the least
  any client can do (``client.call_tool`` adds its own retry driver around it);
- ``durable``: ``durable.call_tool_or_park`` (a ``Pending``), then ``durable.resume`` with an
  ``Answer`` (mapped, defaults laid in, validated against the form);
- ``durable_json``: the same, with the ``Pending`` sent through ``to_dict``, ``json.dumps``,
  ``json.loads`` and ``Pending.from_dict`` between the two, as a store does.

Each exchange is timed on its own by the process's CPU time (client and server share the
process; the tool is an ``async def``, no worker thread), one exchange of each variant a
round, the order rotating (``_paired.py``), with the garbage collector off but between every
50 rounds. A variant's overhead over ``sdk`` is the median of the paired ratios, with its 95 %
interval, over all rounds and over the quietest quarter (the target's figure): batch means,
which this benchmark used before, moved by ±10 % from run to run.

The store. Operations per second, each timed over ``--ops`` operations, best of
``--rounds``, on a fresh file in a temporary directory (WAL, ``synchronous=NORMAL``, as the
store sets it): ``SqliteStore.put`` of a ``Pending``, ``record`` of one answer to it, ``get``
of it; and, as the baseline, a raw ``sqlite3`` ``INSERT`` of the same ``Pending``'s JSON text
(already serialised) into a table of the same shape, on a connection set up the same way.

Prints one JSON object. Run with the project's environment:
``python benchmarks/_durable.py [--rounds N] [--store-rounds N] [--ops N]``.
"""

from __future__ import annotations

import argparse
import gc
import json
import sqlite3
import statistics
import sys
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

# Run with -I, which leaves the script's folder off the path: put it back, for _paired.
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _paired import orders, overhead, quiet_rounds

CONTENT: dict[str, Any] = {"environment": "staging", "replicas": 3, "notify": True, "note": "routine deploy"}
VARIANTS = ("sdk", "floor", "durable", "durable_json")
GC_EVERY = 50  # rounds between (untimed) collections
WARM_UP = 30  # untimed exchanges per client first


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
    pending = await durable.call_tool_or_park(client, "deploy", {})
    if not isinstance(pending, durable.Pending):
        raise SystemExit(f"the server did not ask: {pending}")
    _check(await durable.resume(client, pending, [Answer(pending.requests[0].id, True, CONTENT)]))


async def with_durable_json(client: Client) -> None:
    pending = await durable.call_tool_or_park(client, "deploy", {})
    if not isinstance(pending, durable.Pending):
        raise SystemExit(f"the server did not ask: {pending}")
    stored = durable.Pending.from_dict(json.loads(json.dumps(pending.to_dict())))
    _check(await durable.resume(client, stored, [Answer(stored.requests[0].id, True, CONTENT)]))


EXCHANGES = {"sdk": sdk, "floor": floor, "durable": with_durable, "durable_json": with_durable_json}


async def measure_exchange(rounds: int) -> dict[str, Any]:
    """CPU ns of each exchange of ``rounds`` rounds, one exchange of each variant a round (the
    order rotating), and each variant's overhead over the SDK's loop: the median of the
    paired ratios with its 95 % interval, over all rounds and the quietest quarter."""
    server = build_server()
    times: dict[str, list[int]] = {name: [] for name in VARIANTS}
    now = time.process_time_ns
    async with AsyncExitStack() as stack:
        clients: dict[str, Client] = {}
        for name in VARIANTS:
            client = await stack.enter_async_context(Client(server, elicitation_callback=durable.park_only))
            if client.protocol_version != "2026-07-28":
                raise SystemExit(f"{name}: negotiated {client.protocol_version}, not 2026-07-28")
            for _ in range(WARM_UP):  # first-use imports, caches
                await EXCHANGES[name](client)
            clients[name] = client
        gc.collect()
        gc.disable()
        try:
            for r, order in enumerate(orders(VARIANTS, rounds)):
                if r and r % GC_EVERY == 0:
                    gc.collect()
                for name in order:
                    start = now()
                    await EXCHANGES[name](clients[name])
                    times[name].append(now() - start)
        finally:
            gc.enable()
    sdk_times = times["sdk"]
    return {
        "rounds": rounds,
        "ns": {name: statistics.median(t) for name, t in times.items()},
        "quiet_ns": {
            name: statistics.median([t[r] for r in quiet_rounds(t, sdk_times)]) for name, t in times.items()
        },
        "overhead": {name: overhead(t, sdk_times) for name, t in times.items() if name != "sdk"},
    }


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
    parser.add_argument("--rounds", type=int, default=600, help="rounds of one exchange per variant")
    parser.add_argument("--store-rounds", type=int, default=5, help="timed runs of each store operation")
    parser.add_argument("--ops", type=int, default=300)
    args = parser.parse_args()
    exchange = anyio.run(measure_exchange, args.rounds)
    store = measure_store(args.store_rounds, args.ops)
    print(json.dumps({"exchange": exchange, "store": store}))


if __name__ == "__main__":
    main()
