"""The inbox in a real browser: Debian's Chromium driven by Playwright, against the inbox
served by uvicorn, with calls parked from a real ``MCPServer`` over streamable HTTP
(tests/servers/inbox_server.py, in a process of its own) and resumed through it.

Screenshots of the pages are taken on the way; with ``TOOLNEXUS_SCREENSHOTS=DIR`` they are
kept in DIR (``docs/images`` for the docs: ``TOOLNEXUS_SCREENSHOTS=docs/images pytest
tests/test_inbox_browser.py``).
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest
import uvicorn
from playwright.sync_api import Browser, ConsoleMessage, Dialog, Error, Page, Request, ViewportSize, expect

from servers.inbox_server import in_a_thread, park, resume
from support.axe import ensure_axe
from support.browser import browser
from support.http_process import served_mcp_url
from toolnexus import Answer, inbox
from toolnexus.durable import SqliteStore

__all__ = ["browser"]  # the session's Chromium, a fixture

TOKEN = "browser-test-token-0123456789"


@dataclass
class Inbox:
    url: str
    store: SqliteStore
    server: str
    """The MCP server's streamable HTTP address."""

    # Playwright's sync API holds an event loop in this thread: the MCP client runs in another.

    def park(self, tool: str, arguments: dict[str, Any] | None = None) -> str:
        key: str = in_a_thread(lambda: park(self.store, tool, arguments, url=self.server, expires_in=3600))
        return key

    def work(self) -> list[Any]:
        """What a worker does: claim and resume every ready call, record each outcome."""

        async def run() -> list[Any]:
            from mcp import Client

            from toolnexus import durable

            async with Client(self.server, elicitation_callback=durable.park_only) as client:
                return await durable.resume_ready(client, self.store)

        outcomes: list[Any] = in_a_thread(run)
        return outcomes

    def resume(self, key: str) -> dict[str, Any]:
        result: dict[str, Any] = in_a_thread(lambda: resume(self.store, key, url=self.server))
        return result


@pytest.fixture(scope="module")
def mcp_server() -> Iterator[str]:
    """The tests' MCP server over streamable HTTP, in a process of its own."""
    with served_mcp_url("inbox_server") as url:
        yield url


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, mcp_server: str) -> Iterator[Inbox]:
    """The inbox for a fresh store, served by uvicorn on 127.0.0.1 in a thread of this process."""
    store = SqliteStore(tmp_path_factory.mktemp("inbox") / "pending.db")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    port = sock.getsockname()[1]
    app = inbox.app(store, token=TOKEN, allowed_hosts=[f"127.0.0.1:{port}"], poll_interval=0.2)
    server = uvicorn.Server(
        uvicorn.Config(app, log_config=None, access_log=False, lifespan="off", timeout_graceful_shutdown=1)
    )
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline, "the inbox did not start"
        time.sleep(0.02)
    try:
        yield Inbox(f"http://127.0.0.1:{port}", store, mcp_server)
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()
        store.close()


@dataclass
class Watched:
    page: Page
    dialogs: list[str]
    errors: list[str]
    requests: list[str]


@pytest.fixture(scope="module")
def tab(browser: Browser) -> Iterator[Page]:
    """The page of the module's tests that need no context options of their own: a new page
    costs about 2 s of Chromium's CPU, a navigation a fraction of that (support/browser.py)."""
    context = browser.new_context(viewport={"width": 1100, "height": 900})
    try:
        yield context.new_page()
    finally:
        context.close()


@pytest.fixture
def fresh(tab: Page) -> Page:
    """The module's page, blank and signed out: no cookie, nothing of the test before."""
    tab.goto("about:blank")
    tab.context.clear_cookies()
    return tab


