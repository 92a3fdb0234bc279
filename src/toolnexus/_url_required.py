"""Layer 3: URL elicitation by error (``-32042``) around ``client.call_tool``.

A server on protocol 2025-11-25 may answer a ``tools/call`` with the JSON-RPC error
``-32042`` (URL elicitation required), carrying one or more URL elicitations the user must
complete before the call can succeed.
[`call_tool_resolving_urls`][toolnexus.mcp.call_tool_resolving_urls] turns each into a §10
``authorization`` [`Request`][toolnexus.Request] for the host's one resolver
(through [`elicitation_callback`][toolnexus.mcp.elicitation_callback], so its timeout,
threads and failure containment apply), and retries the call once when every one is
accepted. [`ElicitationCompletions`][toolnexus.mcp.ElicitationCompletions] is the
client's ``message_handler`` that hears ``notifications/elicitation/complete`` and tells a
resolver waiting on one of those URLs.

The SDK is imported for type checking only, and on the first ``-32042``: importing this
module costs nothing beyond ``mcp_types``.
"""

from __future__ import annotations

import itertools
import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ._callback import OnResult, WaitFor, elicitation_callback
from ._util import is_async_callable
from ._wire import Request
from .errors import UrlElicitationRefusedError

if TYPE_CHECKING:
    from mcp import Client
    from mcp.client.session import MessageHandlerFnT
    from mcp.shared.exceptions import MCPError
    from mcp_types import CallToolResult, ElicitRequestURLParams

__all__ = [
    "MAX_URL_ELICITATIONS",
    "URL_ELICITATION_REQUIRED",
    "ElicitationCompletions",
    "call_tool_resolving_urls",
]

logger = logging.getLogger(__name__)

URL_ELICITATION_REQUIRED = -32042
"""The JSON-RPC error code of "URL elicitation required" (MCP 2025-11-25)."""

MAX_URL_ELICITATIONS = 8
"""The most URL elicitations one ``-32042`` error may carry; past it the error is not asked
about (a server cannot make the user face an endless row of URLs) and is raised as it came."""

_URL_SHOWN = 200  # characters of a URL quoted in an exception's message
_context_ids = itertools.count(1)


def _short(url: str) -> str:
    return url if len(url) <= _URL_SHOWN else url[: _URL_SHOWN - 1] + "…"


class ElicitationCompletions:
    """Hears ``notifications/elicitation/complete`` and tells the resolver that waits on it.

    Pass it as the client's ``message_handler`` and to
    [`call_tool_resolving_urls`][toolnexus.mcp.call_tool_resolving_urls]:

    ```python
    completions = ElicitationCompletions()
    async with Client(server, elicitation_callback=elicitation_callback(wait_for),
                      message_handler=completions) as client:
        result = await call_tool_resolving_urls(
            client, "tool", {}, wait_for=wait_for, completions=completions
        )
    ```

    While [`call_tool_resolving_urls`][toolnexus.mcp.call_tool_resolving_urls] asks about the
    URLs of a ``-32042`` error, [`completion`][toolnexus.mcp.ElicitationCompletions.completion] gives the
    resolver, for the [`Request`][toolnexus.Request] it was handed, a
    ``threading.Event`` that is set when the server says the user finished there; a
    resolver that waits for the user to come back from the browser can stop waiting then
    ([`ConsoleResolver`][toolnexus.console.ConsoleResolver] does, and says so). A
    notification for an id nobody waits on is ignored, as the spec says. Every other
    message goes on to ``message_handler`` when one is given.
    """

    def __init__(self, message_handler: MessageHandlerFnT | None = None) -> None:
        if message_handler is not None and not callable(message_handler):
            raise TypeError(
                "ElicitationCompletions: message_handler must be callable or None, "
                f"not {type(message_handler).__name__}"
            )
        self._inner = message_handler
        self._lock = threading.Lock()
        self._by_elicitation: dict[str, threading.Event] = {}
        self._by_request: dict[str, threading.Event] = {}

    def completion(self, request_id: str) -> threading.Event | None:
        """The event set when the server says the URL of this request was completed, or
        ``None`` when this request is not one whose completion anybody waits for (a URL
        asked in the middle of a call, or a form)."""
        with self._lock:
            return self._by_request.get(request_id)

    def _expect(self, elicitation_id: str, request_id: str) -> None:
        event = threading.Event()
        with self._lock:
            self._by_elicitation[elicitation_id] = event
            self._by_request[request_id] = event

    def _release(self, elicitation_id: str, request_id: str) -> None:
        with self._lock:
            self._by_elicitation.pop(elicitation_id, None)
            self._by_request.pop(request_id, None)

    async def __call__(self, message: Any) -> None:
        """The SDK ``message_handler``: notes completions, hands everything on."""
        from mcp_types import ElicitCompleteNotification

        root = getattr(message, "root", message)
        if isinstance(root, ElicitCompleteNotification):
            elicitation_id = root.params.elicitation_id
            with self._lock:
                event = self._by_elicitation.get(elicitation_id)
            if event is None:
                logger.debug("elicitation/complete for an id nobody waits on; ignored")
            else:
                event.set()
        if self._inner is not None:
            await self._inner(message)
        else:
            import anyio.lowlevel

            await anyio.lowlevel.checkpoint()


