"""The inbox served by uvicorn: the list's first page as the store grows, and recording answers
under concurrent clients.

From the repository root, with the project's environment::

    .venv/bin/python benchmarks/inbox.py                 # prints Markdown tables
    .venv/bin/python benchmarks/inbox.py --quick         # fewer calls and samples
    .venv/bin/python benchmarks/inbox.py --update-docs   # also writes them into docs/performance.md

Two measurements, each against ``toolnexus inbox``'s own server (``inbox.serve``: uvicorn on
127.0.0.1) in a child process, driven over HTTP by this one:

1. The list's first page (50 calls, newest first) in stores of 10, 1,000 and 10,000 parked
   calls, and the same page filtered by a server that parked a tenth of them: the median and
   the 95th percentile of ``--samples`` requests, one at a time. Keyset pages: the time must
   not grow with the store.
2. Recording an answer: ``--clients`` clients at once, each posting the answers of its own
   share of ``--answers`` parked calls (one form question each) as a browser does (the
   form, its CSRF token, a 303 to the call's page, which is not followed); the latency of
   each post, p50 and p95, and the answers per second.
3. Open pages: the list's first page of a store of 200 calls, in SQLite and in PostgreSQL,
   with no other page open and then with ``--pages`` live pages open (each an ``/events``
   stream, as a browser tab keeps), nothing changing: the median of ``--samples`` requests
   each way, their ratio (the goal: at most 2x), and the server's CPU while the pages idle.
   PostgreSQL as ``benchmarks/stores.py`` gets it (``--postgres URL``, or one started here).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import os
import platform
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "performance.md"
BEGIN = "<!-- inbox-benchmark:begin (written by benchmarks/inbox.py --update-docs) -->"
END = "<!-- inbox-benchmark:end -->"
TOKEN = "benchmark-token-0123456789abcdef"
SCHEMA = {"type": "object", "properties": {"name": {"type": "string", "minLength": 1}}, "required": ["name"]}


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def fill(path: Path, count: int) -> list[str]:
    """A store of ``count`` parked calls, one form question each; a tenth from server 'rare'."""
    from toolnexus import Request
    from toolnexus.durable import Pending, SqliteStore

    keys = []
    with SqliteStore(path) as store:
        for n in range(count):
            request = Request(f"elc-{n}", "input", f"Name for call {n}?", None, {"schema": SCHEMA})
            server = "rare" if n % 10 == 0 else "common"
            pending = Pending("tools/call", "deploy", {"n": n}, None, ("q",), (request,), server=server)
            keys.append(store.put(pending))
    return keys


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class Served:
    """``toolnexus inbox``'s server for a store (a file, or a ``postgresql://`` URL), in a
    child process."""

    def __init__(self, path: Path | str) -> None:
        self.port = free_port()
        code = (
            "import sys; from toolnexus.durable import open_store; from toolnexus.inbox import serve; "
            f"serve(open_store(sys.argv[1]), port={self.port}, token={TOKEN!r})"
        )
        self.proc = subprocess.Popen(
            [sys.executable, "-c", code, str(path)],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().strip()
        if not line.startswith("http://"):
            raise RuntimeError("the inbox did not start")
        self.base = f"http://127.0.0.1:{self.port}"

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=30)


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def list_times(sizes: list[int], samples: int) -> list[tuple[int, str, float, float]]:
    import httpx2 as httpx

    rows = []
    for size in sizes:
        with tempfile.TemporaryDirectory() as scratch:
            path = Path(scratch) / "pending.db"
            log(f"list: parking {size:,} calls")
            fill(path, size)
            served = Served(path)
            try:
                with httpx.Client(base_url=served.base) as client:
                    client.get(f"/?token={TOKEN}")
                    for label, query in (("first page", "/"), ("first page, one server", "/?server=rare")):
                        for _ in range(5):
                            assert client.get(query).status_code == 200
                        times = []
                        for _ in range(samples):
                            start = time.perf_counter()
                            page = client.get(query)
                            times.append(time.perf_counter() - start)
                            assert page.status_code == 200
                            assert page.text.count('href="/calls/') == min(
                                50, size // (10 if "rare" in query else 1)
                            )
                        rows.append((size, label, statistics.median(times), percentile(times, 0.95)))
                        log(f"list: {size:,} calls, {label}: median {statistics.median(times) * 1000:.1f} ms")
            finally:
                served.close()
    return rows


async def record_times(answers: int, clients: int) -> tuple[float, float, float, float]:
    import httpx2 as httpx

    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "pending.db"
        log(f"record: parking {answers:,} calls")
        keys = fill(path, answers)
        served = Served(path)
        latencies: list[float] = []
        try:

            async def client_run(share: list[tuple[int, str]]) -> None:
                async with httpx.AsyncClient(base_url=served.base, timeout=120) as client:
                    await client.get(f"/?token={TOKEN}")
                    page = await client.get("/")
                    csrf = next(v for k, v in client.cookies.items() if k.endswith("_csrf"))
                    assert page.status_code == 200
                    for n, key in share:
                        start = time.perf_counter()
                        done = await client.post(
                            f"/calls/{key}/elc-{n}",
                            data={"csrf": csrf, "action": "accept", "f0": f"person {n}"},
                        )
                        latencies.append(time.perf_counter() - start)
                        assert done.status_code == 303, done.text[:300]

            shares = [list(enumerate(keys))[i::clients] for i in range(clients)]
            start = time.perf_counter()
            await asyncio.gather(*(client_run(share) for share in shares))
            elapsed = time.perf_counter() - start
        finally:
            served.close()
        from toolnexus.durable import SqliteStore

        with SqliteStore(path) as store:
            assert all(call.status == "ready" for call in store.calls()), "an answer was lost"
    return statistics.median(latencies), percentile(latencies, 0.95), answers / elapsed, elapsed


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def open_pages_times(spec: str, pages: int, samples: int) -> tuple[float, float, float]:
    """The list page's median with no other page open, then with ``pages`` live pages open,
    and the server's CPU seconds per second while those pages idle."""
    import httpx2 as httpx

    from toolnexus import Request
    from toolnexus.durable import Pending, open_store

    with open_store(spec) as store:
        for n in range(200):
            request = Request(f"elc-{n}", "input", f"Name for call {n}?", None, {"schema": SCHEMA})
            store.put(Pending("tools/call", "deploy", {"n": n}, None, ("q",), (request,), server="common"))
    served = Served(spec)
    try:
        async with httpx.AsyncClient(base_url=served.base, timeout=120) as client:
            await client.get(f"/?token={TOKEN}")
            cookie = "; ".join(f"{k}={v}" for k, v in client.cookies.items())

            async def page_median() -> float:
                for _ in range(5):
                    assert (await client.get("/")).status_code == 200
                times = []
                for _ in range(samples):
                    start = time.perf_counter()
                    assert (await client.get("/")).status_code == 200
                    times.append(time.perf_counter() - start)
                return statistics.median(times)

            alone = await page_median()
            streams = []
            for _ in range(pages):
                reader, writer = await asyncio.open_connection("127.0.0.1", served.port)
                head = f"GET /events HTTP/1.1\r\nHost: 127.0.0.1:{served.port}\r\nCookie: {cookie}\r\n\r\n"
                writer.write(head.encode())
                streams.append((reader, writer))
            for reader, _ in streams:
                await asyncio.wait_for(reader.readuntil(b"retry: 3000"), 60)
            await asyncio.sleep(1)
            before = cpu_seconds(served.proc.pid)
            await asyncio.sleep(5)
            idle = (cpu_seconds(served.proc.pid) - before) / 5
            crowded = await page_median()
            for _, writer in streams:
                writer.close()
    finally:
        served.close()
    return alone, crowded, idle


