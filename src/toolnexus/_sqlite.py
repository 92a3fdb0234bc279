"""[`SqliteStore`][toolnexus.durable.SqliteStore]: the store engine over one SQLite file, on the
standard library's ``sqlite3``. This module holds only what is SQLite's: the connection and its
transactions, the file's mode, the wake-ups (``PRAGMA data_version``) and the DDL of each
format; the lifecycle is ``_engine``'s.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import stat
import threading
import time
import urllib.parse
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final

from ._engine import Migration, StoreEngine, Tx, fill_targets, name_the_store
from ._store import DEFAULT_RETENTION, EventHook, decode_pending, earliest_expiry
from ._time import Clock, check_seconds
from ._watch import CHANGED, READY
from .errors import StoreUnavailableError

__all__ = ["SqliteStore"]

logger = logging.getLogger(__name__)

_POLL: Final = 0.05
"""Seconds between two looks at ``PRAGMA data_version`` by the watchers' thread."""


def _fill_lifecycle(tx: Tx, now: float) -> None:
    """Format 2's data step: format 1 kept no lifecycle; each call becomes ``waiting`` or
    ``ready`` by its answers (``failed`` when its record does not read)."""
    for key, text in tx.run("SELECT key, pending FROM toolnexus_pending").fetchall():
        try:
            pending = decode_pending(str(key), text)
        except ValueError as err:
            tx.run(
                "UPDATE toolnexus_pending SET status = 'failed', error = :error, updated = :now"
                " WHERE key = :key",
                {"error": str(err), "now": now, "key": key},
            )
            continue
        (answered,) = tx.run(
            "SELECT count(*) FROM toolnexus_answer WHERE key = :key", {"key": key}
        ).fetchone()
        asked = len(pending.requests)
        tx.run(
            "UPDATE toolnexus_pending SET status = :status, server = :server, asked = :asked,"
            " expires = :expires, updated = :now WHERE key = :key",
            {
                "status": "ready" if answered >= asked else "waiting",
                "server": pending.server,
                "asked": asked,
                "expires": earliest_expiry(pending, now=now),
                "now": now,
                "key": key,
            },
        )


_MIGRATIONS: Final = (
    Migration(
        1,
        (
            "CREATE TABLE toolnexus_store (name TEXT PRIMARY KEY, value TEXT NOT NULL)",
            "CREATE TABLE toolnexus_pending ("
            " seq INTEGER PRIMARY KEY AUTOINCREMENT,"
            " key TEXT NOT NULL UNIQUE,"
            " created TEXT NOT NULL,"
            " pending TEXT NOT NULL)",
            "CREATE TABLE toolnexus_answer ("
            " key TEXT NOT NULL,"
            " request_id TEXT NOT NULL,"
            " answer TEXT NOT NULL,"
            " PRIMARY KEY (key, request_id))",
            "INSERT INTO toolnexus_store (name, value) VALUES ('format', '1')",
        ),
    ),
    Migration(
        2,
        (
            "ALTER TABLE toolnexus_pending ADD COLUMN status TEXT NOT NULL DEFAULT 'waiting'",
            "ALTER TABLE toolnexus_pending ADD COLUMN server TEXT",
            "ALTER TABLE toolnexus_pending ADD COLUMN asked INTEGER NOT NULL DEFAULT 0",
            "ALTER TABLE toolnexus_pending ADD COLUMN expires REAL",
            "ALTER TABLE toolnexus_pending ADD COLUMN updated REAL NOT NULL DEFAULT 0",
            "ALTER TABLE toolnexus_pending ADD COLUMN token TEXT",
            "ALTER TABLE toolnexus_pending ADD COLUMN lease_until REAL",
            "ALTER TABLE toolnexus_pending ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0",
            "ALTER TABLE toolnexus_pending ADD COLUMN outcome TEXT",
            "ALTER TABLE toolnexus_pending ADD COLUMN error TEXT",
            "ALTER TABLE toolnexus_pending ADD COLUMN follows TEXT",
            "ALTER TABLE toolnexus_pending ADD COLUMN next TEXT",
            "CREATE INDEX toolnexus_pending_status ON toolnexus_pending (status, seq)",
            _fill_lifecycle,
        ),
    ),
    Migration(
        3,
        (  # the tables named as PostgreSQL's always were; what a call is, and leases lost
            "ALTER TABLE toolnexus_store RENAME TO toolnexus_meta",
            "ALTER TABLE toolnexus_pending RENAME TO toolnexus_call",
            "DROP INDEX toolnexus_pending_status",
            "CREATE INDEX toolnexus_call_status ON toolnexus_call (status, seq)",
            "ALTER TABLE toolnexus_call ADD COLUMN method TEXT",
            "ALTER TABLE toolnexus_call ADD COLUMN target TEXT",
            "ALTER TABLE toolnexus_call ADD COLUMN lost INTEGER NOT NULL DEFAULT 0",
            fill_targets,
        ),
    ),
    Migration(
        4,
        (  # live questions: a call held open while a person answers elsewhere
            "ALTER TABLE toolnexus_call ADD COLUMN live INTEGER NOT NULL DEFAULT 0",
            "CREATE INDEX toolnexus_call_token ON toolnexus_call (token)",
        ),
    ),
    Migration(
        5,
        (  # parked tasks: polled by a worker when due, their status message kept
            "ALTER TABLE toolnexus_call ADD COLUMN poll_at REAL",
            "ALTER TABLE toolnexus_call ADD COLUMN note TEXT",
        ),
    ),
    Migration(
        6,
        (  # each call's history: who answered, which worker resumed it, how it ended
            "CREATE TABLE toolnexus_history ("
            " seq INTEGER PRIMARY KEY AUTOINCREMENT,"
            " key TEXT NOT NULL,"
            " at REAL NOT NULL,"
            " kind TEXT NOT NULL,"
            " status TEXT,"
            " actor TEXT,"
            " via TEXT,"
            " detail TEXT)",
            "CREATE INDEX toolnexus_history_key ON toolnexus_history (key, seq)",
            # each notification target's place in the history (an outbox), and who sends to it
            "CREATE TABLE toolnexus_cursor ("
            " target TEXT PRIMARY KEY,"
            " seq INTEGER NOT NULL,"
            " holder TEXT,"
            " lease_until REAL,"
            " attempts INTEGER NOT NULL DEFAULT 0,"
            " next_at REAL,"
            " error TEXT)",
            name_the_store,
        ),
    ),
)


