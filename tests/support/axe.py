"""axe-core, the accessibility checker, pinned by ``axe/package.json`` beside this file and
installed with npm into ``.axe/`` at the root of the checkout (gitignored; a later run finds
it there). Standard library only, so the test command can install it before any venv:

    python3 tests/support/axe.py      # install (or find) it; print where
"""

from __future__ import annotations

import sys
from pathlib import Path

if __name__ == "__main__":  # run as a script: the support package is in the folder above
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from support.npm import ROOT, install_pinned

HERE = Path(__file__).resolve().parent
INSTALL_DIR = ROOT / ".axe"
SCRIPT = INSTALL_DIR / "node_modules" / "axe-core" / "axe.min.js"

__all__ = ["SCRIPT", "ensure_axe"]


def ensure_axe() -> Path:
    """The path of ``axe.min.js``, installed with ``npm ci`` unless it is there already for the
    pinned lockfile. Raises ``RuntimeError`` (``support.npm.NpmUnreachableError`` when npm is
    missing or offline) with npm's words when it cannot be installed."""
    return install_pinned(HERE / "axe", INSTALL_DIR, str(SCRIPT.relative_to(INSTALL_DIR)))


if __name__ == "__main__":
    try:
        print(f"axe-core ready: {ensure_axe()}")
    except RuntimeError as err:
        print(err, file=sys.stderr)
        sys.exit(1)
