"""The tasks extension's client against a server nobody here wrote: FastMCP with
``fastmcp-tasks`` 4.1 (from the package index, in an environment of its own) keeping its
tasks in Docket on a real Redis (tests/servers/fastmcp_tasks_server.py), over stdio."""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Literal

import anyio
import mcp_types
import pytest
from mcp import Client, MCPError, StdioServerParameters

from support.http_process import RestartableHttpServer
from support.redis import redis_url  # noqa: F401  (a Redis for the session)
from support.venvs import python_with
from toolnexus import Answer, Request, durable, elicitation_callback
from toolnexus.tasks import TASKS, TasksExtension, TaskStatus
from toolnexus.worker import Worker

pytestmark = pytest.mark.anyio
SERVER = Path(__file__).resolve().parent / "servers" / "fastmcp_tasks_server.py"


@pytest.fixture(scope="session")
def fastmcp_tasks_python() -> Path:
    return python_with("fastmcp-tasks-4.1.4", "fastmcp-tasks==4.1.4", "import fastmcp_tasks")


@pytest.fixture
def server(fastmcp_tasks_python: Path, redis_url: str) -> StdioServerParameters:  # noqa: F811
    return StdioServerParameters(command=str(fastmcp_tasks_python), args=[str(SERVER), redis_url])


def answers(**by_field: Any) -> Callable[[Request], Answer]:
    """A resolver that answers each form's one field from ``by_field``; it declines any
    question about the report "Q4"."""

    def wait_for(request: Request) -> Answer:
        if "Q4" in request.prompt:
            return Answer(request.id, False, reason="declined")
        assert request.data is not None
        (name,) = request.data["schema"]["properties"]
        return Answer(request.id, True, {name: by_field[name]})

    return wait_for


def text(result: mcp_types.CallToolResult) -> str:
    assert not result.is_error, result
    block = result.content[0]
    assert isinstance(block, mcp_types.TextContent)
    return block.text


class _TaskId(mcp_types.RequestParams):
    task_id: str


class _GetTask(mcp_types.Request[_TaskId, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    params: _TaskId


class _Task(mcp_types.Result):
    status: str
    status_message: str | None = None


async def test_fastmcp_tasks_ask_end_fail_and_are_cancelled(server: StdioServerParameters) -> None:
    """One server session (a FastMCP server's start is 2 s of CPU): a task that asks and is
    answered, one whose question is declined, an optional tool made a task, a task that
    fails, and one whose call is cancelled."""
    statuses: list[TaskStatus] = []
    extension = TasksExtension(on_status=statuses.append)
    callback = elicitation_callback(answers(ok=True, title="Now"))
    async with Client(server, elicitation_callback=callback, extensions=[extension]) as client:
        assert client.protocol_version == "2026-07-28"
        published = await client.call_tool("publish", {"report": "Q3"})
        declined = await client.call_tool("publish", {"report": "Q4"})
        summarised = await client.call_tool("summarise", {"text": "as a task"})
        with pytest.raises(MCPError) as failed:
            await client.call_tool("broken", {})
        with anyio.move_on_after(1.0) as scope:
            await client.call_tool("slow", {})
        assert scope.cancelled_caught
        (slow_id,) = {s.task_id for s in statuses if s.tool == "slow"}
        # FastMCP's own view of the task (the session declares the extension on the request).
        slow = await client.session.send_request(_GetTask(params=_TaskId(task_id=slow_id)), _Task)
    assert text(published) == "Q3: published"
    assert text(declined) == "Q4: kept as a draft (decline)"
    assert text(summarised) == "Now: as a task"
    assert (failed.value.error.code, failed.value.error.message) == (-32050, "the report could not be built")
    assert slow.status == "cancelled"
    by_tool: dict[str, list[str]] = {}
    for status in statuses:
        by_tool.setdefault(status.tool, []).append(status.status)
    assert by_tool["summarise"] == ["working", "input_required", "completed"]
    assert by_tool["broken"] == ["working", "failed"]
    assert any((s.message or "").startswith("step ") for s in statuses if s.tool == "slow")  # its progress


async def test_without_the_extension_fastmcp_refuses_a_task_only_tool_and_runs_an_optional_one(
    server: StdioServerParameters,
) -> None:
    async with Client(server, elicitation_callback=elicitation_callback(answers(title="Now"))) as client:
        with pytest.raises(MCPError) as refused:
            await client.call_tool("publish", {"report": "Q3"})
        foreground = await client.call_tool("summarise", {"text": "in the foreground"})
    assert refused.value.error.code == -32021
    assert TASKS in str(refused.value.error.data)
    assert text(foreground) == "Now: in the foreground"  # a 2026-07-28 round, answered as any


@pytest.fixture
def http_server(fastmcp_tasks_python: Path, redis_url: str) -> Iterator[RestartableHttpServer]:  # noqa: F811
    docket = f"toolnexus-tests-{secrets.token_hex(6)}"  # one name: a server started again shares its tasks
    served = RestartableHttpServer(
        lambda fd: [str(fastmcp_tasks_python), str(SERVER), redis_url, "--fd", str(fd), "--docket", docket]
    )
    served.start()
    try:
        yield served
    finally:
        served.kill()


async def test_fastmcp_tasks_parked_polled_by_a_worker_and_answered_across_a_server_restart(
    http_server: RestartableHttpServer, tmp_path: Path
) -> None:
    """A FastMCP task parked by its id, its question answered while the server was killed and
    started again (its tasks in Docket on Redis): the worker polls on, the answer reaches it."""
    url = http_server.base + "/mcp"
    store = durable.open_store(tmp_path / "calls.db")
    keys: dict[str, str] = {}
    async with Client(url, elicitation_callback=durable.park_only, extensions=[TasksExtension()]) as client:
        for tool, arguments in (("publish", {"report": "Q3"}), ("broken", {})):
            parked = await durable.call_tool_or_park(client, tool, arguments)
            assert isinstance(parked, durable.Pending)
            assert parked.task is not None
            keys[tool] = store.put(parked)

    async def until(key: str, *statuses: str) -> durable.Call:
        with anyio.fail_after(60):
            while (call := store.call(key)).status not in statuses:
                await anyio.sleep(0.05)
        return call

    worker = Worker(store, url, idle=0.2)
    async with anyio.create_task_group() as group:
        group.start_soon(worker.run)
        failed = await until(keys["broken"], "failed")
        asked = await until(keys["publish"], "waiting")
        await anyio.to_thread.run_sync(http_server.kill)  # while its question waits
        assert asked.pending is not None
        (question,) = asked.pending.requests
        assert question.prompt == "Publish Q3?"  # under a key of FastMCP's own
        store.record(keys["publish"], Answer(question.id, True, {"ok": True}))
        await anyio.sleep(0.5)  # the worker's poll meets no server
        await anyio.to_thread.run_sync(http_server.start)  # the same port, the same Redis
        done = await until(keys["publish"], "done", "failed", "expired", "cancelled")
        worker.stop()
    store.close()
    assert done.status == "done", done.error
    assert done.result is not None
    assert done.result["content"][0]["text"] == "Q3: published"
    assert failed.error == "the task failed: the report could not be built (error -32050)"
