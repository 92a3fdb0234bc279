"""Every way a connection can end, for ``toolnexus call`` and ``toolnexus resume``: one line
naming the server, exit 3, no traceback, no library noise, no warning of the command's own.

The server (``servers/edge_server.py``, over stdio or streamable HTTP, in the 2025-11-25 era
through ``--protocol legacy`` or in 2026-07-28) is killed at the moments that matter: before
its question, 0.5, 3 and 8 seconds after the question is shown (nobody answers: stdin stays
open and silent), and while the answer is sent (the tool kills its own process on the
answer). A lost connection must be found within 5 s of the kill in every era and over
every transport. The runs are started together, a few at a time, by one fixture.
"""

from __future__ import annotations

import os
import select
import signal
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from support import forkserver

pytestmark = [
    pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads child processes from /proc"),
    pytest.mark.timeout(900),  # the runs start together in the first test: 20 commands and their servers
]

PYTHON = sys.executable
TOOLNEXUS = str(Path(sys.executable).with_name("toolnexus"))
TESTS = Path(__file__).resolve().parent
EDGE = str(TESTS / "servers" / "edge_server.py")
FOUND_WITHIN = 5.0
"""Seconds from the server's death to the question withdrawn (the issue's bound)."""
NOISE = ("Traceback", "ExceptionGroup", "warning", "Error in", "Session termination", "SSE stream")


def children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(child) for child in (task / "children").read_text().split()]
    return found


class HttpEdgeServer:
    """The edge server over streamable HTTP on a socket bound here, in a process of its own."""

    def __init__(self) -> None:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        listener.bind(("127.0.0.1", 0))
        listener.listen(64)
        self.url = f"http://127.0.0.1:{listener.getsockname()[1]}/mcp"
        self.proc = forkserver.popen(  # forked: a second of CPU less than a new interpreter
            [PYTHON, EDGE, "--http-fd", str(listener.fileno())],
            pass_fds=(listener.fileno(),),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        listener.close()
        self._wait_until_up()

    def _wait_until_up(self) -> None:
        """Until the server answers HTTP (any status): its start-up is not the command's to wait for."""
        import urllib.error
        import urllib.request

        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        for _ in range(1200):  # a limit against a hang, never a speed check
            if self.proc.poll() is not None:
                raise RuntimeError("the edge server over HTTP exited at start")
            try:
                opener.open(self.url, timeout=5).close()
                return
            except urllib.error.HTTPError:
                return  # it answers: up
            except (urllib.error.URLError, OSError):
                time.sleep(0.1)
        raise RuntimeError("the edge server over HTTP did not come up")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


@dataclass
class Run:
    """One run of ``toolnexus call`` whose server is killed at ``moment``."""

    transport: str  # "stdio" or "http"
    era: str  # "legacy" or "2026"
    moment: str  # "before", "asking-0.5", "asking-3", "asking-8" or "answering"
    code: int | None = None
    stderr: str = ""
    stdout: str = ""
    label: str = ""
    found_after: float | None = field(default=None)
    """Seconds from the kill to the question withdrawn on screen."""

    @property
    def name(self) -> str:
        return f"{self.transport}-{self.era}-{self.moment}"


class Reader:
    """Reads a process's stderr as it comes, without blocking."""

    def __init__(self, proc: forkserver.Forked) -> None:
        assert proc.stderr is not None
        self.proc = proc
        self.fd = proc.stderr.fileno()
        self.text = b""

    def until(self, predicate: object, limit: float = 120) -> bool:
        """Read until ``predicate()`` is true or the process ends; whether it became true."""
        deadline = time.monotonic() + limit  # a limit against a hang, never a speed check
        while not predicate():  # type: ignore[operator]
            if time.monotonic() > deadline:
                return False
            ready, _, _ = select.select([self.fd], [], [], 0.05)
            if ready:
                chunk = os.read(self.fd, 65536)
                if not chunk:
                    return bool(predicate())  # type: ignore[operator]
                self.text += chunk
        return True


def run_one(run: Run, directory: Path) -> Run:
    directory.mkdir(parents=True, exist_ok=True)
    server = HttpEdgeServer() if run.transport == "http" else None
    stdio = forkserver.server_command([PYTHON, EDGE])  # a killed launcher takes its server along
    where = ["--url", server.url] if server is not None else ["--stdio", stdio]
    # The command names a stdio server by its command line, cut to 80 characters (as
    # cli._connection.shorten does), so the expected label depends on the clone's path.
    command = stdio
    command = command if len(command) <= 80 else command[:79] + "…"
    run.label = server.url if server is not None else f"the server `{command}`"
    mark = directory / "asked.mark"
    if run.moment == "before":
        tool = ["slow_ask", f'{{"delay": 60, "mark": "{mark}"}}']
    elif run.moment == "answering":
        tool = ["die_on_answer"]
    else:
        tool = ["ask_new_way"]
    era = ["--protocol", "legacy"] if run.era == "legacy" else []
    proc = forkserver.popen(
        [TOOLNEXUS, "call", *where, *tool, *era],
        stdin=subprocess.PIPE,  # open; written only when the moment is "answering"
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=directory,
        env={k: v for k, v in os.environ.items() if k != "NO_COLOR"},
        start_new_session=True,  # no controlling terminal: the questions go to stderr
    )
    reader = Reader(proc)
    try:
        if run.moment == "answering":
            assert proc.stdin is not None
            proc.stdin.write(b"Ada\n\n")  # the name, then Enter at the review: sent
            proc.stdin.flush()
        elif run.moment == "before":
            assert reader.until(mark.exists), reader.text
        else:
            assert reader.until(lambda: b"name: " in reader.text), reader.text
            time.sleep(float(run.moment.split("-")[1]))  # the moment the issue names
        if run.moment != "answering":
            victim = server.proc.pid if server is not None else children(proc.pid)[0]
            os.kill(victim, signal.SIGKILL)
            killed = time.monotonic()
            if run.moment.startswith("asking"):
                reader.until(lambda: b"(question withdrawn" in reader.text)
                run.found_after = time.monotonic() - killed
        reader.until(lambda: proc.poll() is not None)
        proc.wait(timeout=60)
        assert proc.stdout is not None
        run.stdout = proc.stdout.read().decode()
        reader.until(lambda: False, limit=1)  # the rest of stderr, to its end
        run.stderr = reader.text.decode()
        run.code = proc.returncode
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
        if server is not None:
            server.stop()
    return run


RUNS = [
    Run(transport, era, moment)
    for transport in ("stdio", "http")
    for era in ("legacy", "2026")
    for moment in ("before", "asking-0.5", "asking-3", "asking-8", "answering")
]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Run]:
    root = tmp_path_factory.mktemp("failures")
    with ThreadPoolExecutor(max_workers=6) as pool:
        done = list(pool.map(lambda run: run_one(run, root / run.name), RUNS))
    return {run.name: run for run in done}


