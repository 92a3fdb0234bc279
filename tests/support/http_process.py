"""Start a server process that serves streamable HTTP on 127.0.0.1, and stop it again.

The caller binds a free port and hands the listening socket to the child, so no other
process can take the port between choosing and serving it; connections made before the
child accepts wait in the socket's queue.
"""

from __future__ import annotations

import contextlib
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

import pytest

from . import forkserver

UP_WITHIN = 90
"""Seconds a server has to answer its health check (within a test's 120 s): a guard against one
that hangs, not a speed check (a loaded machine took more than 30 s to start one)."""


@contextlib.contextmanager
def http_server_process(
    command: Callable[[int], list[str]], *, cwd: Path | None = None, health_path: str | None = None
) -> Iterator[str]:
    """Run ``command(fd)`` (which serves on the inherited listening socket ``fd``) and yield
    the base URL ``http://127.0.0.1:PORT``. With ``health_path``, wait until it answers 200.
    The process is terminated (killed after 10 s) on exit."""
    # IPPROTO_TCP: asyncio turns Nagle's algorithm off on its connections only then (see
    # toolnexus._demo_server.tcp_listener), else each keep-alive request waits 40 ms.
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    port = listener.getsockname()[1]
    with tempfile.TemporaryFile() as errlog:
        argv = command(listener.fileno())
        # This interpreter's servers are forked by the fork server (a second of CPU less each).
        start: Callable[..., subprocess.Popen[bytes] | forkserver.Forked] = (
            forkserver.popen if forkserver.handles(argv) else subprocess.Popen
        )
        proc = start(
            argv,
            cwd=cwd,
            pass_fds=(listener.fileno(),),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=errlog,
        )
        listener.close()
        base = f"http://127.0.0.1:{port}"
        try:
            if health_path is not None:
                _wait_until_up(proc, base + health_path, errlog)
            yield base
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


class RestartableHttpServer:
    """A server process serving streamable HTTP on one port of 127.0.0.1, killed (SIGKILL) and
    started again on that same port at will: ``command(fd)`` serves on the inherited listening
    socket ``fd``; ``base`` is ``http://127.0.0.1:PORT`` once started."""

    def __init__(
        self,
        command: Callable[[int], list[str]],
        *,
        cwd: Path | None = None,
        env: dict[str, str] | None = None,
        health_path: str = "/health",
    ) -> None:
        self.command = command
        self.cwd = cwd
        self.env = env
        self.health_path = health_path
        self.port = 0
        self.proc: subprocess.Popen[bytes] | forkserver.Forked | None = None

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # the port a killed one had
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self.port = listener.getsockname()[1]
        argv = self.command(listener.fileno())
        start: Callable[..., subprocess.Popen[bytes] | forkserver.Forked] = (
            forkserver.popen if forkserver.handles(argv) else subprocess.Popen
        )
        with tempfile.TemporaryFile() as errlog:
            self.proc = start(
                argv,
                cwd=self.cwd,
                env=self.env,
                pass_fds=(listener.fileno(),),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=errlog,
            )
            listener.close()
            _wait_until_up(self.proc, self.base + self.health_path, errlog)

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()


def _wait_until_up(
    proc: subprocess.Popen[bytes] | forkserver.Forked, health_url: str, errlog: IO[bytes]
) -> None:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # never via a proxy
    deadline = time.monotonic() + UP_WITHIN
    while True:
        if proc.poll() is not None:
            errlog.seek(0)
            pytest.fail(
                f"the HTTP server exited with {proc.returncode}:\n{errlog.read().decode(errors='replace')}"
            )
        try:
            with opener.open(health_url, timeout=5) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        if time.monotonic() > deadline:
            pytest.fail(f"the HTTP server did not come up within {UP_WITHIN} s")
        time.sleep(0.05)


@contextlib.contextmanager
def served_mcp_url(module: str, *args: str) -> Iterator[str]:
    """One of the tests' MCP servers (``servers.<module>``, run as ``-m servers.<module> http
    --fd N ARGS``) over streamable HTTP on 127.0.0.1, up: its ``/mcp`` URL."""
    from .processes import TESTS_DIR

    with http_server_process(
        lambda fd: [sys.executable, "-m", f"servers.{module}", "http", "--fd", str(fd), *args],
        cwd=TESTS_DIR,
        health_path="/health",
    ) as base:
        yield base + "/mcp"
