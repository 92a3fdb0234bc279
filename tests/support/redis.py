"""A real Redis for the tests of a FastMCP server's tasks (``fastmcp-tasks`` keeps them in
Docket, on Redis): Debian's ``redis-server``, started once per session on a free port of
127.0.0.1, nothing saved to disk, stopped at the end. ``scripts/test`` installs it where it
is missing; without it a test that needs it fails with the reason when ``CI=true`` and is
skipped with the reason on a developer's machine (support/needs.py)."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from .needs import unavailable

__all__ = ["redis_url"]

UP_WITHIN = 30
"""Seconds Redis has to accept a connection (a guard against a hang, not a speed check)."""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    """``redis://127.0.0.1:PORT/0`` of a Redis started for the session."""
    server = shutil.which("redis-server")
    if server is None:
        unavailable(
            "Redis", "redis-server is not installed (apt-get install redis-server; scripts/test does)"
        )
    directory = Path(tempfile.mkdtemp(prefix="toolnexus-redis-"))
    pidfile = directory / "redis.pid"
    port = _free_port()
    argv = [server, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
    argv += ["--daemonize", "yes", "--pidfile", str(pidfile), "--dir", str(directory)]
    subprocess.run([*argv, "--logfile", str(directory / "redis.log")], check=True, timeout=UP_WITHIN)
    try:
        deadline = time.monotonic() + UP_WITHIN
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise AssertionError(f"Redis did not listen on {port} within {UP_WITHIN} s") from None
                time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        for _ in range(100):  # its pid file is written as it starts
            if pidfile.exists():
                os.kill(int(pidfile.read_text()), signal.SIGTERM)
                break
            time.sleep(0.05)
        shutil.rmtree(directory, ignore_errors=True)
