"""Every ```python block in README.md and docs/*.md runs, so the examples cannot rot.

Each block runs on its own as a script in a process of its own, from a scratch directory (forked
from one that has imported the package: support/forkserver.py).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from support import forkserver

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)


def blocks() -> list[tuple[str, str]]:
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for number, match in enumerate(BLOCK.finditer(text), start=1):
            line = text.count("\n", 0, match.start()) + 1
            found.append((f"{page.relative_to(ROOT)}:{line} (block {number})", match.group(1)))
    return found


EXAMPLES = blocks()


def test_the_readme_has_examples() -> None:
    assert any(name.startswith("README.md") for name, _ in EXAMPLES)


@pytest.mark.parametrize(("where", "code"), EXAMPLES, ids=[name for name, _ in EXAMPLES])
def test_example_runs(where: str, code: str, tmp_path: Path) -> None:
    script = tmp_path / "example.py"
    script.write_text(code, encoding="utf-8")
    # CI: Hypothesis's own CI profile for an example that uses it (docs/testing.md), as any
    # CI runner sets it: no wall-clock health check or deadline, which a machine running the
    # whole test command on two cores failed once (one draw held 0.9 s by the load).
    proc = forkserver.run(
        [sys.executable, str(script)],
        env={**os.environ, "CI": "1"},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=90,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, f"{where} failed:\n{proc.stdout}\n{proc.stderr}"
