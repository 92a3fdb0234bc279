"""The inbox's pages: the list of parked calls, a call's questions, answering, live updates."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import datetime as _dt
import hashlib
import hmac
import json
import logging
import secrets
import time
from collections.abc import AsyncIterator, Iterable
from typing import Any, Final
from urllib.parse import parse_qs, quote, urlencode

import anyio.to_thread
import jinja2
from starlette.applications import Starlette
from starlette.requests import Request as HttpRequest
from starlette.responses import HTMLResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from .._links import link_holds, link_path
from .._store import OPEN, STATUSES
from .._time import check_seconds, read_expires_at
from .._wire import Answer
from ..durable import Call, Pending
from ..errors import StoreError, StoreUnavailableError
from . import _views
from ._security import Guard, cookie_name, read_cookie

__all__ = ["app", "build"]

_LINK_HOLDER = "an answer link's holder"
"""Who answers through an answer link, as the call's history names them."""

logger = logging.getLogger("toolnexus.inbox")

SCAN_PAGES: Final = 10
"""With a status filter, at most this many store pages are read for one page of the list."""
_MAX_FORM_BYTES: Final = 1_000_000
_MAX_FIELDS: Final = 2000
_QUIET: Final = 15.0
"""Seconds after which a live page hears from the server (a comment line, no read of the
store) even when nothing changed."""


def _now() -> _dt.datetime:
    return _dt.datetime.now(_dt.timezone.utc)


