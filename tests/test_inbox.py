"""The inbox's pages over HTTP, without a browser: access, the checks on every post, answering
(calls parked from a real in-process ``MCPServer``), the list's pages, and reading a post.
The browser's side is tests/test_inbox_browser.py."""

from __future__ import annotations

import asyncio
import html
import logging
import re
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from starlette.testclient import TestClient

from servers.inbox_server import EVERY_FIELD, park, resume
from toolnexus import Answer, Request, inbox
from toolnexus._demo_server import tcp_listener
from toolnexus.durable import ParkedTask, Pending, SqliteStore
from toolnexus.forms import read_form
from toolnexus.inbox._serve import listen
from toolnexus.inbox._views import read_post

TOKEN = "a-test-token-of-some-length"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteStore]:
    with SqliteStore(tmp_path / "pending.db") as opened:
        yield opened


def client_for(store: SqliteStore, **options: Any) -> TestClient:
    options.setdefault("token", TOKEN)
    options.setdefault("allowed_hosts", ["testserver"])
    return TestClient(inbox.app(store, **options), follow_redirects=False)


def signed_in(store: SqliteStore, **options: Any) -> TestClient:
    client = client_for(store, **options)
    assert client.get(f"/?token={TOKEN}").status_code == 303
    return client


def parked(store: SqliteStore, tool: str, arguments: dict[str, Any] | None = None, **options: Any) -> str:
    return anyio.run(lambda: park(store, tool, arguments, **options))


