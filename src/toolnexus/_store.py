"""Where parked calls wait: the [`Store`][toolnexus.durable.Store] interface and its embedded
default, [`SqliteStore`][toolnexus.durable.SqliteStore], on the standard library's ``sqlite3``."""

from __future__ import annotations

import builtins
import contextlib
import json
import os
import secrets
import sqlite3
import threading
from collections.abc import Iterator, Mapping
from typing import Any, Final, Protocol

from ._pending import Pending, result_for
from ._util import utc_timestamp
from ._wire import Answer

__all__ = ["STORE_FORMAT", "SqliteStore", "Store"]

STORE_FORMAT: Final = 1
"""The version of [`SqliteStore`][toolnexus.durable.SqliteStore]'s file format. A file of
another version is refused when opened."""

_SCHEMA: Final = (
    "CREATE TABLE IF NOT EXISTS toolnexus_store (name TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS toolnexus_pending ("
    " seq INTEGER PRIMARY KEY AUTOINCREMENT,"
    " key TEXT NOT NULL UNIQUE,"
    " created TEXT NOT NULL,"
    " pending TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS toolnexus_answer ("
    " key TEXT NOT NULL,"
    " request_id TEXT NOT NULL,"
    " answer TEXT NOT NULL,"
    " PRIMARY KEY (key, request_id))",
)


class Store(Protocol):
    """What a store of parked calls does; [`SqliteStore`][toolnexus.durable.SqliteStore] is one.

    A host that keeps them in its own database implements these six methods over two
    tables (see "Answering later" in the docs): one row per parked call, its key and
    ``json.dumps(pending.to_dict())``; one row per answer, its key, request id and
    ``json.dumps(answer.to_dict())``, unique on the pair.
    """

    def put(self, pending: Pending) -> str:
        """Keep ``pending``; return the new key it is kept under."""

    def get(self, key: str) -> Pending:
        """The pending kept under ``key``; ``KeyError`` when there is none."""

    def list(self) -> builtins.list[tuple[str, Pending]]:
        """Every pending with its key, oldest first."""

    def record(self, key: str, answer: Answer | Mapping[str, Any]) -> None:
        """Keep ``answer`` for the request of the pending under ``key`` whose id is ``answer.id``;
        ``ValueError`` for a second answer to it, or an id the pending does not hold."""

    def answers(self, key: str) -> dict[str, Answer]:
        """The answers recorded for ``key``: request id to ``Answer``."""

    def remove(self, key: str) -> None:
        """Forget the pending under ``key`` and its answers; ``KeyError`` when there is none."""


def _json(value: Mapping[str, Any]) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


