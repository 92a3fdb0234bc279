"""The tasks extension's client (toolnexus.tasks.TasksExtension) against a server of the
extension on the SDK's own ``MCPServer`` (tests/servers/tasks_server.py): in process, over a
stdio subprocess and over streamable HTTP; every way a task can end, questions asked through
the client's own elicitation callback (a resolver, ``durable.ask_in``), and what a hostile or
broken server can send."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, MCPError, StdioServerParameters
from mcp_types import TextContent

from servers.tasks_server import FAILURE, TasksServer, build_server
from support import forkserver
from support.http_process import served_mcp_url
from toolnexus import Answer, Request, elicitation_callback
from toolnexus.errors import TaskError
from toolnexus.tasks import TASKS, TasksExtension, TaskStatus

pytestmark = pytest.mark.anyio
TESTS_DIR = Path(__file__).resolve().parent


def field_of(request: Request) -> str:
    """The one field a form of the tasks server asks for."""
    assert request.data is not None
    (name,) = request.data["schema"]["properties"]
    return str(name)


def answering(record: list[Request] | None = None) -> Callable[[Request], Answer]:
    """A resolver that answers every form with ``"<field>-ok"``."""

    def wait_for(request: Request) -> Answer:
        if record is not None:
            record.append(request)
        name = field_of(request)
        return Answer(request.id, True, {name: f"{name}-ok"})

    return wait_for


@asynccontextmanager
async def connected(
    target: Any = None, resolver: Callable[[Request], Any] | None = None, **options: Any
) -> AsyncIterator[tuple[Client, TasksServer | None]]:
    tasks: TasksServer | None = None
    if target is None:
        target, tasks = build_server()
    extension = TasksExtension(**{"poll_floor": 0.01, **options})
    callback = elicitation_callback(resolver or answering())
    async with Client(target, elicitation_callback=callback, extensions=[extension]) as client:
        assert client.protocol_version == "2026-07-28"
        yield client, tasks


def text(result: Any) -> str:
    assert not result.is_error, result
    (block,) = result.content
    assert isinstance(block, TextContent)
    return block.text


async def journal(client: Client) -> dict[str, Any]:
    result = await client.call_tool("journal", {})
    seen: dict[str, Any] = json.loads(text(result))
    return seen


def only(seen: dict[str, Any], tool: str) -> dict[str, Any]:
    (task,) = [task for task in seen.values() if task["tool"] == tool]
    return dict(task)


# --- the ways a task ends ------------------------------------------------------------------


async def test_a_task_asks_through_the_clients_callback_and_returns_the_tools_result() -> None:
    asked: list[Request] = []
    statuses: list[TaskStatus] = []
    async with connected(resolver=answering(asked), on_status=statuses.append) as (client, _):
        result = await client.call_tool("approve", {"item": "deploy"})
        seen = only(await journal(client), "approve")
    assert text(result) == "deploy: {'action': 'accept', 'content': {'approve': 'approve-ok'}}"
    assert [request.prompt for request in asked] == ["Approve deploy?"]
    assert seen["answers"] == {"approve": [{"action": "accept", "content": {"approve": "approve-ok"}}]}
    assert seen["cancelled"] is False  # it ended by itself: nothing to cancel
    assert [status.status for status in statuses] == ["working", "input_required", "completed"]
    assert {status.tool for status in statuses} == {"approve"}
    assert all(status.task_id == statuses[0].task_id for status in statuses)
    assert statuses[0].elapsed <= statuses[-1].elapsed


async def test_two_questions_at_once_are_asked_at_once_and_each_answer_sent_as_it_comes() -> None:
    both_asked = anyio.Event()
    waiting: list[str] = []

    async def wait_for(request: Request) -> Answer:
        name = field_of(request)
        waiting.append(name)
        if len(waiting) == 2:
            both_asked.set()
        with anyio.fail_after(10):
            await both_asked.wait()  # neither is answered before both are asked
        if name == "b":
            await anyio.sleep(0.2)  # b answers later: a's answer must not wait for it
        return Answer(request.id, True, {name: name.upper()})

    async with connected(resolver=wait_for) as (client, tasks):
        result = await client.call_tool("two", {"item": "x"})
    assert text(result) == "a=A, b=B"
    assert tasks is not None
    (task,) = tasks.tasks.values()
    assert sorted(waiting) == ["a", "b"]
    assert {key: len(values) for key, values in task.answers.items()} == {"a": 1, "b": 1}


async def test_a_task_that_asks_again_is_answered_again_and_a_key_it_still_lists_is_not() -> None:
    async with connected() as (client, _):
        twice = await client.call_tool("twice", {})
        repeat = await client.call_tool("repeat", {})
        seen = await journal(client)
    assert text(twice) == "first=first-ok, second=second-ok"
    assert text(repeat) == "k answered 1 time(s)"
    assert only(seen, "repeat")["polls"] >= 3  # k was listed again after its answer, and skipped


async def test_the_status_callback_sees_each_status_message_once() -> None:
    statuses: list[TaskStatus] = []
    async with connected(on_status=statuses.append) as (client, _):
        result = await client.call_tool("progress", {"steps": 3})
    assert text(result) == "all steps done"
    assert [(status.status, status.message) for status in statuses] == [
        ("working", None),
        *(("working", f"step {n} of 3") for n in (1, 2, 3)),
        ("completed", "step 3 of 3"),  # the server left its last message
    ]


async def test_a_failed_task_raises_the_servers_error_as_a_failed_call_does() -> None:
    async with connected() as (client, _):
        with pytest.raises(MCPError) as caught:
            await client.call_tool("fail", {})
        seen = only(await journal(client), "fail")
    assert (caught.value.error.code, caught.value.error.message) == (FAILURE["code"], FAILURE["message"])
    assert caught.value.error.data == FAILURE["data"]
    assert seen["cancelled"] is False


async def test_a_task_the_server_cancels_is_a_task_error_and_is_not_cancelled_again() -> None:
    async with connected() as (client, _):
        with pytest.raises(TaskError, match="the server cancelled it") as caught:
            await client.call_tool("server_cancels", {})
        seen = only(await journal(client), "server_cancels")
    assert caught.value.status == "cancelled"
    assert caught.value.task_id in str(caught.value)
    assert seen["cancelled"] is False


async def test_a_tool_that_may_run_as_a_task_is_one_only_for_a_client_that_declared_the_extension() -> None:
    server, _ = build_server()
    async with connected(server) as (client, _):
        as_task = await client.call_tool("optional", {"item": "o"})
    async with Client(server, elicitation_callback=elicitation_callback(answering())) as plain:
        foreground = await plain.call_tool("optional", {"item": "o"})
        with pytest.raises(MCPError) as refused:
            await plain.call_tool("approve", {"item": "deploy"})
    assert text(as_task).startswith("o: {'action': 'accept'")
    assert text(foreground) == "o: ran in the foreground"
    assert refused.value.error.code == -32021
    assert refused.value.error.data == {"requiredCapabilities": {"extensions": {TASKS: {}}}}


async def test_on_a_2025_11_25_connection_a_client_with_the_extension_calls_tools_as_before() -> None:
    """The extension's claim is for 2026-07-28 only: on 2025-11-25 a tool that may run as a
    task runs at once, and the extension takes no part."""
    server, _ = build_server()
    extension = TasksExtension()
    async with Client(server, extensions=[extension], mode="legacy") as client:
        assert client.protocol_version == "2025-11-25"
        assert (await client.call_tool("optional", {"item": "o"})).content[0] == TextContent(
            type="text", text="o: ran in the foreground"
        )


# --- the client's own end of a task ---------------------------------------------------------


async def test_cancelling_the_awaiting_call_sends_tasks_cancel() -> None:
    async with connected() as (client, _):
        with anyio.move_on_after(0.3) as scope:
            await client.call_tool("forever", {})
        seen = only(await journal(client), "forever")
    assert scope.cancelled_caught
    assert seen["cancelled"] is True
    assert seen["status"] == "cancelled"


async def test_the_extensions_timeout_cancels_the_task_and_says_how_long_it_waited() -> None:
    async with connected(timeout=0.3) as (client, _):
        with pytest.raises(TaskError, match=r"still working after 0.3 s") as caught:
            await client.call_tool("forever", {})
        seen = only(await journal(client), "forever")
    assert caught.value.status == "expired"
    assert seen["cancelled"] is True


async def test_a_task_past_its_time_to_live_is_expired() -> None:
    async with connected() as (client, _):
        with anyio.fail_after(10), pytest.raises(TaskError, match="time to live") as caught:
            await client.call_tool("forever", {"ttl_ms": 200})
    assert caught.value.status == "expired"


async def test_a_question_no_callback_answers_ends_the_call_and_cancels_the_task() -> None:
    server, tasks = build_server()
    async with Client(server, extensions=[TasksExtension(poll_floor=0.01)]) as client:  # no callback
        with pytest.raises(TaskError, match="'approve' was not answered") as caught:
            await client.call_tool("approve", {"item": "deploy"})
    assert caught.value.status == "invalid"
    (task,) = tasks.tasks.values()
    assert task.cancelled


async def test_a_resolver_that_fails_is_a_cancel_the_task_receives() -> None:
    def broken(request: Request) -> Answer:
        raise RuntimeError("the resolver broke, and this text must not reach the server")

    async with connected(resolver=broken) as (client, tasks):
        result = await client.call_tool("approve", {"item": "deploy"})
    assert text(result) == "deploy: {'action': 'cancel'}"
    assert tasks is not None
    assert "resolver broke" not in repr([task.answers for task in tasks.tasks.values()])


# --- what a broken or hostile server can send -------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "message"),
    [
        ("garbage", r"tasks/get answered with something that is not a task \(status: Input should be"),
        ("bad_result", r"its result is not a tool's result \(content: Input should be a valid list\)"),
        ("bad_question", r"its question 'q' does not read \(message: Field required\)"),
    ],
)
async def test_what_does_not_read_is_a_task_error_naming_it_and_the_task_is_cancelled(
    tool: str, message: str
) -> None:
    async with connected() as (client, tasks):
        with pytest.raises(TaskError, match=message) as caught:
            await client.call_tool(tool, {})
    assert caught.value.status == "invalid"
    assert tasks is not None
    (task,) = tasks.tasks.values()
    assert task.cancelled is (tool != "bad_result")  # a completed task is not cancelled


async def test_a_server_that_asks_for_ever_is_stopped_at_max_questions() -> None:
    asked: list[Request] = []
    async with connected(resolver=answering(asked), max_questions=5) as (client, tasks):
        with pytest.raises(TaskError, match="it asked more than 5 questions"):
            await client.call_tool("many", {})
    # A question the server stops listing before its resolver is reached is withdrawn
    # unasked (this server lists a new one each poll): at most 5 reach the resolver.
    assert 1 <= len(asked) <= 5
    assert tasks is not None
    (task,) = tasks.tasks.values()
    assert sum(len(answers) for answers in task.answers.values()) <= 5
    assert task.cancelled


async def test_poll_intervals_are_held_between_the_floor_and_the_ceiling() -> None:
    async with connected(poll_floor=0.05, poll_ceiling=0.2) as (client, _):
        started = anyio.current_time()
        zero = await client.call_tool("interval", {"ms": 0, "polls": 5})  # a server saying "0"
        fast = anyio.current_time() - started
        started = anyio.current_time()
        huge = await client.call_tool("interval", {"ms": 10**12, "polls": 3})  # "in 31 years"
        slow = anyio.current_time() - started
    assert text(zero) == "after 5 polls"
    assert text(huge) == "after 3 polls"
    assert fast >= 4 * 0.05  # no busy loop: five polls at the floor
    assert slow < 5  # two waits at the ceiling, not 10**9 seconds


def test_the_interval_for_what_a_server_says() -> None:
    extension = TasksExtension(poll_floor=0.1, poll_ceiling=30)
    assert extension.interval(0) == 0.1
    assert extension.interval(-5) == 0.1
    assert extension.interval(250) == 0.25
    assert extension.interval(10**12) == 30
    assert extension.interval(None) == 1.0  # none said: a second
    assert extension.interval("500") == 1.0
    assert extension.interval(True) == 1.0


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"poll_floor": 0}, ValueError, "poll_floor must be a positive number of seconds, not 0"),
        ({"poll_floor": "1"}, TypeError, "poll_floor must be a number of seconds, not str"),
        ({"poll_ceiling": float("inf")}, ValueError, "poll_ceiling must be a positive"),
        (
            {"poll_floor": 2, "poll_ceiling": 1},
            ValueError,
            r"poll_ceiling \(1 s\) is below poll_floor \(2 s\)",
        ),
        ({"timeout": -1}, ValueError, "timeout must be a positive number of seconds, not -1"),
        ({"max_questions": 0}, ValueError, "max_questions must be at least 1, not 0"),
        ({"max_questions": 2.5}, TypeError, "max_questions must be an int, not float"),
        ({"on_status": "print"}, TypeError, "on_status must be callable, not str"),
    ],
)
def test_bad_options_name_the_field(options: dict[str, Any], error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        TasksExtension(**options)


# --- every resolver, and every transport -----------------------------------------------------


async def test_a_tasks_question_is_answered_live_in_a_store(tmp_path: Path) -> None:
    from toolnexus.durable import ask_in, open_store

    async def answer_from_elsewhere(spec: str) -> None:
        with open_store(spec) as store:
            watcher = store.watch()
            while True:
                live = store.calls(status="live")
                if live:
                    (call,) = live
                    assert call.pending is not None
                    (request,) = call.pending.requests
                    store.record(call.key, Answer(request.id, True, {"approve": "from the inbox"}))
                    return
                await watcher.wait_async(1)

    spec = str(tmp_path / "calls.db")
    with open_store(spec) as store:
        async with connected(resolver=ask_in(store)) as (client, _), anyio.create_task_group() as group:
            group.start_soon(answer_from_elsewhere, spec)
            result = await client.call_tool("approve", {"item": "deploy"})
    assert text(result) == "deploy: {'action': 'accept', 'content': {'approve': 'from the inbox'}}"


@pytest.fixture(scope="module")
def tasks_http_url() -> Iterator[str]:
    with served_mcp_url("tasks_server") as url:
        yield url


def tasks_stdio() -> StdioServerParameters:
    import shlex

    forkserver.start()
    command, *args = shlex.split(
        forkserver.server_command([sys.executable, "-m", "servers.tasks_server", "stdio"])
    )
    return StdioServerParameters(command=command, args=args, cwd=TESTS_DIR)


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_task_over_a_transport_and_its_mcp_name_header_over_http(
    transport: str, request: pytest.FixtureRequest
) -> None:
    target: Any = tasks_stdio() if transport == "stdio" else request.getfixturevalue("tasks_http_url")
    async with connected(target) as (client, _):
        result = await client.call_tool("approve", {"item": "over " + transport})
        with anyio.move_on_after(0.3):
            await client.call_tool("forever", {})
        seen = await journal(client)
    assert text(result) == f"over {transport}: {{'action': 'accept', 'content': {{'approve': 'approve-ok'}}}}"
    approve, forever = only(seen, "approve"), only(seen, "forever")
    assert forever["cancelled"] is True
    if transport == "http":  # every tasks/get, tasks/update and tasks/cancel named its task
        (approve_id,) = [key for key, task in seen.items() if task["tool"] == "approve"]
        (forever_id,) = [key for key, task in seen.items() if task["tool"] == "forever"]
        assert approve["names"]
        assert set(approve["names"]) == {approve_id}
        assert forever["names"]
        assert set(forever["names"]) == {forever_id}
