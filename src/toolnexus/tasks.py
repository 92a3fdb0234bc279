"""Tasks: a tool that runs long answers its call with a task, and asks its questions there.

MCP 2026-07-28 moved long-running tools into the tasks extension
(``io.modelcontextprotocol/tasks``): a client that declares it may get, for a ``tools/call``, a
task handle (``resultType: "task"``) instead of the result. It then polls ``tasks/get`` until
the task ends; a task that needs the user is ``input_required`` and carries its questions
(``inputRequests``, each an ``elicitation/create`` under a key), which the client answers with
``tasks/update``; ``tasks/cancel`` stops it.

[`TasksExtension`][toolnexus.tasks.TasksExtension] does all of that inside the SDK's own
``Client.call_tool``, which returns the tool's result as for any other call::

    from mcp import Client
    from toolnexus import elicitation_callback
    from toolnexus.tasks import TasksExtension

    async with Client(server, elicitation_callback=elicitation_callback(wait_for),
                      extensions=[TasksExtension()]) as client:
        result = await client.call_tool("build_report", {"quarter": "Q3"})

Each question goes to the client's own elicitation callback, so the resolver, the console,
a ``Policy`` or ``durable.ask_in`` answer a task's questions as they answer any other.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal

import anyio
import anyio.abc
import mcp_types as types
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from mcp.client.session import ClientRequestContext, ClientSession
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from ._task_wire import (
    ENDED,
    TaskHandle,
    TaskState,
    TaskStatusName,
    cancel_task,
    first_problem,
    get_task,
    read_end,
    read_question,
    update_task,
)
from .errors import TaskError

if TYPE_CHECKING:
    from mcp import Client

__all__ = ["TASKS", "TaskStatus", "TasksExtension", "call_tool_as_task", "task_support"]

logger = logging.getLogger("toolnexus.tasks")

TASKS: Final = "io.modelcontextprotocol/tasks"
"""The extension's identifier, as the client declares it."""

Status = TaskStatusName
_CANCEL_PATIENCE: Final = 5.0  # seconds a tasks/cancel may take once the call is over


@dataclass(frozen=True, slots=True)
class TaskStatus:
    """What a status callback sees each time a task's status or status message changes.

    Attributes:
        tool: the tool whose call became the task.
        task_id: the server's id of the task.
        status: ``working``, ``input_required``, ``completed``, ``failed`` or ``cancelled``.
        message: the server's ``statusMessage`` (its text, as sent: escape it before a terminal
            shows it), or ``None``.
        elapsed: seconds since the call became a task, on this process's clock.
    """

    tool: str
    task_id: str
    status: Status
    message: str | None
    elapsed: float


# --- the extension --------------------------------------------------------------------------


