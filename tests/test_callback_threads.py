"""Plain resolvers run on daemon threads, abandoned ones are capped, and an observer is told
what the server got: against the real elicitation server, in process, legacy era."""

from __future__ import annotations

import logging
import textwrap
import threading
from typing import Any

import anyio
import pytest
from mcp_types import (
    ElicitRequestFormParams,
    ElicitRequestURLParams,
    ElicitResult,
)

from servers.elicit_server import build_server
from servers.harness import call, connect
from support.processes import TESTS_DIR, Processes
from support.values import PROFILE
from toolnexus import Answer, Request
from toolnexus.mcp import (
    MAX_ABANDONED_THREADS,
    RESOLVER_THREADS,
    ResultReason,
    call_tool_resolving_urls,
    elicitation_callback,
    set_resolver_threads,
)

pytestmark = pytest.mark.anyio


async def test_a_plain_resolver_runs_on_a_daemon_thread() -> None:
    seen: list[threading.Thread] = []

    def wait_for(request: Request) -> Answer:
        seen.append(threading.current_thread())
        return Answer(request.id, True, PROFILE)

    async with connect(build_server()[0], "legacy", elicitation_callback(wait_for)) as client:
        outcome = await call(client, "form_elicit", "t")
    assert outcome["action"] == "accept"
    assert len(seen) == 1
    assert seen[0].daemon
    assert seen[0] is not threading.main_thread()