class SqliteStore:
    """Parked calls and their answers in one SQLite file, shared by any number of processes.

    ```python
    store = SqliteStore("pending.db")
    key = store.put(pending)
    store.record(key, Answer(request.id, True, {"environment": "production"}))
    result = await durable.resume(client, store.get(key), store.answers(key))
    store.remove(key)
    ```

    The file is in WAL mode with a busy timeout: readers never wait for a writer, writers
    wait their turn, each change is one transaction, so nothing is lost or duplicated when
    processes write at once, and a process killed mid-write leaves a file that opens, without
    its change. Commits are synced the way WAL's ``synchronous=NORMAL`` does it: safe from a
    process crash; the last commits may be lost to a power cut. The format is versioned
    ([`STORE_FORMAT`][toolnexus.durable.STORE_FORMAT]); each pending is kept as its
    [`to_dict`][toolnexus.durable.Pending.to_dict] JSON. One instance may be used from
    several threads. Close it with [`close`][toolnexus.durable.SqliteStore.close], or use it
    as a context manager.

    Args:
        path: the file; created with its tables when absent.
        timeout: seconds a write waits for another process's write before it fails.

    Raises:
        ValueError: the file is a store of another format version.
        sqlite3.DatabaseError: the file is not an SQLite database.
    """

    def __init__(self, path: str | os.PathLike[str], *, timeout: float = 30.0) -> None:
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"SqliteStore: path must be a str or a path, not {type(path).__name__}")
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
            raise ValueError(f"SqliteStore: timeout must be a positive number of seconds, not {timeout!r}")
        self.path = os.fspath(path)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, timeout=timeout, isolation_level=None, check_same_thread=False)
        try:
            self._db.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
            self._db.execute("PRAGMA journal_mode = WAL")
            self._db.execute("PRAGMA synchronous = NORMAL")
            with self._write():
                for statement in _SCHEMA:
                    self._db.execute(statement)
                self._db.execute(
                    "INSERT OR IGNORE INTO toolnexus_store (name, value) VALUES ('format', ?)",
                    (str(STORE_FORMAT),),
                )
                row = self._db.execute("SELECT value FROM toolnexus_store WHERE name = 'format'").fetchone()
            if row[0] != str(STORE_FORMAT):
                raise ValueError(
                    f"SqliteStore: {self.path} is a store of format {row[0]!r}; "
                    f"this toolnexus reads format {STORE_FORMAT}"
                )
        except BaseException:
            self._db.close()
            raise

    def __repr__(self) -> str:
        return f"SqliteStore({self.path!r})"

    def __enter__(self) -> SqliteStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the file. The store cannot be used after."""
        with self._lock:
            self._db.close()

    @contextlib.contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction, taken at once (``BEGIN IMMEDIATE``) so it never has to be
        upgraded from a read while another process writes."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def _read(self, sql: str, params: tuple[Any, ...] = ()) -> builtins.list[Any]:
        with self._lock:
            return self._db.execute(sql, params).fetchall()

    def put(self, pending: Pending) -> str:
        """Keep ``pending``; return its key, a fresh random string of 16 hex digits."""
        if not isinstance(pending, Pending):
            raise TypeError(f"SqliteStore.put: pending must be a Pending, not {type(pending).__name__}")
        text = _json(pending.to_dict())
        while True:
            key = secrets.token_hex(8)
            try:
                with self._lock:
                    self._db.execute(
                        "INSERT INTO toolnexus_pending (key, created, pending) VALUES (?, ?, ?)",
                        (key, utc_timestamp(), text),
                    )
            except sqlite3.IntegrityError:  # that key is taken (one in 2**64): draw another
                continue
            return key

    def get(self, key: str) -> Pending:
        """The pending kept under ``key``.

        Raises:
            KeyError: nothing is kept under ``key``.
            ValueError: what is kept there is not a pending this toolnexus reads.
        """
        rows = self._read("SELECT pending FROM toolnexus_pending WHERE key = ?", (_check_key(key),))
        if not rows:
            raise KeyError(key)
        return _pending(key, rows[0][0])

    def list(self) -> builtins.list[tuple[str, Pending]]:
        """Every pending with its key, oldest first."""
        rows = self._read("SELECT key, pending FROM toolnexus_pending ORDER BY seq")
        return [(key, _pending(key, text)) for key, text in rows]

    def record(self, key: str, answer: Answer | Mapping[str, Any]) -> None:
        """Keep ``answer`` for the request of the pending under ``key`` whose id is ``answer.id``.

        The answer is checked as [`resume`][toolnexus.durable.resume] checks it (defaults laid
        in, content validated against the form), so a mistake surfaces while the human is
        still there.

        Raises:
            KeyError: nothing is kept under ``key``.
            ValueError: the pending holds no request with that id, the request is already
                answered, or the content does not fit the form (the message names the fields).
        """
        key = _check_key(key)
        if isinstance(answer, Mapping):
            answer = Answer.from_dict(answer)
        elif not isinstance(answer, Answer):
            kind = type(answer).__name__
            raise TypeError(f"SqliteStore.record: answer must be an Answer or its wire mapping, not {kind}")
        text = _json(answer.to_dict())
        with self._write() as db:
            row = db.execute("SELECT pending FROM toolnexus_pending WHERE key = ?", (key,)).fetchone()
            if row is None:
                raise KeyError(key)
            pending = _pending(key, row[0])
            request = next((r for r in pending.requests if r.id == answer.id), None)
            if request is None:
                held = ", ".join(r.id for r in pending.requests)
                raise ValueError(
                    f"SqliteStore.record: {key} holds no request {answer.id!r} (it holds {held})"
                )
            result_for(request, answer)  # raises ValueError naming the fields
            try:
                db.execute(
                    "INSERT INTO toolnexus_answer (key, request_id, answer) VALUES (?, ?, ?)",
                    (key, answer.id, text),
                )
            except sqlite3.IntegrityError:
                raise ValueError(f"SqliteStore.record: {answer.id} of {key} is already answered") from None

    def answers(self, key: str) -> dict[str, Answer]:
        """The answers recorded for the pending under ``key``, request id to ``Answer``;
        ``KeyError`` when nothing is kept under ``key``."""
        key = _check_key(key)
        with self._lock:
            known = self._db.execute("SELECT 1 FROM toolnexus_pending WHERE key = ?", (key,)).fetchone()
            rows = self._db.execute(
                "SELECT request_id, answer FROM toolnexus_answer WHERE key = ?", (key,)
            ).fetchall()
        if known is None:
            raise KeyError(key)
        return {request_id: Answer.from_dict(json.loads(text)) for request_id, text in rows}

    def remove(self, key: str) -> None:
        """Forget the pending under ``key`` and its answers; ``KeyError`` when there is none."""
        key = _check_key(key)
        with self._write() as db:
            gone = db.execute("DELETE FROM toolnexus_pending WHERE key = ?", (key,)).rowcount
            db.execute("DELETE FROM toolnexus_answer WHERE key = ?", (key,))
            if not gone:
                raise KeyError(key)

    def page(
        self, *, limit: int = 50, before: str | None = None, server: str | None = None
    ) -> tuple[builtins.list[tuple[str, str, Pending | ValueError]], str | None]:
        """One page of parked calls, newest first: ``(rows, cursor)``.

        Each row is ``(key, created, pending)``, ``created`` the RFC 3339 time it was parked;
        a record that does not read gives the ``ValueError`` saying why in place of its
        pending, so one bad row does not hide the others. ``cursor`` is ``None`` on the
        last page; passed back as ``before`` it gives the next (older) page. Each page is
        read by keyset (``seq < cursor``), so its cost does not grow with the number of calls
        in the store. With ``server``, only the calls parked from the server of that name.
        """
        if isinstance(limit, bool) or not isinstance(limit, int) or not 0 < limit <= 1000:
            raise ValueError(f"SqliteStore.page: limit must be an int from 1 to 1000, not {limit!r}")
        where: builtins.list[str] = []
        params: builtins.list[Any] = []
        if before is not None:
            if not isinstance(before, str) or not before.isdigit() or len(before) > 19:
                raise ValueError("SqliteStore.page: before must be a cursor from an earlier page")
            where.append("seq < ?")
            params.append(int(before))
        if server is not None:
            where.append("json_extract(pending, '$.server') = ?")
            params.append(_check_key(server))
        sql = "SELECT seq, key, created, pending FROM toolnexus_pending"
        if where:
            sql += " WHERE " + " AND ".join(where)
        rows = self._read(sql + " ORDER BY seq DESC LIMIT ?", (*params, limit + 1))
        cursor = str(rows[limit - 1][0]) if len(rows) > limit else None
        out: builtins.list[tuple[str, str, Pending | ValueError]] = []
        for _, key, created, text in rows[:limit]:
            try:
                out.append((key, created, _pending(key, text)))
            except ValueError as err:
                out.append((key, created, err))
        return out, cursor


def _check_key(key: object) -> str:
    if not isinstance(key, str):
        raise TypeError(f"SqliteStore: key must be a str, not {type(key).__name__}")
    return key


def _pending(key: str, text: str) -> Pending:
    try:
        return Pending.from_dict(json.loads(text))
    except json.JSONDecodeError:
        raise ValueError(f"SqliteStore: the pending under {key} is not JSON") from None
    except ValueError as err:
        raise ValueError(f"SqliteStore: the pending under {key}: {err}") from None