class _Tx:
    __slots__ = ("_db",)

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def run(self, sql: str, params: Mapping[str, Any] | None = None) -> sqlite3.Cursor:
        return self._db.execute(sql, params or {})


class _DataVersion:
    """The watchers' source: SQLite's ``PRAGMA data_version`` on a connection of its own,
    which changes with every commit another connection (of any process) makes to the file.
    One page read from shared memory per look."""

    slice: float = _POLL  # a look is one poll: closing the store never waits longer

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db
        self._seen = self._version()

    def _version(self) -> int:
        version: int = self._db.execute("PRAGMA data_version").fetchone()[0]
        return version

    def listen(self, wanted: int) -> None:
        """Nothing to choose: every commit is seen."""

    def next(self, timeout: float) -> int:
        deadline = time.monotonic() + timeout
        while True:
            version = self._version()
            if version != self._seen:
                self._seen = version
                return CHANGED | READY  # SQLite cannot tell what a commit changed
            left = deadline - time.monotonic()
            if left <= 0:
                return 0
            time.sleep(min(_POLL, left))

    def close(self) -> None:
        self._db.close()


_UNAVAILABLE: Final = ("locked", "busy", "disk i/o", "unable to open", "readonly database")


class _Dialect:
    owns_database: bool = True
    lock: str = ""  # BEGIN IMMEDIATE holds the file's write lock for the whole transaction
    skip_locked: str = ""
    clock_sql: str | None = None
    returning: bool = False
    migrations: Sequence[Migration] = _MIGRATIONS

    def __init__(self, path: str, timeout: float, read_only: bool) -> None:
        self.where = path
        self._path = path
        self._timeout = timeout
        self._read_only = read_only
        self._lock = threading.Lock()
        self._db = self._connect()
        self._prepared = False

    def _connect(self) -> sqlite3.Connection:
        if self._read_only:
            uri = "file:" + urllib.parse.quote(os.path.abspath(self._path)) + "?mode=ro"
            db = sqlite3.connect(
                uri, uri=True, timeout=self._timeout, isolation_level=None, check_same_thread=False
            )
        else:
            db = sqlite3.connect(
                self._path, timeout=self._timeout, isolation_level=None, check_same_thread=False
            )
        db.execute(f"PRAGMA busy_timeout = {int(self._timeout * 1000)}")
        return db

    def prepare_writes(self) -> None:
        """WAL (readers never wait for a writer) and its usual sync level, once the file is
        known to be a store (or empty): another program's database is never switched."""
        if self._prepared:
            return
        with self._lock:
            self._db.execute("PRAGMA journal_mode = WAL")
            self._db.execute("PRAGMA synchronous = NORMAL")
        self._prepared = True

    @contextlib.contextmanager
    def transaction(self, *, write: bool, schema: bool = False) -> Iterator[Tx]:
        with self._lock:
            try:
                self._db.execute("BEGIN IMMEDIATE" if write else "BEGIN")
                try:
                    yield _Tx(self._db)
                except BaseException:
                    self._db.execute("ROLLBACK")
                    raise
                self._db.execute("COMMIT")
            except sqlite3.OperationalError as err:
                text = str(err)
                if any(word in text.lower() for word in _UNAVAILABLE):
                    raise StoreUnavailableError(f"{self.where}: {text}") from None
                raise

    def table_names(self, tx: Tx) -> set[str]:
        return {
            str(row[0]) for row in tx.run("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
        }

    def columns(self, tx: Tx, table: str) -> set[str]:
        return {
            str(row[0]) for row in tx.run("SELECT name FROM pragma_table_info(:t)", {"t": table}).fetchall()
        }

    def notify(self, tx: Tx, key: str, *, ready: bool = False) -> None:
        """Nothing to send: every commit changes the file's ``data_version``."""

    def change_source(self) -> _DataVersion:
        return _DataVersion(self._connect())

    def close(self) -> None:
        with self._lock:
            self._db.close()


class SqliteStore(StoreEngine):
    """Parked calls and their answers in one SQLite file, shared by any number of processes.

    ```python
    store = SqliteStore("pending.db")
    key = store.put(pending)
    store.record(key, Answer(request.id, True, {"environment": "production"}))
    outcomes = await durable.resume_ready(client, store)
    ```

    The file is in WAL mode with a busy timeout: readers never wait for a writer, writers
    wait their turn, each change is one transaction, so nothing is lost or duplicated when
    processes write at once, and a process killed mid-write leaves a file that opens, without
    its change. A claim is one ``BEGIN IMMEDIATE`` transaction, so of any number of processes
    one gets each ready call. Commits are synced the way WAL's ``synchronous=NORMAL`` does
    it: safe from a process crash; the last commits may be lost to a power cut. A new file
    (and its ``-wal`` and ``-shm``) is made readable by its owner only (mode 0600); an
    existing one that others may read is named in a warning. The format is versioned (the
    store says its own, checked on every open): an older store is upgraded in place when
    first opened for writing, a newer one refused. One instance may be used from several threads. Close it
    with [`close`][toolnexus.durable.SqliteStore.close], or use it as a context manager.

    Args:
        path: the file.
        timeout: seconds a write waits for another process's write before it fails
            (``StoreUnavailableError``).
        create: make the file (and its tables) when absent; otherwise ``FileNotFoundError``.
        read_only: open the file read-only: nothing is written to it, not even the WAL
            switch; every method that writes raises ``StoreError``.
        retention: seconds a finished call (``done``, ``failed``, ``expired``) is kept
            before ``sweep`` purges it; ``None`` keeps them for ever.
        on_event: the notification hook: called with an [`Event`][toolnexus.durable.Event]
            after each change of a call's status made through this store object.
        clock: the store's clock (seconds since the epoch; ``time.time`` by default): tests
            give one they move, so that deadlines, leases and retention pass without sleeping.

    Raises:
        StoreError: the file is a store of a newer format, an SQLite database that is not a
            toolnexus store, or one whose ``toolnexus_`` tables are not a store's (it is left
            as it was).
        FileNotFoundError: ``create=False`` (or ``read_only``) and there is no such file.
        sqlite3.DatabaseError: the file is not an SQLite database.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        timeout: float = 30.0,
        create: bool = True,
        read_only: bool = False,
        retention: float | None = DEFAULT_RETENTION,
        on_event: EventHook | None = None,
        clock: Clock | None = None,
    ) -> None:
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"SqliteStore: path must be a str or a path, not {type(path).__name__}")
        seconds = check_seconds(timeout, caller="SqliteStore", name="timeout", none=False, most=86400)
        assert seconds is not None
        self.path = os.fspath(path)
        exists = os.path.exists(self.path)
        if not exists and (read_only or not create):
            raise FileNotFoundError(f"{self.path}: no such store")
        if not exists:
            # Made by us, owner-only, before SQLite opens it: its -wal and -shm take the
            # same mode.
            with contextlib.suppress(FileExistsError):
                os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        dialect = _Dialect(self.path, seconds, bool(read_only))
        super().__init__(
            dialect, create=create, read_only=read_only, retention=retention, on_event=on_event, clock=clock
        )
        if exists:  # a store, not another program's file: say when others may read it
            _warn_if_readable_by_others(self.path)


def _warn_if_readable_by_others(path: str) -> None:
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return
    if stat.S_ISREG(mode) and mode & 0o077:
        logger.warning(
            "the store %s may be read by other users (mode %s); its answers may hold secrets: chmod 600 it",
            path,
            oct(stat.S_IMODE(mode)),
        )
