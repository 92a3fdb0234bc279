"""Two ``toolnexus resume`` processes started at the same moment on one ready call, against a
server that counts its tool body runs: the call is claimed in the store's lifecycle, as a
worker claims it, so the body runs once; one process prints the result, the other refuses
in one line (exit 2)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client

from servers.counting_server import build_server
from support import forkserver
from toolnexus import Answer, durable
from toolnexus.durable import Pending, SqliteStore

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

KEY = os.urandom(32)
SERVER = Path(__file__).resolve().parent / "servers" / "counting_server.py"


async def _park(path: Path) -> str:
    async with Client(build_server(KEY, None), elicitation_callback=durable.park_only) as client:
        outcome = await durable.call_tool_or_park(client, "job", {"n": 7})
    assert isinstance(outcome, Pending)
    with SqliteStore(path) as store:
        key = store.put(outcome)
        (request,) = store.get(key).requests
        store.record(key, Answer(request.id, True, {"word": "once"}))
    return key


def test_two_resumes_at_once_run_the_tool_body_once(tmp_path: Path) -> None:
    path = tmp_path / "calls.db"
    counts = tmp_path / "runs"
    key = anyio.run(_park, path)
    server = forkserver.server_command(
        [sys.executable, str(SERVER), "--key", KEY.hex(), "--count", str(counts)]
    )
    argv = [sys.executable, "-m", "toolnexus", "resume", str(path), key, "--stdio", server]
    env = {**os.environ, "NO_COLOR": "1"}
    procs = [forkserver.popen(argv, stdin=subprocess.DEVNULL, env=env, text=True) for _ in range(2)]
    ended = [proc.communicate(timeout=240) for proc in procs]
    codes = sorted((proc.returncode, out, err) for proc, (out, err) in zip(procs, ended, strict=True))
    (won, won_out, won_err), (refused, refused_out, refused_err) = codes
    assert (won, refused) == (0, 2), codes
    assert won_out.strip() == "job 7: once", won_err
    assert refused_out == ""
    assert len(refused_err.strip().splitlines()) == 1, refused_err
    assert refused_err.strip().endswith(
        (f"{key} is being resumed elsewhere: nothing to resume", f"{key} is done already: nothing to resume")
    ), refused_err
    (run,) = counts.read_text().splitlines()  # the tool body ran once
    assert run.startswith("7 "), run
    assert run.endswith(" once"), run
    with SqliteStore(path) as store:
        call = store.call(key)
    assert (call.status, call.attempts) == ("done", 1)
    assert call.result is not None
