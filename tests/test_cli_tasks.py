"""``toolnexus call`` on a tool that runs as a task (the tasks extension, MCP 2026-07-28,
which the command declares): its progress on stderr (plain lines into a pipe, one line
redrawn at a terminal), its questions asked as any, its failures one line, Ctrl-C sending
``tasks/cancel`` and exiting 130, a server lost while its task is polled exiting 3.
The server: tests/servers/tasks_server.py over stdio."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from support import forkserver
from support.environment import environment
from support.processes import TESTS_DIR
from support.terminal import Terminal, children

SERVER = forkserver.server_command([sys.executable, "-m", "servers.tasks_server", "stdio"])
"""The tasks server, forked by the fork server (milliseconds of CPU where a start is a second)."""


def command(*args: str) -> list[str]:
    """``toolnexus call`` on the tasks server, with ``args``."""
    return [sys.executable, "-m", "toolnexus", "call", "--stdio", SERVER, *args]


def call(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return forkserver.run(
        command(*args),
        input=stdin,
        capture_output=True,
        text=True,
        cwd=TESTS_DIR,
        timeout=120,
        check=False,
    )


def test_into_a_pipe_each_status_is_one_plain_line_and_the_result_goes_to_stdout() -> None:
    done = call("progress", '{"steps": 3}')
    assert done.returncode == 0, done.stderr
    assert done.stdout == "all steps done\n"
    lines = done.stderr.splitlines()
    assert [re.sub(r"\(\d+ s\)$", "(N s)", line) for line in lines] == [
        "toolnexus: task progress: working (N s)",
        "toolnexus: task progress: completed: step 3 of 3 (N s)",  # the messages between: one a 20 s
    ]
    assert "\r" not in done.stderr
    assert "\x1b" not in done.stderr


def test_a_tasks_question_is_asked_as_any_and_its_answer_reaches_the_task() -> None:
    done = call("approve", '{"item": "deploy"}', stdin="yes\n\n")  # the answer, then Send
    assert done.returncode == 0, done.stderr
    assert done.stdout == "deploy: {'action': 'accept', 'content': {'approve': 'yes'}}\n"
    assert "Approve deploy?" in done.stderr
    assert "toolnexus: task approve: input required" in done.stderr


def test_a_failed_task_and_a_broken_one_are_one_line_and_exit_1() -> None:
    failed = call("fail")
    broken = call("garbage")
    assert failed.returncode == broken.returncode == 1
    assert failed.stdout == broken.stdout == ""
    assert failed.stderr.splitlines()[-1] == "toolnexus: fail failed: the report could not be built"
    last = broken.stderr.splitlines()[-1]
    assert re.fullmatch(
        r"toolnexus: task \S+ of garbage: tasks/get answered with something that is not a task .*", last
    )


def test_at_a_terminal_the_line_is_redrawn_and_ctrl_c_cancels_the_task_and_exits_130(tmp_path: Path) -> None:
    log = tmp_path / "server.err"
    term = Terminal(
        command("--server-stderr", str(log), "forever"),
        environment(tmp_path, TERM="xterm-256color"),
        TESTS_DIR,
    )
    try:
        term.wait_for("toolnexus: task forever: working: poll ")
        term.wait_for("toolnexus: task forever: working: poll ")  # redrawn, on the same line
        term.proc.send_signal(signal.SIGINT)
        code = term.finish()
    finally:
        term.kill()
    assert code == 130
    assert "\r\x1b[K" in term.screen
    assert term.plain.rstrip().endswith("toolnexus: interrupted")
    assert re.search(r"^tasks/cancel \S+ \(forever\)$", log.read_text(), re.MULTILINE), log.read_text()


@pytest.mark.parametrize(
    ("tool", "moment"),
    [("forever", "toolnexus: task forever: working"), ("approve", "Approve deploy?")],
    ids=["while-it-works", "while-its-question-is-shown"],
)
def test_a_server_killed_while_its_task_is_polled_is_one_line_and_exit_3(tool: str, moment: str) -> None:
    """The server killed while its task works, and while the task's question waits for an
    answer on standard input (a pipe kept open, nothing written)."""
    proc = forkserver.popen(
        command(tool, '{"item": "deploy"}'),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=TESTS_DIR,
    )
    try:
        assert proc.stderr is not None
        said: list[str] = []
        while not said or moment not in said[-1]:  # up to the moment (or the command's end)
            line = proc.stderr.readline()
            assert line, "".join(said)
            said.append(line)
        (server,) = children(proc.pid)
        subprocess.run(["kill", "-KILL", str(server)], check=True)
        # Standard input stays open until the command has ended: closed now, its end of input
        # would race the lost connection for the question on screen.
        proc.wait(timeout=60)
        out, err = proc.communicate(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 3, err
    assert out == ""
    last = err.splitlines()[-1]
    assert last.startswith("toolnexus: the connection to the server `"), err
    assert last.endswith("` was lost"), err
