"""axe-core, the accessibility checker, pinned by ``axe/package.json`` beside this file and
installed with npm into ``.axe/`` at the root of the checkout (gitignored; a later run finds
it there). Standard library only, so the test command can install it before any venv:

    python3 tests/support/axe.py      # install (or find) it; print where
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
INSTALL_DIR = ROOT / ".axe"
SCRIPT = INSTALL_DIR / "node_modules" / "axe-core" / "axe.min.js"

__all__ = ["SCRIPT", "ensure_axe"]


def ensure_axe() -> Path:
    """The path of ``axe.min.js``, installed with ``npm ci`` unless it is there already for the
    pinned lockfile. Raises ``RuntimeError`` with npm's words when it cannot be installed."""
    wanted = (HERE / "axe" / "package-lock.json").read_text(encoding="utf-8")
    stamp = INSTALL_DIR / "installed-lock.json"
    if SCRIPT.exists() and stamp.exists() and stamp.read_text(encoding="utf-8") == wanted:
        return SCRIPT
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError("npm is not installed: axe-core cannot be installed (apt-get install npm)")
    INSTALL_DIR.mkdir(exist_ok=True)
    stamp.unlink(missing_ok=True)
    for name in ("package.json", "package-lock.json"):
        shutil.copyfile(HERE / "axe" / name, INSTALL_DIR / name)
    done = subprocess.run(
        [npm, "ci", "--no-audit", "--no-fund", "--fetch-retries=1"],
        cwd=INSTALL_DIR,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if done.returncode != 0 or not SCRIPT.exists():
        raise RuntimeError(f"npm ci in {INSTALL_DIR} failed:\n{done.stdout}{done.stderr}")
    stamp.write_text(wanted, encoding="utf-8")
    return SCRIPT


if __name__ == "__main__":
    try:
        print(f"axe-core ready: {ensure_axe()}")
    except RuntimeError as err:
        print(err, file=sys.stderr)
        sys.exit(1)