@pytest.fixture
def watched(fresh: Page, served: Inbox) -> Iterator[Watched]:
    """A signed-in page, every dialog, console error and request noted (for this test alone)."""
    page = fresh
    seen = Watched(page, [], [], [])

    def on_dialog(dialog: Dialog) -> None:
        seen.dialogs.append(dialog.message)
        dialog.dismiss()

    def on_console(message: ConsoleMessage) -> None:
        # A page of problems comes with status 422, which Chromium reports; nothing else may.
        if message.type == "error" and "status of 422" not in message.text:
            seen.errors.append(message.text)

    def on_error(error: Error) -> None:
        seen.errors.append(str(error))

    def on_request(request: Request) -> None:
        seen.requests.append(request.url)

    page.on("dialog", on_dialog)
    page.on("console", on_console)
    page.on("pageerror", on_error)
    page.on("request", on_request)
    try:
        page.goto(f"{served.url}/?token={TOKEN}")
        assert page.url == f"{served.url}/"  # the token left the address for a cookie
        yield seen
    finally:  # the page goes on to the next test
        page.remove_listener("dialog", on_dialog)
        page.remove_listener("console", on_console)
        page.remove_listener("pageerror", on_error)
        page.remove_listener("request", on_request)


def screenshot(page: Page, tmp_path: Path, name: str) -> None:
    path = tmp_path / f"inbox-{name}.png"
    page.screenshot(path=path, full_page=True)
    keep = os.environ.get("TOOLNEXUS_SCREENSHOTS")
    if keep:
        shutil.copyfile(path, Path(keep) / path.name)


def open_call(page: Page, served: Inbox, key: str) -> None:
    page.goto(f"{served.url}/")
    page.locator(f'a[href="/calls/{key}"]').click()
    expect(page).to_have_url(f"{served.url}/calls/{key}")


def field(page: Page, index: int) -> Any:
    return page.locator(f"#q0-f{index}")


def fill_every_field(page: Page) -> None:
    field(page, 0).fill("Ada Lovelace")
    field(page, 1).fill("ada@example.com")
    field(page, 2).fill("https://ada.example.org/")
    field(page, 3).fill("2026-12-24")
    field(page, 4).fill("2026-12-24T09:30")
    field(page, 5).fill("3")
    field(page, 6).fill("0.25")
    field(page, 7).uncheck()
    page.get_by_label("Production").check()
    field(page, 9).select_option(label="us-east-1")
    for name in ("lint", "unit", "e2e"):  # one more than maxItems: the browser does not know
        page.get_by_label(name, exact=True).check()


EVERY_FIELD_CONTENT = {
    "name": "Ada Lovelace",
    "email": "ada@example.com",
    "homepage": "https://ada.example.org/",
    "start": "2026-12-24",
    "window": "2026-12-24T09:30:00Z",
    "replicas": 3,
    "ratio": 0.25,
    "notify": False,
    "environment": "production",
    "region": "us-east-1",
    "checks": ["lint", "unit"],
}


