"""Durable calls across processes, over streamable HTTP on 127.0.0.1, with a SqliteStore.

One server process (``servers.durable_server``, its request state sealed with a key it
keeps) serves every test of this module. In the first test each step is its own process:
``toolnexus call --park`` parks the call into the store and ends, ``toolnexus answer``
records the answers, ``toolnexus resume`` resumes it. The other tests run the command's
``main`` in this process (a process start costs about a second on a loaded machine).
"""

from __future__ import annotations

import io
import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import Client
from mcp_types import CallToolResult, TextContent

from support import forkserver
from support.http_process import http_server_process
from support.processes import TESTS_DIR
from toolnexus import Answer, Request, durable
from toolnexus.cli import main
from toolnexus.durable import Pending, SqliteStore


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    key = os.urandom(32).hex()
    with http_server_process(
        lambda fd: [sys.executable, "-m", "servers.durable_server", "http", "--fd", str(fd), "--key", key],
        cwd=TESTS_DIR,
        health_path="/health",
    ) as base:
        yield base + "/mcp"


def toolnexus(*argv: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return forkserver.run(
        [sys.executable, "-m", "toolnexus", *argv],
        input=stdin if stdin is not None else "",
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "NO_COLOR": "1"},
    )


def command(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """Run ``toolnexus ARGV`` in this process: its exit status, stdout and stderr."""
    capsys.readouterr()
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def park(capsys: pytest.CaptureFixture[str], url: str, store: Path, tool: str) -> str:
    status, out, err = command(capsys, "call", "--url", url, "--park", str(store), tool, "{}")
    assert status == 0, err
    key = out.strip()
    assert len(key) == 16
    assert f"parked as {key}" in err
    return key


def test_park_answer_resume_in_three_processes(
    url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "pending.db"
    parked = toolnexus("call", "--url", url, "--park", str(store), "profile", '{"tag": "p3"}')
    assert parked.returncode == 0, parked.stderr
    key = parked.stdout.strip()

    status, out, err = command(capsys, "pending", str(store))
    assert status == 0, err
    assert out.splitlines()[0] == f"{key}  durable-server  tool profile  waiting"
    assert "waiting  Profile for p3" in out

    status, _, err = command(capsys, "resume", str(store), key, "--url", url)
    assert status == 2
    assert "no answer for elc-" in err
    assert f"toolnexus answer {store} {key}" in err

    answered = toolnexus("answer", str(store), key, stdin="Ada\n36\ny\n\n")
    assert answered.returncode == 0, answered.stderr
    assert "durable-server asks" in answered.stdout
    with SqliteStore(store) as opened:
        (answer,) = opened.answers(key).values()
    assert answer.data == {"name": "Ada", "age": 36, "newsletter": True}

    resumed = toolnexus("resume", str(store), key, "--url", url)
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout) == {
        "tool": "profile",
        "tag": "p3",
        "action": "accept",
        "content": {"name": "Ada", "age": 36, "newsletter": True},
    }
    with SqliteStore(store) as opened:  # claimed, then done with the result kept
        call = opened.call(key)
    assert (call.status, call.attempts) == ("done", 1)
    assert call.result is not None
    status, _, err = command(capsys, "resume", str(store), key, "--url", url)
    assert (status, err) == (2, f"toolnexus: {key} is done already: nothing to resume\n")


def test_a_second_round_is_parked_anew(url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "pending.db"
    key = park(capsys, url, store, "two_rounds")
    with SqliteStore(store) as opened:
        (request,) = opened.get(key).requests
        opened.record(key, Answer(request.id, True, {"name": "Proc"}))

    status, out, err = command(capsys, "resume", str(store), key, "--url", url)
    assert status == 0, err
    second = out.strip()
    assert second != key
    assert "the server asks again: parked as" in err
    with SqliteStore(store) as opened:
        assert [k for k, _ in opened.list()] == [key, second]
        assert (opened.call(key).status, opened.call(key).next) == ("done", second)
        assert opened.call(second).follows == key
        (request,) = opened.get(second).requests
        opened.record(second, Answer(request.id, False, None, "declined"))

    status, out, err = command(capsys, "resume", str(store), second, "--url", url)
    assert status == 0, err
    assert json.loads(out) == {
        "tool": "two_rounds",
        "name": {"name": "Proc", "team": "platform"},
        "action": "decline",
        "content": None,
    }


def test_a_failed_resume_keeps_the_record_failed(
    url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "pending.db"
    key = park(capsys, url, store, "pair")
    with SqliteStore(store) as opened:
        for request in opened.get(key).requests:
            opened.record(key, Answer(request.id, True, {"name": "Kim"}))
    with sqlite3.connect(store) as db:  # a requestState the server did not seal
        (text,) = db.execute("SELECT pending FROM toolnexus_call WHERE key = ?", (key,)).fetchone()
        wire = json.loads(text)
        wire["requestState"] = "v1.forged"
        db.execute("UPDATE toolnexus_call SET pending = ? WHERE key = ?", (json.dumps(wire), key))

    status, _, err = command(capsys, "resume", str(store), key, "--url", url)
    assert status == 1
    assert "Invalid or expired requestState" in err
    with SqliteStore(store) as opened:  # kept, failed with the server's error
        call = opened.call(key)
    assert call.status == "failed"
    assert call.error is not None
    assert "Invalid or expired requestState" in call.error


def test_a_legacy_connection_cannot_park(
    url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "pending.db"
    argv = ("call", "--url", url, "--park", str(store), "--protocol", "legacy", "profile", '{"tag": "l"}')
    status, _, err = command(capsys, *argv)
    assert status == 2
    assert "2025-11-25" in err
    assert "call without --park" in err
    assert not store.exists()  # nothing was parked: no store was made


def test_a_missing_store_or_key_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = command(capsys, "pending", str(tmp_path / "none.db"))
    assert missing == (2, "", f"toolnexus: {tmp_path / 'none.db'}: no such store\n")
    assert not (tmp_path / "none.db").exists()
    SqliteStore(tmp_path / "empty.db").close()
    status, _, err = command(capsys, "answer", str(tmp_path / "empty.db"), "nokey")
    assert status == 2
    assert "no call is parked under 'nokey'" in err
    nothing = command(capsys, "pending", str(tmp_path / "empty.db"))
    assert nothing == (0, "", f"toolnexus: nothing waits in {tmp_path / 'empty.db'}\n")


def test_pending_escapes_server_text_and_answer_records_a_passed_deadline_as_expired(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    store_path = tmp_path / "pending.db"
    schema = {"schema": {"type": "object", "properties": {}}}
    late = Request("elc-x-1", "input", "Too late?", None, schema, "2000-01-01T00:00:00.000Z")
    sneaky = Request("elc-x-2", "input", "Name?\x1b[2J", None, schema)
    server = "evil\x1b]0;x\x07"
    parked = Pending("tools/call", "deploy\x1b[31m", {}, "s", ("a", "b"), (late, sneaky), {}, server)
    with SqliteStore(store_path) as store:
        key = store.put(parked)

    status, out, _ = command(capsys, "pending", str(store_path))
    assert status == 0
    assert "\x1b" not in out
    assert "\x07" not in out
    assert f"{key}  evil\\x1b]0;x\\x07  tool deploy\\x1b[31m" in out
    assert "elc-x-1  waiting  Too late?  (until 2000-01-01T00:00:00.000Z)" in out

    monkeypatch.setattr("sys.stdin", io.StringIO("\n"))  # the review of the empty form: send
    status, out, err = command(capsys, "answer", str(store_path), key)
    assert status == 0, err
    assert "elc-x-1 expired at 2000-01-01T00:00:00.000Z" in err
    assert "Too late?" not in out  # never asked
    assert "\x1b" not in out
    with SqliteStore(store_path) as store:
        assert store.answers(key) == {
            "elc-x-1": Answer("elc-x-1", False, None, "expired"),
            "elc-x-2": Answer("elc-x-2", True, {}),
        }


@pytest.mark.anyio
async def test_a_tool_with_header_arguments_parks_and_resumes_on_fresh_connections(url: str) -> None:
    # Over streamable HTTP, a tool whose argument is an x-mcp-header must have been listed
    # by the connection that calls it; durable lists it again when the server says so.
    async with Client(url, elicitation_callback=durable.park_only) as client:
        pending = await durable.call_tool_or_park(client, "regional", {"region": "eu-west"})
    assert isinstance(pending, Pending)
    stored = Pending.from_dict(json.loads(json.dumps(pending.to_dict())))
    answer = Answer(stored.requests[0].id, True, {"name": "Lee", "age": 40})
    async with Client(url, elicitation_callback=durable.park_only) as client:
        result = await durable.resume(client, stored, [answer])
    assert isinstance(result, CallToolResult)
    first = result.content[0]
    assert isinstance(first, TextContent)
    assert json.loads(first.text) == {
        "tool": "regional",
        "region": "eu-west",
        "action": "accept",
        "content": {"name": "Lee", "age": 40, "newsletter": False},
    }


def test_pending_tells_accepted_declined_and_cancelled_apart(
    url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "pending.db"
    key = park(capsys, url, store, "pair")
    with SqliteStore(store) as opened:
        first, second = opened.get(key).requests
        opened.record(key, Answer.decline(first))
        opened.record(key, Answer.cancel(second))
    status, out, err = command(capsys, "pending", str(store))
    assert status == 0, err
    assert out.splitlines() == [
        f"{key}  durable-server  tool pair  ready",
        f"  {first.id}  declined  First person?",
        f"  {second.id}  cancelled  Second person?",
    ]


def test_pending_opens_the_store_read_only(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE mine (x)")
    before = other.read_bytes()
    status, _, err = command(capsys, "pending", str(other))
    assert status == 2
    assert "not a toolnexus store" in err
    assert other.read_bytes() == before
    assert not (tmp_path / "other.db-wal").exists()


def test_the_end_of_input_at_answer_records_nothing_for_the_questions_left(
    url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    store = tmp_path / "pending.db"
    key = park(capsys, url, store, "pair")
    # The first form: a name, Enter for the team's default, Enter at the review; then the input ends.
    monkeypatch.setattr("sys.stdin", io.StringIO("Ada\n\n\n"))
    status, _, err = command(capsys, "answer", str(store), key)
    assert status == 130, err
    assert "nothing recorded for the 1 question(s) not answered" in err
    with SqliteStore(store) as opened:
        first, second = opened.get(key).requests
        assert opened.answers(key) == {first.id: Answer(first.id, True, {"name": "Ada", "team": "platform"})}
    status, out, _ = command(capsys, "pending", str(store))
    assert f"  {first.id}  accepted  First person?" in out
    assert f"  {second.id}  waiting  Second person?" in out


def test_a_question_answered_elsewhere_meanwhile_is_said_once_and_skipped(url: str, tmp_path: Path) -> None:
    import select

    store = tmp_path / "pending.db"
    parked = toolnexus("call", "--url", url, "--park", str(store), "pair")
    assert parked.returncode == 0, parked.stderr
    key = parked.stdout.strip()
    proc = forkserver.popen(
        [sys.executable, "-m", "toolnexus", "answer", str(store), key], env={**os.environ, "NO_COLOR": "1"}
    )
    assert proc.stdin is not None
    assert proc.stdout is not None
    shown = b""
    while b"name: " not in shown:  # the first question is on screen
        ready, _, _ = select.select([proc.stdout], [], [], 60)
        assert ready, shown
        chunk = os.read(proc.stdout.fileno(), 65536)
        assert chunk, shown
        shown += chunk
    with SqliteStore(store) as opened:  # another answerer is first
        first, _ = opened.get(key).requests
        opened.record(key, Answer(first.id, True, {"name": "Lee"}))
    # This answerer's answer to the first question; then the input ends.
    _, err = proc.communicate(b"Kim\n\n\n", timeout=60)
    assert proc.returncode == 130, err
    said = err.decode()
    assert said.count(f"{first.id} was answered elsewhere meanwhile; going on") == 1, said
    assert len(said) < 2000  # no loop
    with SqliteStore(store) as opened:
        assert opened.answers(key) == {first.id: Answer(first.id, True, {"name": "Lee"})}


RAW = ("\x1b", "\x07", "\u202e", "\u009b", "\u200b")


def test_every_text_from_a_store_is_escaped_by_pending_and_resume(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A store written by someone else: a key, a request id and a kind full of escapes."""
    store_path = tmp_path / "pending.db"
    schema = {"schema": {"type": "object", "properties": {}}}
    request = Request("elc-\x1b]0;t\x07-\u202e", "in\u009b2Jput", "Name?", None, schema)
    parked = Pending("tools/call", "deploy", {}, "s", ("a",), (request,), {}, "server")
    with SqliteStore(store_path) as store:
        key = store.put(parked)
    hostile_key = "k\x1b[2J\u200b"
    with sqlite3.connect(store_path) as db:
        db.execute("UPDATE toolnexus_call SET key = ? WHERE key = ?", (hostile_key, key))

    status, out, err = command(capsys, "pending", str(store_path))
    assert status == 0, err
    assert out.splitlines() == [
        "k\\x1b[2J\\u200b  server  tool deploy  waiting",
        "  elc-\\x1b]0;t\\x07-\\u202e  waiting  Name?",
    ]
    status, out, err = command(capsys, "resume", str(store_path), hostile_key, "--url", "http://127.0.0.1:9/")
    assert status == 2
    assert "no answer for elc-\\x1b]0;t\\x07-\\u202e" in err
    for text in (out, err):
        assert not any(ch in text for ch in RAW), text


def test_resume_on_a_server_of_another_name_is_refused_unless_renamed(
    url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "pending.db"
    key = park(capsys, url, store, "two_rounds")
    with SqliteStore(store) as opened:
        (request,) = opened.get(key).requests
        opened.record(key, Answer(request.id, False, None, "declined"))
    with sqlite3.connect(store) as db:  # parked, as the record says, from a server of another name
        (text,) = db.execute("SELECT pending FROM toolnexus_call WHERE key = ?", (key,)).fetchone()
        wire = json.loads(text)
        wire["server"] = "old-name"
        db.execute("UPDATE toolnexus_call SET pending = ? WHERE key = ?", (json.dumps(wire), key))

    status, out, err = command(capsys, "resume", str(store), key, "--url", url)
    assert status == 2, err
    assert "parked from the server 'old-name'" in err
    assert "use --renamed-server" in err
    assert out == ""
    status, out, err = command(capsys, "resume", str(store), key, "--url", url, "--renamed-server")
    assert status == 0, err
    assert json.loads(out) == {"tool": "two_rounds", "name": None, "action": "decline", "content": None}


def test_call_park_makes_a_postgresql_store_and_never_shows_its_password(
    url: str, postgres_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """An empty database: call --park makes the store there on first use (it said 'holds no
    toolnexus store', exit 2); every line names the store with its password hidden."""
    secret = postgres_url.replace("postgresql://postgres@", "postgresql://postgres:S3cretPw@", 1)
    status, out, err = command(capsys, "call", "--url", url, "--park", secret, "profile", '{"tag": "pg"}')
    assert status == 0, err
    key = out.strip()
    assert len(key) == 16
    assert "S3cretPw" not in err
    assert f"answer with: toolnexus answer {durable.redact_store(secret)} {key}" in err
    status, out, err = command(capsys, "pending", secret)
    assert (status, err) == (0, "")
    assert out.startswith(f"{key}  durable-server  tool profile  waiting")
