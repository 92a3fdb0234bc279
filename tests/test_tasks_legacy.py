"""Tasks the 2025-11-25 way (toolnexus.tasks.call_tool_as_task): the client asks for a task (a
task-augmented ``tools/call``), watches it with ``tasks/get``, and ``tasks/result`` brings
the result with the server's questions on the way; against the MCP reference server
(``server-everything``'s ``simulate-research-query``, which runs only as a task)."""

from __future__ import annotations

import shlex

import anyio
import mcp_types
import pytest
from mcp import Client, StdioServerParameters

from toolnexus import Answer, Request, elicitation_callback
from toolnexus.tasks import TasksExtension, TaskStatus, call_tool_as_task, task_support

pytestmark = pytest.mark.anyio


def stdio(command: str) -> StdioServerParameters:
    program, *args = shlex.split(command)
    return StdioServerParameters(command=program, args=args)


def clarify(request: Request) -> Answer:
    assert request.data is not None
    assert "interpretation" in request.data["schema"]["properties"]
    return Answer(request.id, True, {"interpretation": "historical"})


async def test_a_task_required_tool_runs_as_a_task_answered_and_cancelled(
    server_everything: str,
) -> None:
    statuses: list[TaskStatus] = []
    tasks = TasksExtension(on_status=statuses.append)
    async with Client(
        stdio(server_everything), mode="legacy", elicitation_callback=elicitation_callback(clarify)
    ) as c:
        assert c.protocol_version == "2025-11-25"
        assert await task_support(c, "simulate-research-query") == "required"
        assert await task_support(c, "echo") == "forbidden"
        assert await task_support(c, "no-such-tool") is None
        research = await call_tool_as_task(
            c, "simulate-research-query", {"topic": "bees", "ambiguous": True}, tasks=tasks
        )
        echoed = await call_tool_as_task(c, "echo", {"message": "not a task"}, tasks=tasks)
        # Cancelled: the call's task is sent tasks/cancel (one session for both: the server's
        # start is a second of Node's CPU).
        stopped: list[TaskStatus] = []
        with anyio.move_on_after(1.5) as scope:
            ants = {"topic": "ants"}
            await call_tool_as_task(
                c, "simulate-research-query", ants, tasks=TasksExtension(on_status=stopped.append)
            )
        assert scope.cancelled_caught
        request = mcp_types.GetTaskRequest(params=mcp_types.GetTaskRequestParams(task_id=stopped[0].task_id))
        after = await c.session.send_request(request, mcp_types.GetTaskResult)
    assert after.status == "cancelled"
    block = research.content[0]
    assert isinstance(block, mcp_types.TextContent)
    assert "Research Report: bees (historical)" in block.text
    assert [block.text for block in echoed.content if isinstance(block, mcp_types.TextContent)] == [
        "Echo: not a task"
    ]
    seen = [status.status for status in statuses]
    assert seen[0] == "working"  # (input_required lasts as long as the answer takes: a poll may miss it)
    assert seen[-1] == "completed"
    assert len({status.task_id for status in statuses}) == 1