def csrf_of(html: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', html)
    assert found is not None
    return found.group(1)


def csrf_cookie(client: TestClient) -> str:
    (value,) = [value for name, value in client.cookies.items() if name.endswith("_csrf")]
    return value


def form_page(client: TestClient, key: str) -> tuple[str, str, str]:
    """The call's page, its CSRF token and the action of its first question's form."""
    page = client.get(f"/calls/{key}")
    assert page.status_code == 200
    action = re.search(r'<form method="post" action="([^"]+)"', page.text)
    assert action is not None
    return page.text, csrf_of(page.text), action.group(1)


# --- access -----------------------------------------------------------------------------------


def test_every_request_needs_the_token(store: SqliteStore) -> None:
    client = client_for(store)
    for path in ("/", "/calls/x", "/events", "/static/inbox.js", "/?token=wrong-token-of-some-length"):
        refused = client.get(path)
        assert refused.status_code == 403, path
        assert "access token" in refused.text
    assert client.post("/calls/x/y", data={"csrf": "x"}).status_code == 403


def test_the_token_becomes_an_http_only_strict_cookie(store: SqliteStore) -> None:
    client = client_for(store)
    first = client.get(f"/?status=waiting&token={TOKEN}")
    assert first.status_code == 303
    assert first.headers["location"] == "/?status=waiting"  # the token leaves the address
    cookie = first.headers["set-cookie"]
    assert "HttpOnly" in cookie
    assert "SameSite=Strict" in cookie
    assert TOKEN in cookie
    assert client.get("/").status_code == 200  # the cookie alone


def test_no_token_asked_when_the_host_logs_people_in(store: SqliteStore) -> None:
    client = client_for(store, token=None, allowed_hosts=None)
    assert client.get("/").status_code == 200


def test_a_foreign_host_header_is_refused(store: SqliteStore) -> None:
    client = signed_in(store)
    refused = client.get("/", headers={"host": "attacker.example"})
    assert refused.status_code == 400
    assert "Host" in refused.text


@pytest.mark.parametrize("path", ["/", "/static/inbox.css", "/calls/nothing", "/nowhere"])
def test_every_response_sends_the_security_headers(store: SqliteStore, path: str) -> None:
    client = signed_in(store)
    for response in (client.get(path), client_for(store).get(path)):
        csp = response.headers["content-security-policy"]
        assert "script-src 'self'" in csp
        assert "unsafe-inline" not in csp
        assert "frame-ancestors 'none'" in csp
        assert response.headers["referrer-policy"] == "no-referrer"
        assert response.headers["x-content-type-options"] == "nosniff"


def test_a_post_without_the_csrf_token_is_refused(store: SqliteStore) -> None:
    key = parked(store, "sign_in", {"tag": "csrf"})
    client = signed_in(store)
    _, csrf, action = form_page(client, key)
    assert client.post(action, data={"action": "accept"}).status_code == 403
    assert client.post(action, data={"action": "accept", "csrf": csrf[::-1]}).status_code == 403
    other_site = client.post(
        action, data={"action": "accept", "csrf": csrf}, headers={"origin": "https://attacker.example"}
    )
    assert other_site.status_code == 403
    assert store.answers(key) == {}
    assert client.post(action, data={"action": "accept", "csrf": csrf}).status_code == 303
    (answer,) = store.answers(key).values()
    assert answer.ok


def test_the_access_log_holds_no_query_string_and_no_answer(
    store: SqliteStore, caplog: pytest.LogCaptureFixture
) -> None:
    key = parked(store, "every_field", {"ticket": "T-log"})
    client = signed_in(store)
    _, csrf, action = form_page(client, key)
    caplog.set_level(logging.DEBUG)
    client.get(f"/?server=x&token={TOKEN}")
    client.post(
        action,
        data={"csrf": csrf, "f0": "Zelda-secret-name", "f1": "z@example.com", "f8": "0", "f10": "0"},
    )
    logged = "\n".join(r.getMessage() for r in caplog.records if r.name.startswith("toolnexus"))
    assert "GET / 303" in logged
    assert f"POST {action} 303" in logged
    assert TOKEN not in logged
    assert "?" not in logged
    assert "Zelda" not in logged
    assert "z@example.com" not in logged


# --- answering --------------------------------------------------------------------------------


def test_an_answer_is_checked_recorded_and_resumes(store: SqliteStore) -> None:
    key = parked(store, "every_field", {"ticket": "T-2"})
    client = signed_in(store)
    _, csrf, action = form_page(client, key)
    wrong = client.post(action, data={"csrf": csrf, "f0": "x", "f1": "not-mail", "f8": "1"})
    assert wrong.status_code == 422
    assert "must be at least 2 characters long" in wrong.text
    assert "must be an email address" in wrong.text
    assert "must have at least 1 item" in wrong.text  # the checks: none ticked
    assert 'value="not-mail"' in wrong.text  # what was typed, kept
    assert store.answers(key) == {}
    done = client.post(
        action,
        data={"csrf": csrf, "f0": "Ada", "f1": "ada@example.com", "f5": "3", "f8": "1", "f10": ["0", "2"]},
    )
    assert done.status_code == 303
    assert done.headers["location"].startswith(f"/calls/{key}?answered=")
    after = client.get(done.headers["location"])
    assert "ready to resume" in after.text
    assert anyio.run(resume, store, key) == {
        "action": "accept",
        "arguments": {"ticket": "T-2"},
        "content": {
            "name": "Ada",
            "email": "ada@example.com",
            "replicas": 3,
            "notify": False,
            "environment": "production",
            "checks": ["lint", "e2e"],
        },
        "tool": "every_field",
    }


@pytest.mark.parametrize(("action", "reason"), [("decline", "declined"), ("cancel", "cancelled")])
def test_decline_and_cancel(store: SqliteStore, action: str, reason: str) -> None:
    key = parked(store, "every_field", {"ticket": "T-3"})
    client = signed_in(store)
    _, csrf, target = form_page(client, key)
    assert client.post(target, data={"csrf": csrf, "action": action}).status_code == 303
    (answer,) = store.answers(key).values()
    assert (answer.ok, answer.reason) == (False, reason)
    assert anyio.run(resume, store, key)["action"] == action


def test_a_secret_is_not_sent_back(store: SqliteStore) -> None:
    key = parked(store, "secret")
    client = signed_in(store)
    page, csrf, action = form_page(client, key)
    assert 'type="password"' in page
    assert "seems to ask for a secret" in page
    wrong = client.post(action, data={"csrf": csrf, "f0": "", "f1": "kept note"})
    assert wrong.status_code == 422
    assert 'value="kept note"' in wrong.text
    wrong = client.post(action, data={"csrf": csrf, "f0": "hunter2-secret", "f1": "x" * 3, "f2": "?"})
    assert "hunter2-secret" not in wrong.text


def test_a_question_answered_elsewhere_is_not_overwritten(store: SqliteStore) -> None:
    key = parked(store, "sign_in", {"tag": "race"})
    client = signed_in(store)
    _, csrf, action = form_page(client, key)
    (request,) = store.get(key).requests
    store.record(key, Answer(request.id, False, None, "declined"))  # another inbox, first
    late = client.post(action, data={"csrf": csrf, "action": "accept"})
    assert late.status_code == 409
    assert "Already answered" in late.text
    (answer,) = store.answers(key).values()
    assert answer.reason == "declined"


def test_an_expired_question_cannot_be_answered(store: SqliteStore) -> None:
    request = Request(
        "elc-old", "authorization", "Sign in", "https://example.com/", None, "2020-01-01T00:00:00.000Z"
    )
    key = store.put(Pending("tools/call", "old", {}, None, ("k",), (request,), server="past"))
    client = signed_in(store)
    page = client.get(f"/calls/{key}")
    assert "can no longer be answered" in page.text
    assert '<form method="post"' not in page.text
    refused = client.post(f"/calls/{key}/elc-old", data={"csrf": csrf_cookie(client), "action": "accept"})
    assert refused.status_code == 410
    assert store.answers(key) == {}
    assert "expired" in client.get("/?status=expired").text


# --- the list ---------------------------------------------------------------------------------


def test_the_list_pages_newest_first_by_keyset(store: SqliteStore) -> None:
    request = Request("elc-1", "input", "Name?", None, {"schema": {"type": "object", "properties": {}}})
    keys = [
        store.put(Pending("tools/call", f"tool{i}", {"i": i}, None, ("k",), (request,), server=f"s{i % 2}"))
        for i in range(12)
    ]
    client = signed_in(store, page_size=5)
    seen: list[str] = []
    path = "/"
    while True:
        page = client.get(path).text
        seen += re.findall(r'href="/calls/([0-9a-f]+)"', page)
        older = re.search(r'<a href="(/\?[^"]*)" rel="next">', page)
        if older is None:
            break
        path = older.group(1).replace("&amp;", "&")
    assert seen == keys[::-1]
    only = client.get("/?server=s1").text
    assert re.findall(r'href="/calls/([0-9a-f]+)"', only) == keys[::-2][:5]
    store.record(keys[3], Answer("elc-1", True, {}))
    assert re.findall(r'href="/calls/([0-9a-f]+)"', client.get("/?status=ready").text) == [keys[3]]


class CountingReads:
    """A store that counts the calls read one at a time; ``page_calls`` hidden with ``bare``
    (a store of a host's own that has ``page`` and ``call`` only)."""

    def __init__(self, store: SqliteStore, *, bare: bool = False) -> None:
        self.store = store
        self.bare = bare
        self.one_at_a_time = 0

    def call(self, key: str) -> Any:
        self.one_at_a_time += 1
        return self.store.call(key)

    def __getattr__(self, name: str) -> Any:
        if self.bare and name == "page_calls":
            raise AttributeError(name)
        return getattr(self.store, name)


def test_the_list_reads_a_page_of_calls_at_once_and_a_bare_store_one_by_one(store: SqliteStore) -> None:
    request = Request("elc-1", "input", "Name?", None, {"schema": {"type": "object", "properties": {}}})
    keys = [store.put(Pending("tools/call", f"t{i}", None, None, ("k",), (request,))) for i in range(8)]
    store.record(keys[5], Answer("elc-1", True, {}))
    shown = {}
    for bare in (False, True):
        counting = CountingReads(store, bare=bare)
        client = TestClient(inbox.app(counting, token=TOKEN, allowed_hosts=["testserver"], page_size=6))
        client.get(f"/?token={TOKEN}")
        counting.one_at_a_time = 0
        page = client.get("/").text
        shown[bare] = re.findall(r'href="/calls/([0-9a-f]+)"', page), page.count("status-ready")
        assert counting.one_at_a_time == (6 if bare else 0)
    assert shown[False] == shown[True] == (keys[::-1][:6], 1)


def test_an_unreadable_record_is_shown_and_the_rest_still_are(store: SqliteStore, tmp_path: Path) -> None:
    request = Request("elc-1", "input", "Fine", None, None)
    good = store.put(Pending("tools/call", "fine", None, None, ("k",), (request,)))
    import sqlite3

    with sqlite3.connect(tmp_path / "pending.db") as db:
        db.execute(
            "INSERT INTO toolnexus_call (key, created, pending)"
            " VALUES ('bad', '2026-01-01T00:00:00.000Z', '{')"
        )
    page = signed_in(store).get("/").text
    assert f"/calls/{good}" in page
    assert "status-failed" in page
    assert "is not JSON" in page


# --- reading a post ---------------------------------------------------------------------------


def test_read_post_gives_every_type() -> None:
    form = read_form(EVERY_FIELD)
    posted = read_post(
        form,
        {
            "f0": ["Ada"],
            "f1": ["ada@example.com"],
            "f2": ["https://example.com/x"],
            "f3": ["2026-12-01"],
            "f4": ["2026-12-01T09:30"],
            "f5": ["4"],
            "f6": ["0.25"],
            "f7": ["on"],
            "f8": ["0"],
            "f9": ["5"],
            "f10": ["1"],
        },
    )
    assert posted.ok, posted.problems
    assert posted.content == {
        "name": "Ada",
        "email": "ada@example.com",
        "homepage": "https://example.com/x",
        "start": "2026-12-01",
        "window": "2026-12-01T09:30:00Z",
        "replicas": 4,
        "ratio": 0.25,
        "notify": True,
        "environment": "staging",
        "region": "ap-northeast-1",
        "checks": ["unit"],
    }


def test_read_post_names_each_fields_problem() -> None:
    form = read_form(EVERY_FIELD)
    posted = read_post(
        form, {"f0": ["A"], "f5": ["2.5"], "f6": ["lots"], "f8": ["7"], "f10": ["0", "1", "2"]}
    )
    assert posted.problems == {
        0: ["'name' must be at least 2 characters long"],
        1: ["this field is required"],
        5: ["'replicas' must be an integer"],
        6: ["must be a number"],
        8: ["the choice is not one this question offers"],
        10: ["'checks' must have at most 2 items"],
    }
    assert posted.typed[0] == "A"
    assert posted.typed[6] == "lots"


# --- what came of it --------------------------------------------------------------------------


def test_the_page_says_what_came_of_the_call(store: SqliteStore) -> None:
    key = parked(store, "sign_in", {"tag": "outcome"})
    client = signed_in(store)
    _, csrf, action = form_page(client, key)
    done = client.post(action, data={"csrf": csrf, "action": "accept"})
    assert "ready to resume" in client.get(done.headers["location"]).text
    (claim,) = store.claim(lease=30)
    assert "A worker is resuming the call now" in client.get(f"/calls/{key}").text
    result = {"content": [{"type": "text", "text": "deployed <b>v2</b>\u202e"}], "isError": False}
    store.finish(key, claim.token, result)
    page = client.get(f"/calls/{key}").text
    assert "The server&#39;s result:" in page
    assert "deployed &lt;b&gt;v2&lt;/b&gt;\\u202e" in page
    assert "status-done" in client.get("/?status=done").text


def test_a_failed_resume_is_shown(store: SqliteStore) -> None:
    key = parked(store, "sign_in", {"tag": "failing"})
    (request,) = store.get(key).requests
    store.record(key, Answer(request.id, True))
    (claim,) = store.claim(lease=30)
    store.fail(key, claim.token, "the server is gone <i>now</i>")
    page = signed_in(store).get(f"/calls/{key}").text
    assert "Resuming the call failed:" in page
    assert "the server is gone &lt;i&gt;now&lt;/i&gt;" in page


def test_a_parked_task_shows_its_work_its_questions_and_a_cancellation(tmp_path: Path) -> None:
    now = [1_800_000_000.0]  # the store's clock, moved by the test
    store = SqliteStore(tmp_path / "tasks.db", clock=lambda: now[0])
    task = ParkedTask("t-1", 1000)
    key = store.put(Pending("tools/call", "report", None, None, (), (), {}, "srv", task))
    client = signed_in(store)
    assert "The server is working on the task; a worker polls it." in client.get(f"/calls/{key}").text
    now[0] += 1
    (claim,) = store.claim(lease=30, key=key)
    store.task_working(key, claim.token, poll_in=1, note="step 2 of 3 <b>\u202e</b>")
    page = client.get(f"/calls/{key}").text
    assert "It says: step 2 of 3 &lt;b&gt;\\u202e&lt;/b&gt;" in page  # the server's text, escaped
    assert "status-working" in client.get("/?status=working").text
    now[0] += 1
    (claim,) = store.claim(lease=30, key=key)
    schema: dict[str, Any] = {"type": "object", "properties": {}}
    question = Request("elc-t-1", "input", "Publish?", None, {"schema": schema})
    asking = Pending("tools/call", "report", None, None, ("go",), (question,), {}, "srv", task)
    store.task_asks(key, claim.token, asking, note=None)
    _, csrf, action = form_page(client, key)  # its question is answered as any
    done = client.post(action, data={"csrf": csrf, "action": "accept"})
    assert "ready to resume" in client.get(done.headers["location"]).text
    (claim,) = store.claim(lease=30, key=key)
    store.task_ended(key, claim.token, "cancelled", "the server cancelled the task")
    assert "The task was cancelled: the server cancelled the task" in client.get(f"/calls/{key}").text
    store.close()


def test_the_page_tells_the_calls_history_and_who_answered_from_the_hosts_login(store: SqliteStore) -> None:
    from starlette.applications import Starlette
    from starlette.authentication import AuthCredentials, AuthenticationBackend, SimpleUser
    from starlette.middleware import Middleware
    from starlette.middleware.authentication import AuthenticationMiddleware
    from starlette.routing import Mount

    class Login(AuthenticationBackend):  # the host's own login, in front of the inbox
        async def authenticate(self, conn: Any) -> tuple[AuthCredentials, SimpleUser] | None:
            name = conn.headers.get("x-user")
            return (AuthCredentials(["inbox"]), SimpleUser(name)) if name else None

    key = parked(store, "sign_in", {"tag": "history"})
    site = Starlette(
        routes=[Mount("/inbox", app=inbox.app(store, allowed_hosts=["testserver"]))],
        middleware=[Middleware(AuthenticationMiddleware, backend=Login())],
    )
    client = TestClient(site, follow_redirects=False, headers={"x-user": "carol <b>"})
    page = client.get(f"/inbox/calls/{key}")
    csrf = csrf_of(page.text)
    action = re.search(r'<form method="post" action="([^"]+)"', page.text)
    assert action is not None
    done = client.post(action.group(1), data={"csrf": csrf, "action": "accept"})
    assert done.status_code == 303
    shown = client.get(f"/inbox/calls/{key}").text
    assert "<summary>History (4)</summary>" in shown
    assert "opened, by carol &lt;b&gt; via inbox" in shown
    assert "answered elc-" in shown
    assert ": accept, by carol &lt;b&gt; via inbox" in shown
    assert [e.actor for e in store.history(key) if e.kind in ("opened", "answer")] == [
        "carol <b>",
        "carol <b>",
    ]
    # Without a login, an answer is the token holder's.
    other = parked(store, "sign_in", {"tag": "token"})
    client = signed_in(store)
    _, csrf, action_url = form_page(client, other)
    client.post(action_url, data={"csrf": csrf, "action": "decline"})
    assert [(e.actor, e.detail) for e in store.history(other) if e.kind == "answer"] == [
        ("the inbox token's holder", f"{store.get(other).requests[0].id}: decline")
    ]


def test_an_answer_link_opens_its_one_question_without_the_token_and_nothing_else(store: SqliteStore) -> None:
    import time as clock

    from toolnexus._links import link_path

    schema = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
    first = Request("elc-1", "input", "First name?", None, {"schema": schema})
    second = Request("elc-2", "input", "Second name?", None, {"schema": schema})
    key = store.put(
        Pending("tools/call", "deploy", {"env": "prod"}, "s", ("a", "b"), (first, second), {}, "srv")
    )
    expires = int(clock.time()) + 3600
    path = link_path(store.link_key, key, "elc-1", expires)
    client = client_for(store, token=TOKEN, allowed_hosts=["testserver"])  # no token given
    assert client.get(f"/calls/{key}").status_code == 403  # the inbox itself stays shut
    page = client.get(path)
    assert page.status_code == 200
    assert "First name?" in page.text
    assert "Second name?" not in page.text  # that one question, nothing else
    assert "All parked calls" not in page.text
    assert "prod" not in page.text
    assert 'data-live="none"' in page.text
    form = re.search(r'<form method="post" action="([^"]+)"', page.text)
    assert form is not None
    assert form.group(1) == path
    refused = client.post(path, data={"csrf": csrf_of(page.text), "action": "accept", "f0": ""})
    assert refused.status_code == 422  # checked as any answer
    done = client.post(path, data={"csrf": csrf_of(page.text), "action": "accept", "f0": "Ada"})
    assert done.status_code == 303
    assert done.headers["location"] == f"{path}?answered=elc-1"
    assert store.answers(key)["elc-1"].data == {"name": "Ada"}
    assert [(e.actor, e.via) for e in store.history(key) if e.kind in ("opened", "answer")] == [
        ("an answer link's holder", "link"),
        ("an answer link's holder", "link"),
    ]
    assert "Answered: accepted" in client.get(path).text  # it says so, and offers nothing more
    again = client.post(path, data={"csrf": csrf_of(page.text), "action": "accept", "f0": "Bo"})
    assert again.status_code == 409
    # Altered in any byte, made for another question, or expired: it opens nothing.
    parts = path.split("/")
    for broken in (
        path[:-1] + ("0" if path[-1] != "0" else "1"),  # the signature
        "/".join([*parts[:2], key[:-1] + ("0" if key[-1] != "0" else "1"), *parts[3:]]),  # the call
        "/".join([*parts[:3], "elc-2", *parts[4:]]),  # another question
        "/".join([*parts[:4], str(expires + 1), *parts[5:]]),  # a later end
        link_path(store.link_key, key, "elc-2", int(clock.time()) - 1),  # an expired one
        link_path("not-the-stores-key", key, "elc-2", expires),  # signed by someone else
    ):
        assert client.get(broken).status_code == 404, broken
        assert client.post(broken, data={"action": "accept", "f0": "x"}).status_code == 404, broken
    assert "elc-2" not in store.answers(key)


def test_a_call_the_host_expired_refuses_answers(store: SqliteStore) -> None:
    key = parked(store, "sign_in", {"tag": "host-deadline"})
    client = signed_in(store)
    _, csrf, action = form_page(client, key)
    store.expire(key)
    refused = client.post(action, data={"csrf": csrf, "action": "accept"})
    assert refused.status_code == 409
    assert "no longer waits" in refused.text
    assert store.answers(key) == {}


def test_an_oversized_post_is_refused_unread(store: SqliteStore) -> None:
    key = parked(store, "sign_in", {"tag": "big"})
    client = signed_in(store)
    _, csrf, action = form_page(client, key)
    assert client.post(action, data={"csrf": csrf, "f0": "x" * 1_100_000}).status_code == 413
    assert client.post(action, data={"csrf": csrf, **{f"x{n}": "1" for n in range(3000)}}).status_code == 413
    assert store.answers(key) == {}


def test_a_hostile_server_name_target_and_url_stay_text(store: SqliteStore) -> None:
    url = "javascript:alert(document.cookie)//\u202e"
    request = Request("elc-1", "authorization", "<b>Sign in</b>", url, None, None)
    name = "<script>alert(1)</script>\u202eevil\x1b[2J"
    key = store.put(
        Pending("tools/call", "<img src=x>", {"a": "<i>" * 100}, None, ("k",), (request,), server=name)
    )
    client = signed_in(store)
    for page in (client.get("/").text, client.get(f"/calls/{key}").text):
        assert "<script>alert(1)" not in page
        assert "&lt;script&gt;alert(1)&lt;/script&gt;\\u202eevil\\x1b[2J" in page
        assert "<img src=x>" not in page
        assert "<i>" not in page
        assert "\u202e" not in page
        assert "\x1b" not in page
    page = client.get(f"/calls/{key}").text
    assert 'href="javascript' not in page
    assert "only http and https addresses are" in page
    assert "scheme is &#39;javascript&#39;" in page


# --- serving ----------------------------------------------------------------------------------


def _nodelay_of_a_connection(listener: socket.socket) -> int:
    """Whether asyncio turned Nagle's algorithm off on a connection accepted on ``listener``."""
    seen: list[int] = []

    class Report(asyncio.Protocol):
        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            sock = transport.get_extra_info("socket")
            seen.append(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            transport.close()

    async def main() -> None:
        server = await asyncio.get_running_loop().create_server(Report, sock=listener)
        async with server:
            host, port = listener.getsockname()[:2]
            _, writer = await asyncio.open_connection(host, port)
            for _ in range(500):  # a limit against a hang, never a speed check
                if seen:
                    break
                await asyncio.sleep(0.01)
            writer.close()

    asyncio.run(main())
    return seen[0]


def test_the_inbox_serves_each_connection_without_nagles_delay() -> None:
    # With Nagle's algorithm on, each keep-alive request after the first waited about 40 ms
    # for the browser's delayed ACK (44 ms a page against 2 ms on a new connection).
    assert _nodelay_of_a_connection(listen("127.0.0.1", 0)) == 1


def test_a_listener_made_elsewhere_is_made_a_tcp_one() -> None:
    made = socket.socket(socket.AF_INET, socket.SOCK_STREAM)  # proto 0, as a caller may pass it
    made.bind(("127.0.0.1", 0))
    made.listen(8)
    fd = made.fileno()
    listener = tcp_listener(made)
    assert (listener.fileno(), listener.proto) == (fd, socket.IPPROTO_TCP)
    assert _nodelay_of_a_connection(listener) == 1
    unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    assert tcp_listener(unix) is unix
    unix.close()


# --- one rule for a deadline, rows that do not read, a store that cannot be reached ----------


def test_a_deadline_is_read_as_the_store_and_the_command_read_it(store: SqliteStore) -> None:
    """An unreadable ``expiresAt`` sets no deadline anywhere (the inbox answered 410 where
    the store and ``toolnexus answer`` took the answer); one without an offset is UTC
    everywhere, so a past one is expired everywhere."""
    from toolnexus.cli._answer import _passed

    unreadable = Request("elc-u", "authorization", "Sign in", "https://example.com/", None, "soon")
    naive = "2020-01-01T00:00:00"
    naive_past = Request("elc-n", "authorization", "Sign in", "https://example.com/", None, naive)
    open_key = store.put(Pending("tools/call", "a", {}, None, ("k",), (unreadable,)))
    past_key = store.put(Pending("tools/call", "b", {}, None, ("k",), (naive_past,)))
    assert (_passed("soon"), _passed("2020-01-01T00:00:00")) == (False, True)  # toolnexus answer
    client = signed_in(store)
    page = client.get(f"/calls/{open_key}").text
    assert "its deadline does not read: none applies" in page
    assert '<form method="post"' in page
    assert "can no longer be answered" in client.get(f"/calls/{past_key}").text
    csrf = csrf_cookie(client)
    assert client.post(f"/calls/{past_key}/elc-n", data={"csrf": csrf, "action": "accept"}).status_code == 410
    assert client.post(f"/calls/{open_key}/elc-u", data={"csrf": csrf, "action": "accept"}).status_code == 303
    assert store.sweep() == 1  # the store's sweep: the same two verdicts
    assert {c.key: c.status for c in store.calls()} == {open_key: "ready", past_key: "expired"}


def test_an_answer_that_does_not_read_fails_that_call_alone(store: SqliteStore, tmp_path: Path) -> None:
    request = Request("elc-1", "authorization", "Sign in", "https://example.com/")
    good, bad = (store.put(Pending("tools/call", n, {}, None, ("k",), (request,))) for n in ("good", "bad"))
    store.record(bad, Answer("elc-1", True))
    import sqlite3

    with sqlite3.connect(tmp_path / "pending.db") as db:
        db.execute("UPDATE toolnexus_answer SET answer = '{' WHERE key = ?", (bad,))
    db.close()
    client = signed_in(store)
    page = client.get("/").text
    assert f"/calls/{good}" in page
    assert f"/calls/{bad}" in page
    assert page.count("status-failed") == 1  # the bad one; the other is listed as waiting
    call_page = client.get(f"/calls/{bad}")
    assert call_page.status_code == 200
    assert "is not JSON" in call_page.text
    assert client.get(f"/calls/{good}").status_code == 200


@pytest.mark.e2e
def test_a_store_that_cannot_be_reached_is_a_503_page_and_the_inbox_carries_on(
    postgres_server: Any, postgres_url: str
) -> None:
    from toolnexus.durable import PostgresStore

    with PostgresStore(postgres_url) as pg:
        key = pg.put(Pending("tools/call", "t", {}, None, ("k",), (Request("elc-1", "input", "Name?"),)))
        client = signed_in(pg)  # type: ignore[arg-type]
        assert client.get("/").status_code == 200
        postgres_server.stop("immediate")
        try:
            for path in ("/", f"/calls/{key}"):
                down = client.get(path)
                assert down.status_code == 503, path
                assert "The store cannot be reached" in down.text
                assert "Traceback" not in down.text
                assert "127.0.0.1" not in down.text  # no error text for the browser
        finally:
            postgres_server.start()
        assert client.get(f"/calls/{key}").status_code == 200  # and after the outage, as before


# --- the token's redirect stays on the inbox --------------------------------------------------


def assert_on_the_inbox(location: str, root: str = "") -> None:
    """A Location a browser resolves on the inbox's own origin, under its root: ASCII with no
    backslash or control character, then ``root`` and one ``/`` followed by neither ``/`` nor
    ``\\`` (``//host`` and ``/\\host`` are other hosts), read as it is and percent-decoded."""
    from urllib.parse import unquote

    assert location.isascii(), location
    assert location.isprintable(), location
    assert "\\" not in location, location
    for seen in (location, unquote(location)):
        assert seen.startswith(root + "/"), location
        assert seen[len(root) + 1 : len(root) + 2] not in ("/", "\\"), location


@pytest.mark.parametrize(
    ("path", "location"),
    [
        ("/", "/"),
        ("/calls/KEY", "/calls/KEY"),
        ("/calls/KEY?status=waiting", "/calls/KEY?status=waiting"),
        ("//evil.example/x", "/evil.example/x"),
        ("/\\evil.example/x", "/evil.example/x"),
        ("/%2F%2Fevil.example/x", "/evil.example/x"),
        ("/%5C%5Cevil.example/x", "/evil.example/x"),
        ("/%2F%5Cevil.example/x", "/evil.example/x"),
        ("/\\/\\evil.example/x", "/evil.example/x"),
        ("////evil.example", "/evil.example"),
        ("/%09/evil.example/x", "/%09/evil.example/x"),  # a tab a browser would drop, kept encoded
        ("/x%5C%5Cevil.example", "/x%5C%5Cevil.example"),
        ("/x%3F%23y", "/x%3F%23y"),  # '?' and '#' stay in the path
        ("/..%2F..%2Fevil.example", "/"),  # a dot segment a browser resolves: the root
        ("/calls/%2E%2E%2F..%2Fx", "/"),
    ],
)
def test_the_token_redirect_stays_on_the_inbox(store: SqliteStore, path: str, location: str) -> None:
    client = client_for(store)
    separator = "&" if "?" in path else "?"
    # an absolute address: the client sends the path as it is (`//host` alone would be a host)
    moved = client.get(f"http://testserver{path}{separator}token={TOKEN}")
    assert moved.status_code == 303
    assert moved.headers["location"] == location
    assert_on_the_inbox(moved.headers["location"])


def test_the_token_redirect_of_a_mounted_inbox_stays_under_its_mount(store: SqliteStore) -> None:
    from starlette.applications import Starlette
    from starlette.routing import Mount

    site = Starlette(
        routes=[Mount("/inbox", app=inbox.app(store, token=TOKEN, allowed_hosts=["testserver"]))]
    )
    client = TestClient(site, follow_redirects=False)
    for path, location in (
        ("/inbox/", "/inbox/"),
        ("/inbox/calls/KEY?status=waiting", "/inbox/calls/KEY?status=waiting"),
        ("/inbox//evil.example/x", "/inbox/evil.example/x"),
        ("/inbox/%2F%5Cevil.example/x", "/inbox/evil.example/x"),
        ("/inbox/..%2F..%2Fevil.example", "/inbox/"),
    ):
        separator = "&" if "?" in path else "?"
        moved = client.get(f"http://testserver{path}{separator}token={TOKEN}")
        assert moved.status_code == 303, path
        assert moved.headers["location"] == location, path  # the mount's path once, not twice
        assert_on_the_inbox(moved.headers["location"], "/inbox")
    assert client.get("/inbox/").status_code == 200  # the cookie's path is the mount's


# --- a choice or a number in another script's digits ------------------------------------------


NOT_ASCII_DIGITS = ["²", "٣", "１", "١", "𝟏"]
"""Digits a person cannot type into the inbox's controls: ``"²".isdigit()`` is true and
``int("²")`` fails (a 500 once); ``int("١")``, ``int("１")`` and ``int("𝟏")`` are 1."""


DIGIT_FIELDS = [
    ("f8", "Environment", {"f10": "0"}),  # a single choice (radio buttons)
    ("f10", "Checks to run", {"f8": "0"}),  # a multi choice (checkboxes)
    ("f5", "Replicas", {"f8": "0", "f10": "0"}),  # an integer
    ("f6", "Traffic ratio", {"f8": "0", "f10": "0"}),  # a number
]


# Each kind of field, and each digit, posted at least once (read_post meets every pair below).
@pytest.mark.parametrize(
    ("field", "legend", "posted", "digit"),
    [(*DIGIT_FIELDS[n % len(DIGIT_FIELDS)], digit) for n, digit in enumerate(NOT_ASCII_DIGITS)],
)
def test_a_digit_that_is_not_ascii_is_a_422_naming_the_field(
    store: SqliteStore, digit: str, field: str, legend: str, posted: dict[str, str]
) -> None:
    key = parked(store, "every_field", {"ticket": "T-digits"})
    client = signed_in(store)
    _, csrf, action = form_page(client, key)
    data: dict[str, Any] = {"csrf": csrf, "f0": "Ada", "f1": "ada@example.com", **posted, field: digit}
    if field == "f10":
        data[field] = ["0", digit]  # one good choice beside it
    refused = client.post(action, data=data)
    assert refused.status_code == 422
    problems = re.findall(r'<ul class="problems" id="q0-(f\d+)-problems"><li>([^<]*)</li>', refused.text)
    assert [name for name, _ in problems] == [field]  # that field's problem, and no other's
    (problem,) = [text for _, text in problems]
    assert re.search(r"not one this question offers|must be (an integer|a number)", problem)
    shown = refused.text.split(f'id="q0-{field}-problems"')[0].rsplit('<div class="field', 1)[1]
    assert legend in shown  # the problem sits in the field it names
    assert store.answers(key) == {}


@pytest.mark.parametrize("digit", NOT_ASCII_DIGITS)
def test_read_post_reads_ascii_digits_only(digit: str) -> None:
    form = read_form(EVERY_FIELD)
    posted = read_post(form, {"f5": [digit], "f6": [digit], "f8": [digit], "f10": [digit], "f9": [digit]})
    assert posted.problems == {
        0: ["this field is required"],
        1: ["this field is required"],
        5: ["must be an integer"],
        6: ["must be a number"],
        8: ["the choice is not one this question offers"],
        9: ["the choice is not one this question offers"],
        10: ["one of the choices is not one this question offers"],
    }
    assert "replicas" not in posted.content
    assert read_post(form, {"f5": ["1_0"]}).problems[5] == ["must be an integer"]  # int() reads 10
    ascii_ok = read_post(form, {"f5": [" 3 "], "f6": ["1e-1"], "f8": ["1"], "f10": ["0", "2"]})
    assert ascii_ok.content["replicas"] == 3
    assert ascii_ok.content["ratio"] == 0.1
    assert ascii_ok.content["environment"] == "production"
    assert ascii_ok.content["checks"] == ["lint", "e2e"]


# --- a URL whose host a browser reads otherwise -----------------------------------------------


@pytest.mark.parametrize(
    ("url", "host", "warning"),
    [
        ("https://0x7f.1/admin", "127.0.0.1", "read as the IPv4 address 127.0.0.1"),
        ("https://0xa9fea9fe/latest/meta-data", "169.254.169.254", "IPv4 address 169.254.169.254"),
        ("https://bank\u3002example/login", "bank.example", "read as &#39;bank.example&#39;"),
        ("https://\uff42\uff41\uff4e\uff4b.example/login", "bank.example", "read as &#39;bank.example&#39;"),
    ],
)
def test_the_page_shows_the_host_a_browser_opens_and_offers_no_link(
    store: SqliteStore, url: str, host: str, warning: str
) -> None:
    request = Request("elc-1", "authorization", "Sign in", url, None, None)
    key = store.put(Pending("tools/call", "sign_in", None, None, ("k",), (request,), server="s"))
    page = signed_in(store).get(f"/calls/{key}").text
    assert f'<p class="host">Host: <strong>{host}</strong></p>' in page
    assert warning in page
    assert 'class="open"' not in page  # no link to an address that is not what it shows
    assert "a browser would read it otherwise" in page


def test_a_fields_hints_say_what_the_terminal_says(store: SqliteStore) -> None:
    """The inbox's note under each field is the terminal's description of it, word for word
    (the inbox said "a whole number" where the terminal said "a whole number from 1 to 9")."""
    from toolnexus.console import _describe
    from toolnexus.inbox._views import field_views

    request = Request("elc-hints", "input", "Deploy", None, {"schema": EVERY_FIELD})
    key = store.put(Pending("tools/call", "deploy", {}, None, ("k",), (request,), {}, "srv"))
    page = html.unescape(signed_in(store).get(f"/calls/{key}").text)
    assert "a whole number from 1 to 9" in page
    assert "a number from 0 to 1" in page
    assert "text, length from 2 to 40 characters" in page
    form = read_form(EVERY_FIELD)
    checked = 0
    for spec, view in zip(form.fields, field_views(form, set()), strict=True):
        for note in view.notes:
            if note.startswith(("the server expects", "a date and time in UTC")):
                continue  # the pattern, and the browser's date-and-time control, are the inbox's own
            assert note in _describe(spec), (spec.name, note, _describe(spec))
            checked += 1
    assert checked >= 6


# --- live questions -------------------------------------------------------------------------------


def _live(store: SqliteStore, request: Request, server: str = "deployer") -> str:
    pending = Pending("tools/call", "deploy", None, None, ("question",), (request,), {}, server)
    return store.put_live(pending, token="holder-token-0123456789abcd", lease=600)


def test_every_defence_holds_for_a_live_question_as_for_a_parked_one(store: SqliteStore) -> None:
    hostile = "evil\x1b]0;pwned\x07<script>alert(1)</script>\u202e"
    schema = {
        "type": "object",
        "properties": {"name": {"type": "string", "title": "<b>Name</b>\x1b[2J", "maxLength": 5}},
        "required": ["name"],
    }
    request = Request("elc-live", "input", f"Ask {hostile}", None, {"schema": schema})
    key = _live(store, request, server=hostile)
    # The token, the Host check, the headers.
    assert client_for(store).get(f"/calls/{key}").status_code == 403
    client = signed_in(store)
    assert client.get(f"/calls/{key}", headers={"host": "attacker.example"}).status_code == 400
    for path in ("/", f"/calls/{key}"):
        page = client.get(path)
        assert page.status_code == 200
        assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
        assert "<script>alert" not in page.text
        assert "<b>Name</b>" not in page.text
        assert "\x1b" not in page.text
        assert "\u202e" not in page.text
    assert "Servers waiting now" in client.get("/").text
    # CSRF on the post; the form model's limits (maxLength 5) checked on the server.
    _, csrf, action = form_page(client, key)
    assert client.post(action, data={"action": "accept", "f0": "Ada"}).status_code == 403
    too_long = client.post(action, data={"action": "accept", "csrf": csrf, "f0": "Adalovelace"})
    assert too_long.status_code == 422
    assert store.answers(key) == {}
    assert client.post(action, data={"action": "accept", "csrf": csrf, "f0": "Ada"}).status_code == 303
    assert store.call(key).status == "answered"
    assert store.answers(key)["elc-live"].data == {"name": "Ada"}


def test_a_live_question_lists_first_and_says_the_server_waits(store: SqliteStore) -> None:
    for n in range(3):
        parked_request = Request(f"elc-p{n}", "authorization", "Sign in", "https://a.example/")
        store.put(Pending("tools/call", f"parked{n}", {}, None, ("k",), (parked_request,), {}, "srv"))
    first_live = _live(store, Request("elc-l1", "authorization", "Live one", "https://a.example/"))
    for n in range(3, 6):
        parked_request = Request(f"elc-p{n}", "authorization", "Sign in", "https://a.example/")
        store.put(Pending("tools/call", f"parked{n}", {}, None, ("k",), (parked_request,), {}, "srv"))
    page = signed_in(store).get("/").text
    links = re.findall(r'href="/calls/([0-9a-f]+)"', page)
    assert links[0] == first_live  # above calls parked after it
    assert links.count(first_live) == 1  # and not again in the list below
    assert "a server is waiting now" in page
    assert 'class="status status-live"' in page
