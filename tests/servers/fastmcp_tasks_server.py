"""A FastMCP server whose tools run as tasks (``fastmcp-tasks``, Docket on a real Redis): the
tasks extension as a server nobody here wrote implements it.

It runs in a virtual environment of its own (``fastmcp-tasks`` pins a FastMCP older than the
project's ``fastmcp`` extra: tests/test_tasks_fastmcp.py makes it), over stdio:
``python fastmcp_tasks_server.py REDIS_URL``, or over streamable HTTP on an inherited listening
socket: ``python fastmcp_tasks_server.py REDIS_URL --fd N --docket NAME`` (``GET /health``
answers once it serves; servers started with one Docket name share their tasks, so that one
started again after a kill knows them).

Tools (a tool asks inside a task by returning an ``InputRequiredResult``, the pattern
fastmcp-tasks requires there, and reads the answers when it runs again):

- ``publish(report)``: a task always (``mode="required"``); asks whether to publish, then says
  what came of it.
- ``summarise(text)``: a task when the client declared the extension, else run at once
  (``task=True``); asks for a title.
- ``broken()``: a task that fails with the error -32050.
- ``slow()``: a task that works for a minute, saying how far it is.
"""

from __future__ import annotations

import sys
from datetime import timedelta

import anyio
import mcp_types
from fastmcp import Context, FastMCP
from fastmcp.utilities.tasks import TaskConfig
from fastmcp_tasks import TasksExtension
from mcp import MCPError

FAST = timedelta(milliseconds=50)  # pollIntervalMs (FastMCP's default is 5 s)


def form(message: str, name: str, kind: str) -> mcp_types.InputRequiredResult:
    schema = {"type": "object", "properties": {name: {"type": kind}}, "required": [name]}
    params = mcp_types.ElicitRequestFormParams(message=message, requested_schema=schema)
    return mcp_types.InputRequiredResult(input_requests={name: mcp_types.ElicitRequest(params=params)})


def build(redis_url: str, docket: str | None = None) -> FastMCP:
    mcp = FastMCP("fastmcp-tasks")
    mcp.add_extension(TasksExtension(url=redis_url, name=docket or f"toolnexus-tests-{id(mcp)}"))

    @mcp.tool(task=TaskConfig(mode="required", poll_interval=FAST))
    async def publish(report: str, ctx: Context) -> str | mcp_types.InputRequiredResult:
        answers = ctx.input_responses or {}
        if "ok" not in answers:
            return form(f"Publish {report}?", "ok", "boolean")
        answer = answers["ok"]
        if answer.action == "accept" and answer.content and answer.content["ok"] is True:
            return f"{report}: published"
        return f"{report}: kept as a draft ({answer.action})"

    @mcp.tool(task=TaskConfig(mode="optional", poll_interval=FAST))
    async def summarise(text: str, ctx: Context) -> str | mcp_types.InputRequiredResult:
        answers = ctx.input_responses or {}
        if "title" not in answers:
            return form("A title?", "title", "string")
        answer = answers["title"]
        title = answer.content["title"] if answer.action == "accept" and answer.content else "(none)"
        return f"{title}: {text}"

    @mcp.tool(task=TaskConfig(mode="required", poll_interval=FAST))
    async def broken() -> str:
        raise MCPError(code=-32050, message="the report could not be built")

    @mcp.tool(task=TaskConfig(mode="required", poll_interval=FAST))
    async def slow(ctx: Context) -> str:
        for step in range(600):
            await ctx.report_progress(step, 600, f"step {step} of 600")
            await anyio.sleep(0.1)
        return "done"

    return mcp


def serve_http(mcp: FastMCP, fd: int) -> None:
    import socket

    import uvicorn
    from starlette.requests import Request
    from starlette.responses import PlainTextResponse

    @mcp.custom_route("/health", methods=["GET"])
    async def health(request: Request) -> PlainTextResponse:
        return PlainTextResponse("ok")

    config = uvicorn.Config(mcp.http_app(), log_level="warning", lifespan="on")
    uvicorn.Server(config).run(sockets=[socket.socket(fileno=fd)])


if __name__ == "__main__":
    if "--fd" in sys.argv:
        options = dict(zip(sys.argv[2::2], sys.argv[3::2], strict=True))
        serve_http(build(sys.argv[1], options["--docket"]), int(options["--fd"]))
    else:
        build(sys.argv[1]).run("stdio", show_banner=False)