class _Inbox:
    def __init__(
        self, store: Any, *, token: str | None, page_size: int, poll_interval: float, title: str
    ) -> None:
        self.store = store
        self.token_holder = "the inbox token's holder" if token is not None else None
        self.page_size = page_size
        self.poll_interval = poll_interval
        self.title = title
        self.csrf_cookie = (cookie_name(token) if token is not None else "toolnexus_inbox") + "_csrf"
        self.env = jinja2.Environment(
            loader=jinja2.PackageLoader("toolnexus.inbox", "templates"),
            autoescape=True,
            undefined=jinja2.StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
        )

    # --- the store ---------------------------------------------------------------------------

    def _page(
        self, before: str | None, server: str | None
    ) -> tuple[list[tuple[str, str, Pending | ValueError]], str | None]:
        page = getattr(self.store, "page", None)
        if page is not None:
            rows, cursor = page(limit=self.page_size, before=before, server=server)
            return list(rows), cursor
        # A store with list() alone: read whole, newest first (its time grows with the store).
        every = [(k, "", p) for k, p in reversed(self.store.list()) if server is None or p.server == server]
        start = int(before) if before is not None and before.isdigit() else 0
        end = start + self.page_size
        return list(every[start:end]), (str(end) if end < len(every) else None)

    def _page_calls(
        self, before: str | None, server: str | None, status: str | None = None
    ) -> tuple[list[Call], str | None]:
        """One page of the store's calls with their statuses: in two queries where the store
        reads them so (``page_calls``; with ``status``, that status only), else its page and
        then each call."""
        page_calls = getattr(self.store, "page_calls", None)
        if page_calls is not None:
            options = {"status": status} if status is not None else {}
            calls, cursor = page_calls(limit=self.page_size, before=before, server=server, **options)
            return [self._as_now(call) for call in calls], cursor
        page, cursor = self._page(before, server)
        found = [self.call(key) for key, _, _ in page]
        return [call for call in found if call is not None], cursor  # (None: removed meanwhile)

    def call(self, key: str) -> Call | None:
        """The call under ``key`` with its status (``None`` when nothing is kept there); a
        question past its ``expiresAt`` makes a waiting call ``expired`` at once, as the
        store's own sweep will."""
        try:
            call: Call = self.store.call(key)
        except KeyError:
            return None
        return self._as_now(call)

    @staticmethod
    def _as_now(call: Call) -> Call:
        pending = call.pending
        if (
            call.status == "waiting"
            and pending is not None
            and _views.call_status(pending, call.answered, _now()) == "expired"
        ):
            call = dataclasses.replace(call, status="expired", error="a question's deadline passed")
        return call

    def rows(
        self, status: str | None, server: str | None, before: str | None
    ) -> tuple[list[_views.Row], list[_views.Row], str | None]:
        """The page of the list: the live questions (a server waiting now: first, on the first
        page of the whole list), then one page of the other calls, newest first, and the
        cursor of the next. With ``status``, at most ``SCAN_PAGES`` pages of the store are
        read for it (then the next page goes on from there), so no request reads the whole
        store."""
        live, rows, cursor, _ = self._rows(status, server, before)
        return live, rows, cursor

    def _row(self, call: Call, now: _dt.datetime) -> _views.Row:
        pending = call.pending if call.pending is not None else ValueError(call.error or "")
        return _views.row_of(call.key, call.created, pending, call.answered, now, call.status, call.live)

    def _rows(
        self, status: str | None, server: str | None, before: str | None
    ) -> tuple[list[_views.Row], list[_views.Row], str | None, float | None]:
        now = _now()
        live: list[Call] = []
        # The servers waiting now, first, above the rest (from a store that reads a page by
        # status; a bare store's live questions stay in the list, marked).
        apart = status is None and getattr(self.store, "page_calls", None) is not None
        if apart and before is None:
            calls, _ = self._page_calls(None, server, "live")
            live = [call for call in calls if call.status == "live"]
        shown: list[_views.Row] = []
        calls_shown: list[Call] = list(live)
        cursor = before
        for _ in range(SCAN_PAGES):
            calls, cursor = self._page_calls(cursor, server)
            for call in calls:
                row = self._row(call, now)
                if row.status == status or (status is None and not (apart and row.status == "live")):
                    shown.append(row)
                    calls_shown.append(call)
            if cursor is None or len(shown) >= self.page_size:
                break
        return [self._row(call, now) for call in live], shown, cursor, _due(calls_shown)

    def fingerprint(
        self, status: str | None, server: str | None, key: str | None
    ) -> tuple[str, float | None, str]:
        """What changes when the page showing these would change (the first page's calls and
        their answers, or one call's answers), when it would change without a write to the
        store (the soonest deadline of a question it shows as waiting, or a live question's
        lease: seconds since the epoch; else ``None``), and what its live update says: for a
        call, one line of JSON (its status, its answered questions, why it was withdrawn),
        which the page uses to stop taking answers nobody can record any more. Its cost is a
        page's, whatever the store holds."""
        if key is not None:
            call = self.call(key)
            return _call_mark(call), _due([call] if call is not None else []), _call_state(call)
        live, rows, _, due = self._rows(status, server, None)
        return _rows_mark(live + rows), due, "changed"

    # --- pages -------------------------------------------------------------------------------

    def render(self, request: HttpRequest, name: str, code: int = 200, **context: Any) -> HTMLResponse:
        given = read_cookie(request.scope, self.csrf_cookie)
        fresh = given is None or len(given) != 43
        csrf = secrets.token_urlsafe(32) if given is None or fresh else given
        base = request.scope.get("root_path", "")
        context.setdefault("events", "")
        html = self.env.get_template(name).render(
            base=base, csrf=csrf, title=self.title, quote=_quote, **context
        )
        response = HTMLResponse(html, status_code=code)
        if fresh:
            response.set_cookie(
                self.csrf_cookie,
                csrf,
                path=base or "/",
                httponly=True,
                samesite="strict",
                secure=request.url.scheme == "https",
            )
        return response

    def list_page(self, request: HttpRequest) -> Response:
        query = request.query_params
        status = query.get("status") or None
        if status is not None and status not in STATUSES:
            status = None
        server = query.get("server") or None
        before = query.get("before") or None
        try:
            live, rows, cursor = self.rows(status, server, before)
        except ValueError:  # a cursor that is not one
            return self.message(request, 400, "That page does not exist", "The address names no page.")
        filters = {k: v for k, v in (("status", status), ("server", server)) if v}
        # The first page's fingerprint rides with its events address (see _seen).
        seen = {"seen": _rows_mark(live + rows)} if before is None else {}
        events = "events?" + urlencode({**filters, **seen})
        fragment = request.headers.get("x-inbox-fragment") == "1"
        return self.render(
            request,
            "lists.html" if fragment else "list.html",
            live_rows=live,
            live_more="?" + urlencode({**filters, "status": "live"}) if len(live) >= self.page_size else None,
            rows=rows,
            statuses=STATUSES,
            status=status or "",
            server=_views.shown(server) if server else "",
            server_raw=server or "",
            older="?" + urlencode({**filters, "before": cursor}) if cursor else None,
            newest="?" + urlencode(filters) if before else None,
            events=events,
        )

    def message(self, request: HttpRequest, status: int, heading: str, text: str, **extra: Any) -> Response:
        return self.render(request, "message.html", status, heading=heading, text=text, **extra)

    def call_page(
        self,
        request: HttpRequest,
        key: str,
        posted: tuple[str, _views.Posted] | None = None,
        status: int = 200,
        link: tuple[str, str] | None = None,
    ) -> Response:
        """A call's page; with ``link`` (its question's id, the link's path), the page an answer
        link opens: that one question, nothing else of the inbox."""
        call = self.call(key)
        if call is None:
            return self.message(
                request, 404, "No such call", "Nothing is parked under that key: it may have been removed."
            )
        if call.pending is None:
            return self.message(request, 500, "This call does not read", _views.shown(call.error or ""))
        pending = call.pending
        try:
            answers = dict(self.store.answers(key))
        except (KeyError, ValueError):
            answers = {}
        by, via = (_LINK_HOLDER, "link") if link is not None else (self.person(request), "inbox")
        if posted is None and call.status in OPEN:  # who saw a question that waits, once each
            with contextlib.suppress(KeyError, StoreError):
                self.store.opened(key, by=by, via=via)
        try:
            history = [_views.history_line(entry) for entry in self.store.history(key)]
        except KeyError:
            history = []
        requests = pending.requests
        if link is not None:  # one question; who else answered what is not this link's to show
            requests = tuple(r for r in requests if r.id == link[0])
            history = []
        now = _now()
        questions = [
            _views.question_view(
                r, answers.get(r.id), now, posted[1] if posted is not None and posted[0] == r.id else None
            )
            for r in requests
        ]
        if call.status not in OPEN:  # withdrawn, or answered: nothing can be recorded any more
            questions = [dataclasses.replace(q, closed=True) for q in questions]
        row = _views.row_of(key, call.created, pending, call.answered, now, call.status, call.live)
        just_answered = request.query_params.get("answered") is not None
        return self.render(
            request,
            "call.html",
            status,
            key=key,
            row=row,
            questions=questions,
            next_step=_views.next_step(call) if just_answered else None,
            outcome=_views.outcome_of(call),
            history=history,
            link=link[1] if link is not None else None,
            events="" if link is not None else "events?" + urlencode({"key": key, "seen": _call_mark(call)}),
        )

    def person(self, request: HttpRequest) -> str | None:
        """Who is answering: the identity the host's authentication put in the scope
        (``scope["user"]``, as Starlette's ``AuthenticationMiddleware`` sets it), else the
        holder of the inbox's token, else nobody named."""
        user = request.scope.get("user")
        if user is not None and getattr(user, "is_authenticated", False):
            for attribute in ("identity", "display_name"):
                value = getattr(user, attribute, None)
                if isinstance(value, str) and value.strip():
                    return value
        return self.token_holder

    async def answer(self, request: HttpRequest) -> Response:
        return await self._posted(request, request.path_params["key"], request.path_params["request_id"])

    def link_page(self, request: HttpRequest) -> Response:
        found = self._link(request)
        if found is None:
            return self._dead_link(request)
        key, request_id, path = found
        return self.call_page(request, key, link=(request_id, path))

    async def link_answer(self, request: HttpRequest) -> Response:
        found = await anyio.to_thread.run_sync(lambda: self._link(request))
        if found is None:
            return await anyio.to_thread.run_sync(lambda: self._dead_link(request))
        key, request_id, path = found
        return await self._posted(request, key, request_id, path)

    def _link(self, request: HttpRequest) -> tuple[str, str, str] | None:
        """The call's key, the question's id and the link's path, when the address is an answer
        link the store signed and it has not expired; else ``None``."""
        params = request.path_params
        key, request_id = str(params["key"]), str(params["request_id"])
        expires, signature = str(params["expires"]), str(params["signature"])
        try:
            link_key = self.store.link_key
        except (AttributeError, StoreError):
            return None
        if not link_holds(link_key, key, request_id, expires, signature, time.time()):
            return None
        return key, request_id, link_path(link_key, key, request_id, int(expires)).lstrip("/")

    def _dead_link(self, request: HttpRequest) -> Response:
        return self.message(
            request,
            404,
            "This link opens nothing",
            "It is not an answer link of this inbox, or it has expired. Ask for a new one.",
        )

    async def _posted(
        self, request: HttpRequest, key: str, request_id: str, link: str | None = None
    ) -> Response:
        body = bytearray()
        async for chunk in request.stream():  # bounded, whatever the Content-Length says
            body += chunk
            if len(body) > _MAX_FORM_BYTES:
                return await anyio.to_thread.run_sync(
                    lambda: self.message(request, 413, "Too large", "That answer is too large to read.")
                )
        try:  # the forms of these pages post application/x-www-form-urlencoded
            values = parse_qs(
                body.decode("utf-8", "replace"), keep_blank_values=True, max_num_fields=_MAX_FIELDS
            )
        except ValueError:
            return await anyio.to_thread.run_sync(
                lambda: self.message(request, 413, "Too large", "That answer has too many fields.")
            )
        return await anyio.to_thread.run_sync(lambda: self._answer(request, key, request_id, values, link))

    def _check_csrf(self, request: HttpRequest, values: dict[str, list[str]]) -> bool:
        cookie = read_cookie(request.scope, self.csrf_cookie)
        given = (values.get("csrf") or [""])[0]
        if cookie is None or not hmac.compare_digest(cookie.encode(), given.encode()):
            return False
        origin = request.headers.get("origin")
        if origin is not None and origin != "null":
            expected = f"{request.url.scheme}://{request.headers.get('host', '')}"
            return origin == expected
        return True

    def _answer(
        self,
        request: HttpRequest,
        key: str,
        request_id: str,
        values: dict[str, list[str]],
        link: str | None = None,
    ) -> Response:
        if not self._check_csrf(request, values):
            return self.message(
                request,
                403,
                "Refused",
                "This form's security token is missing or out of date: reload the page and answer again.",
            )
        action = (values.get("action") or ["accept"])[0]
        call = self.call(key)
        if call is None:
            return self.message(request, 404, "No such call", "Nothing is parked under that key any more.")
        if call.pending is None:
            return self.message(request, 500, "This call does not read", _views.shown(call.error or ""))
        question = next((r for r in call.pending.requests if r.id == request_id), None)
        if question is None:
            return self.message(request, 404, "No such question", "This call holds no such question.")
        back = link if link is not None else f"calls/{_quote(key)}"
        again = (request_id, link) if link is not None else None  # the page to show a problem on
        if request_id in call.answered:
            return self._already(request, back, key, request_id)
        if call.status == "withdrawn":
            return self._withdrawn(request, back, call)
        if call.status not in ("live", "waiting", "expired"):
            return self._no_longer(request, back, call.status)
        if _views.expired(question, _now()):
            return self.message(
                request,
                410,
                "This question has expired",
                "Its deadline has passed: it can no longer be answered.",
                back=back,
            )
        if action == "decline":
            answer = Answer.decline(request_id)
        elif action == "cancel":
            answer = Answer.cancel(request_id)
        elif action != "accept":
            return self.message(request, 400, "Unknown action", "The form asked for nothing this inbox does.")
        elif question.kind == "input":
            form, problem = _views.form_of(question)
            if form is None:
                return self.message(request, 400, "This form cannot be answered here", problem or "")
            posted = _views.read_post(form, values)
            if not posted.ok:
                return self.call_page(request, key, (request_id, posted), status=422, link=again)
            answer = Answer(request_id, True, posted.content)
        else:
            answer = Answer(request_id, True)
        try:
            if link is not None:
                self.store.record(key, answer, by=_LINK_HOLDER, via="link")
            else:
                self.store.record(key, answer, by=self.person(request), via="inbox")
        except KeyError:
            return self.message(request, 404, "No such call", "Nothing is parked under that key any more.")
        except ValueError as err:
            now = self.call(key)
            if now is not None and request_id in now.answered:  # another tab, person or process first
                return self._already(request, back, key, request_id)
            if now is not None and now.status == "withdrawn":
                return self._withdrawn(request, back, now)
            if now is not None and now.status not in OPEN:
                return self._no_longer(request, back, now.status)
            posted = _views.Posted(general=[_views.shown(str(err))])
            return self.call_page(request, key, (request_id, posted), status=422, link=again)
        logger.info("%s of %s answered (%s)", request_id, key, _views.answer_word(answer))
        return RedirectResponse(
            f"{request.scope.get('root_path', '')}/{back}?answered={_quote(request_id)}", 303
        )

    def _no_longer(self, request: HttpRequest, back: str, status: str) -> Response:
        return self.message(
            request,
            409,
            "This call no longer waits for answers",
            f"It is {status} now: nothing was recorded.",
            back=back,
        )

    def _already(self, request: HttpRequest, back: str, key: str, request_id: str) -> Response:
        """409: the question has an answer already; the page says its outcome (never its values)."""
        try:
            kept = self.store.answers(key).get(request_id)
        except (KeyError, ValueError):
            kept = None
        outcome = f" It was {_views.answer_word(kept)}." if kept is not None else ""
        return self.message(
            request,
            409,
            "Already answered",
            "Someone answered this question first (in another tab, another browser, another inbox or "
            f"at a terminal).{outcome} Their answer is kept; yours was not recorded.",
            back=back,
        )

    def _withdrawn(self, request: HttpRequest, back: str, call: Call) -> Response:
        """410: the call that asked no longer waits (it ended, its time ran out, another
        answerer was first); the answer was recorded nowhere."""
        why = f" ({_views.shown(call.error)})" if call.error else ""
        return self.message(
            request,
            410,
            "This question was withdrawn",
            f"The call that asked it no longer waits{why}: your answer was recorded nowhere.",
            back=back,
        )

    async def events(self, request: HttpRequest) -> Response:
        query = request.query_params
        status = query.get("status") or None
        status = status if status in STATUSES else None
        server = query.get("server") or None
        key = query.get("key") or None

        drawn = _seen(query.get("seen"))

        async def stream() -> AsyncIterator[str]:
            # A watcher of this page's own: it waits without a thread and reads nothing
            # while the store does not change; a question's deadline (which passes without
            # a write) is looked at when it comes.
            try:
                watcher = await anyio.to_thread.run_sync(self.store.watch)
                now, due, state = await anyio.to_thread.run_sync(self.fingerprint, status, server, key)
            except StoreUnavailableError:
                return  # the browser asks again (retry), and gets the 503 page's reason
            last = now if drawn is None else drawn
            yield "retry: 3000\n\n"
            if now != last:  # changed since the page was drawn
                last = now
                yield f"event: change\ndata: {state}\n\n"
            while True:
                wait = _QUIET if due is None else min(_QUIET, max(0.0, due - time.time()) + 0.05)
                changed = await watcher.wait_async(wait)
                if not changed and (due is None or time.time() < due):
                    yield ": still here\n\n"
                    continue
                try:
                    now, due, state = await anyio.to_thread.run_sync(self.fingerprint, status, server, key)
                except StoreUnavailableError:
                    return
                if now != last:
                    last = now
                    yield f"event: change\ndata: {state}\n\n"
                    # At most one change a poll interval: a burst of writes is one reload.
                    await asyncio.sleep(self.poll_interval)

        return StreamingResponse(
            stream(), media_type="text/event-stream", headers={"X-Accel-Buffering": "no"}
        )


