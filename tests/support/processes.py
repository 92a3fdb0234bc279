"""Processes the tests start, and the guard that keeps them out of the quick tier.

A test that starts a process is end to end (``e2e``): the test command runs those once, on one
Python, and the rest (``-m "not e2e"``) on every Python it covers. The marker is set by what
starts the process: a test takes the ``processes`` fixture (or another fixture listed in
``E2E_FIXTURES`` in tests/conftest.py, such as a server fixture) and is marked without a word.
A test that is not ``e2e`` and starts a process anyway (``subprocess``, ``os.fork``, a pty,
``posix_spawn``) fails with :class:`ProcessInQuickTestError`, which says how to fix it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from .terminal import Terminal

__all__ = ["TESTS_DIR", "ProcessInQuickTestError", "Processes", "forbid_processes_in", "quick_test"]

TESTS_DIR = Path(__file__).resolve().parent.parent
"""tests/: the working directory from which ``-m servers.…`` finds the test servers."""


class Processes:
    """What the ``processes`` fixture gives a test: ``run``/``python`` wait for a process,
    ``popen`` starts one, ``terminal`` starts one at a pseudo-terminal; any still running when
    the test ends is killed."""

    def __init__(self) -> None:
        self._started: list[subprocess.Popen[Any]] = []
        self._terminals: list[Terminal] = []

    def run(self, args: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        """``subprocess.run`` with text, captured output (unless ``stdout``/``stderr`` are given),
        no standard input (unless ``input`` or ``stdin`` is), a 120 s guard against a hang, and
        no ``check``."""
        if "stdout" not in kwargs and "stderr" not in kwargs:
            kwargs.setdefault("capture_output", True)
        if "input" not in kwargs:
            kwargs.setdefault("stdin", subprocess.DEVNULL)
        kwargs.setdefault("text", True)
        kwargs.setdefault("timeout", 120)
        kwargs.setdefault("check", False)
        done: subprocess.CompletedProcess[str] = subprocess.run(args, **kwargs)
        return done

    def python(self, code: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
        """Run ``code`` in a fresh interpreter (this one's executable), as :meth:`run` does."""
        return self.run([sys.executable, "-c", code], **kwargs)

    def popen(self, args: list[str], **kwargs: Any) -> subprocess.Popen[str]:
        """Start a process (``subprocess.Popen``, text mode); killed at the test's end if still running."""
        kwargs.setdefault("text", True)
        proc: subprocess.Popen[str] = subprocess.Popen(args, **kwargs)
        self._started.append(proc)
        return proc

    def terminal(self, argv: list[str], env: dict[str, str], cwd: Path, **kwargs: Any) -> Terminal:
        """Start ``argv`` at a pseudo-terminal (support/terminal.py's ``Terminal``)."""
        from .terminal import Terminal

        term = Terminal(argv, env, cwd, **kwargs)
        self._terminals.append(term)
        return term

    def close(self) -> None:
        for term in self._terminals:
            term.kill()
        for proc in self._started:
            if proc.poll() is None:
                proc.kill()
            proc.wait()


class ProcessInQuickTestError(RuntimeError):
    """A test that is not ``e2e`` started a process."""


quick_test: list[str] = []
"""The node id of the quick (not ``e2e``) test running now, if one is: set by tests/conftest.py."""

F = TypeVar("F", bound=Callable[..., Any])


def _guarded(what: str, start: F) -> F:
    def guarded(*args: Any, **kwargs: Any) -> Any:
        if quick_test:
            raise ProcessInQuickTestError(
                f"{quick_test[0]} started a process ({what}) but is not an e2e test: start it through the "
                "`processes` fixture (tests/support/processes.py), or add the fixture that starts it to "
                "E2E_FIXTURES in tests/conftest.py"
            )
        return start(*args, **kwargs)

    return guarded  # type: ignore[return-value]


def forbid_processes_in() -> None:
    """Make every way of starting a process check :data:`quick_test` first (once per session)."""
    if getattr(subprocess.Popen, "_toolnexus_guarded", False):
        return
    popen: Any = subprocess.Popen
    popen._execute_child = _guarded("subprocess", popen._execute_child)
    popen._toolnexus_guarded = True
    for name in ("fork", "forkpty", "posix_spawn", "posix_spawnp"):
        if hasattr(os, name):
            setattr(os, name, _guarded(f"os.{name}", getattr(os, name)))
