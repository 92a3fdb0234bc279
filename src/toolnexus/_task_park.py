"""A parked task, one step at a time: what a worker that claimed it says to the server, and
what the store should record next.

A call the server answered with a task (the tasks extension, MCP 2026-07-28) is parked as a
[`Pending`][toolnexus.durable.Pending] whose ``task`` names it. Whichever worker claims it
takes one [`step`][toolnexus._task_park.step]: it sends the answers of the task's last
questions (the keys the server still asks, each once), polls ``tasks/get``, and says what
came of it as a [`TaskStep`][toolnexus._task_park.TaskStep]: at work still (poll again
later), new questions (parked, for people to answer), or the end (a result, a failure,
cancelled, expired). The store is written by the caller (``durable``), under its claim.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Final, Literal

import mcp_types as types
from mcp_types import InputRequest, InputResponse

from ._mapping import elicitation_to_request
from ._pending import MAX_TASK_QUESTIONS, ParkedTask, Pending, elicit_results
from ._store import TASK_POLL, task_poll_delay
from ._task_wire import TaskHandle, cancel_task, get_task, read_end, read_question, update_task
from ._time import read_expires_at, utc_timestamp
from ._wire import Answer, Request

if TYPE_CHECKING:
    from mcp import Client

__all__ = ["TaskStep", "answer_inputs", "park_task", "step"]

_LONGEST_TTL: Final = 100 * 365 * 24 * 3600.0  # seconds: a longer time to live is none


@dataclass(frozen=True, slots=True)
class TaskStep:
    """What one step of a parked task came to, for the store."""

    kind: Literal["working", "asks", "done", "failed", "cancelled", "expired"]
    note: str | None = None
    """The server's status message, as sent."""
    pending: Pending | None = None
    """``asks``: the record with the new questions; ``working``: the record to keep when it
    changed (answers sent), else ``None``."""
    poll_in: float = 0.0
    """``working``: seconds until the next poll."""
    result: types.CallToolResult | None = None
    error: str | None = None
    """``failed``, ``cancelled``, ``expired``: why."""


def park_task(client: Client, target: str, arguments: dict[str, Any] | None, handle: TaskHandle) -> Pending:
    """The record of a ``tools/call`` the server answered with ``handle``."""
    ttl = handle.ttl_ms
    expires_at = None
    if ttl is not None and 0 < ttl / 1000 < _LONGEST_TTL:
        expires_at = utc_timestamp(ttl / 1000)
    info = client.server_info
    return Pending(
        "tools/call",
        target,
        arguments,
        None,
        (),
        (),
        {},
        info.name if info is not None and info.name else None,
        ParkedTask(handle.task_id, handle.poll_interval_ms, expires_at),
    )


async def step(client: Client, pending: Pending, answers: Mapping[str, Answer]) -> TaskStep:
    """One step of the parked task ``pending`` names: its answered questions sent, its state
    read, the next thing to record decided.

    Raises:
        mcp.MCPError: the server refused a request (the caller records the failure).
        Exception: the connection failed (the caller gives the task back, untouched).
    """
    task = pending.task
    assert task is not None
    session = client.session
    try:
        state = await get_task(session, task.id)
    except ValueError as err:
        return await _broken(client, task, str(err))
    answered = task.answered
    if pending.requests and all(request.id in answers for request in pending.requests):
        # The last questions are answered: send each answer the server still asks for
        # (a worker that died after sending may have sent some: the server no longer lists
        # those), then read the task again.
        results = elicit_results(pending, {request.id: answers[request.id] for request in pending.requests})
        asked = state.input_requests if state.status == "input_required" else None
        responses = {
            key: result.model_dump(by_alias=True, mode="json", exclude_none=True)
            for key, result in results.items()
            if asked is None or key in asked
        }
        if responses:
            await update_task(session, task.id, responses)
        answered = (*answered, *pending.input_keys)
        try:
            state = await get_task(session, task.id)
        except ValueError as err:
            return await _broken(client, task, str(err))
    task = replace(task, answered=answered, poll_interval_ms=state.poll_interval_ms)
    changed = pending.requests or task != pending.task
    note = state.status_message
    try:
        end = read_end(state)
    except ValueError as err:
        return await _broken(client, task, str(err))
    if isinstance(end, types.CallToolResult):
        return TaskStep("done", note, result=end)
    if isinstance(end, types.ErrorData):
        return TaskStep("failed", note, error=f"the task failed: {end.message[:300]} (error {end.code})")
    if end == "cancelled":
        return TaskStep("cancelled", note, error="the server cancelled the task")
    deadline = read_expires_at(task.expires_at)
    if deadline is not None and _now() > deadline:
        return TaskStep("expired", note, error="the task's time to live ran out before it ended")
    bare = _record(pending, task, (), ())
    if state.status != "input_required":
        return TaskStep("working", note, bare if changed else None, task_poll_delay(state.poll_interval_ms))
    if state.input_requests is None:
        return await _broken(client, task, "tasks/get said input_required without inputRequests")
    new = {key: raw for key, raw in state.input_requests.items() if key not in answered}
    if len(answered) + len(new) > MAX_TASK_QUESTIONS:
        return await _broken(client, task, f"it asked more than {MAX_TASK_QUESTIONS} questions")
    keys: list[str] = []
    questions: list[Request] = []
    others: dict[str, types.InputRequest] = {}
    try:
        for key, raw in new.items():
            request = read_question(key, raw)
            if isinstance(request, types.ElicitRequest):
                keys.append(key)
                questions.append(elicitation_to_request(request.params, expires_at=task.expires_at))
            else:
                others[key] = request
    except ValueError as err:
        return await _broken(client, task, str(err))
    if others:  # roots and sampling: the client's own callbacks answer them at once
        given = await answer_inputs(client, others)
        await update_task(
            session,
            task.id,
            {
                key: value.model_dump(by_alias=True, mode="json", exclude_none=True)
                for key, value in given.items()
            },
        )
        task = replace(task, answered=(*task.answered, *others))
        bare = _record(pending, task, (), ())
    if not questions:  # every question it lists is answered (it may list them a while longer)
        return TaskStep(
            "working", note, bare, TASK_POLL[0] if others else task_poll_delay(state.poll_interval_ms)
        )
    return TaskStep("asks", note, _record(pending, task, tuple(keys), tuple(questions)))


async def answer_inputs(client: Client, requests: Mapping[str, InputRequest]) -> dict[str, InputResponse]:
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


def _record(
    pending: Pending, task: ParkedTask, keys: tuple[str, ...], questions: tuple[Request, ...]
) -> Pending:
    return Pending(
        "tools/call", pending.target, pending.arguments, None, keys, questions, {}, pending.server, task
    )


async def _broken(client: Client, task: ParkedTask, problem: str) -> TaskStep:
    """The task's answers broke the protocol: cancelled (as best the server lets it), failed."""
    import anyio

    # The connection may be gone: the task is failed all the same.
    with anyio.move_on_after(5.0), contextlib.suppress(Exception):
        await cancel_task(client.session, task.id)
    return TaskStep("failed", error=f"the task {task.id[:80]}: {problem}")


def _now() -> float:
    return _dt.datetime.now(_dt.timezone.utc).timestamp()
