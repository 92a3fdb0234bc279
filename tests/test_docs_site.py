"""The docs as a reader gets them: the built site's links, the API reference, the examples.

The site is built once, as a contributor builds it (``bash scripts/docs build``: the project's
``mkdocs.yml``, strict), and read back as HTML:

- the build prints mkdocs's progress and nothing else: no warning, no notice;
- every link between pages, and every anchor it names, exists;
- every public module has a reference page with an entry for each name in its ``__all__``
  (the modules are found here by walking the installed package, not by asking the hook
  that writes the pages);
- every fenced code block in README.md and docs/ names its language and is at most 88
  columns wide, and so is every code block of the built site (docstrings' examples and
  signatures included); ruff's formatter keeps docs/'s Python examples at that width
  (docs/ruff.toml), checked by ``ruff format --check .``;
- every "§10" outside code links to the page that defines it;
- the mermaid the site serves is the pinned file.

Building the site starts processes (the build itself; mkdocstrings formats signatures with
ruff), so these tests are end to end. Without mkdocs (the ``docs`` group) they skip.
"""

from __future__ import annotations

import hashlib
import html
import importlib
import pkgutil
import re
import sys
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest

from support.docs_site import ROOT, Build

DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]
WIDTH = 88
MERMAID = "assets/javascripts/mermaid-11.17.2.min.js"
MERMAID_SHA256 = "581ed7d74bd9048d0e3a91363927d72ef22942d7722546b27f7cc29e35390eb8"
FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")


class _Page(HTMLParser):
    """The ids and the link targets of one HTML page."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if values.get("id"):
            self.ids.add(str(values["id"]))
        if values.get("name") and tag == "a":
            self.ids.add(str(values["name"]))
        if tag == "a" and values.get("href"):
            self.links.append(str(values["href"]))


def _parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


PROGRESS = re.compile(
    r"INFO    -  (Cleaning site directory"
    r"|Building documentation to directory: .*"
    r"|Documentation built in [0-9.]+ seconds)"
)
"""The lines a build prints: mkdocs's progress."""


def test_the_build_prints_its_progress_and_nothing_else(docs_build: Build) -> None:
    """No warning and no notice: a line the one who builds the site cannot act on is noise
    that hides the one they can (mkdocs-material's end-of-life notice is silenced by
    scripts/docs, with the reason: docs/development.md)."""
    lines = [line for line in docs_build.output.splitlines() if line.strip()]
    assert [line for line in lines if not PROGRESS.fullmatch(line)] == []
    assert any(line.startswith("INFO    -  Documentation built in") for line in lines), lines


def _target(page: Path, href: str, site: Path) -> tuple[Path, str] | None:
    """The file and anchor a relative link of ``page`` points at; None for another site."""
    parts = urlsplit(href)
    if parts.scheme or parts.netloc or href.startswith(("mailto:", "//")):
        return None
    path = unquote(parts.path)
    if path.startswith("/"):  # the 404 page's links are from the site's root
        target = (site / path.lstrip("/")).resolve()
    else:
        target = page if not path else (page.parent / path).resolve()
    if target.is_dir() or path.endswith("/"):
        target = target / "index.html"
    return target, unquote(parts.fragment)


def test_every_link_and_anchor_in_the_site_exists(site: Path) -> None:
    pages = {path.resolve(): _parse(path) for path in site.rglob("*.html")}
    broken = []
    for path, page in pages.items():
        for href in page.links:
            found = _target(path, href, site)
            if found is None:
                continue
            target, anchor = found
            where = f"{path.relative_to(site.resolve())}: {href}"
            if not target.exists():
                broken.append(f"{where} (no such page)")
            elif anchor and target.suffix == ".html":
                ids = pages[target].ids if target in pages else _parse(target).ids
                if anchor not in ids:
                    broken.append(f"{where} (no anchor {anchor!r})")
    assert not broken, "broken links:\n" + "\n".join(sorted(set(broken)))


def _public_modules() -> list[str]:
    """Every importable module of the package whose dotted name has no part starting with _."""
    import toolnexus

    names = ["toolnexus"]
    for info in pkgutil.walk_packages(toolnexus.__path__, "toolnexus."):
        if not any(part.startswith("_") for part in info.name.split(".")):
            names.append(info.name)
    return names


def _hooks() -> Any:
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        return importlib.import_module("mkdocs_hooks")
    finally:
        sys.path.remove(str(ROOT / "scripts"))


def test_the_public_modules_are_the_ones_the_reference_covers() -> None:
    assert sorted(_hooks().public_modules()) == sorted(_public_modules())


@pytest.mark.parametrize("module", _public_modules())
def test_every_public_name_has_an_entry_in_the_reference(module: str, site: Path) -> None:
    imported = importlib.import_module(module)
    names = getattr(imported, "__all__", None)
    assert names, f"{module} has no __all__: its reference page would be empty"
    page = site / "reference" / module / "index.html"
    assert page.exists(), f"no reference page for {module}"
    ids = _parse(page).ids
    missing = [name for name in names if f"{module}.{name}" not in ids]
    assert not missing, f"{page.relative_to(site)} has no entry for {missing}"


