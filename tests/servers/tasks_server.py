"""A server of the tasks extension (``io.modelcontextprotocol/tasks``, MCP 2026-07-28) on the
SDK's ``MCPServer`` extension hooks, with tools that make every case a client must meet.

Each tool below is answered with a task handle when the client declared the extension (and
refused with -32021 otherwise, except ``optional``, which then runs in the foreground). The
task moves on each ``tasks/get`` and ``tasks/update``, as its tool says:

- ``approve(item)``: asks one form question (key ``approve``), then completes with the answer.
- ``two(item)``: asks two questions at once (``a`` and ``b``); completes once both are answered.
- ``twice(item)``: asks ``first``, then, once it is answered, ``second``; then completes.
- ``repeat(item)``: asks ``k``; once answered, still lists ``k`` on the next two polls (the
  extension's eventual consistency), then completes saying how many answers to ``k`` came.
- ``progress(steps)``: ``working``, with ``statusMessage`` "step 1 of N" ... on each poll; completes.
- ``fail()``: fails with the error ``{code: -32050, message: "the report could not be built"}``.
- ``server_cancels()``: cancelled by the server on the first poll.
- ``forever()``: works for ever (its ``statusMessage`` counts the polls); ``ttl_ms`` sets its
  time to live.
- ``interval(ms, polls)``: completes after ``polls`` polls, its ``pollIntervalMs`` being ``ms``.
- ``garbage()``: ``tasks/get`` answers with a status no task has.
- ``bad_result()``: completes with a result that is no tool's result.
- ``bad_question()``: asks a question without a message.
- ``many()``: asks a new question on every poll, for ever.
- ``optional(item)``: a task when the client declared the extension, else run at once.
- ``slow(polls, delay_ms)``: each ``tasks/get`` takes ``delay_ms`` to answer; completes after
  ``polls`` polls (a worker can be killed while it waits on one).

With ``TASKS_SERVER_STATE=FILE`` in its environment the server keeps its tasks in FILE
(JSON, written after every change, read at start): a server killed and started again knows
its tasks, as a server keeping them in a database does.

``journal()`` (a plain tool) gives what the server saw: per task, its tool, the polls, the
answers by key, whether it was cancelled, and the ``Mcp-Name`` header of every ``tasks/*``
request that came over HTTP.

Run: ``python -m servers.tasks_server stdio`` or ``http --fd N`` (from the ``tests`` directory).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import secrets
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import anyio
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.extension import Extension, MethodBinding
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types import CLIENT_CAPABILITIES_META_KEY, INVALID_PARAMS, CallToolRequestParams, RequestParams
from mcp_types.jsonrpc import MISSING_REQUIRED_CLIENT_CAPABILITY
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

TASKS = "io.modelcontextprotocol/tasks"
TASK_TOOLS = [
    *("approve", "two", "twice", "repeat", "progress", "fail", "server_cancels", "forever", "interval"),
    *("garbage", "bad_result", "bad_question", "many", "slow"),
]
FAILURE: dict[str, Any] = {
    "code": -32050,
    "message": "the report could not be built",
    "data": {"stage": "render"},
}


def _form(message: str, name: str) -> dict[str, Any]:
    return {
        "method": "elicitation/create",
        "params": {
            "mode": "form",
            "message": message,
            "requestedSchema": {
                "type": "object",
                "properties": {name: {"type": "string"}},
                "required": [name],
            },
        },
    }


def _text(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": False}


@dataclass
class Task:
    id: str
    tool: str
    args: dict[str, Any]
    interval_ms: int | None = 20
    ttl_ms: int | None = 60_000
    status: str = "working"
    message: str | None = None
    asking: dict[str, Any] = field(default_factory=dict)
    answers: dict[str, list[Any]] = field(default_factory=dict)
    polls: int = 0
    cancelled: bool = False
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    names: list[str | None] = field(default_factory=list)  # Mcp-Name of each tasks/* over HTTP

    def answer(self, key: str) -> Any:
        return (
            self.answers[key][0]["content"][key] if self.answers[key][0].get("action") == "accept" else None
        )

    def advance(self) -> None:
        """The task's next state, from its tool, its polls and its answers."""
        if self.status in ("completed", "failed", "cancelled"):
            return
        tool, answered = self.tool, set(self.answers)
        if tool in ("approve", "optional"):
            if "approve" in answered:
                self.complete(f"{self.args.get('item')}: {self.answers['approve'][0]}")
            else:
                self.ask({"approve": _form(f"Approve {self.args.get('item')}?", "approve")})
        elif tool == "two":
            left = {k: _form(f"{k} for {self.args.get('item')}?", k) for k in ("a", "b") if k not in answered}
            if left:
                self.ask(left)
            else:
                self.complete(f"a={self.answer('a')}, b={self.answer('b')}")
        elif tool == "twice":
            if "first" not in answered:
                self.ask({"first": _form("First?", "first")})
            elif "second" not in answered:
                self.ask({"second": _form("Second?", "second")})
            else:
                self.complete(f"first={self.answer('first')}, second={self.answer('second')}")
        elif tool == "repeat":
            if "k" not in answered:
                self.ask({"k": _form("K?", "k")})
            elif self.polls < self.args.setdefault("done_after", self.polls + 2):
                self.ask({"k": _form("K?", "k")})  # answered, still listed: eventually consistent
            else:
                self.complete(f"k answered {len(self.answers['k'])} time(s)")
        elif tool == "progress":
            steps = int(self.args.get("steps", 3))
            if self.polls <= steps:
                self.status, self.message = "working", f"step {self.polls} of {steps}"
            else:
                self.complete("all steps done")
        elif tool == "fail":
            self.status, self.error, self.message = "failed", FAILURE, FAILURE["message"]
        elif tool == "server_cancels":
            self.status = "cancelled"
        elif tool == "forever":
            self.status, self.message = "working", f"poll {self.polls}"
        elif tool in ("interval", "slow"):
            if self.polls >= int(self.args.get("polls", 3)):
                self.complete(f"after {self.polls} polls")
        elif tool == "bad_result":
            self.status, self.result = "completed", {"content": "not a list"}
        elif tool == "bad_question":
            self.ask({"q": {"method": "elicitation/create", "params": {"mode": "form"}}})
        elif tool == "many":
            self.ask({f"q{self.polls}": _form(f"Question {self.polls}?", "x")})

    def ask(self, requests: dict[str, Any]) -> None:
        self.status, self.asking = "input_required", requests

    def complete(self, text: str) -> None:
        self.status, self.asking, self.result = "completed", {}, _text(text)

    def view(self) -> dict[str, Any]:
        now = dt.datetime.now(dt.timezone.utc).isoformat()
        out: dict[str, Any] = {
            "taskId": self.id,
            "status": self.status,
            "createdAt": now,
            "lastUpdatedAt": now,
            "ttlMs": self.ttl_ms,
        }
        if self.interval_ms is not None:
            out["pollIntervalMs"] = self.interval_ms
        if self.message is not None:
            out["statusMessage"] = self.message
        if self.status == "input_required":
            out["inputRequests"] = self.asking
        if self.status == "completed":
            out["result"] = self.result
        if self.status == "failed":
            out["error"] = self.error
        if self.tool == "garbage" and self.polls:
            out["status"] = "exploded"
        return out


