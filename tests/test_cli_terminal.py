"""``toolnexus demo`` at an interactive terminal: driven through a pseudo-terminal.

The command runs with a pty as its controlling terminal (so Ctrl-C is a real SIGINT from
the terminal driver), and the test types at its prompts and reads what it shows.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from support import forkserver
from support.environment import environment
from support.terminal import ANSI, Terminal, children, waits_for_input

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")

SIGN_IN_URL = "https://auth.example.com/authorize?client_id=toolnexus-demo&scope=deploy"


def test_demo_at_an_interactive_terminal(tmp_path: Path) -> None:
    env = environment(tmp_path, TERM="xterm-256color")
    term = Terminal([sys.executable, "-m", "toolnexus", "demo"], env, tmp_path)
    try:
        # A form: the enum by number, then Ctrl-C at the integer cancels this one question.
        term.wait_for("environment: ")
        term.type(b"2\r")
        term.wait_for("replicas: ")
        term.type(b"\x03")
        term.wait_for("Result: Deploy cancelled: nothing was deployed.")
        # A URL: shown in full, its host highlighted in colour; y opens it.
        term.wait_for("Open this URL in your browser? [y/N] ")
        assert f"URL:  {SIGN_IN_URL}" in ANSI.sub("", term.screen)
        assert re.search(r"Host: \x1b\[[0-9;]+mauth\.example\.com\x1b\[0m", term.screen)
        term.type(b"y\r")
        term.wait_for("Result: Sign-in page opened")
        # The password form: the guard; y goes on, and the password is typed without echo.
        term.wait_for("Continue anyway? [y/N] ")
        term.type(b"y\r")
        term.wait_for("username: ")
        term.type(b"ada\r")
        term.wait_for("password: ")
        term.type(b"hunter2\r")
        term.wait_for("Send? [Y/n/e] ")
        term.type(b"\r")
        term.wait_for("Result: Connected to the demo database as ada.")
        assert term.finish() == 0
    finally:
        term.kill()
    screen = ANSI.sub("", term.screen)
    # What was typed is echoed by the terminal itself, once (the resolver echoes only without one).
    assert screen.count("environment: 2\r\n") == 1
    assert "(end of input)" not in screen
    assert (tmp_path / "opened.txt").read_text().splitlines() == [SIGN_IN_URL]
    assert "username: ada\r\n" in screen  # an ordinary answer is echoed by the terminal
    assert "hunter2" not in screen
    assert "Password: ***" in screen


@pytest.mark.skipif(
    not Path(f"/proc/self/task/{os.getpid()}/children").exists(), reason="reads child processes from /proc"
)
def test_ctrl_c_outside_a_question_stops_the_command_with_130(tmp_path: Path) -> None:
    proc = forkserver.popen(  # (a forked command takes Ctrl-C as a new interpreter does)
        [sys.executable, "-m", "toolnexus", "call", "--stdio", "sleep 600", "any_tool"],
        stdin=subprocess.DEVNULL,
        text=True,
        cwd=tmp_path,
    )
    try:
        # The server (a `sleep` that never answers) is started: the command waits on it.
        for _ in range(600):  # a limit against a hang, never a speed check
            if children(proc.pid) or proc.poll() is not None:
                break
            time.sleep(0.1)
        assert children(proc.pid), "the server process never started"
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130
    assert err.strip() == "toolnexus: interrupted"
    assert out == ""


def demo_at_a_terminal(tmp_path: Path) -> Terminal:
    env = environment(tmp_path, TERM="xterm-256color")
    return Terminal([sys.executable, "-m", "toolnexus", "demo"], env, tmp_path)


def test_a_second_ctrl_c_at_a_prompt_quits_with_130(tmp_path: Path) -> None:
    """A Ctrl-C at each of the demo's prompts: the first cancels its question and says how to
    quit; one at the next prompt within QUIT_WINDOW of the last stops the whole command. On a
    loaded machine the next prompt may come later than that: its Ctrl-C must then count as a
    first one again (the window restarts), and the test goes on to the prompt after."""
    from toolnexus.console import QUIT_WINDOW

    prompts = ["environment: ", "Open this URL in your browser? [y/N] ", "Continue anyway? [y/N] "]
    term = demo_at_a_terminal(tmp_path)
    quit_at = None
    try:
        last_ctrl_c = None
        for number, prompt in enumerate(prompts):
            term.wait_for(prompt)
            shown = time.monotonic()
            term.type(b"\x03")
            if last_ctrl_c is not None and shown - last_ctrl_c < QUIT_WINDOW - 0.5:
                quit_at = number
                break
            # A first Ctrl-C (or one too late to be a second): the question is cancelled.
            term.wait_for("(press Ctrl-C again within 5 s to quit)")
            last_ctrl_c = time.monotonic()
        if quit_at is None:
            pytest.skip("no prompt came within the quit window of the Ctrl-C before it (a loaded machine)")
        code = term.finish()
    finally:
        term.kill()
    screen = ANSI.sub("", term.screen)
    assert code == 130
    assert screen.rstrip().endswith("toolnexus: interrupted")
    assert "Result: Deploy cancelled: nothing was deployed." in screen
    assert f"[{quit_at + 2}/3]" not in screen
    assert "Traceback" not in screen
    assert not (tmp_path / "opened.txt").exists()


def test_ctrl_d_at_a_prompt_quits_with_130(tmp_path: Path) -> None:
    term = demo_at_a_terminal(tmp_path)
    try:
        term.wait_for("environment: ")
        term.type(b"\x04")  # end of input: at a terminal, the user wants to stop
        code = term.finish()
    finally:
        term.kill()
    screen = ANSI.sub("", term.screen)
    assert code == 130
    assert "→ cancelled" in screen
    assert screen.rstrip().endswith("toolnexus: interrupted")
    assert "[2/3]" not in screen
    assert "Traceback" not in screen


def test_stdout_to_a_file_keeps_the_questions_on_the_terminal(tmp_path: Path) -> None:
    """``toolnexus call ... > out.txt`` at a terminal: the questions are on the terminal
    (``/dev/tty``), the file holds the result alone."""
    result_file = tmp_path / "out.txt"
    demo = forkserver.server_command([sys.executable, "-m", "toolnexus._demo_server"])
    with result_file.open("w") as out:
        term = Terminal(
            [sys.executable, "-m", "toolnexus", "call", "--stdio", demo, "deploy"],
            dict(os.environ, TERM="xterm-256color"),
            tmp_path,
            stdout=out,
        )
    try:
        term.wait_for("environment: ")
        term.type(b"production\r")
        term.wait_for("replicas: ")
        term.type(b"3\r")
        term.wait_for("notify [Y/n]: ")
        term.type(b"\r")
        term.wait_for("note [routine deploy]: ")
        term.type(b"\r")
        term.wait_for("Send? [Y/n/e] ")
        term.type(b"\r")
        assert term.finish() == 0
    finally:
        term.kill()
    assert result_file.read_text() == (
        "Deployed to production with 3 replicas; the team is notified; note: routine deploy.\n"
    )
    assert "Deployed to production" not in ANSI.sub("", term.screen)


def test_server_text_is_escaped_at_a_terminal(tmp_path: Path) -> None:
    edge = Path(__file__).resolve().parent / "servers" / "edge_server.py"
    env = dict(os.environ, TERM="xterm-256color")
    term = Terminal(
        [
            sys.executable,
            "-m",
            "toolnexus",
            "call",
            "--stdio",
            forkserver.server_command([sys.executable, str(edge)]),
            "hostile_text",
            "--protocol",
            "legacy",
        ],
        env,
        tmp_path,
    )
    try:
        term.wait_for("result: ")
        assert term.finish() == 0
    finally:
        term.kill()
    screen = term.screen
    assert (
        "result: \\x1b]0;pwned\\x07\\x1b[2J\\x1b[8mhidden\\x1b[0m Password: \\u202eevil\\u202c end" in screen
    )
    assert "\x1b]0;" not in screen
    assert "\x1b[2J" not in screen
    assert "\u202e" not in screen
    assert "toolnexus: warning: the server logs: log: \\x1b]0;pwned" in screen  # the log line, escaped


@pytest.mark.skipif(
    not Path(f"/proc/self/task/{os.getpid()}/children").exists(), reason="reads child processes from /proc"
)
def test_a_question_at_the_terminal_is_withdrawn_when_the_server_dies(tmp_path: Path) -> None:
    """The main thread blocks in input() (line editing); the server dies: the question goes
    away at once and the command exits 3, without a keystroke."""
    edge = Path(__file__).resolve().parent / "servers" / "edge_server.py"
    argv = [
        sys.executable,
        "-m",
        "toolnexus",
        "call",
        "--stdio",
        forkserver.server_command([sys.executable, str(edge)]),
        "ask_legacy_way",
    ]
    term = Terminal([*argv, "--protocol", "legacy"], dict(os.environ, TERM="xterm-256color"), tmp_path)
    try:
        term.wait_for("name: ")
        servers = children(term.proc.pid)
        assert len(servers) == 1
        os.kill(servers[0], signal.SIGKILL)
        code = term.finish()
    finally:
        term.kill()
    screen = ANSI.sub("", term.screen)
    assert code == 3, screen
    assert "(question withdrawn: the connection ended)" in screen
    assert screen.rstrip().endswith("was lost")
    assert "Traceback" not in screen


def test_a_2026_question_left_open_at_a_terminal_shows_no_warning(tmp_path: Path) -> None:
    """Over HTTP on 2026-07-28 the command watches the server while a question is shown (no
    ping: the SDK refuses it there, with a warning that used to land in the prompt). The
    question stays open past a few probes; nothing but the question is on screen."""
    from support.http_process import http_server_process

    edge = Path(__file__).resolve().parent / "servers" / "edge_server.py"
    with http_server_process(lambda fd: [sys.executable, str(edge), "--http-fd", str(fd)]) as base:
        argv = [sys.executable, "-m", "toolnexus", "call", "--url", base + "/mcp", "ask_new_way"]
        term = Terminal(argv, dict(os.environ, TERM="xterm-256color"), tmp_path)
        try:
            term.wait_for("name: ")
            time.sleep(3.5)  # the moment under test: a question left open past three probes
            term.type(b"Ada\r")
            term.wait_for("Send? [Y/n/e] ")
            term.type(b"\r")
            term.wait_for("accept: Ada")
            assert term.finish() == 0
        finally:
            term.kill()
    screen = term.plain
    assert "name: Ada\r\n" in screen
    assert "warning" not in screen
    assert "Deprecat" not in screen


BUSY_THREAD_THEN_PROMPT = """
import os, select, threading, time
r, w = os.pipe()
def pump():  # as the command's stderr pump: a poll of one pipe, the whole time
    waiting = select.poll()
    waiting.register(r, select.POLLIN)
    waiting.poll()
