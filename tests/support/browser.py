"""A real browser for the tests: Debian's Chromium (``/usr/bin/chromium``) driven by Playwright.

Playwright's own browser download is not reachable here, so Chromium is launched from the
system with ``executable_path``; the test command installs it (``apt-get install chromium``)
when missing. One browser per test module, shared by its tests: each test opens its own
context (its own cookies), which costs milliseconds where a browser start costs a second.
Not one per session: while Playwright's sync API runs it holds an asyncio event loop running
in the main thread, and every later test of the session that runs a loop there
(``anyio.run``, ``asyncio.run``, pytest's anyio plugin) would fail; at the end of the module
it stops, and the thread is free again. Inside such a module, run async code in a thread of
its own.

```python
from support.browser import browser, launch  # the fixture, and the launcher for scripts

def test_page(browser: Browser) -> None:
    page = browser.new_context().new_page()
```
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

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
)
"""Headless, as root, with nothing that calls home."""


def launch(playwright: Playwright) -> Browser:
    """Chromium, headless, from the system. Fails, saying how to install it, when it is missing."""
    if shutil.which(CHROMIUM) is None:
        pytest.fail(
            f"no Chromium at {CHROMIUM}: install it with `apt-get install chromium` "
            "(scripts/test does), or set TOOLNEXUS_CHROMIUM"
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