def _seconds(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number of seconds, not {type(value).__name__}")
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a positive number of seconds, not {value!r}")
    return float(value)


class TasksExtension(ClientExtension):
    """The client side of the tasks extension, for ``mcp.Client(..., extensions=[...])``.

    It declares the extension on 2026-07-28 connections (the SDK leaves it out of older
    ones), and when a ``tools/call`` is answered with a task it drives the task to its end
    inside ``call_tool``: it polls ``tasks/get`` at the server's ``pollIntervalMs`` (held
    between ``poll_floor`` and ``poll_ceiling``), hands each question to the client's own
    elicitation callback, sends each answer with ``tasks/update`` as soon as it is given
    (never a key twice), and returns the tool's ``CallToolResult``. Several questions at
    once are asked at once; a question the server stops asking is withdrawn. A task that
    failed raises the server's error as ``mcp.MCPError``; one that ends otherwise without a
    result raises [`TaskError`][toolnexus.errors.TaskError]. When the awaiting call is
    cancelled, or gives up with an error of its own, the task is sent ``tasks/cancel``.

    Args:
        on_status: called with a [`TaskStatus`][toolnexus.tasks.TaskStatus] each time a task's
            status or status message changes (not on every poll). It runs in the event loop:
            keep it quick. An exception it raises ends the call (and cancels the task).
        poll_floor: the shortest wait between two polls, in seconds (a server may say 0).
        poll_ceiling: the longest (a server may say a year); also the wait when the server
            names none is 1 s within these bounds.
        timeout: seconds a task may run in all, or ``None`` (the default: as long as the
            server keeps it, up to its time to live). Past it the task is cancelled and
            ``TaskError`` raised.
        max_questions: questions one task may ask in all; past them it is cancelled (a
            server that asks for ever must not grow the client's memory for ever).
    """

    identifier = TASKS

    def __init__(
        self,
        *,
        on_status: Callable[[TaskStatus], None] | None = None,
        poll_floor: float = 0.1,
        poll_ceiling: float = 30.0,
        timeout: float | None = None,
        max_questions: int = 1000,
    ) -> None:
        if on_status is not None and not callable(on_status):
            raise TypeError(f"on_status must be callable, not {type(on_status).__name__}")
        floor = _seconds("poll_floor", poll_floor)
        ceiling = _seconds("poll_ceiling", poll_ceiling)
        if ceiling < floor:
            raise ValueError(f"poll_ceiling ({ceiling:g} s) is below poll_floor ({floor:g} s)")
        if isinstance(max_questions, bool) or not isinstance(max_questions, int):
            raise TypeError(f"max_questions must be an int, not {type(max_questions).__name__}")
        if max_questions < 1:
            raise ValueError(f"max_questions must be at least 1, not {max_questions}")
        self._on_status = on_status
        self._floor = floor
        self._ceiling = ceiling
        self._timeout = None if timeout is None else _seconds("timeout", timeout)
        self._max_questions = max_questions

    def __repr__(self) -> str:
        return (
            f"TasksExtension(poll_floor={self._floor:g}, poll_ceiling={self._ceiling:g},"
            f" timeout={self._timeout!r}, max_questions={self._max_questions})"
        )

    def claims(self) -> Sequence[ResultClaim[Any]]:
        return (
            ResultClaim(
                result_type="task",
                model=TaskHandle,
                resolve=self._resolve,
                protocol_versions=frozenset(MODERN_PROTOCOL_VERSIONS),
            ),
        )

    def interval(self, poll_interval_ms: object) -> float:
        """Seconds to wait before the next poll, for a server's ``pollIntervalMs``."""
        wanted = 1.0
        if isinstance(poll_interval_ms, int) and not isinstance(poll_interval_ms, bool):
            wanted = poll_interval_ms / 1000
        return min(max(wanted, self._floor), self._ceiling)

    async def _resolve(self, handle: TaskHandle, ctx: ClaimContext) -> types.CallToolResult:
        return await _Drive(self, handle, ctx).run()


class _TaskRun:
    """What a task of either era needs: its id, its status as last reported (to the status
    callback, once per change), its errors, and its end: the extension's ``timeout``, and
    ``tasks/cancel`` unless the server ended it."""

    def __init__(self, extension: TasksExtension, session: ClientSession, tool: str) -> None:
        self.ext = extension
        self.session = session
        self.tool = tool
        self.task_id = ""
        self.started = anyio.current_time()
        self.status = "working"
        self.seen: tuple[str, str | None] | None = None
        self.over = False  # the server ended the task: nothing to cancel

    def error(self, message: str, status: Literal["cancelled", "expired", "invalid"]) -> TaskError:
        return TaskError(
            f"task {self.task_id} of {self.tool}: {message}", task_id=self.task_id, status=status
        )

    def report(self, status: Status, message: str | None) -> None:
        self.status = status
        if (status, message) == self.seen:
            return
        self.seen = (status, message)
        if self.ext._on_status is not None:
            elapsed = anyio.current_time() - self.started
            self.ext._on_status(TaskStatus(self.tool, self.task_id, status, message, elapsed))

    async def to_the_end(
        self, work: Callable[[], Awaitable[types.CallToolResult]], cancel: Callable[[], Awaitable[Any]]
    ) -> types.CallToolResult:
        """``work()``'s result within the extension's ``timeout``; ``cancel`` sent (best
        effort: the call is over, whatever the server says) unless the server ended the task."""
        try:
            if self.ext._timeout is None:
                return await work()
            try:
                with anyio.fail_after(self.ext._timeout):
                    return await work()
            except TimeoutError:
                raise self.error(f"still {self.status} after {self.ext._timeout:g} s", "expired") from None
        finally:
            if not self.over:
                with anyio.CancelScope(shield=True), anyio.move_on_after(_CANCEL_PATIENCE):
                    try:
                        await cancel()
                    except Exception as err:  # the connection may be gone: nothing more to do
                        logger.debug("tasks/cancel of %s failed: %s", self.task_id, type(err).__name__)


class _Drive(_TaskRun):
    """One task, polled to its end."""

    def __init__(self, extension: TasksExtension, handle: TaskHandle, ctx: ClaimContext) -> None:
        super().__init__(extension, ctx.session, ctx.tool_name)
        self.read_timeout = ctx.read_timeout_seconds
        self.task_id = handle.task_id
        ttl = handle.ttl_ms
        self.ttl_end = self.started + ttl / 1000 if ttl is not None and ttl > 0 else None
        self.answered: set[str] = set()  # keys answered (or being sent): never answered twice
        self.asking: dict[str, anyio.CancelScope] = {}
        self.asked = 0
        self.poke = anyio.Event()  # an answer was sent: poll again now
        self.failure: Exception | None = None
        self.group: anyio.abc.TaskGroup | None = None
        self.report(handle.status, handle.status_message)

    async def run(self) -> types.CallToolResult:
        return await self.to_the_end(self._poll_to_end, lambda: cancel_task(self.session, self.task_id))

    async def _poll_to_end(self) -> types.CallToolResult:
        result: types.CallToolResult | None = None
        async with anyio.create_task_group() as group:
            self.group = group
            try:
                result = await self._loop(group)
            except Exception as err:
                self._fail(err)
            group.cancel_scope.cancel()  # questions still asked are withdrawn
        if self.failure is not None:
            raise self.failure
        assert result is not None
        return result

    def _fail(self, err: Exception) -> None:
        if self.failure is None:
            self.failure = err
        if self.group is not None:
            self.group.cancel_scope.cancel()

    async def _loop(self, group: anyio.abc.TaskGroup) -> types.CallToolResult:
        while True:
            state = await self._get()
            self.report(state.status, state.status_message)
            done = self._ended(state)
            if done is not None:
                return done
            if state.status == "input_required":
                self._ask(group, state)
            else:  # working: the server waits for no answer, so none is still asked
                for scope in self.asking.values():
                    scope.cancel()
            if self.ttl_end is not None and anyio.current_time() > self.ttl_end:
                self.over = True
                raise self.error("its time to live ran out before it ended", "expired")
            with anyio.move_on_after(self.ext.interval(state.poll_interval_ms)):
                await self.poke.wait()
            self.poke = anyio.Event()

    def _ended(self, state: TaskState) -> types.CallToolResult | None:
        try:
            end = read_end(state)
        except ValueError as err:
            self.over = True
            raise self.error(str(err), "invalid") from None
        if end is None:
            return None
        self.over = True
        if isinstance(end, types.ErrorData):
            raise MCPError.from_error_data(end)
        if end == "cancelled":
            raise self.error("the server cancelled it", "cancelled")
        return end

    def _ask(self, group: anyio.abc.TaskGroup, state: TaskState) -> None:
        requests = state.input_requests
        if requests is None:
            raise self.error("tasks/get said input_required without inputRequests", "invalid")
        for key, scope in list(self.asking.items()):
            if key not in requests:  # asked no more: the server moved on without it
                scope.cancel()
        for key, raw in requests.items():
            if key in self.answered or key in self.asking:
                continue
            if self.asked >= self.ext._max_questions:
                raise self.error(f"it asked more than {self.ext._max_questions} questions", "invalid")
            request = self._question(key, raw)
            self.asked += 1
            scope = anyio.CancelScope()
            self.asking[key] = scope
            group.start_soon(self._answer, key, request, scope)

    def _question(self, key: str, raw: object) -> types.InputRequest:
        try:
            return read_question(key, raw)
        except ValueError as err:
            raise self.error(str(err), "invalid") from None

    async def _answer(self, key: str, request: types.InputRequest, scope: anyio.CancelScope) -> None:
        try:
            with scope:
                ctx = ClientRequestContext(
                    session=self.session, request_id=key, meta=request.params.meta if request.params else None
                )
                response = await self.session.dispatch_input_request(ctx, request)
                if isinstance(response, types.ErrorData):
                    raise self.error(f"its question {key!r} was not answered: {response.message}", "invalid")
                self.answered.add(key)  # before the send: a key is never answered twice
                value = response.model_dump(by_alias=True, mode="json", exclude_none=True)
                await update_task(self.session, self.task_id, {key: value}, self.read_timeout)
                self.poke.set()
        except Exception as err:
            self._fail(err)
        finally:
            self.asking.pop(key, None)

    async def _get(self) -> TaskState:
        try:
            return await get_task(self.session, self.task_id, self.read_timeout)
        except ValueError as err:
            raise self.error(str(err), "invalid") from None


# --- 2025-11-25: task-augmented tools/call ---------------------------------------------------


async def call_tool_as_task(
    client: Client,
    name: str,
    arguments: dict[str, Any] | None = None,
    *,
    tasks: TasksExtension | None = None,
    as_task: bool | None = None,
) -> types.CallToolResult:
    """Call the tool ``name``, as a task where it runs as one, in either protocol era.

    On 2026-07-28 this is ``client.call_tool``: a server answers with a task on its own, and
    the client's [`TasksExtension`][toolnexus.tasks.TasksExtension] drives it (give it to
    ``Client(extensions=[...])``). On 2025-11-25 the client asks for the task: when the tool's
    ``execution.taskSupport`` is ``required`` (or ``as_task=True`` for an ``optional`` one),
    the call is sent with ``params.task``, its status is polled with ``tasks/get`` (as ``tasks``
    says: floor, ceiling, ``on_status``, ``timeout``), and ``tasks/result`` brings the result,
    with the server's questions on the way, answered by the client's elicitation callback.
    Cancelling the call sends ``tasks/cancel``. Otherwise it is ``client.call_tool``.

    Raises:
        mcp.MCPError: the task failed (the server's error), or the call was refused.
        TaskError: the server cancelled the task, its answers broke the protocol, or the
            ``timeout`` passed.
    """
    if client.protocol_version in MODERN_PROTOCOL_VERSIONS:
        return await client.call_tool(name, arguments)
    if as_task is None:
        as_task = await task_support(client, name) == "required"
    if not as_task:
        return await client.call_tool(name, arguments)
    return await _LegacyTask(tasks or TasksExtension(), client.session, name).run(arguments)


async def task_support(client: Client, name: str) -> Literal["forbidden", "optional", "required"] | None:
    """Whether the tool ``name`` runs as a task, as the server lists it (2025-11-25's
    ``execution.taskSupport``): ``"required"``, ``"optional"``, ``"forbidden"``, or ``None``
    when the server does not say (or has no such tool)."""
    cursor: str | None = None
    for _ in range(100):  # pages at most: a server that never stops paging is cut off
        page = await client.list_tools(cursor=cursor)
        for tool in page.tools:
            if tool.name == name:
                return tool.execution.task_support if tool.execution is not None else None
        cursor = page.next_cursor
        if cursor is None:
            break
    return None


class _LegacyTask(_TaskRun):
    """One 2025-11-25 task: created by the call, watched with ``tasks/get``, its result (and
    the server's questions on the way) brought by ``tasks/result``."""

    async def run(self, arguments: dict[str, Any] | None) -> types.CallToolResult:
        # mcp 2.3's ClientSession.send_request checks a tools/call result against 2025-11-25's
        # CallToolResult, which a CreateTaskResult is not: the request goes through the
        # session's dispatcher, the one the session sends everything through.
        dispatcher = getattr(self.session, "_dispatcher", None)
        if dispatcher is None or not callable(getattr(dispatcher, "send_raw_request", None)):
            raise RuntimeError("this mcp SDK's ClientSession cannot send a task-augmented tools/call")
        params = {"name": self.tool, "arguments": arguments or {}, "task": {}}
        headers = {"mcp-protocol-version": self.session.protocol_version or "2025-11-25"}
        raw = await dispatcher.send_raw_request("tools/call", params, {"headers": headers})
        try:
            task = types.CreateTaskResult.model_validate(raw, by_name=False).task
        except ValidationError as err:
            raise TaskError(
                f"{self.tool}: the call was not answered with a task ({first_problem(err)})",
                task_id="",
                status="invalid",
            ) from None
        self.task_id = task.task_id
        self.report(task.status, task.status_message)
        cancel = types.CancelTaskRequest(params=types.CancelTaskRequestParams(task_id=self.task_id))
        return await self.to_the_end(
            lambda: self._result(task.poll_interval),
            lambda: self.session.send_request(cancel, types.EmptyResult),
        )

    async def _result(self, interval: int | None) -> types.CallToolResult:
        outcome: list[types.CallToolResult | Exception] = []
        async with anyio.create_task_group() as group:
            group.start_soon(self._watch, interval)
            try:
                request = types.GetTaskPayloadRequest(
                    params=types.GetTaskPayloadRequestParams(task_id=self.task_id)
                )
                outcome.append(await self.session.send_request(request, types.CallToolResult))
            except Exception as err:
                outcome.append(err)
            group.cancel_scope.cancel()
        self.over = True  # tasks/result answered: the task ended, one way or another
        result = outcome[0]
        if isinstance(result, MCPError) and self.status == "cancelled":
            raise self.error("the server cancelled it", "cancelled") from None
        if isinstance(result, ValidationError):
            raise self.error(
                f"its result is not a tool's result ({first_problem(result)})", "invalid"
            ) from None
        if isinstance(result, Exception):
            raise result
        self.report("completed", None)
        return result

    async def _watch(self, interval: int | None) -> None:
        """``tasks/get`` at the server's interval, for the status callback, until the end."""
        request = types.GetTaskRequest(params=types.GetTaskRequestParams(task_id=self.task_id))
        while True:
            await anyio.sleep(self.ext.interval(interval))
            try:
                task = await self.session.send_request(request, types.GetTaskResult)
            except (MCPError, ValidationError):
                return  # tasks/result says how it ended
            self.report(task.status, task.status_message)
            interval = task.poll_interval
            if task.status in ENDED:
                return