def test_every_field_type_a_problem_corrected_then_resumed(
    watched: Watched, served: Inbox, tmp_path: Path
) -> None:
    served.park("sign_in", {"tag": "docs"})
    served.park("pair")
    key = served.park("every_field", {"ticket": "T-100"})
    page = watched.page
    page.goto(f"{served.url}/")
    row = page.locator("tr", has=page.locator(f'a[href="/calls/{key}"]'))
    expect(row).to_contain_text("waiting")
    expect(row).to_contain_text("inbox-test-server")
    expect(row).to_contain_text('{"ticket": "T-100"}')
    expect(row).to_contain_text("Deploy ticket T-100")
    screenshot(page, tmp_path, "list")

    open_call(page, served, key)
    expect(field(page, 0)).to_have_attribute("minlength", "2")
    expect(field(page, 0)).not_to_have_attribute("pattern", re.compile(".*"))
    expect(page.locator("#q0-f0-notes")).to_contain_text("^[A-Z].*$")
    expect(field(page, 1)).to_have_attribute("type", "email")
    expect(field(page, 2)).to_have_attribute("type", "url")
    expect(field(page, 3)).to_have_attribute("type", "date")
    expect(field(page, 4)).to_have_attribute("type", "datetime-local")
    expect(field(page, 5)).to_have_attribute("step", "1")
    expect(field(page, 5)).to_have_attribute("max", "9")
    expect(field(page, 5)).to_have_value("2")  # the default
    expect(field(page, 7)).to_be_checked()  # the default
    expect(page.locator('input[type="radio"][name="f8"]')).to_have_count(2)
    expect(page.locator("select#q0-f9 option")).to_have_count(7)
    expect(page.locator("#q0-f10-notes")).to_have_text("choose from 1 to 2")
    screenshot(page, tmp_path, "form")

    fill_every_field(page)
    page.get_by_role("button", name="Send").click()
    problem = page.locator("#q0-f10-problems")
    expect(problem).to_have_text("'checks' must have at most 2 items")
    expect(page.locator("fieldset", has_text="Checks to run")).to_have_attribute(
        "aria-describedby", re.compile("q0-f10-problems")
    )
    for index, value in ((0, "Ada Lovelace"), (1, "ada@example.com"), (5, "3"), (6, "0.25")):
        expect(field(page, index)).to_have_value(value)  # what was typed, kept
    expect(field(page, 4)).to_have_value("2026-12-24T09:30")
    expect(field(page, 7)).not_to_be_checked()
    expect(page.get_by_label("Production")).to_be_checked()
    expect(field(page, 9)).to_have_value("2")
    assert served.store.answers(key) == {}
    screenshot(page, tmp_path, "problem")

    page.get_by_label("e2e", exact=True).uncheck()
    page.get_by_role("button", name="Send").click()
    expect(page.get_by_role("status").first).to_contain_text("ready to resume")
    (answer,) = served.store.answers(key).values()
    assert answer.ok
    assert answer.data == EVERY_FIELD_CONTENT
    assert served.resume(key) == {
        "action": "accept",
        "arguments": {"ticket": "T-100"},
        "content": EVERY_FIELD_CONTENT,
        "tool": "every_field",
    }
    assert watched.dialogs == []
    assert watched.errors == []


def test_a_url_question(watched: Watched, served: Inbox, tmp_path: Path) -> None:
    key = served.park("sign_in", {"tag": "u1"})
    page = watched.page
    open_call(page, served, key)
    expect(page.locator(".host strong")).to_have_text("auth.example.com")
    expect(page.locator(".whole-url")).to_have_text("https://auth.example.com/login?tag=u1&next=%2Fhome")
    link = page.get_by_role("link", name="Open auth.example.com in a new tab")
    expect(link).to_have_attribute("rel", "noopener noreferrer")
    expect(link).to_have_attribute("target", "_blank")
    expect(link).to_have_attribute("href", "https://auth.example.com/login?tag=u1&next=%2Fhome")
    screenshot(page, tmp_path, "url")
    page.get_by_role("button", name="Done: I have finished there").click()
    expect(page.get_by_role("status").first).to_contain_text("ready to resume")
    assert served.resume(key) == {
        "action": "accept",
        "arguments": {"tag": "u1"},
        "content": None,
        "tool": "sign_in",
    }
    assert not [url for url in watched.requests if "example.com" in url]  # nothing fetched unasked


def test_the_page_follows_the_call_to_the_workers_result(watched: Watched, served: Inbox) -> None:
    """Answered in the page, resumed by a worker's step; the open page shows the result."""
    key = served.park("sign_in", {"tag": "worked"})
    page = watched.page
    open_call(page, served, key)
    page.get_by_role("button", name="Done: I have finished there").click()
    expect(page.locator(".next")).to_contain_text("ready to resume")
    page.wait_for_timeout(500)  # the page's event stream is open
    outcomes = served.work()
    assert key in [outcome.key for outcome in outcomes]
    outcome = page.locator("section.outcome")  # the page follows the call by itself
    expect(outcome).to_contain_text("done", timeout=10_000)
    expect(outcome).to_contain_text("The server's result:")
    expect(outcome.locator("pre.result")).to_contain_text('"tag": "worked"')
    assert served.store.call(key).status == "done"