threading.Thread(target=pump, daemon=True).start()
time.sleep(1.5)
print("prompt: ", end="", flush=True)
input()
"""


def test_the_harness_types_a_ctrl_c_only_once_the_main_thread_waits_for_a_key(tmp_path: Path) -> None:
    """Another thread waiting on a pipe is not the command waiting for its user: a Ctrl-C
    typed then would land before the prompt's read and stay pending (the CI failure of
    ``test_a_second_ctrl_c_at_a_prompt_quits_with_130``, with the stderr pump in a poll)."""
    term = Terminal([sys.executable, "-c", BUSY_THREAD_THEN_PROMPT], environment(tmp_path), tmp_path)
    try:
        assert term.wait_reading(limit=30)
        # The prompt was written before the read began, so it is on the screen already.
        term.read_waiting()
        assert "prompt: " in term.plain
        term.type(b"\x03")
        code = term.finish()
    finally:
        term.kill()
    assert code != 0
    assert "KeyboardInterrupt" in term.plain


@pytest.mark.parametrize(
    ("call", "machine", "waits"),
    [
        ("0 0x0 0x7f4ca73f1b03 0x1", "x86_64", True),  # read(0, ..., 1): readline's key
        ("0 0x3 0x7f4ca73f1b03 0x1", "x86_64", False),  # a read of another descriptor
        ("23 0x1 0x7ffd 0x0", "x86_64", True),  # select(1, {0}, ...)
        ("270 0x6 0x7ffd 0x0", "x86_64", False),  # pselect6 over descriptors 0-5
        ("7 0x7f4ca714d990 0x1 0xffffffff", "x86_64", True),  # poll of one descriptor
        ("271 0x7f4ca714d990 0x2 0x0", "x86_64", False),  # ppoll of two
        ("232 0x3 0x7f4ca399ef70 0x3", "x86_64", False),  # epoll_wait: the event loop
        ("running", "x86_64", False),
        ("63 0x0 0xffff 0x1", "aarch64", True),
        ("73 0xffff 0x3 0x0", "aarch64", False),
        ("0 0x0 0x0 0x1", "riscv64", False),  # a machine the table does not know
    ],
)
def test_which_system_calls_are_a_wait_for_a_key(call: str, machine: str, waits: bool) -> None:
    assert waits_for_input(call.split(), machine) is waits


EDGE = str(Path(__file__).resolve().parent / "servers" / "edge_server.py")


def _live_keys(spec: Path) -> list[str]:
    """The live questions' keys, once there is one (it is put as the prompt is shown)."""
    from toolnexus.durable import open_store

    for _ in range(600):  # a limit against a hang, never a speed check
        if spec.exists():
            with open_store(str(spec), create=False, read_only=True) as store:
                keys = [call.key for call in store.calls(status="live")]
            if keys:
                return keys
        time.sleep(0.05)
    return []


