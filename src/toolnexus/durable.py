"""Durable elicitation: a call that needs a human parks as a §10 pending, and resumes later.

From MCP protocol 2026-07-28 on, a server that needs input does not hold the call open: it
returns an ``InputRequiredResult`` (its questions, keyed by name, and an opaque
``requestState``), and the client answers by calling again with the answers and the same
state. This module turns that into something a host can store and resume, in another
process, an hour later:

```python
outcome = await durable.call_tool(client, "deploy", {"service": "api"})
if isinstance(outcome, durable.Pending):
    key = store.put(outcome)            # the process may end here
...
result = await durable.resume(client, store.get(key), store.answers(key))
```

- [`call_tool`][toolnexus.durable.call_tool], [`get_prompt`][toolnexus.durable.get_prompt]
  and [`read_resource`][toolnexus.durable.read_resource] make the call, and give a
  [`Pending`][toolnexus.durable.Pending] instead of asking when the server asks for input.
- [`resume`][toolnexus.durable.resume] answers it and gives the result, or the next
  ``Pending`` when the server asks again.
- [`SqliteStore`][toolnexus.durable.SqliteStore] keeps pendings and their answers in a
  file that several processes share.
- [`park_only`][toolnexus.durable.park_only] is the ``elicitation_callback`` to build the
  ``mcp.Client`` with when nothing is answered inline: a server asks only a client that
  advertises elicitation.

Importing this module loads only the SDK's wire types (``mcp_types``); the client modules
are imported when a call is made.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, TypeAlias, cast

from mcp_types import (
    CallToolResult,
    ElicitRequest,
    ElicitResult,
    GetPromptResult,
    InputRequest,
    InputRequiredResult,
    InputResponse,
    ReadResourceResult,
)
from mcp_types.version import is_version_at_least

from ._mapping import elicitation_to_request
from ._pending import (
    FORMAT_NAME,
    FORMAT_VERSION,
    Answers,
    Method,
    Pending,
    elicit_results,
    input_request,
)
from ._store import STORE_FORMAT, SqliteStore, Store
from ._util import check_seconds, utc_timestamp
from ._wire import Request

if TYPE_CHECKING:
    from mcp import Client
    from mcp.client.session import ClientRequestContext
    from mcp_types import ElicitRequestParams, ErrorData

__all__ = [
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "INPUT_REQUIRED_VERSION",
    "STORE_FORMAT",
    "Answers",
    "Pending",
    "Result",
    "SqliteStore",
    "Store",
    "call_tool",
    "get_prompt",
    "park_only",
    "read_resource",
    "resume",
]

logger = logging.getLogger("toolnexus")

INPUT_REQUIRED_VERSION: Final = "2026-07-28"
"""The first MCP protocol version in which a server asks through ``InputRequiredResult``."""

Result: TypeAlias = CallToolResult | GetPromptResult | ReadResourceResult
"""What a finished call gives: the result of the method that was parked."""

_STATE_ONLY_DELAY: Final = (0.05, 0.25)  # first and longest wait before retrying a state-only round
_RELIST_PAGES: Final = 100  # at most this many pages of tools/list to find a tool again


def _type_name(value: object) -> str:
    return type(value).__name__


# --- the elicitation callback for a client that only parks ---------------------------------


async def park_only(context: ClientRequestContext, params: ElicitRequestParams) -> ElicitResult | ErrorData:
    """An ``elicitation_callback`` for an ``mcp.Client`` whose questions are all parked.

    ```python
    Client(server, elicitation_callback=durable.park_only)
    ```

    A server asks only a client that advertises elicitation, and the SDK advertises it only
    for a client built with a callback. [`call_tool`][toolnexus.durable.call_tool] never
    calls it; a question that arrives inline anyway (``client.call_tool(...)`` used directly)
    is answered ``cancel``, with a warning on the ``toolnexus`` logger. A host that can also
    answer inline passes [`elicitation_callback`][toolnexus.mcp.elicitation_callback]
    instead.
    """
    logger.warning("an elicitation arrived inline on a client built with durable.park_only; cancel sent")
    return ElicitResult(action="cancel")


# --- calling ---------------------------------------------------------------------------------

Send: TypeAlias = Callable[[dict[str, InputResponse] | None, str | None], Awaitable[Any]]


@dataclass(frozen=True, slots=True)
class _Call:
    method: Method
    target: str
    arguments: dict[str, Any] | None


def _check_era(client: Client, caller: str) -> None:
    version = client.protocol_version
    if not is_version_at_least(version, INPUT_REQUIRED_VERSION):
        raise RuntimeError(
            f"toolnexus.durable.{caller}: this connection negotiated MCP protocol {version}, older than "
            f"{INPUT_REQUIRED_VERSION}: its server asks in the middle of the call, which cannot be parked. "
            "Use toolnexus.mcp.elicitation_callback for such servers."
        )


def _sender(client: Client, call: _Call) -> Send:
    session = client.session
    if call.method == "tools/call":

        async def call_once(responses: dict[str, InputResponse] | None, state: str | None) -> Any:
            return await session.call_tool(
                call.target,
                call.arguments,
                input_responses=responses,
                request_state=state,
                allow_input_required=True,
            )

        async def send_tool(responses: dict[str, InputResponse] | None, state: str | None) -> Any:
            from mcp import MCPError
            from mcp_types import HEADER_MISMATCH

            try:
                return await call_once(responses, state)
            except MCPError as mismatch:
                # As client.call_tool does: a tool whose arguments are mirrored in HTTP
                # headers (x-mcp-header) needs this connection to have listed it; a fresh
                # connection, as a resume usually is, has not. List the tools, send once more.
                if mismatch.code != HEADER_MISMATCH:
                    raise
                await _relist(client, call.target)
                return await call_once(responses, state)

        return send_tool
    if call.method == "prompts/get":

        async def send_prompt(responses: dict[str, InputResponse] | None, state: str | None) -> Any:
            return await session.get_prompt(
                call.target,
                call.arguments,
                input_responses=responses,
                request_state=state,
                allow_input_required=True,
            )

        return send_prompt

    async def send_resource(responses: dict[str, InputResponse] | None, state: str | None) -> Any:
        return await session.read_resource(
            call.target, input_responses=responses, request_state=state, allow_input_required=True
        )

    return send_resource


async def _relist(client: Client, name: str) -> None:
    """Fetch the tool listing afresh, page by page, until a page lists ``name``."""
    cursor: str | None = None
    for _ in range(_RELIST_PAGES):
        page = await client.list_tools(cursor=cursor, cache_mode="refresh")
        cursor = page.next_cursor
        if cursor is None or any(tool.name == name for tool in page.tools):
            return


async def _dispatch(client: Client, requests: Mapping[str, InputRequest]) -> dict[str, InputResponse]:
    """Answer non-elicitation input requests through the client's own callbacks, concurrently,
    as the SDK's driver does; a callback's ``ErrorData`` is raised as ``MCPError``."""
    import anyio
    from mcp.client.session import ClientRequestContext
    from mcp.shared.exceptions import MCPError
    from mcp_types import ErrorData

    session = client.session
    responses: dict[str, InputResponse] = {}
    refused: list[ErrorData] = []

    async def one(key: str, request: InputRequest) -> None:
        meta = request.params.meta if request.params is not None else None
        context = ClientRequestContext(session=session, request_id=key, meta=meta)
        response = await session.dispatch_input_request(context, request)
        if isinstance(response, ErrorData):
            refused.append(response)
            group.cancel_scope.cancel()
        else:
            responses[key] = response

    async with anyio.create_task_group() as group:
        for key, request in requests.items():
            group.start_soon(one, key, request)
    if refused:
        raise MCPError.from_error_data(refused[0])
    return responses


async def _drive(
    client: Client, call: _Call, send: Send, current: Any, expires_in: float | None
) -> Result | Pending:
    """Follow the server's rounds: park at the first one that holds an elicitation; answer a
    round of roots or sampling requests at once, and retry a round that carries only state
    after a short wait, as the SDK does."""
    import anyio
    from mcp import InputRequiredRoundsExceededError

    rounds = 0
    delay = _STATE_ONLY_DELAY[0]
    while isinstance(current, InputRequiredResult):
        requests = current.input_requests or {}
        if any(isinstance(request, ElicitRequest) for request in requests.values()):
            return _park(client, call, current, requests, expires_in)
        rounds += 1
        if rounds > client.input_required_max_rounds:
            raise InputRequiredRoundsExceededError(client.input_required_max_rounds)
        if requests:
            delay = _STATE_ONLY_DELAY[0]
            responses: dict[str, InputResponse] | None = await _dispatch(client, requests)
        else:
            await anyio.sleep(delay)
            delay = min(delay * 2, _STATE_ONLY_DELAY[1])
            responses = None
        current = await send(responses, current.request_state)
    result: Result = current
    return result


def _park(
    client: Client,
    call: _Call,
    result: InputRequiredResult,
    requests: Mapping[str, InputRequest],
    expires_in: float | None,
) -> Pending:
    expires_at = utc_timestamp(expires_in) if expires_in is not None else None
    keys: list[str] = []
    questions: list[Request] = []
    others: dict[str, dict[str, Any]] = {}
    for key, request in requests.items():
        if isinstance(request, ElicitRequest):
            question = elicitation_to_request(request.params)
            if expires_at is not None:
                question = dataclasses.replace(question, expiresAt=expires_at)
            keys.append(key)
            questions.append(question)
        else:
            others[key] = request.model_dump(mode="json", by_alias=True, exclude_none=True)
    info = client.server_info
    return Pending(
        call.method,
        call.target,
        call.arguments,
        result.request_state,
        tuple(keys),
        tuple(questions),
        others,
        info.name if info is not None and info.name else None,
    )


async def _start(client: Client, call: _Call, expires_in: object, caller: str) -> Result | Pending:
    seconds = check_seconds(expires_in, caller=caller, name="expires_in")
    _check_era(client, caller)
    send = _sender(client, call)
    return await _drive(client, call, send, await send(None, None), seconds)


async def call_tool(
    client: Client, name: str, arguments: dict[str, Any] | None = None, *, expires_in: float | None = None
) -> CallToolResult | Pending:
    """Call a tool as ``client.call_tool`` does, except that when the server asks for input
    the caller gets a [`Pending`][toolnexus.durable.Pending] instead of a callback.

    Each elicitation of the round becomes a §10 [`Request`][toolnexus.Request]; input
    requests of other kinds in that round (``roots/list``, ``sampling/createMessage``) are
    answered through the client's own callbacks when the round is resumed. A round that holds
    no elicitation is answered at once, as the SDK would.

    Args:
        client: a connected ``mcp.Client``, built with an ``elicitation_callback`` (such as
            [`park_only`][toolnexus.durable.park_only]) so that it advertises elicitation.
        name: the tool.
        arguments: its arguments.
        expires_in: seconds the humans have: each request then carries ``expiresAt``. Keep
            it below the lifetime of the server's ``requestState`` (600 s on an SDK server
            by default).

    Returns:
        The tool's result, or a ``Pending`` to store and [`resume`][toolnexus.durable.resume].

    Raises:
        RuntimeError: the connection negotiated a protocol older than 2026-07-28, where a
            call cannot be parked (use [`elicitation_callback`][toolnexus.mcp.elicitation_callback]).
        mcp.MCPError: the server's error, unchanged.
    """
    if not isinstance(name, str):
        raise TypeError(f"call_tool: name must be a str, not {_type_name(name)}")
    if arguments is not None and not isinstance(arguments, dict):
        raise TypeError(f"call_tool: arguments must be a dict or None, not {_type_name(arguments)}")
    outcome = await _start(client, _Call("tools/call", name, arguments), expires_in, "call_tool")
    return cast("CallToolResult | Pending", outcome)  # the session validated it as the method's result


async def get_prompt(
    client: Client, name: str, arguments: dict[str, str] | None = None, *, expires_in: float | None = None
) -> GetPromptResult | Pending:
    """Get a prompt as ``client.get_prompt`` does; park as [`call_tool`][toolnexus.durable.call_tool] does."""
    if not isinstance(name, str):
        raise TypeError(f"get_prompt: name must be a str, not {_type_name(name)}")
    if arguments is not None and not isinstance(arguments, dict):
        raise TypeError(f"get_prompt: arguments must be a dict or None, not {_type_name(arguments)}")
    outcome = await _start(client, _Call("prompts/get", name, arguments), expires_in, "get_prompt")
    return cast("GetPromptResult | Pending", outcome)  # the session validated it as the method's result


async def read_resource(
    client: Client, uri: str, *, expires_in: float | None = None
) -> ReadResourceResult | Pending:
    """Read a resource as ``client.read_resource`` does; park as
    [`call_tool`][toolnexus.durable.call_tool] does."""
    if not isinstance(uri, str):
        raise TypeError(f"read_resource: uri must be a str, not {_type_name(uri)}")
    outcome = await _start(client, _Call("resources/read", uri, None), expires_in, "read_resource")
    return cast("ReadResourceResult | Pending", outcome)  # the session validated it as the method's result


# --- resuming --------------------------------------------------------------------------------


async def resume(
    client: Client, pending: Pending, answers: Answers, *, expires_in: float | None = None
) -> Result | Pending:
    """Answer a [`Pending`][toolnexus.durable.Pending] and retry its call, on any connection
    to the same server.

    The answers are mapped and checked first; then the other input requests of the round
    are answered through the client's callbacks, and the call is retried with the
    ``requestState`` echoed byte for byte.

    Args:
        client: a connected ``mcp.Client`` (a new one is fine), built as for
            [`call_tool`][toolnexus.durable.call_tool].
        pending: what the call parked as.
        answers: request id to [`Answer`][toolnexus.Answer] (or its wire mapping), or an
            iterable of answers, each by its ``id``; one for every request, no other.
        expires_in: as for [`call_tool`][toolnexus.durable.call_tool], for the next round.

    Returns:
        The call's result, or the next ``Pending`` when the server asks again.

    Raises:
        ValueError: an answer is missing, is for an id ``pending`` does not hold, or holds
            content that does not fit the form; the message names the ids and the fields,
            and nothing is sent.
        RuntimeError: the connection negotiated a protocol older than 2026-07-28.
        mcp.MCPError: the server's error, unchanged (a stale or foreign ``requestState``).
    """
    if not isinstance(pending, Pending):
        raise TypeError(f"resume: pending must be a Pending, not {_type_name(pending)}")
    seconds = check_seconds(expires_in, caller="resume", name="expires_in")
    results = elicit_results(pending, answers)
    _check_era(client, "resume")
    call = _Call(pending.method, pending.target, pending.arguments)
    send = _sender(client, call)
    others = {key: input_request(wire) for key, wire in pending.other_inputs.items()}
    responses: dict[str, InputResponse] = await _dispatch(client, others) if others else {}
    responses.update(results)
    return await _drive(client, call, send, await send(responses, pending.request_state), seconds)
