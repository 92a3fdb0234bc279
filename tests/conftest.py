"""Shared fixtures: the anyio backend, and the elicitation server on each transport.

The server modules import the SDK's server stack, so they are imported only by the fixtures
that need them.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from mcp import StdioServerParameters

    from servers.harness import Target

TESTS_DIR = Path(__file__).resolve().parent
TRANSPORTS = ["inprocess", "stdio", "http"]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(params=TRANSPORTS)
def target(request: pytest.FixtureRequest) -> Target:
    """The elicitation server on each transport: a fresh in-process ``MCPServer``, a stdio
    subprocess (started by ``mcp.Client`` itself) or the shared streamable HTTP server."""
    if request.param == "inprocess":
        from servers.elicit_server import build_server

        return build_server()[0]
    if request.param == "stdio":
        return stdio_server_parameters()
    url: str = request.getfixturevalue("http_server_url")
    return url


def stdio_server_parameters() -> StdioServerParameters:
    """How ``mcp.Client`` starts the elicitation server as a stdio subprocess."""
    from mcp import StdioServerParameters

    return StdioServerParameters(
        command=sys.executable, args=["-m", "servers.elicit_server", "stdio"], cwd=TESTS_DIR
    )


@pytest.fixture(scope="session")
def http_server_url() -> Iterator[str]:
    """The elicitation server over streamable HTTP on 127.0.0.1, in a subprocess.

    The fixture binds a free port itself and hands the listening socket to the child,
    so no other process can take the port between choosing and serving it. It waits
    until ``/health`` answers and stops the process at teardown.
    """
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    port = listener.getsockname()[1]
    with tempfile.TemporaryFile() as errlog:
        proc = subprocess.Popen(
            [sys.executable, "-m", "servers.elicit_server", "http", "--fd", str(listener.fileno())],
            cwd=TESTS_DIR,
            pass_fds=(listener.fileno(),),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=errlog,
        )
        listener.close()
        try:
            _wait_until_up(proc, f"http://127.0.0.1:{port}/health", errlog)
            yield f"http://127.0.0.1:{port}/mcp"
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _wait_until_up(proc: subprocess.Popen[bytes], health_url: str, errlog: IO[bytes]) -> None:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # never via a proxy
    deadline = time.monotonic() + 30
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
            pytest.fail("the HTTP server did not come up within 30 s")
        time.sleep(0.05)
