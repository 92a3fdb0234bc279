"""pyproject.toml declares what src/ imports, and the extras a user installs bring what they promise."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    tomllib = None

import pytest

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src" / "toolnexus"

# The import name of each third-party package src/ imports, and the distribution that provides
# it, where the two differ.
DISTRIBUTION = {
    "mcp_types": "mcp-types",
    "pydantic_core": "pydantic-core",
    "typing_extensions": "typing-extensions",
    "fastmcp": "fastmcp-slim",
}


def _pyproject() -> dict[str, Any]:
    if tomllib is None:
        pytest.skip("tomllib is Python 3.11+")
    with (ROOT / "pyproject.toml").open("rb") as f:
        data: dict[str, Any] = tomllib.load(f)
    return data


def _name(requirement: str) -> str:
    match = re.match(r"[A-Za-z0-9._-]+", requirement)
    assert match, requirement
    return re.sub(r"[-_.]+", "-", match.group(0)).lower()


def _third_party_imports(*roots: Path) -> dict[str, set[str]]:
    """Top-level names of the modules the files under ``roots`` (src/ when none) import that
    are neither the standard library nor ours, each with the files that import it."""
    found: dict[str, set[str]] = {}
    for path in sorted(path for root in roots or (SRC,) for path in root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.partition(".")[0]
                if top in sys.stdlib_module_names or top in ("toolnexus", "support", "servers"):
                    continue
                found.setdefault(top, set()).add(str(path.relative_to(ROOT)))
    return found


def test_every_third_party_import_is_declared_with_a_lower_bound() -> None:
    project = _pyproject()["project"]
    declared: dict[str, str] = {}
    for requirement in project["dependencies"]:
        declared[_name(requirement)] = requirement
    for extra in project["optional-dependencies"].values():
        for requirement in extra:
            declared.setdefault(_name(requirement), requirement)
    imports = _third_party_imports()
    assert {"mcp", "mcp_types", "anyio", "pydantic", "pydantic_core"} <= imports.keys()
    missing = {
        module: sorted(where)
        for module, where in imports.items()
        if _name(DISTRIBUTION.get(module, module)) not in declared
    }
    assert not missing, f"imported by src/ but not declared in pyproject.toml: {missing}"
    unbounded = [
        declared[_name(DISTRIBUTION.get(module, module))]
        for module in imports
        if ">=" not in declared[_name(DISTRIBUTION.get(module, module))]
    ]
    assert not unbounded, f"declared without a lower bound: {unbounded}"


def test_the_testing_extra_brings_hypothesis_for_the_strategies() -> None:
    extras = _pyproject()["project"]["optional-dependencies"]
    assert "hypothesis" in {_name(r) for r in extras["testing"]}
    assert "from hypothesis import" in (SRC / "testing" / "strategies.py").read_text(encoding="utf-8")


def test_developer_tools_are_dependency_groups_not_extras() -> None:
    data = _pyproject()
    extras = data["project"]["optional-dependencies"]
    tools = {"pytest-timeout", "mypy", "ruff", "mkdocs", "pytest-benchmark", "import-linter"}
    published = {_name(r) for requirements in extras.values() for r in requirements}
    assert not tools & published
    groups = data["dependency-groups"]
    in_groups = {_name(r) for requirements in groups.values() for r in requirements if isinstance(r, str)}
    assert tools <= in_groups


def test_the_classifiers_say_pytest_posix_and_typed() -> None:
    classifiers = _pyproject()["project"]["classifiers"]
    assert {"Framework :: Pytest", "Operating System :: POSIX", "Typing :: Typed"} <= set(classifiers)


def test_mypy_follows_every_package_our_modules_import() -> None:
    """pyproject.toml tells mypy not to follow some packages (their types become ``Any``), to
    halve its time: only packages our code reaches through others, and pydantic-ai, which one
    test drives. A module of ours that starts importing one of the others would lose its
    type checks without a word; this says so."""
    tool = _pyproject()["tool"]
    skipped = {
        pattern.removesuffix(".*")
        for override in tool["mypy"]["overrides"]
        if override.get("follow_imports") == "skip"
        for pattern in override["module"]
    }
    assert "beartype" in skipped  # the override is read
    checked = [ROOT / path for path in tool["mypy"]["files"]]
    imported = _third_party_imports(*checked)
    assert {"mcp", "pytest", "playwright"} <= imported.keys()  # the tests and scripts are read
    allowed = {"pydantic_ai": {"tests/test_fastmcp.py"}}
    unchecked = {
        name: sorted(where - allowed.get(name, set()))
        for name, where in imported.items()
        if name in skipped and where - allowed.get(name, set())
    }
    assert not unchecked, f"imported by our modules, but mypy does not follow them: {unchecked}"


def test_the_distribution_has_a_name_of_its_own_and_every_install_line_says_it() -> None:
    """``toolnexus`` on the package index is another project (a toolkit on ``mcp`` 1.x): a
    user told to ``pip install 'toolnexus[inbox]'`` got it. Ours is ``toolnexus-mcp``."""
    assert _pyproject()["project"]["name"] == "toolnexus-mcp"
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted(SRC.rglob("*.py"))]
    wrong = [
        f"{page.relative_to(ROOT)}: {' '.join(match.group(0).split())}"
        for page in pages
        for match in re.finditer(
            r"pip\s+install\s+['\"]?toolnexus(?![-\w])\S*", page.read_text(encoding="utf-8")
        )
    ]
    assert wrong == []
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "published as `toolnexus-mcp`" in readme
    assert "cannot be\ninstalled in one environment" in readme


def test_the_changelog_says_what_the_one_release_contains_and_its_names_are_real() -> None:
    """One release section, the package's version (nothing was published before it), and every
    ``toolnexus.…`` name it gives resolves: the text cannot keep a name that moved."""
    import importlib

    import toolnexus

    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert re.findall(r"^## \[([^\]]+)\]", text, re.MULTILINE) == [toolnexus.__version__]
    names = set(re.findall(r"`(toolnexus(?:\.[A-Za-z_][A-Za-z0-9_]*)*)`", text))
    assert names, "the changelog names no toolnexus module"
    for name in sorted(names):
        parts = name.split(".")
        cut = 1  # the longest module path of the name, then its attributes
        while cut < len(parts) and _is_module(".".join(parts[: cut + 1])):
            cut += 1
        found: object = importlib.import_module(".".join(parts[:cut]))
        for part in parts[cut:]:
            assert hasattr(found, part), f"CHANGELOG.md names {name}, which does not exist"
            found = getattr(found, part)


def _is_module(name: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:  # a name inside a module that is no package
        return False
