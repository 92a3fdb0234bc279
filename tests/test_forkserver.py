"""The fork server the end-to-end tests run their commands through (support/forkserver.py):
a forked command must behave as a started one, or those tests would test something else."""

from __future__ import annotations

import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from support import forkserver

SHOW = """
import os, sys
print(sys.argv[1:], os.getcwd(), os.environ.get("FORK_TEST"), os.getsid(0) == os.getpid())
print(sys.stdin.read().upper(), end="")
print("to stderr", file=sys.stderr)
raise SystemExit(int(sys.argv[1]))
"""


def test_a_forked_script_gets_its_arguments_place_environment_streams_and_exit_status(tmp_path: Path) -> None:
    script = tmp_path / "show.py"
    script.write_text(SHOW, encoding="utf-8")
    for argv in ([sys.executable, str(script), "7"], [sys.executable, "-c", SHOW, "7"]):
        done = forkserver.run(
            argv, input="hello\r\n", cwd=tmp_path, env={"FORK_TEST": "yes", "PATH": "/usr/bin"}
        )
        assert done.returncode == 7
        assert done.stdout == f"['7'] {tmp_path} yes True\nHELLO\n"  # universal newlines, as text=True
        assert done.stderr == "to stderr\n"


def test_the_command_runs_as_its_entry_point_and_as_a_module(tmp_path: Path) -> None:
    for argv in ([forkserver.TOOLNEXUS, "--version"], [sys.executable, "-m", "toolnexus", "--version"]):
        forked = forkserver.run(argv, cwd=tmp_path)
        started = subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path, check=False)
        assert (forked.returncode, forked.stdout, forked.stderr) == (
            started.returncode,
            started.stdout,
            started.stderr,
        )
    usage = forkserver.run([forkserver.TOOLNEXUS, "no-such-command"], cwd=tmp_path)
    assert usage.returncode == 2
    assert "invalid choice" in usage.stderr


ENDINGS = {
    "SystemExit with text": "raise SystemExit('bye')",
    "SystemExit(None)": "import sys; sys.exit(None)",
    "SystemExit past 255": "raise SystemExit(258)",
    "an uncaught error": "print('before'); raise ValueError('no')",
    "an uncaught KeyboardInterrupt": "raise KeyboardInterrupt",
    "atexit": "import atexit; atexit.register(print, 'atexit ran'); print('body')",
    "a thread that is not a daemon": (
        "import threading, time\n"
        "def late():\n    time.sleep(0.3); print('the thread ended', flush=True)\n"
        "threading.Thread(target=late).start(); print('main ends')"
    ),
    "output left unflushed": "import sys; sys.stdout.write('no newline, no flush')",
    "a standard output that cannot be flushed": "import os, sys; sys.stdout.write('x'); os.close(1)",
}
"""Ways a process ends: the interpreter's exit does each of these its own way, after the
command, and a forked process skips the interpreter's exit (``zygote._exit``)."""


@pytest.mark.parametrize("unbuffered", [False, True], ids=["buffered", "PYTHONUNBUFFERED"])
def test_a_forked_process_ends_as_a_started_one_does(unbuffered: bool) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    if unbuffered:
        env["PYTHONUNBUFFERED"] = "1"
    for name, code in ENDINGS.items():
        argv = [sys.executable, "-c", code]
        forked = forkserver.run(argv, env=env)
        started = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
        assert (forked.returncode, forked.stdout) == (started.returncode, started.stdout), name
        if name == "a standard output that cannot be flushed" and not unbuffered:
            # Python says why in a message of its own ("Exception ignored in: <stdout>")
            assert (started.returncode, "Bad file descriptor" in started.stderr) == (120, True), started
        else:
            assert forked.stderr == started.stderr, name


def test_a_forked_process_can_be_killed_and_its_status_read(tmp_path: Path) -> None:
    proc = forkserver.popen([sys.executable, "-c", "import time; print('up', flush=True); time.sleep(600)"])
    assert proc.stdout is not None
    assert proc.stdout.readline() == b"up\n"
    assert proc.poll() is None
    proc.send_signal(signal.SIGKILL)
    assert proc.wait(timeout=60) == -signal.SIGKILL


def test_only_this_interpreters_commands_are_forked() -> None:
    assert not forkserver.handles(["bash", "-c", "true"])
    assert forkserver.handles([sys.executable, "-m", "toolnexus"])


# --- launch.py: a server a command under test starts, forked by the fork server ---------------

WAIT = """
import os, sys, time
print(os.getpid(), os.environ.get("TOOLNEXUS_TEST_STARTED_BY"), flush=True)
time.sleep(120)
"""


def _gone(pid: int, within: float = 5.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.02)
    return False


def test_a_launched_server_gets_its_arguments_place_environment_streams_and_status(tmp_path: Path) -> None:
    forkserver.start()
    script = tmp_path / "show.py"
    script.write_text(SHOW, encoding="utf-8")
    for argv in ([sys.executable, str(script), "5"], [sys.executable, "-c", SHOW, "5"]):
        command = shlex.split(forkserver.server_command(argv))
        assert command[:3] == [sys.executable, "-S", "-I"]  # the launcher, not the server
        done = subprocess.run(
            command,
            input="hello\n",
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env={"FORK_TEST": "yes", "PATH": "/usr/bin"},
            check=False,
        )
        assert done.returncode == 5
        assert (done.stdout, done.stderr) == (f"['5'] {tmp_path} yes True\nHELLO\n", "to stderr\n")


def test_killing_the_launcher_kills_its_server() -> None:
    forkserver.start()
    command = shlex.split(forkserver.server_command([sys.executable, "-c", WAIT]))
    launcher = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    assert launcher.stdout is not None
    server, started_by = launcher.stdout.readline().split()
    assert int(server) != launcher.pid  # forked: another process
    assert started_by == str(os.getpid())  # who started the launcher (the server's parent is the fork server)
    launcher.kill()
    launcher.wait()
    assert _gone(int(server))
    assert launcher.stdout.read() == ""  # nothing holds the server's end of the pipe


