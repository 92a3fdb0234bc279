"""Virtual environments of their own for servers nobody here wrote whose packages cannot live
beside the project's (an ``mcp<2`` server; ``fastmcp-tasks``, which pins an older FastMCP):
made on first use by the test command's uv (about a second of CPU; pip, where there is no uv,
takes 25) under ``~/.cache/toolnexus-tests/`` and reused by later runs and other clones."""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

from .needs import unavailable

UV = Path(__file__).resolve().parent.parent.parent / ".venv-uv" / "bin" / "uv"
"""The uv that ``bash scripts/test`` installs."""

CACHE = Path(os.environ.get("TOOLNEXUS_TEST_VENVS") or Path.home() / ".cache" / "toolnexus-tests")
"""Where the environments are kept (``$TOOLNEXUS_TEST_VENVS`` to choose)."""


def python_with(name: str, requirement: str, probe: str, *, directory: Path | None = None) -> Path:
    """The Python of the environment ``name`` (or ``directory``), with ``requirement``
    installed: made unless ``python -c probe`` already works there. Skipped (failed in CI)
    with pip's last line when it cannot be installed."""
    home = directory or CACHE / name
    python = home / "bin" / "python"
    if python.exists() and subprocess.run([str(python), "-c", probe], capture_output=True).returncode == 0:
        return python
    if UV.exists():
        subprocess.run(
            [str(UV), "venv", "--quiet", "--clear", "--python", sys.executable, str(home)],
            capture_output=True,
            check=True,
            timeout=120,
        )
        argv = [str(UV), "pip", "install", "--quiet", "--python", str(python), requirement]
    else:
        venv.create(home, with_pip=True, clear=True)
        argv = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", requirement]
    install = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    if install.returncode != 0:
        unavailable(requirement, f"could not be installed: {install.stderr.strip().splitlines()[-1:]}")
    return python