def test_a_suspicious_url_is_warned_about_and_not_linked(watched: Watched, served: Inbox) -> None:
    from toolnexus import Request
    from toolnexus.durable import Pending

    url = "https://evil.example\\@bank.example/\u202elogin"
    request = Request("elc-sus", "authorization", "Sign in", url, None, None)
    key = served.store.put(Pending("tools/call", "sus", None, None, ("k",), (request,), server="s"))
    page = watched.page
    page.goto(f"{served.url}/calls/{key}")
    expect(page.locator(".host strong")).to_have_text("evil.example")
    expect(page.locator(".whole-url")).to_have_text("https://evil.example\\@bank.example/\\u202elogin")
    expect(page.locator("ul.warnings")).to_contain_text("backslash")
    expect(page.locator("a.open")).to_have_count(0)
    expect(page.locator(".url .warning")).to_contain_text("a browser would read it otherwise")


@pytest.mark.parametrize(("button", "action"), [("Decline", "decline"), ("Cancel", "cancel")])
def test_decline_and_cancel_are_one_click(watched: Watched, served: Inbox, button: str, action: str) -> None:
    key = served.park("every_field", {"ticket": f"T-{action}"})
    page = watched.page
    open_call(page, served, key)
    page.get_by_role("button", name=button, exact=True).click()
    expect(page.get_by_role("status").first).to_contain_text("recorded")
    expect(page.locator(".answered")).to_have_text(
        f"Answered: {action}{'d' if action == 'decline' else 'led'}."
    )
    assert served.resume(key) == {
        "action": action,
        "arguments": {"ticket": f"T-{action}"},
        "content": None,
        "tool": "every_field",
    }


def tab_to(page: Page, selector: str, limit: int = 80) -> None:
    """Press Tab until ``selector`` has the focus."""
    target = page.locator(selector)
    for _ in range(limit):
        if target.evaluate("element => element === document.activeElement"):
            return
        page.keyboard.press("Tab")
    raise AssertionError(f"Tab never reached {selector}")


def test_the_whole_flow_with_the_keyboard_alone(watched: Watched, served: Inbox) -> None:
    key = served.park("every_field", {"ticket": "T-keys"})
    page = watched.page
    page.goto(f"{served.url}/")
    tab_to(page, f'a[href="/calls/{key}"]')
    page.keyboard.press("Enter")
    expect(page).to_have_url(f"{served.url}/calls/{key}")
    tab_to(page, "#q0-f0")
    page.keyboard.type("Grace Hopper")
    page.keyboard.press("Tab")
    page.keyboard.type("grace@example.com")
    tab_to(page, "#q0-f5")
    page.keyboard.press("ArrowUp")  # 2 -> 3
    tab_to(page, "#q0-f7")
    page.keyboard.press("Space")  # untick "notify"
    tab_to(page, "#q0-f8-o0")
    page.keyboard.press("Space")  # staging
    page.keyboard.press("ArrowDown")  # production
    tab_to(page, "#q0-f10-o1")
    page.keyboard.press("Space")  # unit
    tab_to(page, "form.answer button[type=submit]")
    page.keyboard.press("Enter")
    expect(page.get_by_role("status").first).to_contain_text("ready to resume")
    (answer,) = served.store.answers(key).values()
    assert answer.data == {
        "name": "Grace Hopper",
        "email": "grace@example.com",
        "replicas": 3,
        "notify": False,
        "environment": "production",
        "checks": ["unit"],
    }


def test_hostile_text_is_shown_as_text_and_runs_nothing(watched: Watched, served: Inbox) -> None:
    key = served.park("hostile")
    page = watched.page
    page.goto(f"{served.url}/")
    expect(page.locator("ul.prompts").first).to_contain_text("<script>alert('prompt')</script><b>bold</b>")
    open_call(page, served, key)
    expect(page.locator(".prompt")).to_have_text(
        "<script>alert('prompt')</script><b>bold</b> \\u202eevil\\u202c \\x1b[31mred\\u200b"
    )
    expect(page.locator("label[for=q0-f0]")).to_have_text("<script>alert('field')</script>\\u202etitle")
    expect(page.locator("#q0-f0-desc")).to_have_text(
        "<img src=x onerror=alert('desc')>\\x1b]8;;https://evil.example\\x07link"
    )
    expect(page.get_by_label("\\u202egnp.exe")).to_have_count(1)
    page.get_by_role("button", name="Send").click()  # the page drawn again after a post
    expect(page.locator("section.question")).to_be_visible()
    assert page.locator("script").count() == 1  # the inbox's own file, nothing of the server's
    assert page.locator("img").count() == 0
    assert page.locator("main b, main i").count() == 0
    assert watched.dialogs == []
    assert watched.errors == []