@pytest.mark.parametrize("name", [run.name for run in RUNS])
def test_a_lost_connection_is_one_line_and_exit_3(runs: dict[str, Run], name: str) -> None:
    run = runs[name]
    assert run.code == 3, run.stderr
    said = [line for line in run.stderr.splitlines() if line.startswith("toolnexus:")]
    assert said == [f"toolnexus: the connection to {run.label} was lost"], run.stderr
    for noise in NOISE:
        assert noise not in run.stderr, run.stderr
    assert run.stdout == ""


@pytest.mark.parametrize("name", [run.name for run in RUNS if run.moment.startswith("asking")])
def test_a_question_left_open_is_withdrawn_within_5_s_of_the_death(runs: dict[str, Run], name: str) -> None:
    run = runs[name]
    assert "(question withdrawn: the connection ended)" in run.stderr, run.stderr
    assert run.found_after is not None
    assert run.found_after < FOUND_WITHIN, f"found {run.found_after:.1f} s after the kill"


def test_resume_whose_server_dies_on_the_answers_is_one_line_and_exit_3(tmp_path: Path) -> None:
    from toolnexus import Answer
    from toolnexus.durable import open_store

    server = HttpEdgeServer()
    try:

        def toolnexus(*argv: str) -> subprocess.CompletedProcess[str]:
            return forkserver.run(
                [TOOLNEXUS, *argv],
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                cwd=tmp_path,
                timeout=120,
                check=False,
                start_new_session=True,
            )

        parked = toolnexus("call", "--url", server.url, "die_on_answer", "--park", "store.db")
        assert parked.returncode == 0, parked.stderr
        key = parked.stdout.strip()
        with open_store(tmp_path / "store.db", create=False) as store:
            (request,) = store.get(key).requests
            store.record(key, Answer(request.id, True, {"name": "Ada"}))
        resumed = toolnexus("resume", "store.db", key, "--url", server.url)
        assert resumed.returncode == 3, resumed.stderr
        assert resumed.stderr == f"toolnexus: the connection to {server.url} was lost\n"
        assert resumed.stdout == ""
        again = toolnexus("resume", "store.db", key, "--url", server.url)  # the server is gone now
        assert again.returncode == 3, again.stderr
        assert again.stderr.startswith(f"toolnexus: cannot connect to {server.url}: ")
        assert len(again.stderr.splitlines()) == 1, again.stderr
        with open_store(tmp_path / "store.db", create=False) as store:
            assert store.get(key).requests == (request,)  # the record is kept
    finally:
        server.stop()