def ms(seconds: float) -> str:
    return f"{seconds * 1000:,.1f} ms"


def report(
    list_rows: list[tuple[int, str, float, float]],
    record: tuple[float, float, float, float],
    open_rows: list[tuple[str, float, float, float]],
    args: argparse.Namespace,
) -> str:
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    lines = [
        f"Measured {dt.date.today().isoformat()} on {platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}, load average {load:.1f} at the end; "
        f"`benchmarks/inbox.py{' --quick' if args.quick else ''}`.",
        "",
        "| store | page | median | p95 |",
        "| ---: | --- | ---: | ---: |",
    ]
    for size, label, median, p95 in list_rows:
        lines.append(f"| {size:,} calls | {label} | {ms(median)} | {ms(p95)} |")
    p50, p95, rate, _elapsed = record
    lines += [
        "",
        "| answers recorded | clients at once | p50 | p95 | answers per second |",
        "| ---: | ---: | ---: | ---: | ---: |",
        f"| {args.answers:,} | {args.clients} | {ms(p50)} | {ms(p95)} | {rate:,.0f} |",
        "",
        f"| store of 200 calls | first page, no other page open | with {args.pages} pages open "
        "| ratio | server's CPU while they idle |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for kind, alone, crowded, idle in open_rows:
        lines.append(f"| {kind} | {ms(alone)} | {ms(crowded)} | {crowded / alone:.2f}x | {idle:.1%} |")
    return "\n".join(lines)


def update_docs(table: str) -> None:
    text = DOCS.read_text(encoding="utf-8")
    block = f"{BEGIN}\n{table}\n{END}"
    if BEGIN not in text:
        raise SystemExit(f"{DOCS} has no {BEGIN!r} marker")
    text = re.sub(re.escape(BEGIN) + ".*?" + re.escape(END), lambda _: block, text, flags=re.DOTALL)
    DOCS.write_text(text, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer calls and samples")
    parser.add_argument("--samples", type=int, default=None, help="requests per page measured")
    parser.add_argument("--answers", type=int, default=None, help="answers recorded under load")
    parser.add_argument("--clients", type=int, default=50, help="clients posting at once")
    parser.add_argument("--pages", type=int, default=300, help="live pages open at once")
    parser.add_argument("--postgres", default=os.environ.get("TOOLNEXUS_TEST_POSTGRES"))
    parser.add_argument(
        "--update-docs", action="store_true", help="write the tables into docs/performance.md"
    )
    args = parser.parse_args(argv)
    args.samples = args.samples or (20 if args.quick else 100)
    args.answers = args.answers or (200 if args.quick else 1000)
    sizes = [10, 1_000, 10_000]
    list_rows = list_times(sizes, args.samples)
    record = asyncio.run(record_times(args.answers, args.clients))
    from stores import postgres

    open_rows = []
    with tempfile.TemporaryDirectory() as scratch, postgres(args.postgres) as url:
        for kind, spec in (("SQLite", str(Path(scratch) / "open.db")), ("PostgreSQL", url)):
            log(f"open pages: {kind}, {args.pages} pages")
            alone, crowded, idle = asyncio.run(open_pages_times(spec, args.pages, args.samples))
            open_rows.append((kind, alone, crowded, idle))
            log(f"open pages: {kind}: {ms(alone)} alone, {ms(crowded)} with {args.pages} open")
    table = report(list_rows, record, open_rows, args)
    print(table)
    if args.update_docs:
        update_docs(table)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "src"))
    raise SystemExit(main())
