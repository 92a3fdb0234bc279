"""Plain resolvers run on daemon threads, abandoned ones are capped, and an observer is told
what the server got: against the real elicitation server, in process, legacy era."""

from __future__ import annotations

import logging
import textwrap
import threading
from typing import Any

import pytest
from mcp_types import ElicitResult

from servers.elicit_server import build_server
from servers.harness import call, connect
from support.processes import TESTS_DIR, Processes
from support.values import PROFILE
from toolnexus import Answer, Request
from toolnexus.mcp import MAX_ABANDONED_THREADS, Outcome, elicitation_callback

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
        timeout=60,  # a guard against the hang this test is about, not a speed check
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
                for n in range(MAX_ABANDONED_THREADS + 3):
                    outcome = await call(client, "form_elicit", f"t{n}")
                    assert outcome["action"] == "cancel"
            assert len(asked) == MAX_ABANDONED_THREADS  # the last three were not asked
            refused = [r for r in caplog.records if "abandoned after their timeout" in r.getMessage()]
            assert len(refused) == 3
            # Once the threads return, questions are asked again.
            release.set()
            for thread in threading.enumerate():
                if thread.name.startswith("toolnexus-resolver-"):
                    thread.join(timeout=30)
            before = len(asked)
            await call(client, "form_elicit", "after")
            # Asked again (whether its thread then beats the 0.05 s deadline depends on the load).
            assert len(asked) == before + 1
    finally:
        release.set()


async def test_on_result_is_told_what_the_server_got_and_why() -> None:
    seen: list[tuple[str, ElicitResult, Outcome]] = []

    def answers(request: Request) -> Any:
        tag = request.prompt.rsplit(" ", 1)[-1]
        if tag == "defaults":
            return Answer(request.id, True, PROFILE)  # newsletter left out: its default is laid in
        if tag == "invalid":
            return Answer(request.id, True, {**PROFILE, "age": -1})
        if tag == "raises":
            raise RuntimeError("no")
        return Answer(request.id, False, None, "declined")

    def observe(request: Request, result: ElicitResult, outcome: Outcome) -> None:
        seen.append((request.prompt.rsplit(" ", 1)[-1], result, outcome))

    def failing_observer(request: Request, result: ElicitResult, outcome: Outcome) -> None:
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
