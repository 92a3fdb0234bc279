"""SqliteStore: what it keeps, what it refuses, two writer processes at once, and SIGKILL."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from toolnexus import Answer, Request
from toolnexus.durable import STORE_FORMAT, Pending, SqliteStore

SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string", "minLength": 2}, "team": {"type": "string", "default": "web"}},
    "required": ["name"],
}


def pending(n: int = 0, *, arguments: dict[str, object] | None = None) -> Pending:
    first = Request(f"elc-a-{n}", "input", "Name?", None, {"schema": SCHEMA})
    second = Request(f"elc-b-{n}", "authorization", "Sign in", "https://auth.example.com/")
    return Pending(
        "tools/call",
        "deploy",
        arguments if arguments is not None else {"n": n},
        f"state-{n}==",
        ("first", "second"),
        (first, second),
        {"roots": {"method": "roots/list"}},
        "srv",
    )


def test_put_get_list_record_answers_remove(tmp_path: Path) -> None:
    path = tmp_path / "pending.db"
    with SqliteStore(path) as store:
        keys = [store.put(pending(n)) for n in range(3)]
        assert len(set(keys)) == 3
        assert store.get(keys[1]) == pending(1)
        assert store.list() == [(key, pending(n)) for n, key in enumerate(keys)]
        assert store.answers(keys[0]) == {}
        store.record(keys[0], Answer("elc-a-0", True, {"name": "Ada"}))
        store.record(keys[0], {"id": "elc-b-0", "ok": False, "reason": "declined"})
        assert store.answers(keys[0]) == {
            "elc-a-0": Answer("elc-a-0", True, {"name": "Ada"}),
            "elc-b-0": Answer("elc-b-0", False, None, "declined"),
        }
        store.remove(keys[0])
        with pytest.raises(KeyError):
            store.get(keys[0])
        with pytest.raises(KeyError):
            store.answers(keys[0])
        with pytest.raises(KeyError):
            store.remove(keys[0])
    with SqliteStore(path) as again:  # kept in the file
        assert [key for key, _ in again.list()] == keys[1:]


def test_record_refuses_a_second_answer_an_unknown_id_and_content_that_does_not_fit(tmp_path: Path) -> None:
    with SqliteStore(tmp_path / "p.db") as store:
        key = store.put(pending())
        store.record(key, Answer("elc-a-0", True, {"name": "Ada"}))
        with pytest.raises(ValueError, match="already answered"):
            store.record(key, Answer("elc-a-0", True, {"name": "Bob"}))
        with pytest.raises(ValueError, match="'elc-zzz'"):
            store.record(key, Answer("elc-zzz", True, {}))
        other = store.put(pending(2))
        with pytest.raises(ValueError, match="'name'") as caught:
            store.record(other, Answer("elc-a-2", True, {"name": "A"}))
        assert "elc-a-2" in str(caught.value)
        with pytest.raises(KeyError):
            store.record("nope", Answer("elc-a-0", True, {"name": "Ada"}))
        assert store.answers(key) == {"elc-a-0": Answer("elc-a-0", True, {"name": "Ada"})}
        assert store.answers(other) == {}


def test_another_format_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "p.db"
    SqliteStore(path).close()
    with sqlite3.connect(path) as db:
        db.execute("UPDATE toolnexus_store SET value = '99' WHERE name = 'format'")
    with pytest.raises(ValueError, match=f"format '99'.*format {STORE_FORMAT}"):
        SqliteStore(path)


def test_the_file_is_in_wal_mode(tmp_path: Path) -> None:
    path = tmp_path / "p.db"
    SqliteStore(path).close()
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)


# --- processes --------------------------------------------------------------------------------

WRITER = """
import sys
from toolnexus import Answer, Request
from toolnexus.durable import Pending, SqliteStore

path, tag, count, size = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
schema = {"type": "object", "properties": {"name": {"type": "string"}}}
store = SqliteStore(path)
print("ready", flush=True)
sys.stdin.readline()
n = 0
while count < 0 or n < count:
    request = Request(f"elc-{tag}-{n}", "input", "Name?", None, {"schema": schema})
    pending = Pending("tools/call", "t", {"blob": "x" * size, "n": n}, "s", ("k",), (request,))
    key = store.put(pending)
    store.record(key, Answer(request.id, True, {"name": tag}))
    print(key, flush=True)
    n += 1
"""


def start_writer(path: Path, tag: str, count: int, size: int = 10) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path), tag, str(count), str(size)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline() == "ready\n"
    return proc


def test_two_writer_processes_at_once_lose_and_duplicate_nothing(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"
    SqliteStore(path).close()
    writers = {tag: start_writer(path, tag, 150) for tag in ("one", "two")}
    for proc in writers.values():  # both are ready: let them go together
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    printed: dict[str, list[str]] = {}
    for tag, proc in writers.items():
        out, _ = proc.communicate(timeout=60)
        assert proc.returncode == 0
        printed[tag] = out.split()
    with SqliteStore(path) as store:
        kept = store.list()
        assert len(kept) == 300
        assert {key for key, _ in kept} == set(printed["one"]) | set(printed["two"])
        for tag in ("one", "two"):
            ns = [(p.arguments or {})["n"] for _, p in kept if p.requests[0].id.startswith(f"elc-{tag}-")]
            assert ns == list(range(150))  # oldest first, each once
        for key, p in kept:
            request_id = p.requests[0].id
            assert store.answers(key) == {
                request_id: Answer(request_id, True, {"name": request_id.split("-")[1]})
            }


def test_a_writer_killed_mid_write_leaves_a_file_that_opens(tmp_path: Path) -> None:
    path = tmp_path / "killed.db"
    proc = start_writer(path, "k", -1, size=200_000)  # writes until killed, 200 kB a pending
    assert proc.stdin is not None
    assert proc.stdout is not None
    proc.stdin.write("go\n")
    proc.stdin.flush()
    written = [proc.stdout.readline().strip() for _ in range(15)]
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    assert proc.returncode == -signal.SIGKILL
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    with SqliteStore(path) as store:
        kept = dict(store.list())
        assert set(written) <= set(kept)  # every commit it reported survived
        for key in written:
            assert list(store.answers(key)) == [kept[key].requests[0].id]
        key = store.put(pending())  # and it takes writes again
        assert store.get(key) == pending()
