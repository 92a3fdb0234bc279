"""mkdocs hooks: the API reference, one page per public module, found by walking the source.

A module is public when no part of its dotted name starts with an underscore
(``toolnexus.mcp``, ``toolnexus.testing.strategies``; not ``toolnexus._wire`` nor
``toolnexus.__main__``). Each gets a page, ``reference/<module>.md``, whose entries
mkdocstrings draws from the module's ``__all__`` (the ``public`` filter): there is no
list of names to keep by hand, and a module added later appears by itself, in the nav
under the entry whose page is ``reference/index.md``. The changelog page is
``CHANGELOG.md`` from the repository root, so it is written in one place.

mermaid, which mkdocs-material uses to draw the diagrams, is served by the site itself (a
reader offline never reaches a CDN). It is not kept in this repository: the first build
takes the pinned release from the npm registry (``npm pack mermaid@MERMAID_VERSION``),
checks its ``dist/mermaid.min.js`` against ``MERMAID_SHA256`` and keeps it in ``.mermaid/``
(ignored by git); the site serves it as ``MERMAID_URI``.

``tests/test_docs_site.py`` imports this file to know the same modules and the same pin.
"""

from __future__ import annotations

import ast
import hashlib
import os
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "toolnexus"
REFERENCE_INDEX = "reference/index.md"

MERMAID_VERSION = "11.17.2"  # mkdocs-material 9 draws with mermaid 11
MERMAID_SHA256 = "581ed7d74bd9048d0e3a91363927d72ef22942d7722546b27f7cc29e35390eb8"
MERMAID_URI = f"assets/javascripts/mermaid-{MERMAID_VERSION}.min.js"
MERMAID_CACHE = ROOT / ".mermaid" / f"mermaid-{MERMAID_VERSION}.min.js"


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def mermaid_file(cache: Path = MERMAID_CACHE) -> Path:
    """The pinned ``mermaid.min.js``, fetched from the npm registry on first use.

    Raises ``RuntimeError`` with the reason when npm cannot fetch it or the file is not the
    pinned one. Two builds at once each write their own temporary copy, then rename it.
    """
    if cache.exists() and _sha256(cache) == MERMAID_SHA256:
        return cache
    cache.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache.parent) as tmp:
        spec = f"mermaid@{MERMAID_VERSION}"
        npm = shutil.which("npm")
        if npm is None:
            raise RuntimeError(f"the docs need {spec} from the npm registry, and npm is not installed")
        done = subprocess.run(
            [npm, "pack", spec, "--silent", "--pack-destination", tmp],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        if done.returncode != 0:
            reason = (done.stderr.strip().splitlines() or ["no output"])[-1]
            raise RuntimeError(f"npm pack {spec} failed: {reason}")
        (tarball,) = Path(tmp).glob("mermaid-*.tgz")
        with tarfile.open(tarball) as archive:
            member = archive.extractfile("package/dist/mermaid.min.js")
            if member is None:
                raise RuntimeError(f"{spec} has no dist/mermaid.min.js")
            fetched = Path(tmp) / "mermaid.min.js"
            fetched.write_bytes(member.read())
        if _sha256(fetched) != MERMAID_SHA256:
            raise RuntimeError(f"{spec}'s dist/mermaid.min.js is not the pinned one (sha256 differs)")
        os.replace(fetched, cache)
    return cache


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
        "      inherited_members: true\n"
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
    try:
        mermaid = mermaid_file()
    except (OSError, RuntimeError, subprocess.TimeoutExpired) as err:
        from mkdocs.exceptions import PluginError

        raise PluginError(f"mermaid for the diagrams: {err}") from err
    files.append(File.generated(config, MERMAID_URI, abs_src_path=str(mermaid)))
    return files