def test_the_launcher_passes_a_signal_on_and_dies_of_it_as_its_server_does() -> None:
    forkserver.start()
    command = shlex.split(forkserver.server_command([sys.executable, "-c", WAIT]))
    launcher = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    assert launcher.stdout is not None
    server = int(launcher.stdout.readline().split()[0])
    launcher.send_signal(signal.SIGTERM)
    assert launcher.wait(timeout=30) == -signal.SIGTERM
    assert _gone(server)


def test_without_a_fork_server_the_launcher_is_python(tmp_path: Path) -> None:
    command = shlex.split(forkserver.server_command([sys.executable, "-c", WAIT]))
    command[4] = str(tmp_path / "no-fork-server-here")  # the socket
    launcher = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        assert launcher.stdout is not None
        server, started_by = launcher.stdout.readline().split()
        assert (int(server), started_by) == (launcher.pid, "None")  # exec'd: the same process
    finally:
        launcher.kill()
        launcher.wait()


def test_a_launcher_gone_with_the_reply_unread_leaves_the_fork_server_serving(tmp_path: Path) -> None:
    # A launcher killed between sending its request and reading the child's number: closing a
    # socket with a reply unread resets it, and the fork server must take that as the
    # launcher's end (its child killed), not stop serving every later command.
    forkserver.start()
    mark = tmp_path / "pid"
    code = f"import os, time; open({str(mark)!r}, 'w').write(str(os.getpid())); time.sleep(120)"
    request: dict[str, object] = {"how": "code", "argv": [code], "cwd": str(tmp_path)}
    request.update(env=dict(os.environ), new_session=True)
    read_end, write_end = os.pipe()
    try:
        for _ in range(3):
            conn = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            conn.connect(forkserver.LAUNCH_SOCKET)
            socket.send_fds(conn, [json.dumps(request).encode()], [read_end, write_end, write_end])
            deadline = time.monotonic() + 30
            while not (mark.exists() and mark.read_text()):  # forked: its reply is on its way
                assert time.monotonic() < deadline
                time.sleep(0.01)
            time.sleep(0.1)  # the reply has arrived, unread
            conn.close()
            assert _gone(int(mark.read_text()), within=10)
            mark.unlink()
    finally:
        os.close(read_end)
        os.close(write_end)
    done = forkserver.run([sys.executable, "-c", "print('still serving')"], timeout=60)
    assert (done.returncode, done.stdout) == (0, "still serving\n")


def test_when_the_fork_server_dies_its_children_end_and_the_next_command_gets_a_new_one() -> None:
    # Nothing would report the exit of what it forked: a wait must end, not hang to its timeout.
    child = forkserver.popen([sys.executable, "-c", WAIT], stdout=subprocess.PIPE)
    assert child.stdout is not None
    pid = int(child.stdout.readline().split()[0])
    old = forkserver._the_server()
    old.proc.kill()
    old.proc.wait()
    assert child.wait(timeout=30) == -signal.SIGKILL
    assert _gone(pid)
    child.stdout.close()
    done = forkserver.run([sys.executable, "-c", "print('a new one')"], timeout=60)
    assert (done.returncode, done.stdout) == (0, "a new one\n")
    assert forkserver._the_server() is not old


PYTHON_OF_A_CHILD = """
import os, subprocess, sys
# A process started with sys.executable, as toolnexus demo starts its server: forked too (its
# parent is the fork server, not this process), and told who started it (launch.py).
ran = subprocess.run([sys.executable, "-c", "import os; print(os.getppid(), os.environ['WHO'])"],
                     capture_output=True, text=True, env={**os.environ, "WHO": "me"}, check=True)
parent, who = ran.stdout.split()
print(int(parent) != os.getpid(), who)
# Any other use of python (an option first) is python itself, a child of this process.
ran = subprocess.run([sys.executable, "-X", "utf8", "-c", "import os; print(os.getppid())"],
                     capture_output=True, text=True, check=True)
print(int(ran.stdout) == os.getpid())
"""


def test_a_childs_sys_executable_goes_through_the_fork_server_and_is_python_otherwise(
    tmp_path: Path,
) -> None:
    done = forkserver.run([sys.executable, "-c", PYTHON_OF_A_CHILD], cwd=tmp_path, timeout=60)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == "True me\nTrue\n"


CONTROLLING_TERMINAL = """
import os
fd = os.open("/dev/tty", os.O_RDWR)  # fails without a controlling terminal
print(os.isatty(fd), os.tcgetpgrp(0) == os.getpgrp() == os.getpid(), flush=True)
"""


def test_a_forked_child_can_take_its_pty_as_its_controlling_terminal(tmp_path: Path) -> None:
    import pty

    for controlling in (True, False):
        master, slave = pty.openpty()
        out_read, out_write = os.pipe()
        proc = forkserver.popen(
            [sys.executable, "-c", CONTROLLING_TERMINAL],
            stdin=slave,
            stdout=out_write,
            stderr=subprocess.PIPE,
            controlling_terminal=controlling,
        )
        os.close(slave)
        os.close(out_write)
        with os.fdopen(out_read, "rb") as out:
            printed = out.read()
        assert proc.stderr is not None
        err = proc.stderr.read()
        proc.stderr.close()
        code = proc.wait(timeout=60)
        os.close(master)
        if controlling:
            assert (code, printed, err) == (0, b"True True\n", b"")
        else:  # a session of its own without a terminal: /dev/tty cannot be opened
            assert code == 1
            assert b"No such device or address" in err
