"""``toolnexus inbox STORE`` as a process: the one line it prints, the page it serves, its
logs on stderr (never the token), and Ctrl-C."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

import httpx2 as httpx
import pytest

from servers.inbox_server import in_a_thread, park
from support import forkserver
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
