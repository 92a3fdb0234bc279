"""A real browser for the tests: Debian's Chromium (``/usr/bin/chromium``) driven by Playwright.

Playwright's own browser download is not reachable here, so Chromium is launched from the
system with ``executable_path``; the test command installs it (``apt-get install chromium``)
when missing. One browser per test module, shared by its tests. A new page costs about 2 s
of Chromium's CPU (0.4 s to open it, then about a second of the browser's own work), a new
context next to nothing, a navigation a fraction (measured): a module keeps one page for the
tests that need no context options of their own, each starting it blank, cookies cleared.
Not one browser per session: while Playwright's sync API runs it holds an asyncio event loop running
in the main thread, and every later test of the session that runs a loop there
(``anyio.run``, ``asyncio.run``, pytest's anyio plugin) would fail; at the end of the module
it stops, and the thread is free again. Inside such a module, run async code in a thread of
its own.

```python
from support.browser import browser, launch  # the fixture, and the launcher for scripts

def test_page(browser: Browser) -> None:
    page = browser.new_context().new_page()
```

Each navigation keeps its renderer and no back-forward cache keeps the page it left (the
``--disable-features`` of [ARGS][]): the tests never go back, and the docs' thirty pages cost
a fifth less of Chromium's CPU (24 s to 19 s, measured).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from .needs import unavailable

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Playwright

__all__ = ["ARGS", "CHROMIUM", "browser", "launch"]

CHROMIUM = os.environ.get("TOOLNEXUS_CHROMIUM", "/usr/bin/chromium")
"""The Chromium the tests drive (``TOOLNEXUS_CHROMIUM`` overrides it)."""
ARGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-features=BackForwardCache,RenderDocument,ProactivelySwapBrowsingInstance",
)
"""Headless, as root, with nothing that calls home; a navigation keeps its renderer."""


def launch(playwright: Playwright) -> Browser:
    """Chromium, headless, from the system; a test without it is skipped (failed in CI), saying
    how to install it."""
    if shutil.which(CHROMIUM) is None:
        unavailable(
            "Chromium", f"there is none at {CHROMIUM} (apt-get install chromium, or set TOOLNEXUS_CHROMIUM)"
        )
    return playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=list(ARGS))


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """One Chromium for the test module."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = launch(playwright)
        try:
            yield launched
        finally:
            launched.close()
