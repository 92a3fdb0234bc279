"""The terminal harness: a command run on the slave side of a pseudo-terminal, its screen read
and keys typed from this side, and the child processes it started (its servers).

The command has the pty as its controlling terminal, so Ctrl-C is a real SIGINT from the
terminal driver. A test waits for the prompt it answers (:meth:`Terminal.wait_for`) before it
types, never a fixed time.
"""

from __future__ import annotations

import os
import platform
import re
import select
import signal
import subprocess
import time
from pathlib import Path
from typing import IO, Any

import pytest

from support import forkserver

__all__ = ["ANSI", "Terminal", "children", "default_sigint", "waits_for_input"]

ANSI = re.compile(r"\x1b\[[0-9;]*m")
"""A colour code, as the console writes them."""


def default_sigint() -> None:
    """In the child, before exec: Ctrl-C interrupts, as at a terminal. A test run started where
    SIGINT is ignored (a background job of a non-interactive shell) would hand that on, and
    Python leaves an inherited ``SIG_IGN`` in place."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def children(pid: int) -> list[int]:
    """The process ids of ``pid``'s children (from ``/proc``)."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(child) for child in (task / "children").read_text().split()]
    return found


_READ = {"x86_64": "0", "aarch64": "63"}
_SELECT = {"x86_64": {"23", "270"}, "aarch64": {"72"}}  # select, pselect6
_POLL = {"x86_64": {"7", "271"}, "aarch64": {"73"}}  # poll, ppoll


def waits_for_input(call: list[str], machine: str | None = None) -> bool:
    """Whether a thread's ``/proc/.../syscall`` (number, then arguments in hex) is a wait on
    standard input alone: a read of fd 0, a select or pselect6 of the descriptors below 1, or
    a poll or ppoll of one descriptor (readline's and ``input()``'s waits for a key)."""
    machine = machine or platform.machine()
    if len(call) < 3 or machine not in _READ:
        return False
    number, first, second = call[0], int(call[1], 16), int(call[2], 16)
    if number == _READ[machine]:
        return first == 0
    if number in _SELECT[machine]:
        return first == 1
    return number in _POLL[machine] and second == 1


class Terminal:
    """A process on the slave side of a pty; this side reads its screen output and types.

    ``stdout`` may be given (a file, a pipe) to keep the command's stdout off the terminal;
    its stdin and stderr are the terminal."""

    def __init__(
        self, argv: list[str], env: dict[str, str], cwd: Path, *, stdout: IO[Any] | None = None
    ) -> None:
        import pty

        self.master, slave = pty.openpty()
        where: dict[str, Any] = {  # the terminal for stdin and stderr (stdout too, unless given)
            "stdin": slave,
            "stdout": slave if stdout is None else stdout,
            "stderr": slave,
            "env": env,
            "cwd": cwd,
        }
        self.proc: subprocess.Popen[bytes] | forkserver.Forked
        if forkserver.handles(argv):  # forked, without the interpreter's start
            self.proc = forkserver.popen(argv, controlling_terminal=True, **where)
        else:
            self.proc = subprocess.Popen(argv, preexec_fn=self.controlling_terminal, **where)
        os.close(slave)
        self.raw = b""
        self.cursor = 0  # where the previous wait_for matched, in the screen without colour codes

    @staticmethod
    def controlling_terminal() -> None:
        """In the child: a session of its own whose controlling terminal is its stdin."""
        import fcntl
        import termios

        default_sigint()
        os.setsid()
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    @property
    def screen(self) -> str:
        """Everything shown so far, as text (colour codes kept)."""
        return self.raw.decode("utf-8", errors="replace")

    @property
    def plain(self) -> str:
        """Everything shown so far, without colour codes."""
        return ANSI.sub("", self.screen)

    def _read_some(self, wait: float) -> bool:
        ready, _, _ = select.select([self.master], [], [], wait)
        if not ready:
            return True
        try:
            chunk = os.read(self.master, 65536)
        except OSError:  # the other side closed: the process is gone
            return False
        self.raw += chunk
        return bool(chunk)

    def read_waiting(self) -> None:
        """Read what the command has written so far, without waiting for more."""
        while select.select([self.master], [], [], 0)[0] and self._read_some(0):
            pass

    def wait_for(self, text: str) -> None:
        """Read until ``text`` (colour codes ignored) appears after the previous match."""
        for _ in range(1200):  # a generous limit against a hang, never a speed check
            found = self.plain.find(text, self.cursor)
            if found != -1:
                self.cursor = found + len(text)
                return
            if not self._read_some(0.1) and self.proc.poll() is not None:
                break
        pytest.fail(f"{text!r} never appeared; the screen ends with:\n{self.plain[-1500:]}")

    def type(self, keys: bytes) -> None:
        """Type ``keys``; a Ctrl-C once the command waits for input (see :meth:`wait_reading`)."""
        if b"\x03" in keys:
            self.wait_reading()
        os.write(self.master, keys)

    def wait_reading(self, limit: float = 5.0) -> bool:
        """Wait until the command's main thread sleeps in a wait on its stdin; whether it did
        within ``limit`` seconds (or before the command ended).

        A prompt on the screen is not enough for a Ctrl-C: readline prints it before it starts
        to wait, and a SIGINT that lands in between is left pending until the next key
        (CPython's readline checks for signals only when its ``select`` is interrupted).
        Typed keys wait in the terminal's buffer, so only a Ctrl-C needs this. Only the main
        thread counts: the command asks there, while its other threads wait on pipes and
        sockets too (the server's stderr is polled the whole time). Where ``/proc`` does not
        tell, or after ``limit``, this returns anyway.
        """
        main = Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/syscall")
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            try:
                call = main.read_text().split()
            except OSError:
                return False
            if waits_for_input(call):
                return True
            if self.proc.poll() is not None:
                return False
            select.select([], [], [], 0.01)
        return False

    def finish(self) -> int:
        """Wait for the process to end; its exit status, the screen read to its end."""
        code = self.proc.wait(timeout=120)
        while self._read_some(0.05):
            pass
        os.close(self.master)
        return code

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
