"""The npm packages the tests run, each pinned (with everything it pulls in) by a
``package.json`` and ``package-lock.json`` in this repository and installed with ``npm ci``
into a gitignored folder at the root of the checkout, where a later run finds it while the
lockfile is the same: axe-core (``support/axe.py``), the MCP conformance suite
(``conformance/suite.py``) and the reference server ``server-everything``
(``support/server-everything/``).

Standard library only, so that the test command can install them before any virtual
environment exists.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from .needs import unavailable

ROOT = Path(__file__).resolve().parent.parent.parent

# What npm says when it cannot reach its registry (or a mirror it is set to).
UNREACHABLE = re.compile(r"ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|network")
# --engine-strict=false: the conformance suite asks for Node 22 and is installed by the
# machine's npm, whatever its Node (the suite then runs on a Node 22 of its own).
OPTIONS = ["--no-audit", "--no-fund", "--engine-strict=false", "--fetch-retries=1"]

__all__ = ["ROOT", "NpmUnreachableError", "install_pinned", "npm"]


class NpmUnreachableError(RuntimeError):
    """npm is missing, or cannot reach its registry: the package cannot be installed here."""


def npm(args: list[str], cwd: Path) -> None:
    """Run ``npm ARGS`` in ``cwd``. Raises `NpmUnreachableError` when npm is missing or cannot
    reach its registry, ``RuntimeError`` with npm's words on any other failure."""
    found = shutil.which("npm")
    if found is None:
        raise NpmUnreachableError("npm is not installed (apt-get install npm)")
    done = subprocess.run(
        [found, *args, *OPTIONS], cwd=cwd, capture_output=True, text=True, timeout=600, check=False
    )
    if done.returncode != 0:
        output = done.stdout + done.stderr
        said = [line for line in output.splitlines() if UNREACHABLE.search(line)]
        if said:
            raise NpmUnreachableError(f"npm cannot reach its registry ({said[0].strip()[:200]})")
        raise RuntimeError(f"npm {' '.join(args)} failed in {cwd}:\n{output}")


def install_pinned(pins: Path, into: Path, entry: str, announce: str | None = None) -> Path:
    """The file ``entry`` (relative to ``into``) once ``into`` holds the packages that
    ``pins/package-lock.json`` pins: installed with ``npm ci`` unless the last complete
    install there was of this same lockfile (then ``announce``, if given, is printed first).
    Raises as `npm` does, and ``RuntimeError`` when the install does not give ``entry``."""
    wanted = (pins / "package-lock.json").read_text(encoding="utf-8")
    stamp = into / "installed-lock.json"  # the lockfile of the last complete install
    path = into / entry
    if path.exists() and stamp.exists() and stamp.read_text(encoding="utf-8") == wanted:
        return path
    if announce is not None:
        print(announce, flush=True)
    into.mkdir(parents=True, exist_ok=True)
    stamp.unlink(missing_ok=True)
    for name in ("package.json", "package-lock.json"):
        shutil.copyfile(pins / name, into / name)
    npm(["ci"], into)
    if not path.exists():
        raise RuntimeError(f"npm ci in {into} did not install {entry}")
    stamp.write_text(wanted, encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def server_everything() -> str:
    """The command that runs ``@modelcontextprotocol/server-everything`` (the MCP reference
    test server) over stdio, pinned by ``support/server-everything/`` and installed from the
    npm registry into ``.server-everything/`` (once; later runs reuse it)."""
    import shlex

    node = shutil.which("node")
    if node is None:
        unavailable("Node", "node is not installed")
    try:
        entry = install_pinned(
            ROOT / "tests" / "support" / "server-everything",
            ROOT / ".server-everything",
            "node_modules/@modelcontextprotocol/server-everything/dist/index.js",
        )
    except NpmUnreachableError as err:
        unavailable("server-everything", f"cannot be installed: {err}")
    return f"{shlex.quote(node)} {shlex.quote(str(entry))} stdio"
