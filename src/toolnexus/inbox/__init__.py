"""The toolnexus inbox: a web page where people answer parked questions.

A call parked with [`toolnexus.durable`][toolnexus.durable] waits in a store for a person
who may not be at the agent's terminal. The inbox lists the parked calls and draws each
question (a form, a URL to visit) with the browser's own controls; an answer is checked on
the server with the form model and recorded in the store, where a worker or
``toolnexus resume`` picks it up.

- ``toolnexus inbox STORE`` serves it on 127.0.0.1 with an access token (see
  [`serve`][toolnexus.inbox.serve]).
- [`app`][toolnexus.inbox.app] gives the same pages as an ASGI app to mount in a host's own
  Starlette or FastAPI app, behind the host's own login.

Needs the extra ``inbox`` (Jinja2); Starlette and uvicorn come with the MCP SDK.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ._security import CSP
from ._serve import serve

__all__ = ["CSP", "app", "serve"]


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
        poll_interval: seconds between two looks at the store for the live updates.
        title: the name at the top of every page.

    Every response carries a strict Content-Security-Policy (no inline script, no framing),
    ``Referrer-Policy: no-referrer`` and ``X-Content-Type-Options: nosniff``; every form
    carries a CSRF token. The app reads and writes the store from worker threads, as a sync
    store needs.
    """
    from ._app import build

    if token is not None and (not isinstance(token, str) or len(token) < 16):
        raise ValueError("inbox.app: token must be a str of at least 16 characters, or None")
    if isinstance(page_size, bool) or not isinstance(page_size, int) or not 1 <= page_size <= 500:
        raise ValueError(f"inbox.app: page_size must be an int from 1 to 500, not {page_size!r}")
    if (
        isinstance(poll_interval, bool)
        or not isinstance(poll_interval, (int, float))
        or not poll_interval > 0
    ):
        raise ValueError(
            f"inbox.app: poll_interval must be a positive number of seconds, not {poll_interval!r}"
        )
    hosts = None if allowed_hosts is None else [str(h) for h in allowed_hosts]
    return build(
        store, token=token, allowed_hosts=hosts, page_size=page_size, poll_interval=poll_interval, title=title
    )
