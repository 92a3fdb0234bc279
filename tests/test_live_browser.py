"""Live questions in a real browser (Debian's Chromium through Playwright), the inbox served by
``inbox.serving`` in this process: a live question comes first, marked as a server waiting
now; two people open it, one answers, and the other's page says so within a second and stops
taking input; a question withdrawn while its page is open says so and refuses an answer; and
the reference server (``server-everything``, the TypeScript SDK) asking its dozen-field form
through ``toolnexus call --inbox``, answered in Chromium.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from support import forkserver
from support.browser import browser
from support.environment import environment
from toolnexus import Answer, Request, inbox
from toolnexus.durable import SqliteStore, ask_in, open_store

__all__ = ["browser"]

TOKEN = "live-browser-token-0123456789"
TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Name", "minLength": 2},
        "replicas": {"type": "integer", "title": "Replicas", "minimum": 1, "maximum": 10},
    },
    "required": ["name"],
}


class Asker:
    """A host process's call, held open by ``ask_in`` in a thread of its own, waiting for
    the answer given in the browser; ``end()`` ends the call unanswered, as a host that gives
    up does."""

    def __init__(self, store: SqliteStore, request: Request, **options: Any) -> None:
        self.result: list[Answer] = []
        self.ended = False
        resolver = ask_in(store, server="deployer", target="deploy", **options)
        started = threading.Event()

        async def call() -> None:
            self._loop, self._task = asyncio.get_running_loop(), asyncio.current_task()
            started.set()
            try:
                self.result.append(await resolver(request))
            except asyncio.CancelledError:
                self.ended = True

        self.thread = threading.Thread(target=asyncio.run, args=(call(),), daemon=True)
        self.thread.start()
        started.wait(10)

    def answer(self, timeout: float = 30) -> Answer:
        self.thread.join(timeout)
        assert self.result, "the call got no answer"
        return self.result[0]

    def end(self, timeout: float = 30) -> None:
        """Cancel the call; return once it has ended (its question withdrawn)."""
        assert self._task is not None
        self._loop.call_soon_threadsafe(self._task.cancel)
        self.thread.join(timeout)
        assert self.ended
        assert not self.result


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[SqliteStore, str]]:
    store = SqliteStore(tmp_path / "live.db")
    with inbox.serving(store, token=TOKEN, poll_interval=0.2) as serving:
        yield store, serving.address.split("/?")[0]
    store.close()


def wait_live(store: SqliteStore, count: int = 1) -> list[str]:
    watcher = store.watch()
    deadline = time.monotonic() + 30
    while len(live := store.calls(status="live")) < count:
        assert time.monotonic() < deadline, "no live question"
        watcher.wait(0.5)
    return [call.key for call in live]


@pytest.fixture(scope="module")
def people(browser: Browser) -> Iterator[tuple[Page, Page]]:
    """Two people's pages (contexts of their own), for the module: a new page costs about 2 s
    of Chromium's CPU, a navigation a fraction of that (support/browser.py)."""
    contexts = [browser.new_context(viewport={"width": 1100, "height": 900}) for _ in range(2)]
    try:
        first, second = (context.new_page() for context in contexts)
        yield first, second
    finally:
        for context in contexts:
            context.close()


def signed_in(page: Page, base: str) -> Page:
    """``page``, blank and signed out (nothing of the test before), then signed in at ``base``."""
    page.goto("about:blank")
    page.context.clear_cookies()
    page.goto(f"{base}/?token={TOKEN}")
    return page