def _due(calls: Iterable[Call]) -> float | None:
    """The soonest moment still to come at which a shown call changes without a write to the
    store: a deadline of a question it shows as waiting, or the end of a live question's
    lease (its holder gone, it reads withdrawn from then on)."""
    now = time.time()
    moments = [
        moment
        for call in calls
        if call.status in OPEN and call.pending is not None
        for request in call.pending.requests
        if request.id not in call.answered
        and (moment := read_expires_at(request.expiresAt)) is not None
        and moment > now
    ]
    moments += [call.lease_until for call in calls if call.status == "live" and call.lease_until is not None]
    moments = [moment for moment in moments if moment > now]
    return min(moments) if moments else None


def _call_mark(call: Call | None) -> str:
    """The fingerprint of one call as its page shows it (see ``_Inbox.fingerprint``)."""
    if call is None:
        return "gone"
    return hashlib.sha256(f"{call.status}:{sorted(call.answered)}:{call.next}".encode()).hexdigest()


def _call_state(call: Call | None) -> str:
    """A call's state as its page's live update tells it: one line of JSON (no server text
    but the withdrawal's reason, escaped as the page shows it)."""
    if call is None:
        return json.dumps({"status": "gone", "answered": [], "reason": None})
    reason = _views.shown(call.error) if call.status == "withdrawn" and call.error else None
    return json.dumps({"status": call.status, "answered": sorted(call.answered), "reason": reason})


