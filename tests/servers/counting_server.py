"""A server that counts how often each tool body runs, for the worker tests.

``job(n)`` asks one question (the 2026-07-28 way, through ``Resolve``) and, once answered,
appends ``"<n> <worker pid> <answer>\\n"`` to the count file, the worker pid being the
process that started this server (one ``write`` on a file opened ``O_APPEND``, so lines from
many server processes never interleave), and returns ``"job <n>: <answer>"``. Its
``requestState`` is sealed with a key given on the command line, so every copy of the server
(one per worker, each over stdio) accepts the state any other sealed.

With ``--delay SECONDS`` the body, once counted, takes that long before it returns (a tool
that works a while, for the tests that cut the database meanwhile).

Run: ``python counting_server.py --key HEX --count FILE [--name NAME] [--delay SECONDS]`` (stdio).
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Annotated

from mcp.server.mcpserver import Elicit, ElicitationResult, MCPServer, Resolve
from mcp.server.request_state import RequestStateSecurity
from pydantic import BaseModel


class Go(BaseModel):
    """The question ``job`` asks."""

    word: str


def _ask(n: int) -> Elicit[Go]:
    return Elicit(f"A word for job {n}?", Go)


STARTED_BY = "TOOLNEXUS_TEST_STARTED_BY"


def build_server(key: bytes, count_file: str | None, name: str = "counter", delay: float = 0.0) -> MCPServer:
    server = MCPServer(name, request_state_security=RequestStateSecurity(keys=[key], ttl=3600))
    # The worker that started this server, read now: once that worker is killed, the server
    # (which may still run the call it was sent) belongs to init, and getppid() says 1. A
    # server forked for its worker by the tests' fork server is told who started it
    # (support/launch.py), its own parent being the fork server.
    worker = int(os.environ.get(STARTED_BY, os.getppid()))

    def count(line: str) -> None:
        if count_file is None:
            return
        fd = os.open(count_file, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line.encode())
        finally:
            os.close(fd)

    @server.tool()
    def job(n: int, go: Annotated[ElicitationResult[Go], Resolve(_ask)]) -> str:
        """Runs once per call: counted."""
        word = go.data.word if go.action == "accept" else go.action
        count(f"{n} {worker} {word}\n")
        if delay:
            time.sleep(delay)
        return f"job {n}: {word}"

    return server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--key", required=True)
    parser.add_argument("--count", required=True)
    parser.add_argument("--name", default="counter")
    parser.add_argument("--delay", type=float, default=0.0)
    args = parser.parse_args()
    build_server(bytes.fromhex(args.key), args.count, args.name, args.delay).run("stdio")


if __name__ == "__main__":
    # Run under its importable name: the SDK keys a Resolve question by its function's module
    # and name, so the parking process (which imported servers.counting_server) and this one
    # must agree on it.
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from servers.counting_server import main as importable_main

    importable_main()
