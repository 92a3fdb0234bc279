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
- [`serving`][toolnexus.inbox.serving] serves them in a thread of the host's own process for
  as long as it needs (``toolnexus call --browser``: one call's questions).

Needs the extra ``inbox`` (Jinja2); Starlette and uvicorn come with the MCP SDK.
"""

from __future__ import annotations

from ._app import app
from ._security import CSP
from ._serve import Serving, serve, serving

__all__ = ["CSP", "Serving", "app", "serve", "serving"]
