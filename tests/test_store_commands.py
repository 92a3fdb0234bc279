"""The commands around a store, on SQLite and on PostgreSQL (the ``backend`` fixture): a command
that writes makes its store, one that reads never does; a store's password is never printed;
one call or answer that does not read is that call's problem, not the listing's; a database
whose same-named table is not a store's is refused in one line. (``call --park`` and the
worker, which need a server, are in test_durable_cli.py and test_workers_e2e.py.)"""

from __future__ import annotations

import pytest

from support.stores import Backend
from toolnexus import Answer, Request
from toolnexus.cli import main
from toolnexus.durable import Pending, open_store, redact_store

PASSWORD = "S3cretPw"


def command(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def pending(n: int) -> Pending:
    schema = {"type": "object", "properties": {"name": {"type": "string"}}}
    request = Request(f"elc-{n}", "input", f"Name {n}?", None, {"schema": schema})
    return Pending("tools/call", "deploy", {"n": n}, "state", ("k",), (request,), {}, "srv")


def spec_of(backend: Backend) -> str:
    """The store as a user gives it; for PostgreSQL with a password in the URL (the test
    server trusts every connection, so any password is accepted, and must never be shown)."""
    if backend.kind == "sqlite":
        return backend.spec
    return backend.spec.replace("postgresql://postgres@", f"postgresql://postgres:{PASSWORD}@", 1)


def tables(backend: Backend) -> set[str]:
    if backend.kind == "sqlite":
        import os

        if not os.path.exists(backend.spec):
            return set()
        sql = "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
    else:
        sql = "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
    return {str(row[0]) for row in backend.query(sql)}


def test_a_reading_command_never_makes_a_store_and_a_writing_one_does(
    backend: Backend, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = spec_of(backend)
    status, out, err = command(capsys, "pending", spec)
    assert (status, out) == (2, "")
    assert err.count("\n") == 1
    assert ("no such store" if backend.kind == "sqlite" else "holds no toolnexus store") in err
    assert tables(backend) == set()  # a reader made nothing
    status, out, err = command(capsys, "answer", spec, "nokey")  # a writer makes it, first use
    assert (status, out) == (2, "")
    assert "no call is parked under 'nokey'" in err
    assert tables(backend) == {
        "toolnexus_meta",
        "toolnexus_call",
        "toolnexus_answer",
        "toolnexus_history",
        "toolnexus_cursor",
    }
    status, out, err = command(capsys, "pending", spec)
    assert (status, out) == (0, "")
    assert err == f"toolnexus: nothing waits in {redact_store(spec)}\n"


def test_no_message_shows_the_stores_password(postgres_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    backend = Backend("postgres", postgres_url)
    spec = spec_of(backend)
    with open_store(spec) as store:
        key = store.put(pending(0))
        done = store.put(pending(1))
        store.record(done, Answer("elc-1", True, {"name": "Ada"}))
    seen = [
        command(capsys, "pending", spec),
        command(capsys, "answer", spec, "nokey"),
        command(capsys, "resume", spec, key, "--url", "http://127.0.0.1:9/mcp"),  # not ready: refused
        command(capsys, "resume", spec, "nokey", "--url", "http://127.0.0.1:9/mcp"),
        command(capsys, "pending", spec.replace(backend.spec.rsplit("/", 1)[1], "no_such_database")),
    ]
    shown = redact_store(spec)
    assert PASSWORD not in shown
    assert ":***@" in shown
    for status, out, err in seen:
        assert PASSWORD not in out + err, (status, out, err)
    assert any(shown in err for _, _, err in seen)  # the store is named, redacted


@pytest.mark.parametrize(
    ("spec", "shown"),
    [
        ("postgresql://app:pw@db.internal:5432/agents", "postgresql://app:***@db.internal:5432/agents"),
        ("postgres://app:p%40ss@db/x?sslmode=require", "postgres://app:***@db/x?sslmode=require"),
        (
            "postgresql://app@db/x?password=pw&sslmode=require",
            "postgresql://app@db/x?password=***&sslmode=require",
        ),
        ("postgresql://app:a:b@c@db/x", "postgresql://app:***@db/x"),
        ("postgresql://[::1", "postgresql://***"),
        ("postgresql://db.internal/agents", "postgresql://db.internal/agents"),
        ("host=db password='it\\'s a secret' dbname=x", "host=db password=*** dbname=x"),
        ("host=db PASSWORD = pw", "host=db PASSWORD = ***"),
        ("host=db password=pw dbname=x", "host=db password=*** dbname=x"),
        ("calls.db", "calls.db"),
    ],
)
def test_redact_store_hides_every_password(spec: str, shown: str) -> None:
    assert redact_store(spec) == shown


def test_one_answer_that_does_not_read_is_that_calls_problem(
    backend: Backend, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = spec_of(backend)
    with open_store(spec) as store:
        keys = [store.put(pending(n)) for n in range(3)]
        store.record(keys[1], Answer("elc-1", True, {"name": "Ada"}))
        store.record(keys[2], Answer("elc-2", True, {"name": "Bo"}))
    backend.sql(
        "UPDATE toolnexus_answer SET answer = 'not json' WHERE key = ?",
        "UPDATE toolnexus_answer SET answer = 'not json' WHERE key = %s",
        (keys[1],),
    )
    status, out, err = command(capsys, "pending", spec)
    assert status == 1  # documented: listed whole, and the exit status says one does not read
    for key in keys:
        assert key in out
    lines = out.splitlines()
    bad = lines.index(next(line for line in lines if line.startswith(keys[1])))
    assert lines[bad].endswith("failed")
    assert "answered (does not read)" in lines[bad + 1]
    assert "not JSON" in lines[bad + 2]
    assert next(line for line in lines if line.startswith(keys[2])).endswith("ready")
    assert err == "toolnexus: 1 call(s) do not read: listed as failed, with the reason\n"
    status, out, err = command(capsys, "answer", spec, keys[1])
    assert (status, out) == (2, "")
    assert "does not read" in err
    assert "not JSON" in err
    status, out, err = command(capsys, "resume", spec, keys[1], "--url", "http://127.0.0.1:9/mcp")
    assert status == 2
    assert f"{keys[1]} is failed (" in err
    assert "not JSON" in err


def test_a_table_of_another_program_is_refused_in_one_line_and_left_alone(
    backend: Backend, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = spec_of(backend)
    backend.sql(
        "CREATE TABLE toolnexus_call (id INTEGER PRIMARY KEY, note TEXT)",
        "CREATE TABLE toolnexus_call (id integer PRIMARY KEY, note text)",
    )
    for argv in (("pending", spec), ("answer", spec, "k"), ("inbox", spec)):
        status, out, err = command(capsys, *argv)
        assert (status, out) == (2, ""), argv
        assert err.count("\n") == 1, err
        assert "the table toolnexus_call is not a toolnexus store's" in err
        assert "Traceback" not in err
    assert tables(backend) == {"toolnexus_call"}


def test_show_and_pending_json_tell_a_calls_history_by_whom_and_never_an_answers_content(
    backend: Backend, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    spec = spec_of(backend)
    with open_store(spec) as store:
        key = store.put(pending(1))
        store.opened(key, by="alice", via="inbox")
        store.opened(key, by="alice", via="inbox")  # once per person and way
        store.record(key, Answer("elc-1", True, {"name": "the-secret-value"}), by="alice", via="inbox")
        (claim,) = store.claim(lease=30, by="build-7:42")
        store.finish(key, claim.token, {"content": [{"type": "text", "text": "deployed"}]})
    status, out, err = command(capsys, "show", spec, key)
    assert (status, err) == (0, "")
    lines = out.splitlines()
    assert lines[:2] == [f"{key}  srv  tool deploy  done", "  elc-1  accepted  Name 1?"]
    assert [line.split("  ", 2)[2] for line in lines[2:8]] == [
        "parked, waiting for answers",
        "opened, by alice via inbox",
        "answered elc-1: accept, by alice via inbox",
        "ready to resume",
        "claimed, by build-7:42 via worker",
        "finished: done",
    ]
    assert lines[8:] == [
        "result:",
        *json.dumps({"content": [{"type": "text", "text": "deployed"}]}, indent=2).splitlines(),
    ]
    status, out, _ = command(capsys, "show", spec, key, "--json")
    shown = json.loads(out)
    assert [entry["kind"] for entry in shown["history"]] == [
        "parked",
        "opened",
        "answer",
        "ready",
        "claimed",
        "finished",
    ]
    assert shown["history"][2] | {"at": ""} == {
        "at": "",
        "kind": "answer",
        "status": "waiting",
        "actor": "alice",
        "via": "inbox",
        "detail": "elc-1: accept",
    }
    assert shown["questions"] == [{"id": "elc-1", "kind": "input", "prompt": "Name 1?", "state": "accepted"}]
    assert shown["result"] == {"content": [{"type": "text", "text": "deployed"}]}
    status, listed, _ = command(capsys, "pending", spec, "--json")
    assert status == 0
    assert json.loads(listed) == [shown]
    for text in (out, listed):
        assert "the-secret-value" not in text  # a history never holds an answer's content
    status, _, err = command(capsys, "show", spec, "0123456789abcdef")
    assert (status, err) == (1, "toolnexus: nothing is kept under 0123456789abcdef\n")
