"""The docs site built as a contributor builds it (``bash scripts/docs build``, strict), for
the tests that read it."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

__all__ = ["ROOT", "Build", "build_site"]

ROOT = Path(__file__).resolve().parent.parent.parent
"""The repository: where ``mkdocs.yml`` is."""


@dataclass(frozen=True)
class Build:
    site: Path
    """The built site."""
    output: str
    """What the build printed, its standard output and error together."""


def build_site(out: Path) -> Build:
    """Build the site into ``out`` with ``scripts/docs`` and this interpreter's mkdocs, strict
    (``mkdocs.yml``: a warning fails the build); skip the test when mkdocs is not installed
    (the ``docs`` group). Not the theme's switch for its notice from this environment: the
    script must set it itself."""
    pytest.importorskip("mkdocs", reason="mkdocs is in the docs group")
    env = {name: value for name, value in os.environ.items() if name != "NO_MKDOCS_2_WARNING"}
    done = subprocess.run(
        ["bash", str(ROOT / "scripts" / "docs"), "build", "--site-dir", str(out)],
        env={**env, "PYTHON": sys.executable},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, f"the docs build failed (exit {done.returncode}):\n{done.stdout}"
    return Build(out, done.stdout)