def test_the_list_updates_by_itself(watched: Watched, served: Inbox) -> None:
    page = watched.page
    page.goto(f"{served.url}/")
    page.wait_for_timeout(500)  # the page's event stream is open
    key = served.park("pair")
    expect(page.locator(f'a[href="/calls/{key}"]')).to_be_visible(timeout=10_000)
    expect(page.locator("#live-note")).to_have_text("The list was updated.")
    (first, _) = served.store.get(key).requests
    from toolnexus import Answer

    served.store.record(key, Answer(first.id, True, {"name": "Ann"}))
    row = page.locator("tr", has=page.locator(f'a[href="/calls/{key}"]'))
    expect(row.locator(".answered")).to_have_count(1, timeout=10_000)


def test_it_works_with_scripts_off(browser: Browser, served: Inbox) -> None:
    key = served.park("pair")
    context = browser.new_context(java_script_enabled=False)
    try:
        page = context.new_page()
        page.goto(f"{served.url}/?token={TOKEN}")
        open_call(page, served, key)
        page.locator("#q0-f0").fill("Ann")
        page.locator("form.answer").first.get_by_role("button", name="Send").click()
        expect(page.get_by_role("status").first).to_contain_text("1 more question")
        page.locator("#q1-f0").fill("Bob")
        page.locator("form.answer").get_by_role("button", name="Send").click()
        expect(page.get_by_role("status").first).to_contain_text("ready to resume")
    finally:
        context.close()
    result = served.resume(key)
    assert result["first"] == {"action": "accept", "content": {"name": "Ann"}}
    assert result["second"] == {"action": "accept", "content": {"name": "Bob"}}


def axe_violations(page: Page) -> list[str]:
    page.add_script_tag(path=str(ensure_axe()))
    found = page.evaluate("async () => (await axe.run(document)).violations")
    return [
        f"{v['id']} ({v['impact']}): {v['help']} at {[n['target'] for n in v['nodes']]}"
        for v in found
        if v["impact"] in ("serious", "critical")
    ]


def test_no_serious_accessibility_violation(browser: Browser, served: Inbox) -> None:
    key = served.park("every_field", {"ticket": "T-axe"})
    served.park("sign_in", {"tag": "axe"})
    # axe is injected as a script: a context that does not enforce the page's CSP lets it in.
    context = browser.new_context(bypass_csp=True)
    try:
        page = context.new_page()
        page.goto(f"{served.url}/?token={TOKEN}")
        assert axe_violations(page) == []
        page.goto(f"{served.url}/calls/{key}")
        assert axe_violations(page) == []
        fill_every_field(page)
        page.get_by_role("button", name="Send").click()  # the problems shown
        expect(page.locator("ul.problems").first).to_be_visible()
        assert axe_violations(page) == []
    finally:
        context.close()


def test_refused_without_the_token_with_a_wrong_host_or_without_csrf(fresh: Page, served: Inbox) -> None:
    key = served.park("sign_in", {"tag": "refused"})
    page = fresh
    response = page.goto(f"{served.url}/calls/{key}")  # no token, no cookie
    assert response is not None
    assert response.status == 403
    expect(page.locator("body")).to_contain_text("needs its access token")
    page.goto(f"{served.url}/?token={TOKEN}")
    (request,) = served.store.get(key).requests
    posted = page.request.post(f"{served.url}/calls/{key}/{request.id}", form={"action": "accept"})
    assert posted.status == 403  # the cookie, but no CSRF token
    host = served.url.removeprefix("http://")
    rebound = httpx.get(
        f"{served.url}/?token={TOKEN}", headers={"host": f"evil.example:{host.split(':')[1]}"}
    )
    assert rebound.status_code == 400
    assert served.store.answers(key) == {}


