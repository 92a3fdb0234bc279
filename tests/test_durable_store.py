"""SqliteStore's own: the file (mode 0600, WAL, read-only, another program's database, format 1
upgraded), two writer processes at once, and SIGKILL. What every store does is in
test_store_contract.py."""

from __future__ import annotations

import json
import logging
import os
import signal
import sqlite3
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from support.processes import Processes
from toolnexus import Answer, Request
from toolnexus._store import STORE_FORMAT
from toolnexus.durable import Pending, SqliteStore, open_store
from toolnexus.errors import StoreError

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


def test_the_file_is_in_wal_mode(tmp_path: Path) -> None:
    path = tmp_path / "p.db"
    SqliteStore(path).close()
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)


def test_a_new_store_and_its_wal_and_shm_are_for_the_owner_only(tmp_path: Path) -> None:
    path = tmp_path / "p.db"
    with SqliteStore(path) as store:
        store.put(pending())
        files = [path, Path(f"{path}-wal"), Path(f"{path}-shm")]
        for file in files:
            assert file.exists(), file
            assert stat.S_IMODE(file.stat().st_mode) == 0o600, file


def test_an_existing_store_others_can_read_is_named_in_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "p.db"
    SqliteStore(path).close()
    path.chmod(0o644)
    with caplog.at_level(logging.WARNING), SqliteStore(path):
        pass
    assert any(
        str(path) in record.getMessage() and "chmod 600" in record.getMessage() for record in caplog.records
    )


def _snapshot(path: Path) -> bytes:
    return path.read_bytes()


def test_another_programs_database_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "theirs.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE notes (body TEXT)")
        db.execute("INSERT INTO notes VALUES ('keep me')")
    db.close()
    before = _snapshot(path)
    for options in ({}, {"read_only": True}, {"create": False}):
        with pytest.raises(StoreError, match="not a toolnexus store"):
            open_store(str(path), **options)  # type: ignore[arg-type]
    assert _snapshot(path) == before
    assert not Path(f"{path}-wal").exists()
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone() == ("delete",)
        assert [row[0] for row in db.execute("SELECT name FROM sqlite_master")] == ["notes"]


def test_read_only_opens_the_file_read_only_and_needs_it_to_exist(tmp_path: Path) -> None:
    path = tmp_path / "p.db"
    with pytest.raises(FileNotFoundError, match="no such store"):
        open_store(str(path), read_only=True)
    with pytest.raises(FileNotFoundError, match="no such store"):
        open_store(str(path), create=False)
    assert not path.exists()
    with SqliteStore(path) as store:
        key = store.put(pending())
    path.chmod(0o400)
    with open_store(str(path), read_only=True) as reader:
        assert [(c.key, c.status) for c in reader.calls()] == [(key, "waiting")]
        with pytest.raises(StoreError, match="read-only"):
            reader.put(pending(1))


def test_a_format_1_store_is_upgraded_with_its_calls_waiting_or_ready(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    with sqlite3.connect(path) as db:  # what toolnexus 0.1 wrote
        db.execute("CREATE TABLE toolnexus_store (name TEXT PRIMARY KEY, value TEXT NOT NULL)")
        db.execute(
            "CREATE TABLE toolnexus_pending (seq INTEGER PRIMARY KEY AUTOINCREMENT, key TEXT NOT NULL UNIQUE,"
            " created TEXT NOT NULL, pending TEXT NOT NULL)"
        )
        db.execute(
            "CREATE TABLE toolnexus_answer (key TEXT NOT NULL, request_id TEXT NOT NULL,"
            " answer TEXT NOT NULL, PRIMARY KEY (key, request_id))"
        )
        db.execute("INSERT INTO toolnexus_store VALUES ('format', '1')")
        for key, n in (("k0", 0), ("k1", 1)):
            db.execute(
                "INSERT INTO toolnexus_pending (key, created, pending)"
                " VALUES (?, '2026-01-01T00:00:00.000Z', ?)",
                (key, json.dumps(pending(n).to_dict())),
            )
        for request_id in ("elc-a-1", "elc-b-1"):
            answer = (
                {"id": request_id, "ok": True, "data": {"name": "Ada"}}
                if "a" in request_id
                else {
                    "id": request_id,
                    "ok": True,
                }
            )
            db.execute("INSERT INTO toolnexus_answer VALUES ('k1', ?, ?)", (request_id, json.dumps(answer)))
    db.close()
    with pytest.raises(StoreError, match=r"format 1.*open it once for writing"):
        open_store(str(path), read_only=True)
    with SqliteStore(path) as store:
        assert [(c.key, c.status, c.server) for c in store.calls()] == [
            ("k0", "waiting", "srv"),
            ("k1", "ready", "srv"),
        ]
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT value FROM toolnexus_meta").fetchone() == (str(STORE_FORMAT),)
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert tables == {
            "toolnexus_meta",
            "toolnexus_call",
            "toolnexus_answer",
            "toolnexus_history",
            "toolnexus_cursor",
            "sqlite_sequence",
        }


def test_record_reads_the_form_before_it_takes_the_write_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import toolnexus._store as store_module

    path = tmp_path / "p.db"
    with SqliteStore(path) as store:
        key = store.put(pending())
    checking = threading.Event()
    real = store_module.result_for  # type: ignore[attr-defined]

    def slow_check(request: Request, answer: Answer) -> object:  # a form that takes long to read
        checking.set()
        time.sleep(1.5)
        return real(request, answer)

    monkeypatch.setattr(store_module, "result_for", slow_check)
    slow = SqliteStore(path)
    quick = SqliteStore(path, timeout=0.5)
    try:
        recording = threading.Thread(target=slow.record, args=(key, Answer("elc-a-0", True, {"name": "Ada"})))
        recording.start()
        assert checking.wait(5)
        other = quick.put(pending(1))  # a writer with a 0.5 s timeout is not held up
        recording.join()
        assert quick.answers(key) == {"elc-a-0": Answer("elc-a-0", True, {"name": "Ada"}, None)}
        assert quick.get(other) == pending(1)
    finally:
        slow.close()
        quick.close()


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


def start_writer(
    processes: Processes, path: Path, tag: str, count: int, size: int = 10
) -> subprocess.Popen[str]:
    proc = processes.popen(
        [sys.executable, "-c", WRITER, str(path), tag, str(count), str(size)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline() == "ready\n"
    return proc


def test_two_writer_processes_at_once_lose_and_duplicate_nothing(
    tmp_path: Path, processes: Processes
) -> None:
    path = tmp_path / "shared.db"
    SqliteStore(path).close()
    writers = {tag: start_writer(processes, path, tag, 150) for tag in ("one", "two")}
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


def test_a_writer_killed_mid_write_leaves_a_file_that_opens(tmp_path: Path, processes: Processes) -> None:
    path = tmp_path / "killed.db"
    proc = start_writer(processes, path, "k", -1, size=200_000)  # writes until killed, 200 kB a pending
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
