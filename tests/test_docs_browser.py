"""The built docs site in a real browser: headless Chromium, every other host blocked.

The site is served from 127.0.0.1 and every request to any other host is aborted (and
recorded, so a page that tries to reach a CDN fails the test). A 1280 x 2000 window:

- the home page shows the install line, the wiring example and two drawn diagrams
  above the fold;
- no code on any page, a block, a signature or inline, scrolls sideways (every ``<pre>`` and
  every ``<code>`` of every built page is measured).

mkdocs-material draws each mermaid diagram into a *closed* shadow root, which neither the
page's scripts nor Playwright's selectors can enter. The Chrome DevTools Protocol can:
``DOM.getDocument`` with ``pierce: true`` returns closed shadow roots with the rest of the
tree, so the test finds each diagram's ``<svg>`` there, reads its text, and asks
``DOM.getBoxModel`` where it was laid out.
"""

from __future__ import annotations

import functools
import http.server
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import pytest

from support.browser import browser  # noqa: F401 - the session's Chromium, a fixture

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page, Route

WIDTH, HEIGHT = 1280, 2000
MERMAID = "/assets/javascripts/mermaid-11.17.2.min.js"


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def site_url(site: Path) -> Iterator[str]:
    handler = functools.partial(_Quiet, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


class _Offline:
    """A page whose requests to any host but 127.0.0.1 are aborted, and recorded."""

    skip_scripts: tuple[str, ...] = ()
    """Local scripts not to load (no part of what a test looks at, and slow to parse)."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.elsewhere: list[str] = []
        self.errors: list[str] = []
        self.page.route("**/*", self._route)
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))

    def _route(self, route: Route) -> None:
        url = urlsplit(route.request.url)
        if url.hostname == "127.0.0.1":
            if url.path.endswith(self.skip_scripts):
                route.abort()
            else:
                route.continue_()
        else:
            self.elsewhere.append(route.request.url)
            route.abort()


@pytest.fixture(scope="module")
def tab(browser: Browser) -> Iterator[_Offline]:  # noqa: F811 - the fixture above
    """The module's page: a new page costs about 2 s of Chromium's CPU (support/browser.py)."""
    context = browser.new_context(viewport={"width": WIDTH, "height": HEIGHT})
    try:
        yield _Offline(context.new_page())
    finally:
        context.close()


@pytest.fixture
def offline(tab: _Offline) -> _Offline:
    """The module's page, blank, with nothing recorded and every local script loaded."""
    tab.page.goto("about:blank")
    tab.skip_scripts = ()
    tab.elsewhere.clear()
    tab.errors.clear()
    return tab


def _diagrams(page: Page) -> list[dict[str, Any]]:
    """Each mermaid diagram's drawn SVG: its text and its box, read through the CDP."""
    cdp = page.context.new_cdp_session(page)
    try:
        root = cdp.send("DOM.getDocument", {"depth": -1, "pierce": True})["root"]
        found: list[dict[str, Any]] = []
        for host in _walk(root):
            attributes = host.get("attributes", [])  # name, value, name, value, ...
            classes = dict(zip(attributes[::2], attributes[1::2], strict=True)).get("class", "")
            if host.get("nodeName") != "DIV" or "mermaid" not in classes.split():
                continue
            inside = [node for shadow in host.get("shadowRoots", []) for node in _walk(shadow)]
            svgs = [node for node in inside if node.get("nodeName", "").lower() == "svg"]
            if not svgs:
                found.append({"svg": False})
                continue
            text = " ".join(
                node["nodeValue"].strip()
                for node in _walk(svgs[0])
                if node.get("nodeType") == 3 and node.get("nodeValue", "").strip()
            )
            model = cdp.send("DOM.getBoxModel", {"backendNodeId": svgs[0]["backendNodeId"]})
            quad = model["model"]["border"]
            box = {"top": min(quad[1::2]), "bottom": max(quad[1::2]), "width": model["model"]["width"]}
            found.append({"svg": True, "text": text, **box})
        return found
    finally:
        cdp.detach()


def _walk(node: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield node
    for child in node.get("children", []):
        yield from _walk(child)
    for shadow in node.get("shadowRoots", []):
        yield from _walk(shadow)


def test_the_home_page_shows_install_example_and_two_diagrams_above_the_fold(
    site_url: str, offline: _Offline
) -> None:
    page = offline.page
    page.goto(site_url)
    # mkdocs-material swaps each <pre class="mermaid"> for a <div class="mermaid">, which
    # holds the shadow root, once mermaid has drawn it.
    page.wait_for_function(
        "document.querySelectorAll('div.mermaid').length === 2 && !document.querySelector('pre.mermaid')",
        timeout=20_000,
    )
    install = page.locator("pre code", has_text="pip install").first
    example = page.locator("pre code", has_text="elicitation_callback(wait_for)").first
    for what, block in (("the install line", install), ("the wiring example", example)):
        box = block.bounding_box()
        assert box is not None, f"{what} is not on the page"
        assert block.is_visible(), f"{what} is not shown"
        assert box["y"] + box["height"] <= HEIGHT, f"{what} ends below the fold: {box}"

    diagrams = _diagrams(page)
    assert len(diagrams) == 2, diagrams
    assert all(d["svg"] for d in diagrams), f"a diagram was not drawn: {diagrams}"
    inline, parked = diagrams
    for word in ("mcp.Client", "wait_for", "Request", "Answer"):
        assert word in inline["text"], inline
    for word in ("store", "inbox", "worker", "Pending"):
        assert word in parked["text"], parked
    for diagram in diagrams:
        assert diagram["width"] > 300, diagram
        assert diagram["bottom"] - diagram["top"] > 150, diagram
        assert diagram["bottom"] <= HEIGHT, f"a diagram ends below the fold: {diagram}"

    assert offline.elsewhere == [], "the page reached for another host"
    assert offline.errors == []


MEASURE = """() => {
  // Every code block and every piece of code: each <pre> (a page's block, a signature, and a
  // diagram's source, as a reader whose mermaid does not load sees it) and each <code>, in a
  // block or inline.
  const code = [...document.querySelectorAll('pre, code')];
  return {
    blocks: code.filter(e => e.tagName === 'PRE').length,
    wide: code.filter(e => e.scrollWidth > e.clientWidth + 1).map(e =>
      `<${e.tagName.toLowerCase()}> ${e.scrollWidth} px in ${e.clientWidth}: ` +
      e.textContent.trim().split('\\n')[0].slice(0, 60)),
  };
}"""
"""What one page's code looks like laid out: how many blocks, and those wider than their box."""


def test_no_code_block_scrolls_sideways_on_any_page(site: Path, site_url: str, offline: _Offline) -> None:
    page = offline.page
    # Mermaid (3.5 MB to parse on every page) and the search index (400 KB that the search
    # worker indexes on every page): neither holds or lays out a code block.
    offline.skip_scripts = (MERMAID, "/search/search_index.json")
    pages = sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html"))  # 404.html too
    assert len(pages) > 10, pages
    wide, measured, written = [], 0, 0
    for path in pages:
        html = (site / path).read_text(encoding="utf-8")
        written += len(re.findall(r"<pre[\s>]", html))
        page.goto(site_url + path, wait_until="domcontentloaded")  # the styles are in
        found = page.evaluate(MEASURE)
        measured += found["blocks"]
        wide += [f"{path}: {line}" for line in found["wide"]]
    assert measured == written > 100, "every code block of every page is measured"
    assert not wide, f"code that scrolls sideways at {WIDTH} px:\n" + "\n".join(wide)
    # Without the local copy, mkdocs-material asks a CDN for mermaid on the home page.
    assert [url for url in offline.elsewhere if "/mermaid@" not in url] == []
