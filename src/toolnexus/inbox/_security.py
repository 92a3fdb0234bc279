"""The inbox's guard: an ASGI middleware in front of every page.

- the ``Host`` header checked against the names the inbox is served under (DNS rebinding);
- the access token: in the first URL (``?token=...``), then an ``HttpOnly``,
  ``SameSite=Strict`` cookie; compared in constant time;
- the headers every response carries: a strict Content-Security-Policy (no inline script,
  ``frame-ancestors 'none'``), ``Referrer-Policy: no-referrer``, ``nosniff``, ``no-store``;
- an access log line per request on the ``toolnexus.inbox`` logger: method, path (never the
  query string, which may hold the token), status.

The CSRF token of every form is the app's (``_app``), checked beside the form it protects.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
from collections.abc import Iterable
from http.cookies import SimpleCookie
from typing import Any, Final
from urllib.parse import parse_qsl, quote, urlencode

from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["HEADERS", "Guard", "cookie_name", "read_cookie"]

logger = logging.getLogger("toolnexus.inbox")

CSP: Final = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
    "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
HEADERS: Final = (
    (b"content-security-policy", CSP.encode()),
    (b"referrer-policy", b"no-referrer"),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"cache-control", b"no-store"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
)


def cookie_name(token: str) -> str:
    """The access cookie's name: one per token, so two inboxes on one host (cookies do not
    tell ports apart) do not overwrite each other's."""
    return "toolnexus_inbox_" + hashlib.sha256(token.encode()).hexdigest()[:12]


def read_cookie(scope: Scope, name: str) -> str | None:
    """The value of the cookie ``name`` in the request, or ``None``."""
    for key, value in scope.get("headers", ()):
        if key == b"cookie":
            jar: SimpleCookie = SimpleCookie()
            try:
                jar.load(value.decode("latin-1"))
            except Exception:  # a cookie header that does not parse carries no cookie of ours
                continue
            if name in jar:
                return jar[name].value
    return None


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            return str(value.decode("latin-1"))
    return None


class Guard:
    """The middleware. ``token=None``: no token asked (a host's own login is in front);
    ``allowed_hosts=None``: no ``Host`` check (the host's own server checks it)."""

    def __init__(self, app: ASGIApp, *, token: str | None, allowed_hosts: Iterable[str] | None) -> None:
        self.app = app
        self.token = token
        self.cookie = cookie_name(token) if token is not None else None
        self.allowed = None if allowed_hosts is None else frozenset(h.lower() for h in allowed_hosts)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope.get("root_path", "") + _route_path(scope)
        status = 0

        async def send_with_headers(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                headers = [h for h in message.get("headers", []) if h[0] not in _OURS]
                message = {**message, "headers": [*headers, *HEADERS]}
            await send(message)

        try:
            refusal = self._refusal(scope)
            if refusal is not None:
                await _plain(send_with_headers, *refusal)
            elif (redirect := self._token_redirect(scope)) is not None:
                await send_with_headers(redirect)
                await send_with_headers({"type": "http.response.body", "body": b""})
            else:
                await self.app(scope, receive, send_with_headers)
        finally:
            logger.info("%s %s %s", scope.get("method", ""), path, status or "-")

    def _refusal(self, scope: Scope) -> tuple[int, str] | None:
        if self.allowed is not None:
            host = (_header(scope, b"host") or "").lower()
            if host not in self.allowed:
                return 400, "This inbox is not served under that host name (Host header refused)."
        if self.token is None or _route_path(scope).startswith("/a/"):
            return None  # no token asked; or an answer link, which the inbox checks itself
        given = read_cookie(scope, self.cookie or "")
        if given is None:
            given = _query_token(scope)
        if given is None or not hmac.compare_digest(given.encode(), self.token.encode()):
            return 403, "This inbox needs its access token: open the address the inbox printed."
        return None

    def _token_redirect(self, scope: Scope) -> Message | None:
        """A first visit with ``?token=``: set the cookie and send the browser to the same
        page without the token in its address (its history, a shared screen)."""
        if self.token is None or _query_token(scope) is None:
            return None
        query = [
            (k, v) for k, v in parse_qsl(scope.get("query_string", b"").decode("latin-1")) if k != "token"
        ]
        root = scope.get("root_path", "")
        location = _on_the_inbox(root, _route_path(scope)) + (("?" + urlencode(query)) if query else "")
        cookie = f"{self.cookie}={self.token}; Path={root or '/'}; HttpOnly; SameSite=Strict" + (
            "; Secure" if scope.get("scheme") == "https" else ""
        )
        return {
            "type": "http.response.start",
            "status": 303,
            "headers": [(b"location", location.encode()), (b"set-cookie", cookie.encode())],
        }


_OURS = frozenset(name for name, _ in HEADERS)


def _route_path(scope: Scope) -> str:
    """The request's path below the inbox's root: Starlette 0.33 and later leave the root
    (a ``Mount``'s path) in ``path``, older versions took it out."""
    path: str = scope.get("path", "")
    root: str = scope.get("root_path", "")
    if root and (path == root or path.startswith(root + "/")):
        return path[len(root) :]
    return path


def _on_the_inbox(root: str, path: str) -> str:
    """``root + path`` as an address that stays on the inbox whatever ``path`` holds.

    ``path`` is the request's, percent-decoded: a browser reads ``//evil.example/x`` and
    ``/\\evil.example/x`` as another host, so the slashes and backslashes it starts with are
    collapsed into one, and the rest is percent-encoded (a backslash, ``?``, ``#``, ``%``,
    a tab, anything not ASCII). A ``.`` or ``..`` segment, which a browser resolves, perhaps
    above the root, sends it to the root instead.
    """
    rest = quote(path.lstrip("/\\"), safe="/!$&'()*+,;=:@-._~")
    if any(segment in (".", "..") for segment in rest.split("/")):
        rest = ""
    return "/" + f"{root}/{rest}".lstrip("/\\")


def _query_token(scope: Scope) -> str | None:
    for key, value in parse_qsl(scope.get("query_string", b"").decode("latin-1")):
        if key == "token":
            return str(value)
    return None


async def _plain(send: Any, status: int, text: str) -> None:
    body = text.encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
