"""Where parked calls wait: the lifecycle every store shares, the [`Store`][toolnexus.durable.Store]
interface, and its embedded default, [`SqliteStore`][toolnexus.durable.SqliteStore], on the
standard library's ``sqlite3``.

The lifecycle (the same in [`PostgresStore`][toolnexus.durable.PostgresStore]):

- ``waiting``: a question is unanswered. ``record`` adds answers; the last one makes it
- ``ready``: every question answered. ``claim`` takes it, atomically, for one resumer:
- ``resuming``: claimed under a lease (a token and a deadline). The resumer renews the lease
  while it works and ends the claim with one of ``finish`` (``done``, the result kept as
  JSON), ``finish_parked`` (``done``, pointing at the new call the server's next question
  parked, which records the key it follows), ``fail`` (``failed``, the error kept; or back
  to ``ready`` for a retry) or ``release`` (back to ``ready``: nothing was sent). A lease
  that runs out makes the call claimable again.
- ``done``, ``failed``, ``expired`` (a question's ``expiresAt`` passed while it waited, or the
  host's ``expire``): finished; kept for the store's retention, then purged by ``sweep``.

Everything read from a store is treated as hostile: a row that does not read is reported
as ``failed`` with the reason, and every other call keeps working.
"""

from __future__ import annotations

import builtins
import contextlib
import datetime as _dt
import json
import logging
import math
import os
import secrets
import sqlite3
import stat
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal, Protocol, TypeAlias

from ._answering import as_answer, result_for
from ._errors import ToolnexusError
from ._pending import Pending
from ._util import utc_timestamp
from ._wire import Answer

__all__ = [
    "ANY_SERVER",
    "DEFAULT_RETENTION",
    "FINISHED",
    "STATUSES",
    "STORE_FORMAT",
    "Call",
    "Claim",
    "Event",
    "EventHook",
    "LeaseLostError",
    "SqliteStore",
    "Status",
    "Store",
    "StoreError",
    "StoreUnavailableError",
    "call_of",
    "check_answer",
    "check_deadline",
    "check_key",
    "check_lease",
    "check_limit",
    "check_retention",
    "check_server",
    "decode_answer",
    "decode_json_object",
    "decode_pending",
    "dumps",
    "earliest_expiry",
    "encode_pending",
    "fire",
    "new_key",
    "outcome_json",
    "page_query",
    "page_rows",
]

logger = logging.getLogger(__name__)

STORE_FORMAT: Final = 2
"""The version of the stores' schema. A store of a newer version is refused when opened; a
[`SqliteStore`][toolnexus.durable.SqliteStore] file of version 1 (no lifecycle) is upgraded
in place the first time it is opened for writing."""

Status: TypeAlias = Literal["waiting", "ready", "resuming", "done", "failed", "expired"]
STATUSES: Final[tuple[Status, ...]] = ("waiting", "ready", "resuming", "done", "failed", "expired")
"""Every status a parked call goes through, in lifecycle order."""
FINISHED: Final[tuple[Status, ...]] = ("done", "failed", "expired")
"""The statuses a call ends in: kept for the store's retention, then purged."""

DEFAULT_RETENTION: Final = 7 * 24 * 3600.0
"""Seconds a finished call is kept by default (a week)."""


class _AnyServer:
    def __repr__(self) -> str:
        return "ANY_SERVER"


ANY_SERVER: Final = _AnyServer()
"""For ``claim(server=...)``: calls parked from any server (the default)."""


class StoreError(ToolnexusError, ValueError):
    """A store cannot be used as asked: its schema is newer than this toolnexus, it is not a
    toolnexus store, or it was opened read-only. (A ``ValueError``, as a store of another
    format always was.)"""


class StoreUnavailableError(ToolnexusError, ConnectionError):
    """The store's database cannot be reached (PostgreSQL down, restarting, refusing)."""


class LeaseLostError(ToolnexusError, RuntimeError):
    """A resumer's claim is no longer its own: its lease ran out and the call was claimed
    again (or finished, or removed) since."""


@dataclass(frozen=True, slots=True)
class Call:
    """One parked call as a store holds it: its status and what came of it."""

    key: str
    """The key it is kept under."""
    status: Status
    """Where it is in the lifecycle; ``failed`` also for a record that does not read."""
    pending: Pending | None
    """The parked call; ``None`` when its record does not read (``error`` says why)."""
    server: str | None
    """The name of the server it was parked from, as recorded."""
    created: str
    """When it was parked (RFC 3339 UTC)."""
    updated: float
    """When its status last changed (seconds since the epoch)."""
    answered: frozenset[str]
    """The ids of its answered questions."""
    attempts: int = 0
    """How often it has been claimed."""
    lease_until: float | None = None
    """While ``resuming``: when the resumer's lease runs out (seconds since the epoch)."""
    error: str | None = None
    """Why it ``failed`` (or ``expired``), or why its record does not read."""
    result: dict[str, Any] | None = None
    """When ``done``: the server's result, as JSON (``model_dump(mode="json", by_alias=True)``)."""
    follows: str | None = None
    """The key of the call this one continues (the server asked again about it)."""
    next: str | None = None
    """When ``done`` because the server asked again: the key of the new parked call."""


@dataclass(frozen=True, slots=True)
class Claim:
    """A ready call claimed by one resumer: what it needs to resume and to report the outcome."""

    key: str
    pending: Pending
    answers: dict[str, Answer]
    token: str
    """The claim's lease token: ``finish``, ``fail``, ``release`` and ``renew`` need it."""
    attempt: int
    """1 for the first claim of this call, 2 for the next (a retry, or a dead resumer's lease taken over)."""
    lease_until: float