def _rows_mark(rows: Iterable[_views.Row]) -> str:
    """The fingerprint of the first page of the list as it shows it."""
    digest = hashlib.sha256()
    for row in rows:
        digest.update(f"{row.key}:{row.status}:{sum(p.answered for p in row.prompts)};".encode())
    return digest.hexdigest()


def _seen(given: str | None) -> str | None:
    """The fingerprint a page was drawn with, as its events address carries it: a change
    made between drawing the page and opening its events is then still told to it."""
    if given == "gone" or (given is not None and len(given) == 64 and all(c in _HEX for c in given)):
        return given
    return None


_HEX = frozenset("0123456789abcdef")


def _quote(text: str) -> str:
    return quote(text, safe="")


def build(
    store: Any,
    *,
    token: str | None,
    allowed_hosts: Iterable[str] | None,
    page_size: int,
    poll_interval: float,
    title: str,
) -> Guard:
    inbox = _Inbox(store, token=token, page_size=page_size, poll_interval=poll_interval, title=title)

    def list_page(request: HttpRequest) -> Response:
        return inbox.list_page(request)

    def call_page(request: HttpRequest) -> Response:
        return inbox.call_page(request, request.path_params["key"])

    def unavailable(request: HttpRequest, err: Exception) -> Response:
        logger.warning("the store cannot be reached: %s", err)
        return inbox.message(
            request,
            503,
            "The store cannot be reached",
            "The database that holds the questions does not answer just now; nothing was lost or "
            "recorded. Try again in a moment.",
        )

    static = StaticFiles(packages=[("toolnexus.inbox", "static")])
    app = Starlette(
        exception_handlers={StoreUnavailableError: unavailable},
        routes=[
            Route("/", list_page, methods=["GET"]),
            Route("/calls/{key}", call_page, methods=["GET"]),
            Route("/calls/{key}/{request_id}", inbox.answer, methods=["POST"]),
            Route("/a/{key}/{request_id}/{expires}/{signature}", inbox.link_page, methods=["GET"]),
            Route("/a/{key}/{request_id}/{expires}/{signature}", inbox.link_answer, methods=["POST"]),
            Route("/events", inbox.events, methods=["GET"]),
            Mount("/static", static, name="static"),
        ],
    )
    return Guard(app, token=token, allowed_hosts=allowed_hosts)