def test_an_abandoned_resolver_does_not_delay_exit(processes: Processes) -> None:
    """A resolver that never returns, abandoned by the timeout: the interpreter still exits
    when the host is done (anyio's worker threads would keep it waiting forever)."""
    script = textwrap.dedent(
        """
        import asyncio, threading
        from servers.elicit_server import build_server
        from servers.harness import call, connect
        from toolnexus import Answer
        from toolnexus.mcp import elicitation_callback

        def wait_for(request):
            threading.Event().wait()  # never answers
            return Answer(request.id, False)

        async def main():
            callback = elicitation_callback(wait_for, timeout=0.2)
            async with connect(build_server()[0], "legacy", callback) as client:
                outcome = await call(client, "form_elicit", "t")
            print(outcome["action"])

        asyncio.run(main())
        """
    )
    done = processes.python(
        script,
        cwd=TESTS_DIR,
        timeout=180,  # a guard against the hang this test is about, not a speed check (a loaded CI machine)
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "cancel"


async def test_abandoned_threads_are_capped(caplog: pytest.LogCaptureFixture) -> None:
    release = threading.Event()
    asked: list[str] = []

    def wait_for(request: Request) -> Answer:
        asked.append(request.id)
        release.wait(timeout=60)
        return Answer(request.id, True, PROFILE)

    callback = elicitation_callback(wait_for, timeout=0.05)
    try:
        async with connect(build_server()[0], "legacy", callback) as client:
            with caplog.at_level(logging.WARNING, logger="toolnexus"):

                def refused() -> int:
                    return sum("abandoned after their timeout" in r.getMessage() for r in caplog.records)

                # Past the cap, calls are refused without asking. On a loaded machine a call may
                # also time out while its question still waits for a pool thread (neither asked
                # nor refused, nor counted against the cap), so calls go on until one is refused.
                for n in range(2 * MAX_ABANDONED_THREADS):
                    outcome = await call(client, "form_elicit", f"t{n}")
                    assert outcome["action"] == "cancel"
                    assert len(asked) <= MAX_ABANDONED_THREADS  # never more threads left waiting
                    if refused():
                        break
            assert refused() >= 1, f"no call was refused; {len(asked)} asked"
            # The cap was reached, then held. A thread that took its question and timed out
            # before its first line ran counts against the cap unasked, so a few may be missing.
            assert MAX_ABANDONED_THREADS // 2 <= len(asked) <= MAX_ABANDONED_THREADS
            # Once the threads return, questions are asked again (whether a thread then beats
            # the 0.05 s deadline depends on the load: only the asking is checked).
            release.set()
            before = len(asked)
            with anyio.fail_after(30):
                while len(asked) == before:
                    await call(client, "form_elicit", "after")
                    await anyio.sleep(0.05)
    finally:
        release.set()


async def test_on_result_is_told_what_the_server_got_and_why() -> None:
    seen: list[tuple[str, ElicitResult, ResultReason]] = []

    def answers(request: Request) -> Any:
        tag = request.prompt.rsplit(" ", 1)[-1]
        if tag == "defaults":
            return Answer(request.id, True, PROFILE)  # newsletter left out: its default is laid in
        if tag == "invalid":
            return Answer(request.id, True, {**PROFILE, "age": -1})
        if tag == "raises":
            raise RuntimeError("no")
        return Answer(request.id, False, None, "declined")

    def observe(request: Request, result: ElicitResult, outcome: ResultReason) -> None:
        seen.append((request.prompt.rsplit(" ", 1)[-1], result, outcome))

    def failing_observer(request: Request, result: ElicitResult, outcome: ResultReason) -> None:
        raise RuntimeError("observer bug")

    callback = elicitation_callback(answers, on_result=observe)
    async with connect(build_server()[0], "legacy", callback) as client:
        for tag in ("defaults", "invalid", "raises", "declines"):
            await call(client, "form_elicit", tag)
    by_tag = {tag: (result, outcome) for tag, result, outcome in seen}
    assert by_tag["defaults"] == (
        ElicitResult(action="accept", content={**PROFILE, "newsletter": False}),
        "defaults",
    )
    assert by_tag["invalid"] == (ElicitResult(action="cancel"), "validation")
    assert by_tag["raises"] == (ElicitResult(action="cancel"), "error")
    assert by_tag["declines"] == (ElicitResult(action="decline"), None)

    full = {**PROFILE, "newsletter": True}
    seen.clear()
    callback = elicitation_callback(lambda request: Answer(request.id, True, full), on_result=observe)
    async with connect(build_server()[0], "legacy", callback) as client:
        await call(client, "form_elicit", "complete")
    assert seen == [("complete", ElicitResult(action="accept", content=full), None)]

    callback = elicitation_callback(
        lambda request: Answer(request.id, True, full), on_result=failing_observer
    )
    async with connect(build_server()[0], "legacy", callback) as client:
        outcome = await call(client, "form_elicit", "observer-raises")
    assert outcome["action"] == "accept"  # the observer's failure is logged and ignored


def test_on_result_must_be_callable() -> None:
    with pytest.raises(TypeError, match="on_result must be callable"):
        elicitation_callback(lambda request: None, on_result=3)  # type: ignore[arg-type]


FLOOD_SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
SPARE_THREADS = 4  # what else may start meanwhile (anyio's own workers, a test server's)


async def _most_threads_while(work: Any) -> int:
    """Run ``work()`` while sampling the process's thread count; the most seen."""
    most = threading.active_count()
    done = anyio.Event()

    async def sample() -> None:
        nonlocal most
        while not done.is_set():
            most = max(most, threading.active_count())
            await anyio.sleep(0.001)

    async with anyio.create_task_group() as group:
        group.start_soon(sample)
        try:
            await work()
        finally:
            done.set()
    return most


async def test_ten_thousand_questions_at_once_stay_within_the_pool() -> None:
    """Issue 20: a plain resolver got one OS thread per open question (10,000 questions, 10,001
    threads). Now they wait their turn on the bounded pool, and every one is answered."""
    answered: list[int] = []
    lock = threading.Lock()

    def wait_for(request: Request) -> Answer:
        n = int(request.prompt)
        with lock:
            answered.append(n)
        return Answer.accept(request, {"n": n})

    callback = elicitation_callback(wait_for)
    results: dict[int, Any] = {}
    before = threading.active_count()

    async def one(n: int) -> None:
        params = ElicitRequestFormParams(message=str(n), requested_schema=FLOOD_SCHEMA)
        results[n] = await callback(None, params)  # type: ignore[arg-type]

    async def flood() -> None:
        async with anyio.create_task_group() as group:
            for n in range(10_000):
                group.start_soon(one, n)

    most = await _most_threads_while(flood)
    assert most <= before + RESOLVER_THREADS + SPARE_THREADS, (before, most)
    assert sorted(answered) == list(range(10_000))
    assert all(results[n] == ElicitResult(action="accept", content={"n": n}) for n in range(10_000))


async def test_the_pool_size_is_settable_and_questions_wait_their_turn() -> None:
    running = 0
    most_running = 0
    lock = threading.Lock()

    def wait_for(request: Request) -> Answer:
        nonlocal running, most_running
        with lock:
            running += 1
            most_running = max(most_running, running)
        threading.Event().wait(0.01)
        with lock:
            running -= 1
        return Answer.accept(request, {"n": 1})

    callback: Any = elicitation_callback(wait_for)  # called here as the SDK calls it
    before = set_resolver_threads(3)
    try:
        assert before == RESOLVER_THREADS
        params = ElicitRequestFormParams(message="q", requested_schema=FLOOD_SCHEMA)
        async with anyio.create_task_group() as group:
            for _ in range(60):
                group.start_soon(callback, None, params)
    finally:
        set_resolver_threads(before)
    assert most_running <= 3
    with pytest.raises(ValueError, match="at least 1"):
        set_resolver_threads(0)
    with pytest.raises(TypeError, match="must be an int"):
        set_resolver_threads(2.5)  # type: ignore[arg-type]


async def test_questions_that_time_out_while_waiting_never_run() -> None:
    """A question whose timeout ends while it waits for a pool thread is cancelled and is
    never handed to the resolver; it is not counted as an abandoned thread."""
    release = threading.Event()
    asked: list[str] = []

    def wait_for(request: Request) -> Answer:
        asked.append(request.prompt)
        release.wait(timeout=30)
        return Answer.accept(request, {"n": 1})

    slow: Any = elicitation_callback(wait_for)  # no timeout: holds the one thread
    quick: Any = elicitation_callback(wait_for, timeout=0.1)
    before = set_resolver_threads(1)
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(
                slow, None, ElicitRequestFormParams(message="holder", requested_schema=FLOOD_SCHEMA)
            )
            await anyio.sleep(0.2)
            result = await quick(
                None, ElicitRequestFormParams(message="waits", requested_schema=FLOOD_SCHEMA)
            )
            assert result == ElicitResult(action="cancel")
            release.set()
    finally:
        set_resolver_threads(before)
        release.set()
    assert asked == ["holder"]


async def test_abandoned_threads_are_capped_per_process_on_the_32042_path() -> None:
    """The -32042 path builds a callback per URL; the cap on abandoned threads is the
    process's, so 40 hanging URL questions leave at most MAX_ABANDONED_THREADS threads (it was
    41 for 40 calls)."""
    from mcp.server.mcpserver import MCPServer
    from mcp.shared.exceptions import UrlElicitationRequiredError

    server = MCPServer("hangs")

    @server.tool()
    def needs_url(tag: str) -> str:
        url = ElicitRequestURLParams(
            message=f"Visit {tag}", url=f"https://auth.example.com/{tag}", elicitation_id=tag
        )
        raise UrlElicitationRequiredError([url])

    release = threading.Event()
    asked: list[str] = []

    def hangs(request: Request) -> Answer:
        asked.append(request.prompt)
        release.wait(timeout=60)
        return Answer.accept(request)

    async def never(request: Request) -> Answer:
        raise AssertionError("not asked in the middle of a call")

    before = threading.active_count()

    async def forty() -> None:
        from mcp import Client

        async with Client(server, elicitation_callback=elicitation_callback(never), mode="legacy") as client:
            for n in range(40):
                with pytest.raises(Exception, match="did not accept"):
                    await call_tool_resolving_urls(
                        client, "needs_url", {"tag": f"t{n}"}, wait_for=hangs, timeout=0.05
                    )

    try:
        most = await _most_threads_while(forty)
        # At most the cap; fewer when, on a loaded machine, a question timed out before its
        # thread began to ask (the thread still counts against the cap).
        assert MAX_ABANDONED_THREADS // 2 <= len(asked) <= MAX_ABANDONED_THREADS
        assert most <= before + MAX_ABANDONED_THREADS + SPARE_THREADS, (before, most)
    finally:
        release.set()