class _TaskId(RequestParams):
    task_id: str


class _Update(RequestParams):
    task_id: str
    input_responses: dict[str, Any]


class TasksServer(Extension):
    """The tasks extension's server side, for the tools above."""

    identifier = TASKS

    def __init__(self, state: Path | None = None) -> None:
        self.state = state
        self.tasks: dict[str, Task] = {}
        if state is not None and state.exists():
            self.tasks = {key: Task(**value) for key, value in json.loads(state.read_text()).items()}

    def save(self) -> None:
        if self.state is not None:
            temporary = self.state.with_suffix(".tmp")
            temporary.write_text(json.dumps({key: asdict(task) for key, task in self.tasks.items()}))
            temporary.replace(self.state)

    def methods(self) -> list[MethodBinding]:
        modern = frozenset(MODERN_PROTOCOL_VERSIONS)
        return [
            MethodBinding("tasks/get", _TaskId, self.get, modern),
            MethodBinding("tasks/update", _Update, self.update, modern),
            MethodBinding("tasks/cancel", _TaskId, self.cancel, modern),
        ]

    @staticmethod
    def declared(ctx: ServerRequestContext[Any, Any]) -> bool:
        capabilities: Any = (ctx.meta or {}).get(CLIENT_CAPABILITIES_META_KEY) or {}
        extensions = capabilities.get("extensions") if isinstance(capabilities, dict) else None
        return isinstance(extensions, dict) and TASKS in extensions

    def require(self, ctx: ServerRequestContext[Any, Any]) -> None:
        if not self.declared(ctx):
            raise MCPError(
                code=MISSING_REQUIRED_CLIENT_CAPABILITY,
                message="Missing required client capability",
                data={"requiredCapabilities": {"extensions": {TASKS: {}}}},
            )

    def task(self, ctx: ServerRequestContext[Any, Any], task_id: str) -> Task:
        self.require(ctx)
        task = self.tasks.get(task_id)
        if task is None:
            raise MCPError(code=INVALID_PARAMS, message="Failed to retrieve task: Task not found")
        headers = getattr(ctx.request, "headers", None)
        if headers is not None:
            task.names.append(headers.get("mcp-name"))
        return task

    async def intercept_tool_call(
        self, params: CallToolRequestParams, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        name = params.name
        if name not in (*TASK_TOOLS, "optional") or (name == "optional" and not self.declared(ctx)):
            return await call_next(ctx)
        self.require(ctx)
        args = dict(params.arguments or {})
        task = Task(secrets.token_urlsafe(12), name, args)
        if name == "interval":
            task.interval_ms = int(args["ms"])
        if name == "forever" and "ttl_ms" in args:
            task.ttl_ms = int(args["ttl_ms"])
        self.tasks[task.id] = task
        self.save()
        view = task.view()
        return {
            "resultType": "task",
            **{k: view[k] for k in view if k not in ("inputRequests", "result", "error")},
        }

    async def get(self, ctx: ServerRequestContext[Any, Any], params: _TaskId) -> dict[str, Any]:
        task = self.task(ctx, params.task_id)
        if task.tool == "slow":
            await anyio.sleep(int(task.args.get("delay_ms", 0)) / 1000)
        task.polls += 1
        task.advance()
        self.save()
        return task.view()

    async def update(self, ctx: ServerRequestContext[Any, Any], params: _Update) -> dict[str, Any]:
        task = self.task(ctx, params.task_id)
        for key, value in params.input_responses.items():
            task.answers.setdefault(key, []).append(value)
        task.asking = {k: v for k, v in task.asking.items() if k not in params.input_responses}
        task.advance()
        self.save()
        return {}

    async def cancel(self, ctx: ServerRequestContext[Any, Any], params: _TaskId) -> dict[str, Any]:
        task = self.task(ctx, params.task_id)
        task.cancelled = True
        print(f"tasks/cancel {task.id} ({task.tool})", file=sys.stderr, flush=True)  # for the command's tests
        if task.status not in ("completed", "failed", "cancelled"):
            task.status = "cancelled"
        self.save()
        return {}

    def journal(self) -> dict[str, Any]:
        return {
            task.id: {
                "tool": task.tool,
                "polls": task.polls,
                "answers": task.answers,
                "cancelled": task.cancelled,
                "status": task.status,
                "names": task.names,
            }
            for task in self.tasks.values()
        }


def build_server() -> tuple[MCPServer, TasksServer]:
    state = os.environ.get("TASKS_SERVER_STATE")
    tasks = TasksServer(Path(state) if state else None)
    server = MCPServer("tasks", extensions=[tasks])

    def runs_as_a_task(
        item: str = "", steps: int = 3, ms: int = 20, polls: int = 3, ttl_ms: int = 60_000, delay_ms: int = 0
    ) -> str:
        return "ran in the foreground"  # reached only when the call was not made a task

    for name in TASK_TOOLS:
        server.tool(name=name, description=f"a task: {name}", structured_output=False)(runs_as_a_task)

    @server.tool(structured_output=False)
    def optional(item: str) -> str:
        """A task when the client declared the extension, else run at once."""
        return f"{item}: ran in the foreground"

    @server.tool(structured_output=False)
    def journal() -> str:
        """What the server saw, as JSON."""
        return json.dumps(tasks.journal())

    return server, tasks


def _serve_http(fd: int) -> None:
    from servers.serving import serve_http

    serve_http(build_server()[0], fd)


def main(argv: list[str] | None = None) -> None:
    from servers.serving import http_fd

    fd = http_fd(argv, __doc__.splitlines()[0] if __doc__ else None)
    if fd is None:
        build_server()[0].run("stdio")
    else:
        _serve_http(fd)


if __name__ == "__main__":
    main()
