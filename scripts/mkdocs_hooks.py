"""mkdocs hooks: the API reference, one page per public module, found by walking the source.

A module is public when no part of its dotted name starts with an underscore
(``toolnexus.mcp``, ``toolnexus.testing.strategies``; not ``toolnexus._wire`` nor
``toolnexus.__main__``). Each gets a page, ``reference/<module>.md``, whose entries
mkdocstrings draws from the module's ``__all__`` (the ``public`` filter): there is no
list of names to keep by hand, and a module added later appears by itself, in the nav
under the entry whose page is ``reference/index.md``. The changelog page is
``CHANGELOG.md`` from the repository root, so it is written in one place.

``tests/test_docs_site.py`` imports this file to know the same modules.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "toolnexus"
REFERENCE_INDEX = "reference/index.md"


def public_modules(package: Path = PACKAGE) -> list[str]:
    """The dotted names of the package's public modules, the package itself first."""
    found = []
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        if any(part.startswith("_") for part in parts):
            continue
        found.append(".".join(parts))
    return sorted(found, key=lambda name: (name.count("."), name))


def source_of(module: str, package: Path = PACKAGE) -> Path:
    relative = Path(*module.split(".")[1:])
    as_package = package / relative / "__init__.py"
    return as_package if as_package.exists() else (package / relative).with_suffix(".py")


def summary(module: str) -> str:
    """The first paragraph of the module's docstring, read without importing it."""
    tree = ast.parse(source_of(module).read_text(encoding="utf-8"))
    doc = ast.get_docstring(tree) or ""
    return " ".join(doc.split("\n\n", 1)[0].split())


def page_path(module: str) -> str:
    return f"reference/{module}.md"


def module_page(module: str) -> str:
    # The module's own heading is the page's title, with the module's name as its anchor,
    # so a docstring's link to the module ([...][toolnexus.durable]) lands on it.
    return (
        f"::: {module}\n"
        "    options:\n"
        "      show_root_heading: true\n"
        "      show_root_full_path: true\n"
        "      heading_level: 1\n"
        "      members_order: source\n"
        "      filters: public\n"
        "      show_if_no_docstring: true\n"
        "      show_submodules: false\n"
    )


def index_page(modules: list[str]) -> str:
    rows = "\n".join(f"| [`{m}`]({m}.md) | {summary(m) or ' '} |" for m in modules)
    return (
        "# API reference\n\n"
        "One page per public module, each entry drawn from the module's docstrings. A\n"
        "page lists exactly the names in the module's `__all__`; the names a host uses most\n"
        "are also importable from `toolnexus` itself.\n\n"
        "| module | what it holds |\n| --- | --- |\n" + rows + "\n"
    )


def _nav_with_modules(nav: Any, modules: list[str]) -> Any:
    if isinstance(nav, list):
        return [_nav_with_modules(item, modules) for item in nav]
    if isinstance(nav, dict):
        out = {}
        for title, value in nav.items():
            if value == REFERENCE_INDEX:
                value = [REFERENCE_INDEX, *({m: page_path(m)} for m in modules)]
            else:
                value = _nav_with_modules(value, modules)
            out[title] = value
        return out
    return nav


def on_config(config: Any) -> Any:
    config["nav"] = _nav_with_modules(config["nav"], public_modules())
    return config


def on_files(files: Any, config: Any) -> Any:
    from mkdocs.structure.files import File

    modules = public_modules()
    generated = {REFERENCE_INDEX: index_page(modules)}
    generated.update({page_path(m): module_page(m) for m in modules})
    generated["changelog.md"] = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    for uri, content in generated.items():
        files.append(File.generated(config, uri, content=content))
    return files