def _url_elicitations(err: MCPError) -> list[ElicitRequestURLParams] | None:
    """The URL elicitations a ``-32042`` error carries, or ``None`` when it is malformed."""
    from mcp.shared.exceptions import UrlElicitationRequiredError

    data = err.error.data
    raw = data.get("elicitations") if isinstance(data, dict) else None
    if not isinstance(raw, list) or not raw or len(raw) > MAX_URL_ELICITATIONS:
        return None
    try:
        return UrlElicitationRequiredError.from_error(err.error).elicitations
    except Exception:  # a server's malformed params: pydantic's dump would quote them
        return None


def _announcing(
    wait_for: WaitFor, completions: ElicitationCompletions, elicitation_id: str
) -> Callable[[Request], Any]:
    """``wait_for`` (same shape, plain or async) that first registers its request's id as
    waiting on ``elicitation_id``, so that a resolver can find its completion event."""
    if is_async_callable(wait_for):

        async def announced_async(request: Request) -> Any:
            completions._expect(elicitation_id, request.id)
            try:
                return await wait_for(request)  # type: ignore[misc]
            finally:
                completions._release(elicitation_id, request.id)

        return announced_async

    def announced(request: Request) -> Any:
        completions._expect(elicitation_id, request.id)
        try:
            return wait_for(request)
        finally:
            completions._release(elicitation_id, request.id)

    return announced


async def call_tool_resolving_urls(
    client: Client,
    name: str,
    arguments: dict[str, Any] | None = None,
    *,
    wait_for: WaitFor,
    timeout: float | None = None,
    completions: ElicitationCompletions | None = None,
    on_result: OnResult | None = None,
    **kwargs: Any,
) -> CallToolResult:
    """``client.call_tool(name, arguments, **kwargs)``, answering a ``-32042`` error with ``wait_for``.

    When the server answers the call with "URL elicitation required" (``-32042``, MCP
    2025-11-25), each URL elicitation it carries is mapped with
    [`elicitation_to_request`][toolnexus.mcp.elicitation_to_request] to a §10
    ``authorization`` [`Request`][toolnexus.Request] and handed to ``wait_for``, one after
    the other (after the first that is not accepted, the rest are not asked), through
    [`elicitation_callback`][toolnexus.mcp.elicitation_callback]
    (``timeout`` is its timeout; its containment applies: a resolver that fails counts as
    cancelled). When every one is accepted the call is made once more, and its result (or
    error) is returned (or raised) as it is: a second ``-32042`` is raised, never asked
    again. An accept means the user is done at that URL: a resolver that opens a browser
    should return once the user is back (see ``completions``).

    ```python
    result = await call_tool_resolving_urls(
        client, "fetch_repos", {"org": "acme"}, wait_for=wait_for
    )
    ```

    Args:
        client: a connected ``mcp.Client``.
        name: the tool.
        arguments: its arguments.
        wait_for: the host's resolver, as for [`elicitation_callback`][toolnexus.mcp.elicitation_callback]
            (usually the one the client's own callback wraps).
        timeout: seconds each URL question may take; ``None`` waits as long as it takes.
        completions: the client's [`ElicitationCompletions`][toolnexus.mcp.ElicitationCompletions]
            message handler, so that ``wait_for`` can learn that the server saw the user
            finish at a URL while it waits.
        on_result: the observer of each URL question's result, as for
            [`elicitation_callback`][toolnexus.mcp.elicitation_callback].
        **kwargs: passed to ``client.call_tool`` (``read_timeout_seconds``, ``meta``, ...).

    Raises:
        UrlElicitationRefusedError: a URL was declined or cancelled; the call is not
            retried. It names each such URL.
        mcp.MCPError: any other error of the call, a ``-32042`` whose elicitations
            cannot be read (or more than [`MAX_URL_ELICITATIONS`][toolnexus.mcp.MAX_URL_ELICITATIONS]
            of them), and a ``-32042`` from the retry, as the SDK raised it.
        TypeError: ``wait_for`` is not callable, or ``completions`` is not an
            [`ElicitationCompletions`][toolnexus.mcp.ElicitationCompletions].
    """
    from mcp.client.session import ClientRequestContext
    from mcp.shared.exceptions import MCPError

    if not callable(wait_for):
        raise TypeError(f"call_tool_resolving_urls: wait_for must be callable, not {type(wait_for).__name__}")
    if completions is not None and not isinstance(completions, ElicitationCompletions):
        raise TypeError(
            "call_tool_resolving_urls: completions must be an ElicitationCompletions or None, "
            f"not {type(completions).__name__}"
        )
    try:
        return await client.call_tool(name, arguments, **kwargs)
    except MCPError as err:
        if err.code != URL_ELICITATION_REQUIRED:
            raise
        elicitations = _url_elicitations(err)
        if elicitations is None:
            logger.warning(
                "%s: a URL-elicitation-required error the bridge cannot read; raised as it came", name
            )
            raise
    refused: list[tuple[str, str]] = []
    for params in elicitations:
        resolver: WaitFor = wait_for
        if completions is not None and params.elicitation_id:
            resolver = _announcing(wait_for, completions, params.elicitation_id)
        on_elicitation = elicitation_callback(resolver, timeout=timeout, on_result=on_result)
        context = ClientRequestContext(
            session=client.session, request_id=f"toolnexus-32042-{next(_context_ids)}"
        )
        result = await on_elicitation(context, params)
        action = getattr(result, "action", "cancel")
        if action != "accept":
            refused.append((params.url, "declined" if action == "decline" else "cancelled"))
            break  # the call will not be retried: the rest are not asked
    if refused:
        raise UrlElicitationRefusedError(name, refused)
    return await client.call_tool(name, arguments, **kwargs)
