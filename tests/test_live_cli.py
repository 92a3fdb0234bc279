"""``toolnexus call ... --inbox STORE`` as processes: a question asked live in a store while the
call waits, answered from another process with ``toolnexus answer``; the server killed before
its question, while it waits, and while its answer is sent, in both eras and over stdio and
streamable HTTP; ``--browser``'s one line; ``--park``'s advice for a server that asks mid-call.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx2 as httpx
import pytest

from support import forkserver
from support.environment import environment as support_environment
from toolnexus.durable import open_store
from toolnexus.errors import StoreError

TESTS = Path(__file__).resolve().parent
PYTHON = sys.executable
TOOLNEXUS = str(Path(sys.executable).with_name("toolnexus"))
EDGE_SCRIPT = str(TESTS / "servers" / "edge_server.py")
EDGE = forkserver.server_command([PYTHON, EDGE_SCRIPT])
ERA_FLAGS = {"legacy": ["--protocol", "legacy"], "2026": []}
ASKS = {"legacy": "ask_legacy_way", "2026": "ask_new_way"}


def children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(child) for child in (task / "children").read_text().split()]
    return found


@contextmanager
def http_edge_server() -> Iterator[tuple[str, forkserver.Forked]]:
    """The edge server over streamable HTTP, as a process this test can kill."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    port = listener.getsockname()[1]
    proc = forkserver.popen(
        [PYTHON, EDGE_SCRIPT, "--http-fd", str(listener.fileno())],
        pass_fds=(listener.fileno(),),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    listener.close()
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        for _ in range(300):  # a limit against a hang, never a speed check
            try:
                httpx.get(url, timeout=2)
                break
            except httpx.TransportError:
                time.sleep(0.05)
        yield url, proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def start_call(tmp_path: Path, target: list[str], store: str, *argv: str) -> forkserver.Forked:
    """``toolnexus call TARGET --inbox STORE ARGV``, standard input not a terminal: the question
    is asked in the store only."""
    return forkserver.popen(
        [TOOLNEXUS, "call", *target, "--inbox", store, *argv],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=support_environment(tmp_path),
        cwd=tmp_path,
        start_new_session=True,
    )


def wait_for_question(spec: str, proc: forkserver.Forked, timeout: float = 60) -> str:
    """The key of the live question, once it waits in the store."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if os.path.exists(spec) or spec.startswith("postgresql://"):
            try:
                with open_store(spec, create=False, read_only=True) as store:
                    live = store.calls(status="live")
            except StoreError as err:  # the file made, its tables not yet
                if "holds no toolnexus store" not in str(err):
                    raise
                live = []
            if live:
                return live[0].key
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    raise AssertionError("no live question within the time")


def answer(tmp_path: Path, spec: str, key: str, name: str) -> subprocess.CompletedProcess[str]:
    """``toolnexus answer STORE KEY`` from another process, the name piped in."""
    return forkserver.run(
        [TOOLNEXUS, "answer", spec, key],
        input=f"{name}\n\n",
        capture_output=True,
        text=True,
        env=support_environment(tmp_path),
        cwd=tmp_path,
        timeout=60,
        start_new_session=True,
    )


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("toolnexus:")]


@pytest.mark.parametrize("era", ["legacy", "2026"])
def test_a_live_question_is_answered_from_another_terminal_while_the_call_waits(
    tmp_path: Path, era: str
) -> None:
    spec = str(tmp_path / "questions.db")
    proc = start_call(tmp_path, ["--stdio", EDGE], spec, ASKS[era], *ERA_FLAGS[era])
    key = wait_for_question(spec, proc)
    answered = answer(tmp_path, spec, key, "Ada")
    assert answered.returncode == 0, answered.stderr
    assert f"{key} is answered: the call that asked it goes on" in answered.stderr
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "Ada" in out
    assert error_lines(err) == [
        f"toolnexus: a question waits in {spec} as {key}: toolnexus answer {spec} {key}"
    ]
    with open_store(spec, create=False, read_only=True) as store:
        (call,) = store.calls()
    assert (call.status, call.live, call.server) == ("answered", True, "edge-server")


def _kill(proc: forkserver.Forked, server: forkserver.Forked | None) -> float:
    """Kill the server (the command's stdio child, or the HTTP server); when it was killed."""
    pid = server.pid if server is not None else children(proc.pid)[0]
    os.kill(pid, signal.SIGKILL)
    return time.monotonic()


def _withdrawn_within(spec: str, killed: float, limit: float) -> str:
    """The reason of the question's withdrawal, asserted to come within ``limit`` seconds."""
    while True:
        with open_store(spec, create=False, read_only=True) as store:
            (call,) = store.calls()
        if call.status == "withdrawn":
            assert time.monotonic() - killed < limit, time.monotonic() - killed
            return call.error or ""
        assert time.monotonic() - killed < 30, call.status
        time.sleep(0.05)


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads child processes from /proc")
@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize("era", ["legacy", "2026"])
def test_the_server_killed_while_its_question_waits_live_withdraws_it_and_exits_3(
    tmp_path: Path, era: str, transport: str
) -> None:
    spec = str(tmp_path / "questions.db")
    with contextmanager_or_none(transport) as http:
        target = ["--url", http[0]] if http is not None else ["--stdio", EDGE]
        proc = start_call(tmp_path, target, spec, ASKS[era], *ERA_FLAGS[era])
        key = wait_for_question(spec, proc)
        killed = _kill(proc, http[1] if http is not None else None)
        reason = _withdrawn_within(spec, killed, 5.0)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 3, err
    assert out == ""
    assert "ended before an answer came" in reason
    last = error_lines(err)[-1]
    assert last.startswith("toolnexus: the connection to "), err
    assert last.endswith(" was lost"), err
    assert len(error_lines(err)) == 2  # where it waited, then the one line of the failure
    assert "Traceback" not in err
    with open_store(spec, create=False) as store:
        assert store.answers(key) == {}  # nothing recorded as sent
        refused = answer(tmp_path, spec, key, "Late")
    assert refused.returncode == 2
    assert "was withdrawn" in refused.stderr
    with open_store(spec, create=False, read_only=True) as store:
        assert store.answers(key) == {}


@contextmanager
def contextmanager_or_none(transport: str) -> Iterator[tuple[str, forkserver.Forked] | None]:
    if transport == "http":
        with http_edge_server() as served:
            yield served
    else:
        yield None


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads child processes from /proc")
@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize("era", ["legacy", "2026"])
def test_the_server_killed_before_its_question_leaves_nothing_and_exits_3(
    tmp_path: Path, era: str, transport: str
) -> None:
    spec = str(tmp_path / "questions.db")
    mark = tmp_path / "reached"
    arguments = f'{{"delay": 30, "mark": "{mark}"}}'
    with contextmanager_or_none(transport) as http:
        target = ["--url", http[0]] if http is not None else ["--stdio", EDGE]
        proc = start_call(tmp_path, target, spec, "slow_ask", arguments, *ERA_FLAGS[era])
        deadline = time.monotonic() + 60
        while not mark.exists():
            assert time.monotonic() < deadline
            assert proc.poll() is None
            time.sleep(0.05)
        _kill(proc, http[1] if http is not None else None)
        out, err = proc.communicate(timeout=60)
    assert (proc.returncode, out) == (3, "")
    assert error_lines(err)[-1].endswith(" was lost"), err
    assert len(error_lines(err)) == 1
    with open_store(spec, create=False, read_only=True) as store:
        assert store.calls() == []  # no question was ever put


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads child processes from /proc")
@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize("era", ["legacy", "2026"])
def test_the_server_that_dies_as_its_answer_is_sent_exits_3(tmp_path: Path, era: str, transport: str) -> None:
    spec = str(tmp_path / "questions.db")
    with contextmanager_or_none(transport) as http:
        target = ["--url", http[0]] if http is not None else ["--stdio", EDGE]
        proc = start_call(tmp_path, target, spec, "die_on_answer", *ERA_FLAGS[era])
        key = wait_for_question(spec, proc)
        assert answer(tmp_path, spec, key, "Ada").returncode == 0
        out, err = proc.communicate(timeout=60)
    assert (proc.returncode, out) == (3, "")
    assert error_lines(err)[-1].endswith(" was lost"), err
    with open_store(spec, create=False, read_only=True) as store:
        assert store.call(key).status == "answered"  # the answer was given; the server died with it


def test_browser_serves_an_inbox_for_the_call_and_prints_its_link(tmp_path: Path) -> None:
    proc = forkserver.popen(
        [TOOLNEXUS, "call", "--stdio", EDGE, "--browser", "ask_legacy_way", "--protocol", "legacy"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=support_environment(tmp_path),
        cwd=tmp_path,
        start_new_session=True,
    )
    assert proc.stderr is not None
    line = proc.stderr.readline()
    prefix = "toolnexus: answer this call's questions in your browser: "
    assert line.startswith(prefix), line
    link = line[len(prefix) :].strip()
    assert link.startswith("http://127.0.0.1:")
    assert "/?token=" in link
    with httpx.Client(follow_redirects=True, timeout=30) as client:
        for _ in range(600):
            page = client.get(link)
            if "/calls/" in page.text:
                break
            time.sleep(0.05)
        key = page.text.split('href="/calls/', 1)[1].split('"', 1)[0]
        form = client.get(f"{link.split('/?')[0]}/calls/{key}").text
        csrf = form.split('name="csrf" value="', 1)[1].split('"', 1)[0]
        action = form.split('<form method="post" action="', 1)[1].split('"', 1)[0]
        posted = client.post(
            link.split("/?")[0] + action, data={"csrf": csrf, "action": "accept", "f0": "Grace"}
        )
        assert posted.status_code == 200, posted.text[:500]
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "Grace" in out
    with pytest.raises(httpx.TransportError):  # it stopped serving with the call
        httpx.get(link, timeout=2)


def test_park_refused_for_a_server_that_asks_mid_call_points_at_inbox(tmp_path: Path) -> None:
    spec = str(tmp_path / "parked.db")
    for flags in (["--protocol", "legacy"], []):
        done = forkserver.run(
            [TOOLNEXUS, "call", "--stdio", EDGE, "--park", spec, "ask_legacy_way", *flags],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            env=support_environment(tmp_path),
            cwd=tmp_path,
            timeout=60,
        )
        assert done.returncode in (1, 2), done.stderr
        (line,) = error_lines(done.stderr)
        assert "--inbox STORE" in line, line
        assert not os.path.exists(spec)
