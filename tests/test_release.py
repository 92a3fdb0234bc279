"""The package as a user gets it: the sdist and the wheel built by the lowest hatchling the
build-system table allows, checked as the package index checks them (``twine check``), and
the wheel installed into clean environments (none of this checkout on their path): without
extras, where ``toolnexus --version`` answers and the README's wiring example runs, and with
every extra, which brings what its part needs."""

from __future__ import annotations

import re
import subprocess
import sys
import zipfile
from pathlib import Path

import toolnexus
from support.needs import unavailable

ROOT = Path(__file__).resolve().parent.parent
UV = ROOT / ".venv-uv" / "bin" / "uv"
EXTRAS = ("fastmcp", "inbox", "notify", "postgres", "testing")
README_BLOCK = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)


def uv(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([str(UV), *args], capture_output=True, text=True, cwd=cwd, timeout=300)
    assert done.returncode == 0, f"uv {' '.join(args)}:\n{done.stderr}"
    return done


def clean_environment(directory: Path, requirement: str) -> Path:
    """A virtual environment with ``requirement`` installed; its Python."""
    uv("venv", "--quiet", "--python", sys.executable, str(directory), cwd=directory.parent)
    python = directory / "bin" / "python"
    uv("pip", "install", "--quiet", "--python", str(python), requirement, cwd=directory.parent)
    return python


def test_the_distributions_build_check_and_install_clean(tmp_path: Path) -> None:
    if not UV.exists():
        unavailable("uv", f"{UV} is missing (bash scripts/test installs it)")
    floor = re.search(r'"hatchling>=([0-9.]+)"', (ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert floor is not None, "the build-system table names no hatchling floor"
    constraints = tmp_path / "constraints.txt"
    constraints.write_text(f"hatchling=={floor.group(1)}\n", encoding="utf-8")
    dist = tmp_path / "dist"
    uv(
        "build",
        "--quiet",
        "--build-constraints",
        str(constraints),
        "--out-dir",
        str(dist),
        str(ROOT),
        cwd=tmp_path,
    )
    version = toolnexus.__version__
    sdist, wheel = (
        dist / f"toolnexus_mcp-{version}.tar.gz",
        dist / f"toolnexus_mcp-{version}-py3-none-any.whl",
    )
    assert sorted(dist.glob("toolnexus*")) == sorted([sdist, wheel])  # (uv writes a .gitignore beside them)

    with zipfile.ZipFile(wheel) as archive:
        metadata = archive.read(f"toolnexus_mcp-{version}.dist-info/METADATA").decode()
        names = archive.namelist()
    assert "Name: toolnexus-mcp" in metadata.splitlines()
    assert "License-Expression: MIT" in metadata.splitlines()  # what the floor must read
    assert "toolnexus/py.typed" in names
    assert not [name for name in names if name.startswith(("tests/", "docs/"))]
    twine = subprocess.run(
        [str(Path(sys.executable).with_name("twine")), "check", "--strict", str(sdist), str(wheel)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert twine.returncode == 0, twine.stdout + twine.stderr

    # Without extras: the command and the README's first example, from a directory of their own.
    python = clean_environment(tmp_path / "plain", str(wheel))
    version_line = subprocess.run(
        [str(python.with_name("toolnexus")), "--version"], capture_output=True, text=True, timeout=60
    )
    assert version_line.stdout.strip() == f"toolnexus {version}"
    match = README_BLOCK.search((ROOT / "README.md").read_text(encoding="utf-8"))
    assert match is not None
    example = tmp_path / "example.py"
    example.write_text(
        "import toolnexus\nprint('from', toolnexus.__file__)\n" + match.group(1), encoding="utf-8"
    )
    ran = subprocess.run(
        [str(python), str(example)], capture_output=True, text=True, cwd=tmp_path, timeout=120
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert f"from {tmp_path / 'plain'}" in ran.stdout  # the wheel's package, not this checkout's

    # Every extra: what each is for is installed (read from the metadata: importing them all
    # in a new environment compiles every module first, seconds of CPU for nothing more).
    python = clean_environment(tmp_path / "extras", f"{wheel}[{','.join(EXTRAS)}]")
    wanted = ("fastmcp-slim", "jsonschema", "jinja2", "starlette", "psycopg", "psycopg-binary", "hypothesis")
    probe = f"import importlib.metadata as m; print(' '.join(m.version(d) and d for d in {wanted!r}))"
    found = subprocess.run(
        [str(python), "-c", probe], capture_output=True, text=True, cwd=tmp_path, timeout=120
    )
    assert found.stdout.split() == list(wanted), found.stderr