def test_a_live_question_comes_first_and_the_second_person_sees_it_answered_elsewhere(
    people: tuple[Page, Page], served: tuple[SqliteStore, str]
) -> None:
    store, base = served
    from toolnexus import Request as Req
    from toolnexus.durable import Pending

    parked = Pending("tools/call", "report", {}, None, ("k",), (Req("elc-p", "input", "Parked?"),), {}, "srv")
    store.put(parked)  # a parked call, newer than nothing: the live one is still shown first
    asker = Asker(store, Request("elc-live", "input", "Deploy where?", None, {"schema": SCHEMA}), timeout=600)
    (key,) = wait_live(store)
    first, second = (signed_in(page, base) for page in people)
    try:
        waiting = first.locator("section.waiting-now")
        expect(waiting).to_contain_text("Servers waiting now")
        expect(waiting).to_contain_text("a server is waiting now")
        expect(waiting).to_contain_text("min left")  # its time left, from ask_in's timeout
        expect(waiting.locator(f'a[href="/calls/{key}"]')).to_be_visible()
        for page in (first, second):
            page.goto(f"{base}/calls/{key}")
            expect(page.locator(".meta")).to_contain_text("the server is waiting now")
            expect(page.locator(".notes").first).to_contain_text("text, length at least 2 characters")
        expect(second.locator("section.question button.primary")).to_be_enabled()
        first.fill("#q0-f0", "Ada")
        first.fill("#q0-f1", "3")
        first.click("section.question button.primary")
        expect(first.locator(".next")).to_contain_text("has it now")
        got = asker.answer()
        assert (got.ok, got.data) == (True, {"name": "Ada", "replicas": 3})
        # The second person's page, without a reload, within a second: it says so, and takes no input.
        expect(second.locator(".closed-note")).to_contain_text("answered elsewhere", timeout=1500)
        expect(second.locator("section.question button.primary")).to_be_disabled()
        expect(second.locator("#q0-f0")).to_be_disabled()
        late = second.request.post(
            f"{base}/calls/{key}/elc-live",
            form={"csrf": _csrf(second), "action": "decline"},
            headers={"Origin": base},
        )
        assert late.status == 409
        assert "It was accepted" in late.text()  # its outcome, never its values
        assert "Ada" not in late.text()
    finally:
        for page in people:
            page.goto("about:blank")  # its live updates end with the test's inbox


def _csrf(page: Page) -> str:
    value: str = page.locator('input[name="csrf"]').first.get_attribute("value") or ""
    return value


def test_a_question_withdrawn_while_its_page_is_open_says_so_and_records_no_answer(
    people: tuple[Page, Page], served: tuple[SqliteStore, str]
) -> None:
    store, base = served
    asker = Asker(store, Request("elc-w", "input", "Approve?", None, {"schema": SCHEMA}))
    (key,) = wait_live(store)
    page = signed_in(people[0], base)
    try:
        page.goto(f"{base}/calls/{key}")
        page.fill("#q0-f0", "Typed, not sent")
        asker.end()  # the host gives up while the page is open, something typed
        expect(page.locator(".closed-note")).to_contain_text("withdrawn", timeout=5000)
        expect(page.locator(".closed-note")).to_contain_text("ended before an answer came")
        expect(page.locator("#q0-f0")).to_have_value("Typed, not sent")  # kept, to copy
        expect(page.locator("section.question button.primary")).to_be_disabled()
        late = page.request.post(
            f"{base}/calls/{key}/elc-w",
            form={"csrf": _csrf(page), "action": "accept", "f0": "Too late"},
            headers={"Origin": base},
        )
        assert late.status == 410
        assert "recorded nowhere" in late.text()
        assert store.answers(key) == {}
        page.goto(f"{base}/calls/{key}")  # drawn again: withdrawn, no form
        expect(page.locator(".outcome")).to_contain_text("withdrawn")
        expect(page.locator("form.answer")).to_have_count(0)
    finally:
        page.goto("about:blank")


def test_the_reference_servers_form_answered_in_chromium_through_call_inbox(
    people: tuple[Page, Page], server_everything: str, tmp_path: Path
) -> None:
    """A server nobody here wrote asks, mid-call (2025-11-25), its form of a dozen fields;
    ``toolnexus call --inbox`` holds the call open; a person answers in Chromium."""
    spec = str(tmp_path / "questions.db")
    proc = forkserver.popen(
        [
            str(Path(sys.executable).with_name("toolnexus")),
            *("call", "--stdio", server_everything, "--inbox", spec, "trigger-elicitation-request", "{}"),
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment(tmp_path),
        cwd=tmp_path,
        start_new_session=True,
    )
    try:
        store = _wait_for_store(spec, proc)
        with store, inbox.serving(store, token=TOKEN) as serving:
            (key,) = wait_live(store)
            base = serving.address.split("/?")[0]
            page = signed_in(people[0], base)
            try:
                expect(page.locator("section.waiting-now")).to_contain_text("mcp-servers/everything")
                page.goto(f"{base}/calls/{key}")
                expect(page.locator("h1")).to_contain_text("trigger-elicitation-request")
                expect(page.locator("section.question .field")).to_have_count(13)
                page.fill("#q0-f0", "Grace Hopper")  # the one required field; the rest keep defaults
                page.click("section.question button.primary")
                expect(page.locator(".next")).to_contain_text("has it now")
            finally:
                page.goto("about:blank")
            out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    assert "Grace Hopper" in out
    assert "accept" in out.lower()


def _wait_for_store(spec: str, proc: Any) -> SqliteStore:
    deadline = time.monotonic() + 60
    while not Path(spec).exists():
        assert time.monotonic() < deadline
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        time.sleep(0.05)
    store = open_store(spec)
    assert isinstance(store, SqliteStore)
    return store
