"""Durable elicitation: a call that needs a human parks as a §10 pending, and resumes later.

From MCP protocol 2026-07-28 on, a server that needs input does not hold the call open: it
returns an ``InputRequiredResult`` (its questions, keyed by name, and an opaque
``requestState``), and the client answers by calling again with the answers and the same
state. This module turns that into something a host can store and resume, in another
process, an hour later:

```python
outcome = await durable.call_tool_or_park(client, "deploy", {"service": "api"})
if isinstance(outcome, durable.Pending):
    key = store.put(outcome)            # the process may end here
...
result = await durable.resume(client, store.get(key), store.answers(key))
```

- [`call_tool_or_park`][toolnexus.durable.call_tool_or_park], [`get_prompt`][toolnexus.durable.get_prompt]
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

import contextlib
import logging
import os
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Literal, TypeAlias, cast

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

from ._live import LiveResolver, ask_in
from ._mapping import elicitation_to_request
from ._pending import (
    Answers,
    Method,
    ParkedTask,
    Pending,
    elicit_results,
    input_request,
)
from ._postgres import CHANNEL, READY_CHANNEL, PostgresStore, redact_store
from ._protocol import INPUT_REQUIRED_VERSION, asks_between_rounds
from ._sqlite import SqliteStore
from ._store import (
    ANY_SERVER,
    DEFAULT_RETENTION,
    STATUSES,
    Call,
    Claim,
    Event,
    EventHook,
    EventKind,
    HistoryEntry,
    HistoryKind,
    Status,
    Store,
    check_key,
    check_lease,
)
from ._task_park import TaskStep, answer_inputs, park_task
from ._task_park import step as task_step
from ._task_wire import TaskHandle
from ._time import Clock, check_seconds, utc_timestamp
from ._util import type_name as _type_name
from ._watch import Watcher
from ._wire import Request
from .errors import (
    LeaseLostError,
    LegacyProtocolError,
    NotClaimableError,
    ServerMismatchError,
    StoreUnavailableError,
    ToolnexusError,
)

if TYPE_CHECKING:
    from mcp import Client
    from mcp.client.session import ClientRequestContext
    from mcp_types import ElicitRequestParams, ErrorData

__all__ = [
    "CHANNEL",
    "READY_CHANNEL",
    "STATUSES",
    "Answers",
    "Call",
    "Claim",
    "Event",
    "EventHook",
    "EventKind",
    "HistoryEntry",
    "HistoryKind",
    "LiveResolver",
    "ParkedTask",
    "Pending",
    "PostgresStore",
    "Result",
    "ResumeOutcome",
    "SqliteStore",
    "Status",
    "Store",
    "Watcher",
    "ask_in",
    "call_tool_or_park",
    "get_prompt",
    "open_store",
    "park_only",
    "read_resource",
    "redact_store",
    "resume",
    "resume_key",
    "resume_ready",
]

logger = logging.getLogger(__name__)


Result: TypeAlias = CallToolResult | GetPromptResult | ReadResourceResult
"""What a finished call gives: the result of the method that was parked."""

_STATE_ONLY_DELAY: Final = (0.05, 0.25)  # first and longest wait before retrying a state-only round
_RELIST_PAGES: Final = 100  # at most this many pages of tools/list to find a tool again


# --- the elicitation callback for a client that only parks ---------------------------------


async def park_only(context: ClientRequestContext, params: ElicitRequestParams) -> ElicitResult | ErrorData:
    """An ``elicitation_callback`` for an ``mcp.Client`` whose questions are all parked.

    ```python
    Client(server, elicitation_callback=durable.park_only)
    ```

    A server asks only a client that advertises elicitation, and the SDK advertises it only
    for a client built with a callback. [`call_tool_or_park`][toolnexus.durable.call_tool_or_park] never
    calls it; a question that arrives inline anyway (``client.call_tool(...)`` used directly)
    is answered ``cancel``, with a warning on the ``toolnexus.durable`` logger. A host that can also
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
    if not asks_between_rounds(version):
        raise LegacyProtocolError(
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
                allow_claimed=True,  # a task handle, when the client declared the tasks extension
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
            responses: dict[str, InputResponse] | None = await answer_inputs(client, requests)
        else:
            await anyio.sleep(delay)
            delay = min(delay * 2, _STATE_ONLY_DELAY[1])
            responses = None
        current = await send(responses, current.request_state)
    if isinstance(current, TaskHandle):  # the server made the call a task: park its handle
        return park_task(client, call.target, call.arguments, current)
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
            question = elicitation_to_request(request.params, expires_at=expires_at)
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


async def call_tool_or_park(
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
    """Get a prompt as ``client.get_prompt`` does; park as
    [`call_tool_or_park`][toolnexus.durable.call_tool_or_park] does."""
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
    [`call_tool_or_park`][toolnexus.durable.call_tool_or_park] does."""
    if not isinstance(uri, str):
        raise TypeError(f"read_resource: uri must be a str, not {_type_name(uri)}")
    outcome = await _start(client, _Call("resources/read", uri, None), expires_in, "read_resource")
    return cast("ReadResourceResult | Pending", outcome)  # the session validated it as the method's result


# --- resuming --------------------------------------------------------------------------------


def _server_name(client: Client) -> str | None:
    info = client.server_info
    return info.name if info is not None and info.name else None


def _check_server(client: Client, pending: Pending, allow_renamed_server: bool) -> None:
    """Refuse, before anything is sent, to resume on a server whose name differs from the one
    recorded: the answers (secrets among them) would go to the wrong place."""
    connected = _server_name(client)
    if pending.server is None or connected == pending.server or allow_renamed_server:
        return
    raise ServerMismatchError(
        f"resume: the call was parked from the server {pending.server[:80]!r}, but this client is "
        f"connected to {(connected or '(unnamed)')[:80]!r}; nothing was sent. For a server that "
        "was renamed, pass allow_renamed_server=True."
    )


async def resume(
    client: Client,
    pending: Pending,
    answers: Answers,
    *,
    expires_in: float | None = None,
    allow_renamed_server: bool = False,
) -> Result | Pending:
    """Answer a [`Pending`][toolnexus.durable.Pending] and retry its call, on any connection
    to the same server.

    The answers are mapped and checked first; then the other input requests of the round
    are answered through the client's callbacks, and the call is retried with the
    ``requestState`` echoed byte for byte.

    Args:
        client: a connected ``mcp.Client`` (a new one is fine), built as for
            [`call_tool_or_park`][toolnexus.durable.call_tool_or_park].
        pending: what the call parked as.
        answers: request id to [`Answer`][toolnexus.Answer] (or its wire mapping), or an
            iterable of answers, each by its ``id``; one for every request, no other.
        expires_in: as for [`call_tool_or_park`][toolnexus.durable.call_tool_or_park], for the next round.
        allow_renamed_server: resume even though the connected server's name differs from
            the one the call was parked from (a server that was renamed).

    Returns:
        The call's result, or the next ``Pending`` when the server asks again.

    Raises:
        ValueError: an answer is missing, is for an id ``pending`` does not hold, or holds
            content that does not fit the form; the message names the ids and the fields,
            and nothing is sent.
        ServerMismatchError: the connected server's name is not the one recorded in
            ``pending`` (a ``ValueError``); nothing is sent.
        RuntimeError: the connection negotiated a protocol older than 2026-07-28.
        mcp.MCPError: the server's error, unchanged (a stale or foreign ``requestState``).
    """
    if not isinstance(pending, Pending):
        raise TypeError(f"resume: pending must be a Pending, not {_type_name(pending)}")
    if pending.task is not None:
        raise ValueError(
            "resume: this call is a parked task: a worker polls it (resume_ready, resume_key, or "
            "toolnexus worker), sending its answers as it goes"
        )
    seconds = check_seconds(expires_in, caller="resume", name="expires_in")
    results = elicit_results(pending, answers)
    _check_era(client, "resume")
    _check_server(client, pending, allow_renamed_server)
    call = _Call(pending.method, pending.target, pending.arguments)
    send = _sender(client, call)
    others = {key: input_request(wire) for key, wire in pending.other_inputs.items()}
    responses: dict[str, InputResponse] = await answer_inputs(client, others) if others else {}
    responses.update(results)
    return await _drive(client, call, send, await send(responses, pending.request_state), seconds)


# --- stores --------------------------------------------------------------------------------

_POSTGRES_SCHEMES: Final = ("postgresql://", "postgres://")


def open_store(
    spec: str | os.PathLike[str],
    *,
    create: bool = True,
    read_only: bool = False,
    retention: float | None = DEFAULT_RETENTION,
    on_event: EventHook | None = None,
    clock: Clock | None = None,
) -> SqliteStore | PostgresStore:
    """The store ``spec`` names: a ``postgresql://`` (or ``postgres://``) URL opens a
    [`PostgresStore`][toolnexus.durable.PostgresStore], anything else is the path of a
    [`SqliteStore`][toolnexus.durable.SqliteStore] file. Every command that takes a STORE
    opens it here.

    ```python
    with durable.open_store("calls.db", create=False, read_only=True) as store:
        for call in store.calls():
            print(call.key, call.status)
    ```

    Args:
        spec: the file's path, or the database's URL.
        create: make the store when there is none; otherwise ``FileNotFoundError`` (no
            such file) or ``StoreError`` (a database without a store).
        read_only: open it for reading only: nothing is written, not even the tables; a
            database that is not a store is refused untouched.
        retention: seconds a finished call is kept (``None``: for ever).
        on_event: the notification hook (see [`Event`][toolnexus.durable.Event]).
        clock: the store's clock, for tests that move time (seconds since the epoch); by
            default the machine's (SQLite) or the database's (PostgreSQL).

    Raises:
        StoreError: a store of a newer format, or a database that is not a store.
        StoreUnavailableError: PostgreSQL cannot be reached.
        FileNotFoundError: no such file, and ``create`` is false.
    """
    if isinstance(spec, str) and spec.lower().startswith(_POSTGRES_SCHEMES):
        return PostgresStore(
            spec, create=create, read_only=read_only, retention=retention, on_event=on_event, clock=clock
        )
    if not isinstance(spec, (str, os.PathLike)):
        raise TypeError(f"open_store: spec must be a path or a postgresql:// URL, not {_type_name(spec)}")
    return SqliteStore(
        spec, create=create, read_only=read_only, retention=retention, on_event=on_event, clock=clock
    )


# --- resuming what is ready ------------------------------------------------------------------

OutcomeStatus: TypeAlias = Literal[
    "done", "failed", "retry", "lost", "working", "waiting", "cancelled", "expired"
]


@dataclass(frozen=True, slots=True)
class ResumeOutcome:
    """What came of one claimed call in [`resume_ready`][toolnexus.durable.resume_ready]."""

    key: str
    method: Method
    target: str
    status: OutcomeStatus
    """``done`` (the server answered: ``result``, or ``next`` when it asked again), ``failed``
    (``error`` kept; the call waits for a person), ``retry`` (failed, and back to ``ready``
    for another attempt), ``lost`` (the claim's lease ran out before the outcome was
    recorded: another resumer may have the call now). A parked task's step may also be
    ``working`` (the server works: polled again later), ``waiting`` (it asks: its questions
    wait for people), ``cancelled`` (by the server) or ``expired`` (its time to live ran
    out)."""
    result: Result | None = None
    next: str | None = None
    """When the server asked again: the key of the new parked call."""
    error: str | None = None
    attempt: int = 1
    exception: Exception | None = field(default=None, compare=False, repr=False)
    """When ``failed`` or ``retry``: the exception the resume raised (in this process only;
    the store keeps ``error``, its text)."""
    note: str | None = None
    """A parked task's status message, as the server said it (escape it before showing it)."""


async def resume_key(
    client: Client,
    store: Store,
    key: str,
    *,
    lease: float = 60.0,
    allow_renamed_server: bool = False,
    by: str | None = None,
) -> ResumeOutcome:
    """Claim the one call parked under ``key``, resume it, and record the outcome, as
    [`resume_ready`][toolnexus.durable.resume_ready] does for each call it claims (the same
    claim rule: of any number of resumers and workers, one gets the call).

    ```python
    async with Client(server, elicitation_callback=durable.park_only) as client:
        outcome = await durable.resume_key(client, store, key)
    ```

    Args:
        client: a connected ``mcp.Client`` built with an ``elicitation_callback``.
        store: any [`Store`][toolnexus.durable.Store].
        key: the parked call's key.
        lease: seconds the claim holds without renewal (renewed every third of it while
            the server works).
        allow_renamed_server: resume even though the connected server's name differs from
            the one the call was parked from.
        by: the resumer's name, kept in the call's history (by default this machine's
            name and this process's id).

    Returns:
        The outcome: ``done`` (``result``, or ``next`` when the server asked again),
        ``failed`` (``error`` kept in the store), or ``lost`` (the lease ran out).

    Raises:
        KeyError: no call is parked under ``key``.
        NotClaimableError: the call is not ``ready`` (nor ``resuming`` under a lease that ran
            out): still waiting for answers, resumed elsewhere, or finished.
        ServerMismatchError: the connected server is not the one the call was parked from;
            the call is released untouched, nothing is sent.
        Exception: a failure of the connection itself, after the call was released back to
            ``ready``.
    """

    lease = check_lease(lease)
    key = check_key(key)
    held = _Lease(lease)
    claims = await _in_thread(store.claim, lease=lease, key=key, by=by or resumer_name())
    if not claims:
        call = await _in_thread(store.call, key)  # KeyError when there is none
        raise NotClaimableError(key, call.status)
    (claim,) = claims
    try:
        _check_server(client, claim.pending, allow_renamed_server)
    except ServerMismatchError:
        await _settle(store.release, claim.key, claim.token, lease=held)
        raise
    return await _run_claim(client, store, claim, held, allow_renamed_server, 0)


def _error_text(err: BaseException) -> str:
    text = " ".join(str(err).split()) or type(err).__name__
    return text[:500]


async def _in_thread(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    import functools

    import anyio.to_thread

    return await anyio.to_thread.run_sync(functools.partial(fn, *args, **kwargs))


_RETRY_DELAY: Final = (0.05, 0.5)  # first and longest pause between two tries of an unreachable store


class _Lease:
    """What a resumer knows of its claim's lease: the moment (this process's clock) until
    which it surely holds, from the last claim or renewal that went through (counted from
    before the request, so never later than the store's own deadline)."""

    def __init__(self, lease: float) -> None:
        import anyio

        self.lease = lease
        self.holds_until = anyio.current_time() + lease  # made just before the claim is asked for

    def start(self) -> float:
        import anyio

        return float(anyio.current_time())

    def renewed(self, started: float) -> None:
        self.holds_until = max(self.holds_until, started + self.lease)

    def holds(self) -> bool:
        import anyio

        return bool(anyio.current_time() < self.holds_until)


async def _settle(fn: Callable[..., Any], *args: Any, lease: _Lease, **kwargs: Any) -> Any:
    """Record an outcome: tried again and again while the store cannot be reached and the
    claim's lease still holds (a database restart shorter than the lease loses nothing),
    then once more; ``StoreUnavailableError`` after that."""
    import anyio

    delay = _RETRY_DELAY[0]
    while True:
        try:
            return await _in_thread(fn, *args, **kwargs)
        except StoreUnavailableError:
            if not lease.holds():
                raise
            await anyio.sleep(delay)
            delay = min(delay * 2, _RETRY_DELAY[1])


async def _under_lease(
    store: Store, claim: Claim, lease: _Lease, work: Callable[[], Awaitable[Any]]
) -> tuple[Any, Exception | None, bool]:
    """``work()`` for one claimed call while a heartbeat renews its lease every third of it
    (sooner again after a renewal the store could not take); its result or its error, and
    whether the lease was lost (the work then cancelled)."""
    import anyio

    lost = False
    outcome: Any = None
    error: Exception | None = None

    async with anyio.create_task_group() as group:

        async def heartbeat() -> None:
            nonlocal lost
            pause = lease.lease / 3
            while True:
                await anyio.sleep(pause)
                started = lease.start()
                try:
                    await _in_thread(store.renew, claim.key, claim.token, lease.lease)
                except LeaseLostError:
                    lost = True
                    group.cancel_scope.cancel()
                    return
                except StoreUnavailableError:
                    # The outcome's recording will tell whether the lease held; meanwhile
                    # try again soon, so that the lease is renewed as soon as the store is back.
                    pause = min(lease.lease / 3, _RETRY_DELAY[1])
                    continue
                lease.renewed(started)
                pause = lease.lease / 3

        group.start_soon(heartbeat)
        try:
            outcome = await work()
        except Exception as err:
            error = err
        group.cancel_scope.cancel()
    return outcome, error, lost


async def resume_ready(
    client: Client,
    store: Store,
    *,
    lease: float = 60.0,
    limit: int | None = None,
    server: str | object | None = ANY_SERVER,
    retries: int = 0,
    on_outcome: Callable[[ResumeOutcome], None] | None = None,
    by: str | None = None,
) -> list[ResumeOutcome]:
    """Claim and resume, one at a time, every ready call parked from the server ``client`` is
    connected to; record each outcome in ``store``; return them, oldest call first.

    ```python
    async with Client(server, elicitation_callback=durable.park_only) as client:
        for outcome in await durable.resume_ready(client, store):
            print(outcome.key, outcome.target, outcome.status)
    ```

    Each call is claimed atomically (of any number of resumers, in any processes on any
    machines, one gets it), resumed, and ended: ``done`` with the server's result kept as
    JSON, or ``done`` pointing at the new parked call when the server asks again, or
    ``failed`` with the error kept (back to ``ready`` while ``retries`` allow). While the
    server works, the claim's lease is renewed every third of ``lease``; a resumer that dies
    stops renewing, and the call is claimable again once its lease runs out. See "The
    guarantee" in the docs for what that means for a tool's side effects.

    Args:
        client: a connected ``mcp.Client`` built with an ``elicitation_callback``.
        store: any [`Store`][toolnexus.durable.Store].
        lease: seconds a claim holds without renewal.
        limit: resume at most this many calls (``None``: until none is ready).
        server: resume the calls parked from the server of this recorded name (``None``:
            from an unnamed server); by default the connected server's own name. A name other
            than the connected server's resumes those calls there: the explicit override for
            a renamed server.
        retries: how often a call whose resume failed goes back to ``ready`` before it is
            left ``failed``.
        on_outcome: called with each outcome as soon as it is recorded.
        by: the resumer's name, kept in each call's history (by default this machine's name
            and this process's id).

    Raises:
        StoreUnavailableError: the store cannot be reached (claims already made end when
            their leases run out).
        Exception: a failure of the connection itself (not a server's error), after the call
            it hit was released back to ``ready``: the client is of no more use.
    """
    lease = check_lease(lease)
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise ValueError(f"resume_ready: limit must be a positive int or None, not {limit!r}")
    if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
        raise ValueError(f"resume_ready: retries must be an int, 0 or more, not {retries!r}")
    connected = _server_name(client)
    wanted = connected if server is ANY_SERVER else server
    if wanted is not None and not isinstance(wanted, str):
        raise TypeError(f"resume_ready: server must be a str or None, not {_type_name(wanted)}")
    renamed = wanted != connected
    name = by or resumer_name()
    outcomes: list[ResumeOutcome] = []
    while limit is None or len(outcomes) < limit:
        held = _Lease(lease)
        claims = await _in_thread(store.claim, lease=lease, server=wanted, limit=1, by=name)
        if not claims:
            break
        (claim,) = claims
        outcome = await _run_claim(client, store, claim, held, renamed, retries)
        outcomes.append(outcome)
        if on_outcome is not None:
            on_outcome(outcome)
    return outcomes


async def _run_claim(
    client: Client, store: Store, claim: Claim, lease: _Lease, renamed: bool, retries: int
) -> ResumeOutcome:
    import anyio

    try:
        return await _run_claimed(client, store, claim, lease, renamed, retries)
    except BaseException:
        # Cancelled (a connection that ended under the call) or failed before an outcome was
        # recorded: give the call back, ready for another resumer at once (not when its
        # lease runs out), in a worker thread (a store may wait on a lock) and shielded from
        # the cancellation being handled. A claim already ended (released, or its outcome
        # recorded) is no longer this token's.
        with anyio.CancelScope(shield=True), contextlib.suppress(LeaseLostError, StoreUnavailableError):
            await _in_thread(store.release, claim.key, claim.token)
        raise


async def _run_claimed(
    client: Client, store: Store, claim: Claim, lease: _Lease, renamed: bool, retries: int
) -> ResumeOutcome:
    from mcp import MCPError

    pending = claim.pending

    def made(
        status: OutcomeStatus,
        *,
        result: Result | None = None,
        next: str | None = None,
        error: str | None = None,
        exception: Exception | None = None,
        note: str | None = None,
    ) -> ResumeOutcome:
        return ResumeOutcome(
            claim.key,
            pending.method,
            pending.target,
            status,
            result,
            next,
            error,
            claim.attempt,
            exception,
            note,
        )

    async def record_round(result: Result | Pending) -> ResumeOutcome:
        if isinstance(result, Pending):
            new = await _settle(store.finish_parked, claim.key, claim.token, result, lease=lease)
            return made("done", next=new)
        dumped = result.model_dump(mode="json", by_alias=True, exclude_none=True)
        await _settle(store.finish, claim.key, claim.token, dumped, lease=lease)
        return made("done", result=result)

    async def record_step(step: TaskStep) -> ResumeOutcome:
        key, token = claim.key, claim.token
        if step.kind == "working":
            await _settle(
                store.task_working,
                key,
                token,
                poll_in=step.poll_in,
                note=step.note,
                pending=step.pending,
                lease=lease,
            )
            return made("working", note=step.note)
        if step.kind == "asks":
            assert step.pending is not None
            await _settle(store.task_asks, key, token, step.pending, note=step.note, lease=lease)
            return made("waiting", note=step.note)
        if step.kind == "done":
            assert step.result is not None
            return await record_round(step.result)
        reason = step.error or step.kind
        if step.kind == "failed":
            await _settle(store.fail, key, token, reason, lease=lease)
            return made("failed", error=reason, note=step.note)
        await _settle(store.task_ended, key, token, step.kind, reason, lease=lease)
        return made(step.kind, error=reason, note=step.note)

    if pending.task is not None:  # a parked task: one step (its answers sent, its state read)
        work: Callable[[], Awaitable[Any]] = lambda: task_step(client, pending, claim.answers)  # noqa: E731
        record: Callable[[Any], Awaitable[ResumeOutcome]] = record_step
    else:
        work = lambda: resume(client, pending, claim.answers, allow_renamed_server=renamed)  # noqa: E731
        record = record_round
    result, error, lost = await _under_lease(store, claim, lease, work)
    try:
        if lost:
            return made("lost", error="the lease ran out while the server worked")
        if error is not None:
            if not isinstance(error, (MCPError, ValueError, TypeError, ToolnexusError)):
                # The connection failed: nothing says whether the server ran the call. Give
                # it back for another resumer (the guarantee's one extra retry) and stop.
                with contextlib.suppress(StoreUnavailableError):
                    await _settle(store.release, claim.key, claim.token, lease=lease)
                raise error
            retry = claim.attempt <= retries
            text = _error_text(error)
            await _settle(store.fail, claim.key, claim.token, text, retry=retry, lease=lease)
            return made("retry" if retry else "failed", error=text, exception=error)
        assert result is not None
        return await record(result)
    except LeaseLostError:
        return made("lost", error="the lease ran out before the outcome was recorded")
    except StoreUnavailableError:
        return made(
            "lost",
            error="the store could not be reached until the lease ran out: the outcome was not recorded",
        )


def resumer_name() -> str:
    """The name a resumer goes by in a call's history unless given one: this machine's name
    and this process's id (``build-7:4242``)."""
    import os
    import socket

    return f"{socket.gethostname()[:100]}:{os.getpid()}"