def test_a_change_between_drawing_a_page_and_opening_its_events_is_told(served: Inbox) -> None:
    """The page's events address carries the fingerprint it was drawn with: a change made in
    between (an answer recorded while the browser still loads the page) is told as soon as
    the events open, not lost until the next change."""
    key = served.park("sign_in", {"tag": "between"})
    with httpx.Client(base_url=served.url, follow_redirects=True, timeout=10) as client:
        page = client.get(f"/calls/{key}?token={TOKEN}")
        assert page.status_code == 200
        found = re.search(r'data-events="([^"]+)"', page.text)
        assert found is not None
        assert "seen=" in found.group(1)
        events = found.group(1).replace("&amp;", "&")
        (request,) = served.store.get(key).requests
        served.store.record(key, Answer.decline(request))  # after the page, before its events
        lines = []
        with client.stream("GET", "/" + events.removeprefix("/")) as stream:
            for line in stream.iter_lines():  # a read timeout fails the test
                lines.append(line)
                if line == "event: change":
                    break
        assert lines[0] == "retry: 3000"
        assert "event: change" in lines


def test_the_token_redirect_stays_on_the_inbox_whatever_the_path(fresh: Page, served: Inbox) -> None:
    """A first address whose path a Location would read as another host (``//evil.example``,
    ``/\\evil.example``, and the same percent-encoded) ends on the inbox's own origin, and the
    browser asks for nothing elsewhere on the way."""
    page = fresh
    elsewhere: list[str] = []

    def on_request(request: Request) -> None:
        if not request.url.startswith(f"{served.url}/"):
            elsewhere.append(request.url)

    page.on("request", on_request)
    try:
        for path in (
            "//evil.example/x",
            "/\\evil.example/x",
            "/%2F%2Fevil.example/x",
            "/%5C%5Cevil.example/x",
            "/%2F%5Cevil.example/x",
            "/..%2F..%2F%2Fevil.example",
        ):
            page.context.clear_cookies()
            try:
                page.goto(f"{served.url}{path}?token={TOKEN}")
            except Error as error:  # evil.example does not resolve here
                raise AssertionError(f"{path} left the inbox: {error.message.splitlines()[0]}") from None
            assert page.url.startswith(f"{served.url}/"), (path, page.url)
            assert "token=" not in page.url
        assert elsewhere == []
    finally:
        page.remove_listener("request", on_request)


PHONE: ViewportSize = {"width": 390, "height": 844}
"""A phone's screen, in CSS pixels (an answer link opens there)."""
SCROLLS_SIDEWAYS = "() => document.documentElement.scrollWidth > window.innerWidth"
SMALL_CONTROLS = """() => [...document.querySelectorAll('main button, main select, main input')]
  .filter(el => el.type !== 'hidden' && el.offsetParent !== null)
  .filter(el => {
    const box = el.getBoundingClientRect();
    const least = (el.type === 'checkbox' || el.type === 'radio') ? 24 : 44;
    return box.height < least || box.width < least;
  })
  .map(el => el.outerHTML.slice(0, 80))"""


def test_on_a_phone_no_page_scrolls_sideways_every_control_is_tappable_and_axe_finds_nothing_serious(
    browser: Browser, served: Inbox
) -> None:
    key = served.park("every_field", {"ticket": "T-phone-" + "x" * 60})
    served.park("sign_in", {"tag": "phone"})
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True, bypass_csp=True)
    try:
        page = context.new_page()
        for address in (
            f"{served.url}/?token={TOKEN}",
            f"{served.url}/calls/{key}",
            f"{served.url}/calls/0000",
        ):
            page.goto(address)
            assert page.evaluate(SCROLLS_SIDEWAYS) is False, address
            assert page.evaluate(SMALL_CONTROLS) == [], address
            assert axe_violations(page) == [], address
        page.goto(f"{served.url}/calls/{key}")
        fill_every_field(page)
        page.get_by_role("button", name="Send").click()  # the problems shown, at a phone's width
        expect(page.locator("ul.problems").first).to_be_visible()
        assert page.evaluate(SCROLLS_SIDEWAYS) is False
    finally:
        context.close()