def _blocks(path: Path) -> Iterator[tuple[int, str, list[str]]]:
    """(line number, info string, lines) of every fenced code block of a Markdown file."""
    lines = path.read_text(encoding="utf-8").splitlines()
    number = 0
    while number < len(lines):
        opened = FENCE.match(lines[number])
        if not opened:
            number += 1
            continue
        indent, fence = opened["indent"], opened["fence"]
        start, body = number + 1, []
        number += 1
        while number < len(lines):
            line = lines[number]
            if line.strip().startswith(fence) and not line.strip().strip(fence[0]):
                break
            body.append(line[len(indent) :] if line.startswith(indent) else line)
            number += 1
        number += 1
        yield start, opened["info"].strip(), body


def _where(path: Path, line: int) -> str:
    return f"{path.relative_to(ROOT)}:{line}"


def test_every_code_block_names_its_language_and_fits_in_88_columns() -> None:
    problems = []
    for path in PAGES:
        for line, info, body in _blocks(path):
            if not info:
                problems.append(f"{_where(path, line)}: a code block with no language")
            for offset, text in enumerate(body, start=1):
                if len(text) > WIDTH:
                    where = _where(path, line + offset)
                    problems.append(f"{where}: {len(text)} columns (at most {WIDTH})")
    assert not problems, "\n".join(problems)


PRE = re.compile(r"<pre[^>]*>(.*?)</pre>", re.DOTALL)
TAG = re.compile(r"<[^>]+>")
OBJECT = '<div class="doc doc-object '
ATTRIBUTE = '<div class="doc doc-object doc-attribute">'
SIGNATURE = '<div class="doc-signature highlight">'


def test_no_code_block_in_the_site_is_wider_than_88_columns(site: Path) -> None:
    """The pages' blocks, and also the docstrings' examples and the signatures the
    reference draws from the source. A constant's signature (``NAME: type = value``) is
    left out: its value may be long, and the site's CSS wraps it."""
    wide = []
    for page in sorted(site.rglob("*.html")):
        text = page.read_text(encoding="utf-8")
        for block in PRE.finditer(text):
            signature = text.endswith(SIGNATURE, 0, block.start())
            inside = text.rfind(OBJECT, 0, block.start())
            if signature and inside == text.rfind(ATTRIBUTE, 0, block.start()) >= 0:
                continue
            for line in html.unescape(TAG.sub("", block[1])).splitlines():
                if len(line) > WIDTH:
                    wide.append(f"{page.relative_to(site)}: {len(line)}: {line.strip()[:60]}")
    assert not wide, "code wider than 88 columns:\n" + "\n".join(wide)


def _prose(path: Path) -> Iterator[tuple[int, str]]:
    """(line number, text) of each line outside fenced code, headings and front matter."""
    inside: str | None = None
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        opened = FENCE.match(line)
        if inside is None and opened:
            inside = opened["fence"]
            continue
        if inside is not None:
            if line.strip().startswith(inside) and not line.strip().strip(inside[0]):
                inside = None
            continue
        if not line.startswith("#"):
            yield number, line


SECTION_10 = re.compile(r"§\s*10")
INLINE_CODE = re.compile(r"`[^`]*`")
LINK_TEXT = re.compile(r"\[([^\]]*)\]\(([^)]*)\)")


def test_every_use_of_section_10_links_to_its_definition() -> None:
    unlinked = []
    for path in PAGES:
        if path == DOCS / "contract.md":
            continue
        for number, line in _prose(path):
            text = INLINE_CODE.sub("", line)
            linked = [m for m in LINK_TEXT.finditer(text) if "contract.md" in m[2]]
            spans = [range(m.start(1), m.end(1)) for m in linked]
            for use in SECTION_10.finditer(text):
                if not any(use.start() in span for span in spans):
                    unlinked.append(f"{_where(path, number)}: {line.strip()[:70]}")
    assert not unlinked, "a §10 that does not link to contract.md:\n" + "\n".join(unlinked)


def test_the_site_serves_the_pinned_mermaid(site: Path) -> None:
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert f"- {MERMAID}" in config, "mkdocs.yml's extra_javascript lists the pinned mermaid"
    hooks = _hooks()
    assert (hooks.MERMAID_URI, hooks.MERMAID_SHA256) == (MERMAID, MERMAID_SHA256)
    for where in (hooks.MERMAID_CACHE, site / MERMAID):
        digest = hashlib.sha256(where.read_bytes()).hexdigest()
        assert digest == MERMAID_SHA256, f"{where} is not mermaid 11.17.2's dist/mermaid.min.js"


def test_the_home_page_draws_two_diagrams_from_mermaid_blocks(site: Path) -> None:
    html = (site / "index.html").read_text(encoding="utf-8")
    assert html.count('<pre class="mermaid">') == 2
    assert MERMAID in html