def test_call_inbox_at_a_terminal_asks_both_and_the_first_answer_wins(tmp_path: Path) -> None:
    """``call --inbox STORE`` at a terminal: the question waits in the store and is asked here.
    Answered elsewhere first, the prompt here is taken down with one line; answered here
    first, the stored question is withdrawn as answered elsewhere."""
    from toolnexus import Answer
    from toolnexus.durable import open_store

    spec = tmp_path / "questions.db"
    env = environment(tmp_path, TERM="xterm-256color")
    argv = [sys.executable, "-m", "toolnexus", "call", "--stdio", f"{sys.executable} {EDGE}"]
    term = Terminal([*argv, "--inbox", str(spec), "ask_legacy_way", "--protocol", "legacy"], env, tmp_path)
    try:
        term.wait_for("name: ")
        (key,) = _live_keys(spec)
        with open_store(str(spec), create=False) as store:  # the inbox's hand, elsewhere
            (request,) = store.get(key).requests
            store.record(key, Answer(request.id, True, {"name": "Ada"}))
        term.wait_for("(question answered elsewhere)")
        assert term.finish() == 0
    finally:
        term.kill()
    screen = ANSI.sub("", term.screen)
    assert "Ada" in screen  # the tool's result, with the answer given elsewhere
    spec.unlink()
    term = Terminal([*argv, "--inbox", str(spec), "ask_legacy_way", "--protocol", "legacy"], env, tmp_path)
    try:
        term.wait_for("name: ")
        assert len(_live_keys(spec)) == 1  # it waits in the store too
        term.type(b"Grace\r")
        term.wait_for("Send? [Y/n/e] ")
        term.type(b"\r")
        assert term.finish() == 0
    finally:
        term.kill()
    assert "Grace" in ANSI.sub("", term.screen)
    with open_store(str(spec), create=False, read_only=True) as store:
        (call,) = store.calls()
    assert (call.status, call.error) == ("withdrawn", "answered elsewhere")