EventKind: TypeAlias = Literal["parked", "ready", "finished"]


@dataclass(frozen=True, slots=True)
class Event:
    """What a notification hook is told: a call parked, became ready, or finished."""

    kind: EventKind
    key: str
    status: Status
    server: str | None
    target: str | None
    """The tool's or prompt's name, or the resource's URI, when known."""
    error: str | None = None


EventHook: TypeAlias = Callable[[Event], None]


def fire(hook: EventHook | None, event: Event) -> None:
    """Call a notification hook; its failure is logged, never raised into the store's caller."""
    if hook is None:
        return
    try:
        hook(event)
    except Exception:  # a host's hook must not break the store or a worker
        logger.exception("the store's notification hook failed on %s %s", event.kind, event.key)


class Store(Protocol):
    """What a store of parked calls does; [`SqliteStore`][toolnexus.durable.SqliteStore] and
    [`PostgresStore`][toolnexus.durable.PostgresStore] are the two toolnexus ships, with one
    behaviour, checked by one contract test suite."""

    on_event: EventHook | None

    def put(self, pending: Pending, *, follows: str | None = None, deadline: float | None = None) -> str:
        """Keep ``pending`` (``waiting``); return the new key it is kept under."""

    def get(self, key: str) -> Pending:
        """The pending kept under ``key``; ``KeyError`` when there is none."""

    def list(self) -> builtins.list[tuple[str, Pending]]:
        """Every call whose record reads, with its key, oldest first."""

    def calls(self, *, status: Status | None = None) -> builtins.list[Call]:
        """Every call (or those of one status), oldest first; a record that does not read is
        a ``failed`` call whose ``error`` says why."""

    def call(self, key: str) -> Call:
        """The call kept under ``key``; ``KeyError`` when there is none."""

    def record(self, key: str, answer: Answer | Mapping[str, Any]) -> None:
        """Keep ``answer``; the last one makes the call ``ready``. ``ValueError`` for a second
        answer (exactly one of two racing answers is kept), an unknown id, content that
        does not fit, or a call no longer waiting."""

    def answers(self, key: str) -> dict[str, Answer]:
        """The answers recorded for ``key``: request id to ``Answer``."""

    def remove(self, key: str) -> None:
        """Forget the call under ``key`` and its answers; ``KeyError`` when there is none."""

    def claim(
        self, *, lease: float, server: object = ANY_SERVER, limit: int = 1, key: str | None = None
    ) -> builtins.list[Claim]:
        """Claim up to ``limit`` ready calls (or ones whose lease ran out) for ``lease`` seconds;
        with ``key``, that one call only (an empty list when it is not claimable)."""

    def renew(self, key: str, token: str, lease: float) -> float:
        """Extend a claim's lease; ``LeaseLostError`` when it is no longer this claim's."""

    def finish(self, key: str, token: str, result: Mapping[str, Any]) -> None:
        """End a claim: ``done``, with the server's result (JSON)."""

    def finish_parked(self, key: str, token: str, pending: Pending) -> str:
        """End a claim: ``done``, the server asked again; park ``pending`` and return its key."""

    def fail(self, key: str, token: str, error: str, *, retry: bool = False) -> None:
        """End a claim: ``failed`` with ``error`` (``ready`` again with ``retry``)."""

    def release(self, key: str, token: str) -> None:
        """End a claim without an outcome: ``ready`` again."""

    def retry(self, key: str) -> None:
        """Put a ``failed`` call back to ``ready`` (a person decided to try it again)."""

    def expire(self, key: str, reason: str = "the host's deadline passed") -> None:
        """Mark a call that is not finished or being resumed ``expired``."""

    def sweep(self) -> int:
        """Expire waiting calls whose deadline passed; purge finished calls past the
        retention. The number of calls expired."""

    def wait(self, timeout: float) -> bool:
        """Block until the store may hold something new, or ``timeout`` seconds."""

    def close(self) -> None:
        """Release the store's connections."""


# --- shared pieces (both stores) ------------------------------------------------------------


def check_lease(lease: object, name: str = "lease") -> float:
    """A lease in seconds: a positive, finite number, at most a day."""
    if isinstance(lease, bool) or not isinstance(lease, (int, float)):
        raise TypeError(f"{name} must be a number of seconds, not {type(lease).__name__}")
    if not (0 < lease <= 86400 and math.isfinite(lease)):
        raise ValueError(f"{name} must be more than 0 and at most 86400 seconds, not {lease!r}")
    return float(lease)


def check_retention(retention: object) -> float | None:
    if retention is None:
        return None
    if isinstance(retention, bool) or not isinstance(retention, (int, float)):
        raise TypeError(f"retention must be a number of seconds or None, not {type(retention).__name__}")
    if not (retention >= 0 and math.isfinite(retention)):
        raise ValueError(f"retention must be a finite number of seconds, 0 or more, not {retention!r}")
    return float(retention)


ClaimOnce = Callable[[float, object, int, "str | None"], "tuple[int, list[Claim]]"]
"""One claiming statement of a store: (lease, server, limit, key) to (rows taken, claims read)."""


def claim_until(
    claim_once: ClaimOnce, *, lease: object, server: object, limit: object, key: object
) -> list[Claim]:
    """A store's ``claim``: the arguments checked, then ``claim_once`` until ``limit`` claims
    are read or none is left to take (a taken row whose record does not read is marked
    ``failed`` and not returned, so one statement may read fewer claims than it took)."""
    checked_lease = check_lease(lease)
    checked_limit = check_limit(limit)
    check_server(server)
    checked_key: str | None = None
    if key is not None:
        checked_key, checked_limit = check_key(key), 1
    out: list[Claim] = []
    while len(out) < checked_limit:
        taken, claims = claim_once(checked_lease, server, checked_limit - len(out), checked_key)
        out.extend(claims)
        if not taken:
            break
    return out