def app(
    store: Any,
    *,
    token: str | None = None,
    allowed_hosts: Iterable[str] | None = None,
    page_size: int = 50,
    poll_interval: float = 1.0,
    title: str = "toolnexus inbox",
) -> Any:
    """The inbox for ``store`` as an ASGI app.

    ```python
    from starlette.applications import Starlette
    from starlette.routing import Mount
    from toolnexus import inbox
    from toolnexus.durable import SqliteStore

    site = Starlette(routes=[Mount("/inbox", app=inbox.app(SqliteStore("pending.db")))])
    ```

    Args:
        store: where the calls are parked: a [`SqliteStore`][toolnexus.durable.SqliteStore]
            or any store of the same interface.
        token: the access token every request must carry (``?token=`` in the first address,
            then a cookie); ``None`` asks for none, for an app mounted behind the host's own
            login.
        allowed_hosts: the ``Host`` headers answered (``"127.0.0.1:8000"``), against DNS
            rebinding; ``None`` checks none (the host's server does).
        page_size: calls on one page of the list.
        poll_interval: the shortest time between two live updates of one open page, in
            seconds: a burst of changes is one update. (An open page reads the store only
            when it changes, or when a question it shows reaches its deadline.)
        title: the name at the top of every page.

    Every response carries a strict Content-Security-Policy (no inline script, no framing),
    ``Referrer-Policy: no-referrer`` and ``X-Content-Type-Options: nosniff``; every form
    carries a CSRF token. The app reads and writes the store from worker threads, as a sync
    store needs.
    """
    if token is not None and (not isinstance(token, str) or len(token) < 16):
        raise ValueError("inbox.app: token must be a str of at least 16 characters, or None")
    if isinstance(page_size, bool) or not isinstance(page_size, int) or not 1 <= page_size <= 500:
        raise ValueError(f"inbox.app: page_size must be an int from 1 to 500, not {page_size!r}")
    check_seconds(poll_interval, caller="inbox.app", name="poll_interval", none=False, most=3600)
    hosts = None if allowed_hosts is None else [str(h) for h in allowed_hosts]
    return build(
        store, token=token, allowed_hosts=hosts, page_size=page_size, poll_interval=poll_interval, title=title
    )
