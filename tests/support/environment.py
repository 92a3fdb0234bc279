"""A stand-in browser for ``BROWSER`` that records URLs, and the environment a command under test runs in."""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

__all__ = ["browser_stub", "environment", "opened"]

_LOAD = "import sys, urllib.request as u; u.build_opener(u.ProxyHandler({})).open(sys.argv[1], timeout=10)"


def browser_stub(directory: Path, *, load_local: bool = False) -> Path:
    """Write ``directory/browser.sh``: it records each URL it is asked to open in
    ``directory/opened.txt`` (see :func:`opened`). With ``load_local``, it also loads a URL on
    127.0.0.1 (the test server's own sign-in site), as the user's browser would; nothing else
    is ever fetched. ``FETCH_DELAY`` in its environment: the page loads that many seconds later,
    in the background (the user takes a moment)."""
    script = directory / "browser.sh"
    lines = ["#!/bin/sh", 'printf \'%s\\n\' "$1" >> "$(dirname "$0")/opened.txt"']
    if load_local:
        fetch = f"{shlex.quote(sys.executable)} -c {shlex.quote(_LOAD)}"
        lines += [
            'case "$1" in http://127.0.0.1:*)',
            f'  if [ -n "$FETCH_DELAY" ]; then (sleep "$FETCH_DELAY"; {fetch} "$1") >/dev/null 2>&1 &',
            f'  else {fetch} "$1"; fi;;',
            "esac",
        ]
    script.write_text("\n".join(lines) + "\n", encoding="utf-8")
    script.chmod(0o755)
    return script


def opened(directory: Path) -> list[str]:
    """The URLs the stand-in browser of ``directory`` was asked to open, in order."""
    record = directory / "opened.txt"
    return record.read_text(encoding="utf-8").splitlines() if record.exists() else []


def environment(directory: Path, *, load_local: bool = False, **extra: str) -> dict[str, str]:
    """The user's environment for a command under test: ``BROWSER`` the stand-in of
    ``directory``, this interpreter's ``toolnexus`` and ``python`` first on ``PATH``, no
    ``NO_COLOR``, and ``extra`` on top."""
    env = dict(os.environ)
    env.pop("NO_COLOR", None)
    env["BROWSER"] = str(browser_stub(directory, load_local=load_local))
    env["PATH"] = os.pathsep.join((str(Path(sys.executable).parent), env.get("PATH", "")))
    env.update(extra)
    return env