def new_key() -> str:
    """A fresh key: 16 random hex digits."""
    return secrets.token_hex(8)


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def encode_pending(pending: Pending) -> str:
    """``pending`` as the JSON text a store keeps (a ``Pending`` is JSON by construction)."""
    if not isinstance(pending, Pending):
        raise TypeError(f"pending must be a Pending, not {type(pending).__name__}")
    return dumps(pending.to_dict())


def outcome_json(result: Mapping[str, Any]) -> str:
    """A result mapping as the JSON a store keeps; ``ValueError`` when it is not JSON."""
    try:
        return dumps(dict(result))
    except (TypeError, ValueError) as err:
        raise ValueError(f"the result is not JSON: {err}") from None


def decode_json_object(text: object, what: str) -> dict[str, Any]:
    """A JSON object read from a store row, or ``ValueError`` saying what is wrong (never the text)."""
    if not isinstance(text, str):
        raise ValueError(f"{what} is not text")
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise ValueError(f"{what} is not JSON ({err.msg} at {err.pos})") from None
    except RecursionError:
        raise ValueError(f"{what} is nested too deep to read") from None
    if not isinstance(value, dict):
        raise ValueError(f"{what} is a JSON {type(value).__name__}, not an object")
    return value


def decode_pending(key: str, text: object) -> Pending:
    """The pending of a store row; ``ValueError`` naming the key and the reason."""
    try:
        return Pending.from_dict(decode_json_object(text, "the record"))
    except (TypeError, ValueError) as err:
        raise ValueError(f"the pending under {key}: {err}") from None


def decode_answer(key: str, request_id: str, text: object) -> Answer:
    """An answer of a store row; ``ValueError`` naming the key, the request and the reason."""
    try:
        return Answer.from_dict(decode_json_object(text, "the record"))
    except (TypeError, ValueError) as err:
        raise ValueError(f"the answer to {str(request_id)[:80]!r} of {key}: {str(err)[:200]}") from None


def earliest_expiry(pending: Pending, deadline: float | None = None) -> float | None:
    """The earliest ``expiresAt`` of ``pending``'s requests (or the host's ``deadline``, in
    seconds from now, when earlier), as seconds since the epoch; ``None`` for no deadline.
    An ``expiresAt`` that does not read sets none."""
    moments = [time.time() + deadline] if deadline is not None else []
    for request in pending.requests:
        if request.expiresAt is None:
            continue
        text = request.expiresAt
        text = text[:-1] + "+00:00" if text.endswith(("Z", "z")) else text
        try:
            moment = _dt.datetime.fromisoformat(text)
        except ValueError:
            continue
        if moment.tzinfo is not None:
            moments.append(moment.timestamp())
    return min(moments) if moments else None


def check_key(key: object) -> str:
    if not isinstance(key, str):
        raise TypeError(f"key must be a str, not {type(key).__name__}")
    return key


def check_answer(pending: Pending, key: str, answer: Answer | Mapping[str, Any], caller: str) -> Answer:
    """``answer`` as an ``Answer`` that fits a request of ``pending`` (defaults laid in, content
    validated, as ``resume`` will); ``ValueError`` naming the fields otherwise."""
    answer = as_answer(answer, f"{caller}: answer")
    request = next((r for r in pending.requests if r.id == answer.id), None)
    if request is None:
        held = ", ".join(r.id for r in pending.requests)
        raise ValueError(f"{caller}: {key} holds no request {answer.id[:80]!r} (it holds {held})")
    result_for(request, answer)  # raises ValueError naming the fields
    return answer


def check_deadline(deadline: object) -> float | None:
    if deadline is None:
        return None
    if isinstance(deadline, bool) or not isinstance(deadline, (int, float)):
        raise TypeError(f"deadline must be a number of seconds or None, not {type(deadline).__name__}")
    if not (deadline > 0 and math.isfinite(deadline)):
        raise ValueError(f"deadline must be a positive, finite number of seconds, not {deadline!r}")
    return float(deadline)


# --- SQLite ------------------------------------------------------------------------------------

_SCHEMA_V1: Final = (
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
)
_UPGRADE_V2: Final = (
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
)
_CALL_COLUMNS: Final = (
    "key, status, pending, server, created, updated, attempts, lease_until, error, outcome, follows, next"
)


