"""The tasks extension's wire (``io.modelcontextprotocol/tasks``, MCP 2026-07-28), read once
for the two clients of it: the live one (``toolnexus.tasks``, a task driven to its end inside
``call_tool``) and the parked one (``toolnexus.durable``, a task polled by whichever worker
claims it).

Everything a server sends here is read as hostile: a task id is bounded, a status outside
the five is refused, a question must be one of the three input requests, and a problem is
reported by its place and kind, never with the value.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final, Literal

import mcp_types as types
from pydantic import Field, ValidationError

if TYPE_CHECKING:
    from mcp.client.session import ClientSession

__all__ = [
    "ENDED",
    "TaskHandle",
    "TaskState",
    "TaskStatusName",
    "cancel_task",
    "first_problem",
    "get_task",
    "read_end",
    "read_question",
    "update_task",
]

TaskStatusName = Literal["working", "input_required", "completed", "failed", "cancelled"]
ENDED: Final = frozenset({"completed", "failed", "cancelled"})
_QUESTIONS: Final[dict[str, type[types.InputRequest]]] = {
    "elicitation/create": types.ElicitRequest,
    "sampling/createMessage": types.CreateMessageRequest,
    "roots/list": types.ListRootsRequest,
}
"""What an ``inputRequests`` entry may be, by its ``method``."""


class _Task(types.Result):
    """The fields every task result carries (the names are the wire's, in camel case)."""

    task_id: str = Field(max_length=1024)
    status: TaskStatusName
    status_message: str | None = None
    ttl_ms: int | None = None
    poll_interval_ms: int | None = None


class TaskHandle(_Task):
    """A ``tools/call`` answered with a task (``resultType: "task"``)."""

    result_type: Literal["task"]


class TaskState(_Task):
    """``tasks/get``'s answer: the task, with its questions, its result or its error."""

    input_requests: dict[str, Any] | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None


class _TaskIdParams(types.RequestParams):
    task_id: str


class _UpdateParams(types.RequestParams):
    task_id: str
    input_responses: dict[str, Any]


class _GetTask(types.Request[_TaskIdParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    params: _TaskIdParams
    name_param = "taskId"  # the Mcp-Name header over HTTP, which the extension requires


class _UpdateTask(types.Request[_UpdateParams, Literal["tasks/update"]]):
    method: Literal["tasks/update"] = "tasks/update"
    params: _UpdateParams
    name_param = "taskId"


class _CancelTask(types.Request[_TaskIdParams, Literal["tasks/cancel"]]):
    method: Literal["tasks/cancel"] = "tasks/cancel"
    params: _TaskIdParams
    name_param = "taskId"


def first_problem(err: ValidationError) -> str:
    """The first problem pydantic found, by its place and kind (never the value)."""
    problem = err.errors(include_url=False, include_input=False)[0]
    where = ".".join(str(part) for part in problem.get("loc", ())) or "the value"
    return f"{where}: {problem.get('msg', 'invalid')}"


async def get_task(session: ClientSession, task_id: str, read_timeout: float | None = None) -> TaskState:
    """``tasks/get``; ``ValueError`` when the answer is not a task (the problem by its place)."""
    try:
        return await session.send_request(
            _GetTask(params=_TaskIdParams(task_id=task_id)),
            TaskState,
            request_read_timeout_seconds=read_timeout,
        )
    except ValidationError as err:
        raise ValueError(
            f"tasks/get answered with something that is not a task ({first_problem(err)})"
        ) from None


async def update_task(
    session: ClientSession, task_id: str, responses: dict[str, Any], read_timeout: float | None = None
) -> None:
    """``tasks/update`` with ``responses`` (input key to the response's wire mapping)."""
    await session.send_request(
        _UpdateTask(params=_UpdateParams(task_id=task_id, input_responses=responses)),
        types.EmptyResult,
        request_read_timeout_seconds=read_timeout,
    )


async def cancel_task(session: ClientSession, task_id: str) -> None:
    """``tasks/cancel``."""
    await session.send_request(_CancelTask(params=_TaskIdParams(task_id=task_id)), types.EmptyResult)


def read_question(key: str, raw: object) -> types.InputRequest:
    """An ``inputRequests`` entry as the SDK's model of its request; ``ValueError`` saying
    which question does not read, and why (by place and kind)."""
    method = raw.get("method") if isinstance(raw, dict) else None
    model = _QUESTIONS.get(method) if isinstance(method, str) else None
    if model is None:
        raise ValueError(f"its question {key[:80]!r} is not an elicitation, sampling or roots request")
    try:
        params = raw.get("params") if isinstance(raw, dict) else None
        if model is types.ElicitRequest and isinstance(params, dict):  # its mode picks the form
            url = params.get("mode") == "url"
            kind = types.ElicitRequestURLParams if url else types.ElicitRequestFormParams
            return types.ElicitRequest(params=kind.model_validate(params, by_name=False))
        return model.model_validate(raw, by_name=False)
    except ValidationError as err:
        raise ValueError(f"its question {key[:80]!r} does not read ({first_problem(err)})") from None


def read_end(state: TaskState) -> types.CallToolResult | types.ErrorData | Literal["cancelled"] | None:
    """How an ended task ended: its tool's result (``completed``), the server's error
    (``failed``), ``"cancelled"``; ``None`` while it runs. ``ValueError`` for an end that
    breaks the protocol (a result that is no tool's, a failure without an error)."""
    if state.status not in ENDED:
        return None
    if state.status == "completed":
        if state.result is None:
            raise ValueError("tasks/get said completed without a result")
        try:
            return types.CallToolResult.model_validate(state.result, by_name=False)
        except ValidationError as err:
            raise ValueError(f"its result is not a tool's result ({first_problem(err)})") from None
    if state.status == "failed":
        if state.error is None:
            raise ValueError("tasks/get said failed without an error")
        try:
            return types.ErrorData.model_validate(state.error, by_name=False)
        except ValidationError as err:
            raise ValueError(f"it failed with an error that does not read ({first_problem(err)})") from None
    return "cancelled"
