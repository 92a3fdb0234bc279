"""Parked tasks from the command line, and the failures that matter: ``toolnexus call --park``
keeps a task by its id, ``toolnexus worker`` processes poll it, ``toolnexus answer`` answers its
question, ``toolnexus pending`` shows it; a worker killed (SIGKILL) while it waits on the
server is taken over by another, never two answering one task; the server killed while a task
is parked (at work, and while its question waits) and started again: polling resumes.

The server: tests/servers/tasks_server.py over streamable HTTP on 127.0.0.1, keeping its
tasks in a file (as a server keeping them in a database does), so that one started again on
the same port knows them."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from support import forkserver
from support.http_process import RestartableHttpServer
from support.processes import TESTS_DIR
from toolnexus import Answer, durable
from toolnexus.durable import Call

ENDS = ("done", "failed", "cancelled", "expired")


class TasksServer(RestartableHttpServer):
    """The tasks server, keeping its tasks in ``state``, on one port."""

    def __init__(self, state: Path) -> None:
        super().__init__(
            lambda fd: [sys.executable, "-m", "servers.tasks_server", "http", "--fd", str(fd)],
            cwd=TESTS_DIR,
            env={**os.environ, "TASKS_SERVER_STATE": str(state)},
        )
        self.state = state

    @property
    def url(self) -> str:
        return self.base + "/mcp"

    def journal(self) -> dict[str, Any]:
        tasks: dict[str, Any] = json.loads(self.state.read_text())
        return tasks


@pytest.fixture
def server(tmp_path: Path) -> Iterator[TasksServer]:
    served = TasksServer(tmp_path / "tasks.json")
    served.start()
    try:
        yield served
    finally:
        served.kill()


def toolnexus(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return forkserver.run(
        [sys.executable, "-m", "toolnexus", *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=TESTS_DIR,
        timeout=120,
        check=False,
    )


@contextlib.contextmanager
def worker(store: Path, url: str, out: Path, *options: str, lease: float = 60) -> Iterator[forkserver.Forked]:
    """``toolnexus worker`` on ``store`` with ``options``, its output into ``out``; killed at the end."""
    with out.open("ab") as written:
        proc = forkserver.popen(
            [
                *(sys.executable, "-m", "toolnexus", "worker", str(store), "--url", url),
                *("--lease", str(lease), "--idle", "0.2", *options),
            ],
            cwd=TESTS_DIR,
            stdout=written,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def park(store: Path, url: str, tool: str, arguments: dict[str, Any]) -> str:
    done = toolnexus("call", "--url", url, tool, json.dumps(arguments), "--park", str(store))
    assert done.returncode == 0, done.stderr
    key = done.stdout.strip()
    assert f"parked as {key}: the server runs the call as task " in done.stderr
    return key


def until(store: Path, key: str, *statuses: str, within: float = 60) -> Call:
    deadline = time.monotonic() + within
    with durable.open_store(store, create=False) as opened:
        while (call := opened.call(key)).status not in statuses:
            assert time.monotonic() < deadline, f"{key} is still {call.status}: {call.error}"
            time.sleep(0.05)
    return call


def answer(store: Path, key: str, value: str) -> None:
    """Answer each question of ``key`` (its form's one field), as the inbox would."""
    with durable.open_store(store, create=False) as opened:
        for request in opened.get(key).requests:
            assert request.data is not None
            (field,) = request.data["schema"]["properties"]
            opened.record(key, Answer(request.id, True, {field: value}))


def task_of(call: Call) -> str:
    assert call.pending is not None
    assert call.pending.task is not None
    return call.pending.task.id


@pytest.mark.timeout(180)
def test_a_task_parked_from_the_command_line_is_polled_answered_and_shown(
    server: TasksServer, tmp_path: Path
) -> None:
    store = tmp_path / "calls.db"
    key = park(store, server.url, "approve", {"item": "the release"})
    listed = toolnexus("pending", str(store))
    assert listed.returncode == 0, listed.stderr
    task_id = task_of(until(store, key, "working"))
    assert f"{key}  tasks  tool approve  working\n  task {task_id}\n" in listed.stdout
    out = tmp_path / "worker.out"
    with worker(store, server.url, out):
        until(store, key, "waiting")
        answered = toolnexus("answer", str(store), key, stdin="yes\n\n")  # the answer, then Send
        assert answered.returncode == 0, answered.stderr
        done = until(store, key, *ENDS)
    assert done.status == "done", done.error
    assert done.result is not None
    assert (
        done.result["content"][0]["text"]
        == "the release: {'action': 'accept', 'content': {'approve': 'yes'}}"
    )
    lines = out.read_text().splitlines()
    assert f"{key}  tool approve  asks: its questions wait for answers" in lines
    assert lines[-1] == f"{key}  tool approve  done"
    assert server.journal()[task_id]["answers"] == {
        "approve": [{"action": "accept", "content": {"approve": "yes"}}]
    }
    shown = toolnexus("pending", str(store))
    assert f"{key}  tasks  tool approve  done\n" in shown.stdout


@pytest.mark.timeout(180)
def test_a_worker_killed_while_it_polls_is_taken_over_and_two_workers_never_answer_one_task_twice(
    server: TasksServer, tmp_path: Path
) -> None:
    store = tmp_path / "calls.db"
    slow = park(store, server.url, "slow", {"polls": 2, "delay_ms": 4000})
    asking = [park(store, server.url, tool, {"item": tool}) for tool in ("twice", "two", "approve")]
    with worker(store, server.url, tmp_path / "a.out", lease=1.5) as first:
        # The first worker claims the slow task and waits 4 s on its poll: killed there.
        deadline = time.monotonic() + 30
        while until(store, slow, "working", "resuming").status != "resuming":
            assert time.monotonic() < deadline
            time.sleep(0.02)
        time.sleep(0.5)
        first.send_signal(signal.SIGKILL)
        first.wait()
    with (
        worker(store, server.url, tmp_path / "b.out", lease=20),
        worker(store, server.url, tmp_path / "c.out", lease=20),
    ):
        for key in asking:
            while until(store, key, "waiting", *ENDS).status == "waiting":
                answer(store, key, f"for {key}")
        taken_over = until(store, slow, *ENDS, within=90)
        ends = {key: until(store, key, *ENDS) for key in asking}
    assert taken_over.status == "done", taken_over.error
    assert taken_over.leases_lost >= 1  # the killed worker's lease ran out, and it was taken over
    assert taken_over.attempts >= 2
    assert {key: call.status for key, call in ends.items()} == dict.fromkeys(asking, "done")
    journal = server.journal()
    for key in asking:
        answers = journal[task_of(ends[key])]["answers"]
        assert answers
        assert all(len(given) == 1 for given in answers.values()), answers  # each key answered once


@pytest.mark.timeout(180)
def test_the_server_killed_and_started_again_a_parked_task_is_polled_on(
    server: TasksServer, tmp_path: Path
) -> None:
    store = tmp_path / "calls.db"
    out = tmp_path / "worker.out"
    working = park(store, server.url, "progress", {"steps": 40})
    waiting = park(store, server.url, "approve", {"item": "after the outage"})
    with worker(store, server.url, out):
        until(store, waiting, "waiting")
        until(store, working, "working")
        server.kill()  # while one task works and the other's question waits
        time.sleep(1.5)  # the worker's polls fail meanwhile: each task is given back, untouched
        for key in (working, waiting):  # not held by a worker whose connection failed
            until(store, key, "working", "waiting", "ready", within=10)
        answer(store, waiting, "yes")  # answered while the server is down
        server.start()  # the same port, the same tasks
        answered = until(store, waiting, *ENDS, within=90)
        progressed = until(store, working, *ENDS, within=90)
    assert answered.status == "done", answered.error
    assert answered.result is not None
    assert answered.result["content"][0]["text"].startswith("after the outage: ")
    assert progressed.status == "done", progressed.error
    text = out.read_text()
    assert "Traceback" not in text


def test_pending_shows_a_tasks_id_and_its_last_status_message_escaped(tmp_path: Path) -> None:
    store = tmp_path / "calls.db"
    with durable.open_store(store) as opened:
        task = durable.ParkedTask("t-\x1b[2J1", 0)
        key = opened.put(durable.Pending("tools/call", "report", None, None, (), (), {}, "srv", task))
        time.sleep(0.3)  # due after the floor
        (claim,) = opened.claim(lease=30, key=key)
        opened.task_working(key, claim.token, poll_in=60, note="step 2 of 3\n\x1b[31mred")
    shown = toolnexus("pending", str(store))
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.splitlines()[1:] == ["  task t-\\x1b[2J1: step 2 of 3\\n\\x1b[31mred"]


def test_a_worker_with_a_webhook_tells_of_a_tasks_question_and_its_end(
    server: TasksServer, tmp_path: Path
) -> None:
    from support.receiver import Receiver

    secret = "a-webhook-secret-of-some-length"
    secret_file = tmp_path / "secret"
    secret_file.write_text(secret)
    receiver = Receiver(secret)
    store = tmp_path / "calls.db"
    key = park(store, server.url, "approve", {"item": "the notes"})
    options = ("--webhook", receiver.url, "--webhook-secret-file", str(secret_file))
    try:
        with worker(
            store, server.url, tmp_path / "worker.out", *options, "--public-url", "https://inbox.example.com/"
        ) as proc:
            until(store, key, "waiting")
            answer(store, key, "yes")
            until(store, key, *ENDS)
            deadline = time.monotonic() + 30
            while "call.finished" not in receiver.types():
                assert time.monotonic() < deadline, receiver.types()
                time.sleep(0.05)
            proc.send_signal(signal.SIGTERM)
            proc.wait(10)
    finally:
        receiver.stop()
    # The task's question is told (with its link), its answer, its end; the worker's own
    # claims and polls are not.
    assert receiver.types() == ["question.waiting", "question.answered", "call.finished"]
    assert all(got.signed for got in receiver.got)
    (question,) = receiver.got[0].body["questions"]
    assert question["link"].startswith(f"https://inbox.example.com/a/{key}/")
    assert receiver.got[2].body["call"]["status"] == "done"