class SqliteStore:
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
    existing one that others may read is named in a warning. The format is versioned
    ([`STORE_FORMAT`][toolnexus.durable.STORE_FORMAT]). One instance may be used from several
    threads. Close it with [`close`][toolnexus.durable.SqliteStore.close], or use it as a
    context manager.

    Args:
        path: the file.
        timeout: seconds a write waits for another process's write before it fails.
        create: make the file (and its tables) when absent; otherwise ``FileNotFoundError``.
        read_only: open the file read-only: nothing is written to it, not even the WAL
            switch; every method that writes raises ``StoreError``.
        retention: seconds a finished call (``done``, ``failed``, ``expired``) is kept
            before ``sweep`` purges it; ``None`` keeps them for ever.
        on_event: the notification hook: called with an [`Event`][toolnexus.durable.Event]
            after a call is parked, becomes ready or finishes through this store object.

    Raises:
        StoreError: the file is a store of a newer format, or an SQLite database that is
            not a toolnexus store (it is left as it was).
        FileNotFoundError: ``create=False`` and there is no such file.
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
    ) -> None:
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"SqliteStore: path must be a str or a path, not {type(path).__name__}")
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
            raise ValueError(f"SqliteStore: timeout must be a positive number of seconds, not {timeout!r}")
        self.path = os.fspath(path)
        self.read_only = bool(read_only)
        self.retention = check_retention(retention)
        self.on_event = on_event
        self._timeout = float(timeout)
        self._lock = threading.Lock()
        self._waiter: sqlite3.Connection | None = None
        self._wait_lock = threading.Lock()
        self._seen_version: int | None = None
        exists = os.path.exists(self.path)
        if not exists and (read_only or not create):
            raise FileNotFoundError(f"{self.path}: no such store")
        if not exists:
            # Made by us, owner-only, before SQLite opens it: its -wal and -shm take the
            # same mode.
            with contextlib.suppress(FileExistsError):
                os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        else:
            _warn_if_readable_by_others(self.path)
        self._db = self._connect()
        try:
            self._open_schema()
        except BaseException:
            self._db.close()
            raise

    def _connect(self) -> sqlite3.Connection:
        if self.read_only:
            uri = "file:" + urllib.parse.quote(os.path.abspath(self.path)) + "?mode=ro"
            db = sqlite3.connect(
                uri, uri=True, timeout=self._timeout, isolation_level=None, check_same_thread=False
            )
        else:
            db = sqlite3.connect(
                self.path, timeout=self._timeout, isolation_level=None, check_same_thread=False
            )
        db.execute(f"PRAGMA busy_timeout = {int(self._timeout * 1000)}")
        return db

    def _open_schema(self) -> None:
        db = self._db
        tables = {
            row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
        }
        if "toolnexus_store" not in tables:
            if tables:  # another program's database: refused, untouched
                raise StoreError(f"{self.path} is an SQLite database but not a toolnexus store")
            if self.read_only:
                raise StoreError(f"{self.path} is not a toolnexus store (it is empty)")
        if not self.read_only:
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = NORMAL")
            with self._write():
                tables = {
                    row[0]
                    for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
                }
                if "toolnexus_store" not in tables:
                    for statement in _SCHEMA_V1:
                        db.execute(statement)
                    db.execute("INSERT INTO toolnexus_store (name, value) VALUES ('format', '1')")
                version = self._format()
                if version == 1:
                    self._upgrade_from_1()
                    version = STORE_FORMAT
        else:
            version = self._format()
        if version != STORE_FORMAT:
            raise StoreError(
                f"{self.path} is a store of format {version}; this toolnexus reads format {STORE_FORMAT}"
                + (" (open it once for writing to upgrade it)" if version < STORE_FORMAT else "")
            )

    def _format(self) -> int:
        row = self._db.execute("SELECT value FROM toolnexus_store WHERE name = 'format'").fetchone()
        text = row[0] if row is not None else None
        if not isinstance(text, str) or not text.isdigit() or len(text) > 6:
            raise StoreError(f"{self.path}: the store's format is unreadable: {str(text)[:40]!r}")
        return int(text)

    def _upgrade_from_1(self) -> None:
        """Format 1 kept no lifecycle: add it, each call ``waiting`` or ``ready`` by its answers."""
        db = self._db
        for statement in _UPGRADE_V2:
            db.execute(statement)
        rows = db.execute("SELECT key, pending FROM toolnexus_pending").fetchall()
        now = time.time()
        for key, text in rows:
            try:
                pending = decode_pending(key, text)
            except ValueError as err:
                db.execute(
                    "UPDATE toolnexus_pending SET status = 'failed', error = ?, updated = ? WHERE key = ?",
                    (str(err), now, key),
                )
                continue
            answered = db.execute("SELECT COUNT(*) FROM toolnexus_answer WHERE key = ?", (key,)).fetchone()[0]
            asked = len(pending.requests)
            db.execute(
                "UPDATE toolnexus_pending SET status = ?, server = ?, asked = ?, expires = ?, updated = ?"
                " WHERE key = ?",
                (
                    "ready" if answered >= asked else "waiting",
                    pending.server,
                    asked,
                    earliest_expiry(pending),
                    now,
                    key,
                ),
            )
        db.execute("UPDATE toolnexus_store SET value = ? WHERE name = 'format'", (str(STORE_FORMAT),))

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
        with self._wait_lock:
            if self._waiter is not None:
                self._waiter.close()
                self._waiter = None

    @contextlib.contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction, taken at once (``BEGIN IMMEDIATE``) so it never has to be
        upgraded from a read while another process writes."""
        if self.read_only:
            raise StoreError(f"{self.path} was opened read-only")
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

    # --- parking and answering -------------------------------------------------------------

    def put(self, pending: Pending, *, follows: str | None = None, deadline: float | None = None) -> str:
        """Keep ``pending``, ``waiting``; return its key, a fresh random string of 16 hex digits.

        Args:
            pending: the parked call.
            follows: the key of the call it continues (the server asked again about it).
            deadline: the host's own deadline, in seconds from now: the call ``expired`` if
                it still waits then (as when a question's ``expiresAt`` passes).
        """
        text = encode_pending(pending)
        if follows is not None:
            check_key(follows)
        expires = earliest_expiry(pending, check_deadline(deadline))
        while True:
            key = new_key()
            try:
                with self._write() as db:
                    self._insert(db, key, pending, text, expires, follows)
            except sqlite3.IntegrityError:  # that key is taken (one in 2**64): draw another
                continue
            fire(self.on_event, Event("parked", key, "waiting", pending.server, pending.target))
            return key

    @staticmethod
    def _insert(
        db: sqlite3.Connection,
        key: str,
        pending: Pending,
        text: str,
        expires: float | None,
        follows: str | None,
    ) -> None:
        db.execute(
            "INSERT INTO toolnexus_pending (key, created, pending, status, server, asked, expires,"
            " updated, follows) VALUES (?, ?, ?, 'waiting', ?, ?, ?, ?, ?)",
            (
                key,
                utc_timestamp(),
                text,
                pending.server,
                len(pending.requests),
                expires,
                time.time(),
                follows,
            ),
        )

    def get(self, key: str) -> Pending:
        """The pending kept under ``key``.

        Raises:
            KeyError: nothing is kept under ``key``.
            ValueError: what is kept there is not a pending this toolnexus reads.
        """
        rows = self._read("SELECT pending FROM toolnexus_pending WHERE key = ?", (check_key(key),))
        if not rows:
            raise KeyError(key)
        return decode_pending(key, rows[0][0])

    def list(self) -> builtins.list[tuple[str, Pending]]:
        """Every call whose record reads, with its key, oldest first, whatever its status
        (see [`calls`][toolnexus.durable.SqliteStore.calls] for the statuses and the records
        that do not read)."""
        return [(call.key, call.pending) for call in self.calls() if call.pending is not None]

    def calls(self, *, status: Status | None = None) -> builtins.list[Call]:
        """Every call (or those of one ``status``), oldest first. A record that does not read
        is reported as a ``failed`` call whose ``error`` says why, and its ``pending`` is
        ``None``; the others are unaffected."""
        if status is not None and status not in STATUSES:
            raise ValueError(f"status must be one of {', '.join(STATUSES)}, not {str(status)[:40]!r}")
        where, params = ("WHERE status = ?", (status,)) if status is not None else ("", ())
        with self._lock:
            rows = self._db.execute(
                f"SELECT {_CALL_COLUMNS} FROM toolnexus_pending {where} ORDER BY seq", params
            ).fetchall()
            answered = self._db.execute("SELECT key, request_id FROM toolnexus_answer").fetchall()
        ids: dict[str, set[str]] = {}
        for key, request_id in answered:
            ids.setdefault(key, set()).add(request_id)
        calls = [call_of(row, ids.get(row[0], set())) for row in rows]
        if status is not None:  # a record that does not read reports failed
            calls = [call for call in calls if call.status == status]
        return calls

    def call(self, key: str) -> Call:
        """The call kept under ``key``, with its status and outcome; ``KeyError`` when none."""
        key = check_key(key)
        with self._lock:
            row = self._db.execute(
                f"SELECT {_CALL_COLUMNS} FROM toolnexus_pending WHERE key = ?", (key,)
            ).fetchone()
            answered = self._db.execute(
                "SELECT request_id FROM toolnexus_answer WHERE key = ?", (key,)
            ).fetchall()
        if row is None:
            raise KeyError(key)
        return call_of(row, {request_id for (request_id,) in answered})

    def record(self, key: str, answer: Answer | Mapping[str, Any]) -> None:
        """Keep ``answer`` for the request of the call under ``key`` whose id is ``answer.id``;
        when it is the last one missing, the call becomes ``ready``.

        The answer is checked as [`resume`][toolnexus.durable.resume] checks it (defaults laid
        in, content validated against the form), so a mistake surfaces while the human is
        still there. The form is read before the write lock is taken, so a slow form never
        holds up another writer. Of two answers to one request recorded at once, from any
        processes, exactly one is kept: the other gets ``ValueError``.

        Raises:
            KeyError: nothing is kept under ``key``.
            ValueError: the call holds no request with that id, the request is already
                answered, the call no longer waits (``ready``, ``resuming`` or finished),
                or the content does not fit the form (the message names the fields).
        """
        key = check_key(key)
        answer = check_answer(self.get(key), key, answer, "SqliteStore.record")
        text = dumps(answer.to_dict())
        with self._write() as db:
            row = db.execute(
                "SELECT status, asked, server, pending FROM toolnexus_pending WHERE key = ?", (key,)
            ).fetchone()
            if row is None:
                raise KeyError(key)
            status, asked, server, _ = row
            try:
                db.execute(
                    "INSERT INTO toolnexus_answer (key, request_id, answer) VALUES (?, ?, ?)",
                    (key, answer.id, text),
                )
            except sqlite3.IntegrityError:
                raise ValueError(f"SqliteStore.record: {answer.id} of {key} is already answered") from None
            if status != "waiting":
                raise ValueError(f"SqliteStore.record: {key} is {status}, no longer waiting for answers")
            count = db.execute("SELECT COUNT(*) FROM toolnexus_answer WHERE key = ?", (key,)).fetchone()[0]
            ready = count >= asked
            if ready:
                db.execute(
                    "UPDATE toolnexus_pending SET status = 'ready', updated = ? WHERE key = ?",
                    (time.time(), key),
                )
        if ready:
            fire(self.on_event, Event("ready", key, "ready", server, None))

    def answers(self, key: str) -> dict[str, Answer]:
        """The answers recorded for the call under ``key``, request id to ``Answer``;
        ``KeyError`` when nothing is kept under ``key``, ``ValueError`` when one does not read."""
        key = check_key(key)
        with self._lock:
            known = self._db.execute("SELECT 1 FROM toolnexus_pending WHERE key = ?", (key,)).fetchone()
            rows = self._db.execute(
                "SELECT request_id, answer FROM toolnexus_answer WHERE key = ?", (key,)
            ).fetchall()
        if known is None:
            raise KeyError(key)
        return {str(request_id): decode_answer(key, request_id, text) for request_id, text in rows}

    def remove(self, key: str) -> None:
        """Forget the call under ``key`` and its answers; ``KeyError`` when there is none."""
        key = check_key(key)
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
        (Statuses: [`call`][toolnexus.durable.SqliteStore.call].)
        """
        sql, params = page_query(limit, before, server, "?")
        rows = self._read("SELECT seq, key, created, pending FROM toolnexus_pending" + sql, params)
        return page_rows(rows, limit)

    def page_calls(
        self, *, limit: int = 50, before: str | None = None, server: str | None = None
    ) -> tuple[builtins.list[Call], str | None]:
        """One page of calls with their statuses, newest first: ``(calls, cursor)``.

        The page of [`page`][toolnexus.durable.SqliteStore.page] (the same order, cursor and
        ``server`` filter), each row the [`Call`][toolnexus.durable.Call] that
        [`call`][toolnexus.durable.SqliteStore.call] gives for its key, read in two queries
        however long the page: a list that shows statuses (the inbox's) needs no read per
        call. A record that does not read is a ``failed`` call whose ``error`` says why.
        """
        sql, params = page_query(limit, before, server, "?")
        with self._lock:
            rows = self._db.execute(
                f"SELECT seq, {_CALL_COLUMNS} FROM toolnexus_pending" + sql, params
            ).fetchall()
            # The same page's keys as a subquery, not a list of parameters: an older SQLite
            # takes at most 999 of them, and a page may hold 1,000 calls.
            answered = self._db.execute(
                "SELECT key, request_id FROM toolnexus_answer"
                " WHERE key IN (SELECT key FROM toolnexus_pending" + sql + ")",
                params,
            ).fetchall()
        return page_calls_of(rows, answered, limit)

    # --- claiming and finishing ------------------------------------------------------------

    def claim(
        self, *, lease: float, server: object = ANY_SERVER, limit: int = 1, key: str | None = None
    ) -> builtins.list[Claim]:
        """Claim up to ``limit`` calls that are ``ready`` (or ``resuming`` under a lease that
        ran out), oldest first, for ``lease`` seconds: each becomes ``resuming`` under a new
        token, in one transaction, so no other process gets it.

        Args:
            lease: seconds the claim holds unless renewed.
            server: only calls parked from the server of this name (``None``: from an
                unnamed server); by default calls from any server.
            limit: at most this many.
            key: claim this one call only: the list holds its claim, or is empty when the
                call is not claimable (not ready, resumed elsewhere, finished, or unknown;
                [`call`][toolnexus.durable.SqliteStore.call] says which). Of any number of
                claimers of one key, one gets it.

        A claimed call whose record or answers do not read is marked ``failed`` with the
        reason and not returned.
        """
        return claim_until(self._claim_once, lease=lease, server=server, limit=limit, key=key)

    def _claim_once(
        self, lease: float, server: object, limit: int, key: str | None = None
    ) -> tuple[int, builtins.list[Claim]]:
        token = secrets.token_hex(12)
        now = time.time()
        until = now + lease
        where = "(status = 'ready' OR (status = 'resuming' AND lease_until < ?))"
        params: builtins.list[Any] = [now]
        if server is not ANY_SERVER:
            where += " AND server IS ?"
            params.append(server)
        if key is not None:
            where += " AND key = ?"
            params.append(key)
        with self._write() as db:
            rows = db.execute(
                f"SELECT key FROM toolnexus_pending WHERE {where} ORDER BY seq LIMIT ?", (*params, limit)
            ).fetchall()
            claimed = []
            for (key,) in rows:
                db.execute(
                    "UPDATE toolnexus_pending SET status = 'resuming', token = ?, lease_until = ?,"
                    " attempts = attempts + 1, updated = ? WHERE key = ?",
                    (token, until, now, key),
                )
                data = db.execute(
                    "SELECT pending, attempts FROM toolnexus_pending WHERE key = ?", (key,)
                ).fetchone()
                answer_rows = db.execute(
                    "SELECT request_id, answer FROM toolnexus_answer WHERE key = ?", (key,)
                ).fetchall()
                claimed.append((key, data[0], data[1], answer_rows))
        return len(claimed), self._decoded_claims(claimed, token, until)

    def _decoded_claims(
        self, claimed: builtins.list[tuple[str, Any, int, builtins.list[Any]]], token: str, until: float
    ) -> builtins.list[Claim]:
        """Read the claimed rows after the transaction (a slow record never holds the lock);
        one that does not read is marked ``failed`` with the reason."""
        out = []
        for key, text, attempts, answer_rows in claimed:
            try:
                pending = decode_pending(key, text)
                answers = {
                    str(request_id): decode_answer(key, request_id, answer)
                    for request_id, answer in answer_rows
                }
            except ValueError as err:
                logger.warning("%s does not read: marked failed", key)
                with contextlib.suppress(LeaseLostError):
                    self.fail(key, token, str(err))
                continue
            out.append(Claim(key, pending, answers, token, int(attempts), until))
        return out

    def _end(self, key: str, token: str, sql: str, params: tuple[Any, ...]) -> tuple[str | None, Any]:
        """Run ``sql`` (an UPDATE ending in ``WHERE key = ? AND token = ? AND status = 'resuming'``)
        for this claim; ``LeaseLostError`` when it no longer holds."""
        key = check_key(key)
        with self._write() as db:
            changed = db.execute(sql, (*params, key, token)).rowcount
            if not changed:
                raise LeaseLostError(f"the claim on {key} was lost: its lease ran out and it was taken since")
            row = db.execute("SELECT server, pending FROM toolnexus_pending WHERE key = ?", (key,)).fetchone()
        return row[0], row[1]

    def renew(self, key: str, token: str, lease: float) -> float:
        """Extend the claim's lease to ``lease`` seconds from now; returns the new deadline.

        Raises:
            LeaseLostError: the claim is no longer this token's.
        """
        until = time.time() + check_lease(lease)
        self._end(
            key,
            token,
            "UPDATE toolnexus_pending SET lease_until = ?"
            " WHERE key = ? AND token = ? AND status = 'resuming'",
            (until,),
        )
        return until

    def finish(self, key: str, token: str, result: Mapping[str, Any]) -> None:
        """End the claim: ``done``, with ``result`` (the server's, as JSON) kept.

        Raises:
            LeaseLostError: the claim is no longer this token's; nothing is changed.
        """
        text = outcome_json(result)
        server, _ = self._end(
            key,
            token,
            "UPDATE toolnexus_pending SET status = 'done', outcome = ?, error = NULL, token = NULL,"
            " lease_until = NULL, updated = ? WHERE key = ? AND token = ? AND status = 'resuming'",
            (text, time.time()),
        )
        fire(self.on_event, Event("finished", key, "done", server, None))

    def finish_parked(self, key: str, token: str, pending: Pending) -> str:
        """End the claim: ``done``, because the server asked again; ``pending`` (the new round)
        is parked under a new key, which ``follows`` this one, in the same transaction.

        Raises:
            LeaseLostError: the claim is no longer this token's; nothing is changed.
        """
        key = check_key(key)
        text = encode_pending(pending)
        expires = earliest_expiry(pending)
        while True:
            new = new_key()
            try:
                with self._write() as db:
                    self._insert(db, new, pending, text, expires, key)
                    changed = db.execute(
                        "UPDATE toolnexus_pending SET status = 'done', next = ?, outcome = NULL,"
                        " error = NULL,"
                        " token = NULL, lease_until = NULL, updated = ?"
                        " WHERE key = ? AND token = ? AND status = 'resuming'",
                        (new, time.time(), key, token),
                    ).rowcount
                    if not changed:
                        raise LeaseLostError(
                            f"the claim on {key} was lost: its lease ran out and it was taken since"
                        )
            except sqlite3.IntegrityError:
                continue
            break
        fire(self.on_event, Event("finished", key, "done", pending.server, pending.target))
        fire(self.on_event, Event("parked", new, "waiting", pending.server, pending.target))
        return new

    def fail(self, key: str, token: str, error: str, *, retry: bool = False) -> None:
        """End the claim: ``failed`` with ``error`` kept, or, with ``retry``, ``ready`` again
        (the error kept until the next outcome).

        Raises:
            LeaseLostError: the claim is no longer this token's; nothing is changed.
        """
        status: Status = "ready" if retry else "failed"
        server, _ = self._end(
            key,
            token,
            "UPDATE toolnexus_pending SET status = ?, error = ?, token = NULL, lease_until = NULL,"
            " updated = ?"
            " WHERE key = ? AND token = ? AND status = 'resuming'",
            (status, str(error), time.time()),
        )
        fire(
            self.on_event,
            Event("ready" if retry else "finished", key, status, server, None, str(error)),
        )

    def release(self, key: str, token: str) -> None:
        """End the claim without an outcome: ``ready`` again, for any resumer.

        Raises:
            LeaseLostError: the claim is no longer this token's; nothing is changed.
        """
        self._end(
            key,
            token,
            "UPDATE toolnexus_pending SET status = 'ready', token = NULL, lease_until = NULL, updated = ?"
            " WHERE key = ? AND token = ? AND status = 'resuming'",
            (time.time(),),
        )

    def retry(self, key: str) -> None:
        """Put a ``failed`` call back to ``ready``: a person decided to try it again.

        Raises:
            KeyError: nothing is kept under ``key``.
            ValueError: the call is not ``failed``, or its record does not read.
        """
        self.get(key)  # KeyError, or ValueError for a record that does not read
        with self._write() as db:
            changed = db.execute(
                "UPDATE toolnexus_pending SET status = 'ready', updated = ?"
                " WHERE key = ? AND status = 'failed'",
                (time.time(), key),
            ).rowcount
            if not changed:
                (status,) = db.execute(
                    "SELECT status FROM toolnexus_pending WHERE key = ?", (key,)
                ).fetchone()
                raise ValueError(f"{key} is {status}, not failed")

    def expire(self, key: str, reason: str = "the host's deadline passed") -> None:
        """Mark the call under ``key`` ``expired`` with ``reason``, unless it is being resumed
        or is finished (``ValueError``); ``KeyError`` when there is none."""
        key = check_key(key)
        with self._write() as db:
            row = db.execute("SELECT status, server FROM toolnexus_pending WHERE key = ?", (key,)).fetchone()
            if row is None:
                raise KeyError(key)
            if row[0] not in ("waiting", "ready"):
                raise ValueError(f"{key} is {row[0]}; only a waiting or ready call can expire")
            db.execute(
                "UPDATE toolnexus_pending SET status = 'expired', error = ?, updated = ? WHERE key = ?",
                (str(reason), time.time(), key),
            )
        fire(self.on_event, Event("finished", key, "expired", row[1], None, str(reason)))

    def sweep(self) -> int:
        """Mark ``expired`` every waiting call whose deadline passed (a question's
        ``expiresAt``, or the host's ``deadline``); purge finished calls older than the
        retention. Returns how many calls expired."""
        now = time.time()
        with self._write() as db:
            rows = db.execute(
                "SELECT key, server FROM toolnexus_pending WHERE status = 'waiting' AND expires < ?", (now,)
            ).fetchall()
            db.execute(
                "UPDATE toolnexus_pending SET status = 'expired', error = 'a question expired before it was"
                " answered', updated = ? WHERE status = 'waiting' AND expires < ?",
                (now, now),
            )
            if self.retention is not None:
                cutoff = now - self.retention
                db.execute(
                    "DELETE FROM toolnexus_answer WHERE key IN (SELECT key FROM toolnexus_pending"
                    " WHERE status IN ('done', 'failed', 'expired') AND updated < ?)",
                    (cutoff,),
                )
                db.execute(
                    "DELETE FROM toolnexus_pending"
                    " WHERE status IN ('done', 'failed', 'expired') AND updated < ?",
                    (cutoff,),
                )
        for key, server in rows:
            fire(self.on_event, Event("finished", key, "expired", server, None, "a question expired"))
        return len(rows)

    # --- waiting ---------------------------------------------------------------------------

    def wait(self, timeout: float) -> bool:
        """Block until another connection commits a change to the file (an answer recorded, a
        call parked or released, in any process), or ``timeout`` seconds pass; ``True`` when
        something changed. It checks SQLite's ``PRAGMA data_version`` (one page read from the
        shared memory) every 50 ms: cheap, and no busy poll of the tables."""
        deadline = time.monotonic() + max(0.0, float(timeout))
        with self._wait_lock:
            if self._waiter is None:
                self._waiter = self._connect()
                self._seen_version = self._waiter.execute("PRAGMA data_version").fetchone()[0]
            waiter = self._waiter
            while True:
                version = waiter.execute("PRAGMA data_version").fetchone()[0]
                if version != self._seen_version:
                    self._seen_version = version
                    return True
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                time.sleep(min(0.05, left))


def page_query(limit: object, before: object, server: object, mark: str) -> tuple[str, tuple[Any, ...]]:
    """The ``WHERE ... ORDER BY ... LIMIT`` of a page of calls, newest first, by keyset."""
    if isinstance(limit, bool) or not isinstance(limit, int) or not 0 < limit <= 1000:
        raise ValueError(f"page: limit must be an int from 1 to 1000, not {limit!r}")
    where: list[str] = []
    params: list[Any] = []
    if before is not None:
        if not isinstance(before, str) or not before.isdigit() or len(before) > 18:
            raise ValueError("page: before must be a cursor from an earlier page")
        where.append(f"seq < {mark}")
        params.append(int(before))
    if server is not None:
        where.append(f"server = {mark}")
        params.append(check_key(server))
    sql = (" WHERE " + " AND ".join(where)) if where else ""
    return sql + f" ORDER BY seq DESC LIMIT {mark}", (*params, limit + 1)


def page_rows(rows: list[Any], limit: int) -> tuple[list[tuple[str, str, Pending | ValueError]], str | None]:
    """A page's rows ``(seq, key, created, pending text)`` read, and the next page's cursor."""
    cursor = str(rows[limit - 1][0]) if len(rows) > limit else None
    out: list[tuple[str, str, Pending | ValueError]] = []
    for _, key, created, text in rows[:limit]:
        try:
            out.append((str(key), str(created), decode_pending(str(key), text)))
        except ValueError as err:
            out.append((str(key), str(created), err))
    return out, cursor


def page_calls_of(rows: list[Any], answered: list[Any], limit: int) -> tuple[list[Call], str | None]:
    """A page's rows ``(seq, *call columns)`` and the ``(key, request id)`` rows of their
    answers made into ``Call``s, and the next page's cursor."""
    cursor = str(rows[limit - 1][0]) if len(rows) > limit else None
    ids: dict[str, set[str]] = {}
    for key, request_id in answered:
        ids.setdefault(str(key), set()).add(str(request_id))
    return [call_of(tuple(row[1:]), ids.get(str(row[1]), set())) for row in rows[:limit]], cursor


def check_server(server: object) -> None:
    """``claim``'s ``server``: a name, ``None`` (an unnamed server) or ``ANY_SERVER``."""
    if server is not ANY_SERVER and server is not None and not isinstance(server, str):
        raise TypeError(f"server must be a str, None or ANY_SERVER, not {type(server).__name__}")


def check_limit(limit: object) -> int:
    if isinstance(limit, bool) or not isinstance(limit, int):
        raise TypeError(f"limit must be an int, not {type(limit).__name__}")
    if not 1 <= limit <= 10_000:
        raise ValueError(f"limit must be from 1 to 10000, not {limit!r}")
    return limit


def call_of(row: tuple[Any, ...], answered: set[str]) -> Call:
    """A ``Call`` from a row (``_CALL_COLUMNS``); a row that does not read becomes ``failed``."""
    key, status, text, server, created, updated, attempts, lease_until, error, outcome, follows, nxt = row
    key = str(key)
    pending: Pending | None = None
    result: dict[str, Any] | None = None
    problem: str | None = None
    try:
        pending = decode_pending(key, text)
        if outcome is not None:
            result = decode_json_object(outcome, f"the result of {key}")
    except ValueError as err:
        problem = str(err)
    if status not in STATUSES:
        problem = problem or f"{key} has an unknown status {str(status)[:40]!r}"
    if problem is not None:
        status, error = "failed", problem
    return Call(
        key=key,
        status=status,
        pending=pending,
        server=server if isinstance(server, str) else None,
        created=str(created),
        updated=float(updated) if isinstance(updated, (int, float)) else 0.0,
        answered=frozenset(answered),
        attempts=int(attempts) if isinstance(attempts, int) else 0,
        lease_until=float(lease_until) if isinstance(lease_until, (int, float)) else None,
        error=str(error) if error is not None else None,
        result=result,
        follows=follows if isinstance(follows, str) else None,
        next=nxt if isinstance(nxt, str) else None,
    )


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
