"""What the import-linter contract (pyproject.toml, `lint-imports`) cannot say, read from the AST.

- No module of src/ uses another module's private name (`_x`): not by `from m import _x`, not as
  `m._x` after `import m`. Private MODULES may be imported by their names (`from . import _wire`,
  `from ._wire import Request`): only the names inside them are private to them.
- No import cycle between the modules of src/, counting every import (those inside functions
  and under `TYPE_CHECKING` too: a cycle there is still two modules that need each other).
- No test module imports another test module: shared helpers live in tests/support/.

Each allow-list below names a known exception and who removes it; an entry that no longer
matches anything fails too, so the lists only shrink.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src"
TESTS = ROOT / "tests"

# (importer, owner, name): uses of another module's private name that are being removed now.
PRIVATE_NAMES_ALLOWED: dict[tuple[str, str, str], str] = {}

# Import cycles (as sorted tuples of the modules in them) being removed now.
CYCLES_ALLOWED: dict[tuple[str, ...], str] = {}

# (importer, imported) test modules.
TEST_IMPORTS_ALLOWED: dict[tuple[str, str], str] = {}


@dataclass(frozen=True)
class Module:
    name: str
    path: Path

    @property
    def is_package(self) -> bool:
        return self.path.name == "__init__.py"

    @property
    def package(self) -> str:
        return self.name if self.is_package else self.name.rpartition(".")[0]


def _modules(root: Path) -> dict[str, Module]:
    found = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        name = ".".join(parts)
        found[name] = Module(name, path)
    return found


MODULES = _modules(SRC)


def _absolute(module: Module, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    base = module.package.split(".")
    if node.level > 1:
        base = base[: -(node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


@dataclass(frozen=True)
class Use:
    importer: str
    owner: str
    name: str
    line: int

    def __str__(self) -> str:
        return f"{self.importer} (line {self.line}) uses {self.owner}.{self.name}"


def _imports(module: Module) -> Iterator[tuple[str, ast.AST]]:
    """Every toolnexus module this one imports (the package itself when a name comes from it)."""
    for node in ast.walk(ast.parse(module.path.read_text(encoding="utf-8"), str(module.path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in MODULES:
                    yield alias.name, node
        elif isinstance(node, ast.ImportFrom):
            source = _absolute(module, node)
            if source not in MODULES:
                continue
            for alias in node.names:
                submodule = f"{source}.{alias.name}"
                yield (submodule if submodule in MODULES else source), node


def _private_uses(module: Module) -> Iterator[Use]:
    tree = ast.parse(module.path.read_text(encoding="utf-8"), str(module.path))
    bound: dict[str, str] = {}  # a local name -> the toolnexus module it is bound to
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in MODULES and alias.asname:
                    bound[alias.asname] = alias.name
        elif isinstance(node, ast.ImportFrom):
            source = _absolute(module, node)
            if source not in MODULES:
                continue
            for alias in node.names:
                submodule = f"{source}.{alias.name}"
                if submodule in MODULES:
                    bound[alias.asname or alias.name] = submodule
                elif _private(alias.name) and source != module.name:
                    yield Use(module.name, source, alias.name, node.lineno)
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute) or not _private(node.attr):
            continue
        target = node.value
        dotted = []
        while isinstance(target, ast.Attribute):
            dotted.append(target.attr)
            target = target.value
        if not isinstance(target, ast.Name):
            continue
        if target.id in bound:
            owner = ".".join([bound[target.id], *reversed(dotted)])
        else:
            owner = ".".join([target.id, *reversed(dotted)])  # `import toolnexus._x` used in full
        if owner in MODULES and owner != module.name and f"{owner}.{node.attr}" not in MODULES:
            yield Use(module.name, owner, node.attr, node.lineno)


def test_no_module_uses_another_modules_private_name() -> None:
    uses = [use for module in MODULES.values() for use in _private_uses(module)]
    assert any(m.startswith("toolnexus.") for m in MODULES), "the walk found no modules"
    found = {(u.importer, u.owner, u.name) for u in uses}
    new = sorted(str(u) for u in uses if (u.importer, u.owner, u.name) not in PRIVATE_NAMES_ALLOWED)
    assert not new, "a private name used across modules (give it a public name or a home):\n" + "\n".join(new)
    stale = sorted(set(PRIVATE_NAMES_ALLOWED) - found)
    assert not stale, f"fixed: remove these from PRIVATE_NAMES_ALLOWED in {__file__}: {stale}"


def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {name: set() for name in MODULES}
    for module in MODULES.values():
        for imported, _node in _imports(module):
            if imported != module.name:
                graph[module.name].add(imported)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[tuple[str, ...]]:
    """The strongly connected components of more than one module (Tarjan's, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[tuple[str, ...]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(tuple(sorted(component)))
    return sorted(components)


def test_the_cycle_finder_finds_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert _cycles(graph) == [("a", "b", "c")]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle() -> None:
    graph = _graph()
    assert sum(len(edges) for edges in graph.values()) > 20, "the walk found too few imports"
    cycles = _cycles(graph)
    new = [cycle for cycle in cycles if cycle not in CYCLES_ALLOWED]
    assert not new, "modules that import each other: " + "; ".join(" <-> ".join(c) for c in new)
    stale = sorted(set(CYCLES_ALLOWED) - set(cycles))
    assert not stale, f"fixed: remove these from CYCLES_ALLOWED in {__file__}: {stale}"


def test_no_test_module_imports_another() -> None:
    test_modules = {path.stem for path in TESTS.glob("*.py") if path.stem.startswith(("test_", "conftest"))}
    found: dict[tuple[str, str], int] = {}
    for path in sorted(TESTS.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.partition(".")[0]
                if top in test_modules and top != path.stem:
                    found[(path.stem, top)] = node.lineno
    new = sorted(
        f"{a} (line {line}) imports {b}"
        for (a, b), line in found.items()
        if (a, b) not in TEST_IMPORTS_ALLOWED
    )
    assert not new, "move what they share to tests/support/:\n" + "\n".join(new)
    stale = sorted(set(TEST_IMPORTS_ALLOWED) - set(found))
    assert not stale, f"fixed: remove these from TEST_IMPORTS_ALLOWED in {__file__}: {stale}"
