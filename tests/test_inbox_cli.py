"""``toolnexus inbox STORE`` as a process: the one line it prints, the page it serves, its
logs on stderr (never the token), and Ctrl-C."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest

from servers.inbox_server import in_a_thread, park
from support import forkserver
from support.stores import Backend
from toolnexus import Request
from toolnexus.durable import SqliteStore


def start(*argv: str) -> forkserver.Forked:
    """``python -m toolnexus inbox ARGV...``, forked by the fork server (whose children take
    Ctrl-C as a new interpreter does, even where this run inherited SIGINT ignored)."""
    return forkserver.popen(
        [sys.executable, "-m", "toolnexus", "inbox", *argv],
        stdin=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "NO_COLOR": "1"},
    )


def test_it_prints_its_address_serves_and_stops_on_ctrl_c(tmp_path: Path) -> None:
    path = tmp_path / "pending.db"
    with SqliteStore(path) as store:
        key = in_a_thread(lambda: park(store, "sign_in", {"tag": "cli"}))
    proc = start(str(path))
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        assert line.startswith("http://127.0.0.1:")
        base, _, token = line.partition("/?token=")
        assert len(token) >= 32
        with httpx.Client(follow_redirects=True, timeout=30) as client:
            page = client.get(line)
            assert page.status_code == 200
            assert f"/calls/{key}" in page.text
            assert client.get(base + "/").status_code == 200  # the cookie
            assert httpx.get(base + "/").status_code == 403  # no token, no cookie
            with client.stream("GET", base + "/events") as events:  # a live page stays open
                assert next(events.iter_lines()) == "retry: 3000"
                proc.send_signal(signal.SIGINT)
                out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    assert out == ""  # the one line, and nothing else
    assert "inbox stopped" in err
    assert "GET / 303" in err
    assert token not in err
    assert "Traceback" not in err


def test_a_store_that_is_not_there_is_made_and_one_that_cannot_be_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "new.db"
    proc = start(str(path))  # the inbox writes answers: it makes its store on first use
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().startswith("http://127.0.0.1:")
        assert path.exists()
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=60)
    proc = start(str(tmp_path / "no-such-dir" / "missing.db"))
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 2
    assert out == ""
    assert err.strip() == f"toolnexus: {tmp_path / 'no-such-dir' / 'missing.db'}: cannot create a store there"


def test_another_address_than_loopback_warns(tmp_path: Path) -> None:
    path = tmp_path / "pending.db"
    SqliteStore(path).close()
    proc = start(str(path), "--host", "0.0.0.0")
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().startswith("http://0.0.0.0:")
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert "put it behind TLS" in err
    assert proc.returncode == 0


@pytest.mark.parametrize("port", ["-1", "70000"])
def test_a_port_out_of_range(tmp_path: Path, port: str) -> None:
    path = tmp_path / "pending.db"
    SqliteStore(path).close()
    proc = start(str(path), "--port", port)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 2
    assert "--port must be from 0 to 65535" in err


# --- open pages while nothing changes ---------------------------------------------------------

PAGES = 100


def _cpu_seconds(pid: int) -> float:
    """The CPU time (user and system) a process has used, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def _open_pages(base: str, cookie: str, count: int) -> list[tuple[Any, Any]]:
    """``count`` live pages: each an open ``/events`` stream, read up to its first line."""
    import asyncio
    from urllib.parse import urlsplit

    where = urlsplit(base)
    opened = []
    for _ in range(count):
        reader, writer = await asyncio.open_connection(where.hostname, where.port)
        writer.write(
            f"GET /events HTTP/1.1\r\nHost: {where.netloc}\r\nCookie: {cookie}\r\n"
            "Accept: text/event-stream\r\n\r\n".encode()
        )
        await writer.drain()
        opened.append((reader, writer))
    for reader, _ in opened:
        head = await asyncio.wait_for(reader.readuntil(b"retry: 3000"), 30)
        assert b" 200 " in head.split(b"\r\n", 1)[0]
    return opened


async def _told_of_a_change(pages: list[tuple[Any, Any]]) -> int:
    import asyncio

    async def told(reader: Any) -> bool:
        try:
            await asyncio.wait_for(reader.readuntil(b"event: change"), 30)
        except (asyncio.TimeoutError, asyncio.IncompleteReadError):
            return False
        return True

    return sum(await asyncio.gather(*(told(reader) for reader, _ in pages)))


def test_a_hundred_open_pages_cost_nothing_while_nothing_changes(backend: Backend) -> None:
    import asyncio

    from toolnexus import Answer
    from toolnexus.durable import Pending, open_store

    request = Request("elc-0", "authorization", "Sign in", "https://auth.example.com/")
    with open_store(backend.spec) as store:  # 200 calls, as a busy store has
        keys = [store.put(Pending("tools/call", "t", {"n": n}, None, ("k",), (request,))) for n in range(200)]
    proc = start(backend.spec)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        base = line.partition("/?token=")[0]
        with httpx.Client(follow_redirects=True, timeout=30) as client:
            assert client.get(line).status_code == 200
            cookie = "; ".join(f"{name}={value}" for name, value in client.cookies.items())

        async def main() -> tuple[float, int]:
            pages = await _open_pages(base, cookie, PAGES)
            await asyncio.sleep(1)  # every page drawn and waiting
            before = _cpu_seconds(proc.pid)
            await asyncio.sleep(4)
            idle = _cpu_seconds(proc.pid) - before
            with open_store(backend.spec) as store:
                store.record(keys[-1], Answer("elc-0", False, None, "declined"))
            told = await _told_of_a_change(pages)
            for _, writer in pages:
                writer.close()
            return idle, told

        idle, told = asyncio.run(main())
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=60)
    # Before watchers, each open page read a page of calls every second by itself on
    # PostgreSQL: 300 pages took 12 s of CPU in 10 s (here, 100 pages would take 1.6 s in 4 s;
    # benchmarks/inbox.py measures 300). Now a page reads only when the store changes (or a
    # deadline it shows passes): 4 s of 100 idle pages is a few ticks.
    assert idle < 0.4, f"{idle:.2f} s of CPU in 4 s with {PAGES} idle pages"
    assert told == PAGES  # and one change reaches every page
