"""The stores' lifecycle, written once: every status change, every check of an argument or an
answer, the decoding of rows, the claim loop, the events, the schema's migrations. A store is
this engine over a [`Dialect`][toolnexus._engine.Dialect], which holds only what differs
between databases: the connection and its transactions, the row locks of a claim, the
database's clock, ``NOTIFY``, the source of wake-ups, and the DDL of each format.

The shape of procrastinate's and pgqueuer's job managers: one manager, a small connector per
database. SQL is written here once, with named parameters (``:key``); ``:now`` is the
store's clock: the engine's own when it was given one (tests move it), else the database's
(PostgreSQL: its ``statement_timestamp()``, so that leases do not depend on the machines'
clocks agreeing) or the machine's (SQLite).
"""

from __future__ import annotations

import builtins
import contextlib
import logging
import re
import secrets
import time
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Final, Literal, Protocol

from typing_extensions import Self

from ._pending import Pending
from ._store import (
    ANY_SERVER,
    OPEN,
    STATUSES,
    STORE_FORMAT,
    Call,
    Claim,
    Event,
    EventHook,
    HistoryEntry,
    HistoryKind,
    Status,
    check_answer,
    check_key,
    check_lease,
    check_limit,
    check_server,
    decode_answer,
    decode_json_object,
    decode_pending,
    dumps,
    earliest_expiry,
    encode_pending,
    fire,
    new_key,
    outcome_json,
    task_poll_delay,
)
from ._time import Clock, check_seconds, span, utc_timestamp
from ._watch import Changes, ChangeSource, Watcher
from ._wire import Answer
from .errors import LeaseLostError, StoreError

logger = logging.getLogger(__name__)

__all__ = [
    "CALL_COLUMNS",
    "Cursor",
    "Dialect",
    "Migration",
    "Sendable",
    "StoreEngine",
    "Tx",
    "fill_targets",
    "name_the_store",
]

CALL_COLUMNS: Final = (
    "key, status, pending, server, created, updated, attempts, lease_until, error, outcome, follows, next,"
    " lost, live, note, poll_at, CASE WHEN status = 'live' AND lease_until < :now THEN 1"
    " WHEN status = 'live' AND expires < :now THEN 2 ELSE 0 END"
)
"""The columns of ``toolnexus_call`` a [`Call`][toolnexus.durable.Call] is read from, in order;
the last says whether a live question has lapsed (its holder's lease, or its time, ran out),
which every reader then reports ``withdrawn``, as ``record`` treats it."""

_TABLES: Final = {
    "toolnexus_meta": frozenset(("name", "value")),
    "toolnexus_call": frozenset(
        (
            "seq",
            "key",
            "created",
            "pending",
            "status",
            "server",
            "method",
            "target",
            "asked",
            "expires",
            "updated",
            "token",
            "lease_until",
            "attempts",
            "lost",
            "live",
            "outcome",
            "error",
            "follows",
            "next",
            "poll_at",
            "note",
        )
    ),
    "toolnexus_answer": frozenset(("key", "request_id", "answer")),
    "toolnexus_history": frozenset(("seq", "key", "at", "kind", "status", "actor", "via", "detail")),
    "toolnexus_cursor": frozenset(("target", "seq", "holder", "lease_until", "attempts", "next_at", "error")),
}
"""The tables of a store of this format, and their columns."""
_EARLIER_TABLES: Final = frozenset(("toolnexus_store", "toolnexus_pending"))
"""Names an earlier format's tables had (SQLite's formats 1 and 2)."""
_EXPIRED: Final = "a question expired before it was answered"
_GONE: Final = "the process that asked it stopped (its lease ran out)"
_LATE: Final = "its time ran out before an answer came"
_TASK_EXPIRED: Final = "the task's time to live ran out before it ended"
_NOTE_LIMIT: Final = 500  # characters of a task's status message kept
_DETAIL_LIMIT: Final = 500  # characters of a history entry's detail
_WHO_LIMIT: Final = 200  # characters of who did something, and through what
_LOST: Final = "the claim on {key} was lost: its lease ran out and the call was made ready or claimed since"
_CLAIM_SET: Final = (
    "lost = lost + CASE WHEN status = 'resuming' THEN 1 ELSE 0 END, status = 'resuming', token = :token,"
    " lease_until = :now + :lease, attempts = attempts + 1, updated = :now"
)
"""What a claim sets (the old status read: a claim taken over from a lapsed lease counts one lost)."""
_IN_CHUNK: Final = 400  # keys per IN (...) list: under the 999 parameters an older SQLite allows


class Cursor(Protocol):
    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> builtins.list[Any]: ...


class Tx(Protocol):
    """One transaction of a dialect's connection."""

    def run(self, sql: str, params: Mapping[str, Any] | None = None) -> Cursor:
        """Run one statement, its parameters named (``:key``) as the engine writes them."""


@dataclass(frozen=True, slots=True)
class Migration:
    """The step from the format before ``format`` to ``format``: SQL statements, or functions
    of the transaction and the store's clock (for data that must be read to be moved)."""

    format: int
    steps: tuple[str | Callable[[Tx, float], None], ...]


class Dialect(Protocol):
    """What differs between the databases a store runs on; nothing of the lifecycle."""

    where: str
    """The store, as messages name it (a path, or host, port and database: never a password)."""
    owns_database: bool
    """Whether the whole database is the store's (an SQLite file): one holding other tables is
    then refused. Otherwise (PostgreSQL) only same-named tables matter."""
    lock: str
    """Appended to a ``SELECT`` of rows the transaction then changes (``" FOR UPDATE"``)."""
    skip_locked: str
    """The same for a claim, passing over rows another claimer holds (``" FOR UPDATE SKIP LOCKED"``)."""
    clock_sql: str | None
    """The database's clock as SQL, in seconds since the epoch; ``None``: the machine's."""
    returning: bool
    """Whether a claim and a claim's end are one ``UPDATE ... RETURNING`` each (PostgreSQL,
    where a statement is a round trip to the server); otherwise a ``SELECT`` reads what the
    ``UPDATE`` changed (SQLite: in the process, where a statement costs microseconds, and whose
    ``RETURNING`` needs 3.35, newer than some Pythons' SQLite)."""
    migrations: Sequence[Migration]
    """Every format's step, in order, from an empty database."""

    def prepare_writes(self) -> None:
        """Set the connection up for writing, once the database is known to be a store (or
        empty): SQLite's WAL switch, which another program's database must never get."""

    def transaction(self, *, write: bool, schema: bool = False) -> AbstractContextManager[Tx]:
        """One transaction: ``write`` takes the write lock at once (SQLite) or opens a
        read-write one; ``schema`` also serialises the openers that change the schema.
        Raises ``StoreUnavailableError`` when the database cannot be reached."""

    def table_names(self, tx: Tx) -> set[str]:
        """The tables of the store's database (its schema), but the database's own."""

    def columns(self, tx: Tx, table: str) -> set[str]:
        """The columns of ``table``."""

    def notify(self, tx: Tx, key: str, *, ready: bool = False) -> None:
        """Tell the other processes' watchers, at commit, that ``key`` changed (``ready``: it
        became claimable, which a worker's watcher waits for alone)."""

    def change_source(self) -> ChangeSource:
        """A new source of wake-ups, with a connection of its own."""

    def close(self) -> None:
        """Release the connections."""


def _marks(prefix: str, values: Sequence[Any]) -> tuple[str, dict[str, Any]]:
    names = [f"{prefix}{n}" for n in range(len(values))]
    return ", ".join(":" + name for name in names), dict(zip(names, values, strict=True))


def _chunks(values: Sequence[Any]) -> Iterator[Sequence[Any]]:
    for start in range(0, len(values), _IN_CHUNK):
        yield values[start : start + _IN_CHUNK]


def fill_targets(tx: Tx, now: float) -> None:
    """Format 3's data step: each call's ``method`` and ``target``, read from its record (one
    that does not read keeps neither, and reads as ``failed`` as before)."""
    rows = tx.run("SELECT key, pending FROM toolnexus_call").fetchall()
    for key, text in rows:
        try:
            pending = decode_pending(str(key), text)
        except ValueError:
            continue
        tx.run(
            "UPDATE toolnexus_call SET method = :method, target = :target WHERE key = :key",
            {"method": pending.method, "target": pending.target, "key": key},
        )


def name_the_store(tx: Tx, now: float) -> None:
    """Format 6's data step: the store's own random name (``toolnexus_meta``'s ``instance``),
    which makes each entry of its history an event id no other store gives, and the key that
    signs its answer links (``link_key``)."""
    tx.run(
        "INSERT INTO toolnexus_meta (name, value) VALUES ('instance', :value)",
        {"value": secrets.token_hex(8)},
    )
    tx.run(  # the key of its answer links (toolnexus._links)
        "INSERT INTO toolnexus_meta (name, value) VALUES ('link_key', :value)",
        {"value": secrets.token_hex(32)},
    )


@dataclass(frozen=True, slots=True)
class Sendable:
    """An entry of the history, with what a notification about it names: its place in the
    history (``seq``), its call's key, server and target."""

    seq: int
    key: str
    server: str | None
    target: str | None
    entry: HistoryEntry


def _call_of(row: Sequence[Any], answers: builtins.list[tuple[Any, Any]]) -> Call:
    """A ``Call`` from a row (``CALL_COLUMNS``) and its answer rows ``(request id, answer)``;
    a record, a result or an answer that does not read makes it ``failed`` with the reason."""
    (
        key,
        status,
        text,
        server,
        created,
        updated,
        attempts,
        lease_until,
        error,
        outcome,
        follows,
        nxt,
        lost,
        live,
        note,
        poll_at,
        lapsed,
    ) = row
    if lapsed in (1, 2):  # as good as withdrawn: nobody can answer it any more
        status, error = "withdrawn", _GONE if lapsed == 1 else _LATE
    key = str(key)
    pending: Pending | None = None
    result: dict[str, Any] | None = None
    problem: str | None = None
    try:
        pending = decode_pending(key, text)
        if outcome is not None:
            result = decode_json_object(outcome, f"the result of {key}")
        for request_id, answer in answers:
            decode_answer(key, request_id, answer)
    except ValueError as err:
        problem = str(err)
    if status not in STATUSES:
        problem = problem or f"{key} has an unknown status {str(status)[:40]!r}"
    if problem is not None:
        status, error = "failed", problem
    number = (int, float)
    return Call(
        key=key,
        status=status,
        pending=pending,
        server=server if isinstance(server, str) else None,
        created=str(created),
        updated=float(updated) if isinstance(updated, number) else 0.0,
        answered=frozenset(str(request_id) for request_id, _ in answers),
        attempts=int(attempts) if isinstance(attempts, int) else 0,
        lease_until=float(lease_until) if isinstance(lease_until, number) else None,
        error=str(error) if error is not None else None,
        result=result,
        follows=follows if isinstance(follows, str) else None,
        next=nxt if isinstance(nxt, str) else None,
        live=bool(live) if isinstance(live, int) else False,
        leases_lost=int(lost) if isinstance(lost, int) else 0,
        note=str(note) if note is not None else None,
        poll_at=float(poll_at) if isinstance(poll_at, number) and status == "working" else None,
    )


def _from_server(server: object, params: dict[str, Any]) -> str:
    """The condition (``AND ...``) for calls parked from ``server`` (``ANY_SERVER``: any;
    ``None``: an unnamed one), its parameter put in ``params``."""
    if server is ANY_SERVER:
        return ""
    if server is None:
        return " AND server IS NULL"
    params["server"] = server
    return " AND server = :server"


def _who(value: str | None, name: str) -> str | None:
    """A ``by`` or ``via`` as the history keeps it: text, on one line, at most 200 characters."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str or None, not {type(value).__name__}")
    return " ".join(value.split())[:_WHO_LIMIT] or None


def _said(answer: Answer) -> str:
    """An answer as its call's history tells it: its request and its action, never its content."""
    if answer.ok:
        return f"{answer.id}: accept"
    return f"{answer.id}: {'decline' if answer.reason == 'declined' else 'cancel'}"


def _asks(pending: Pending) -> str:
    count = len(pending.requests)
    return "1 question" if count == 1 else f"{count} questions"


def _entry(row: Sequence[Any]) -> HistoryEntry:
    at, kind, status, actor, via, detail = row
    return HistoryEntry(
        float(at) if isinstance(at, (int, float)) else 0.0,
        str(kind),
        str(status) if status is not None else None,
        str(actor) if actor is not None else None,
        str(via) if via is not None else None,
        str(detail) if detail is not None else None,
    )


def _note(note: str | None) -> str | None:
    """A task's status message as kept: text, cut to 500 characters."""
    if note is None:
        return None
    if not isinstance(note, str):
        raise TypeError(f"note must be a str or None, not {type(note).__name__}")
    return note[:_NOTE_LIMIT]


def _task_record(pending: Pending, caller: str) -> Pending:
    if not isinstance(pending, Pending):
        raise TypeError(f"{caller}: pending must be a Pending, not {type(pending).__name__}")
    if pending.task is None:
        raise ValueError(f"{caller}: pending is not a parked task's (its task is None)")
    return pending


class StoreEngine:
    """Parked calls and their answers, over a dialect: the one implementation of every store
    method. [`SqliteStore`][toolnexus.durable.SqliteStore] and
    [`PostgresStore`][toolnexus.durable.PostgresStore] are this class with their dialect."""

    def __init__(
        self,
        dialect: Dialect,
        *,
        create: bool,
        read_only: bool,
        retention: float | None,
        on_event: EventHook | None,
        clock: Clock | None,
    ) -> None:
        if clock is not None and not callable(clock):
            raise TypeError(
                f"clock must be a function giving seconds since the epoch, not {type(clock).__name__}"
            )
        self._d = dialect
        self.read_only = bool(read_only)
        self.retention = check_seconds(retention, caller="", name="retention", zero=True)
        self.on_event = on_event
        self._clock = clock
        self._db_clock = clock is None and dialect.clock_sql is not None
        self._sql: dict[str, str] = {}
        self._changes = Changes(dialect.change_source, dialect.where)
        try:
            self._open_schema(bool(create))
        except BaseException:
            dialect.close()
            raise

    @property
    def where(self) -> str:
        """The store as messages name it (never a password)."""
        return self._d.where

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.where!r})"

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the store's connections and end its watchers' thread. It cannot be used after."""
        self._changes.close()
        self._d.close()

    # --- the clock and the SQL ---------------------------------------------------------------

    def _wall(self) -> float:
        """The store's clock in this process (the database's clock is read in SQL)."""
        return self._clock() if self._clock is not None else time.time()

    def _q(self, sql: str) -> str:
        """``sql`` with ``:now`` made the database's clock when that is the store's."""
        done = self._sql.get(sql)
        if done is None:
            done = re.sub(r":now\b", f"({self._d.clock_sql})", sql) if self._db_clock else sql
            if len(self._sql) < 512:
                self._sql[sql] = done
        return done

    def _p(self, **params: Any) -> dict[str, Any]:
        if not self._db_clock:
            params["now"] = self._wall()
        return params

    def _run(self, tx: Tx, sql: str, **params: Any) -> Cursor:
        return tx.run(self._q(sql), self._p(**params))

    @contextlib.contextmanager
    def _write(self) -> Iterator[Tx]:
        if self.read_only:
            raise StoreError(f"{self.where} was opened read-only")
        with self._d.transaction(write=True) as tx:
            yield tx

    def _read(self) -> AbstractContextManager[Tx]:
        return self._d.transaction(write=False)

    def _row(self, tx: Tx, key: str, columns: str) -> Any:
        """``columns`` of the call under ``key``, its row locked for the transaction;
        ``KeyError`` when there is none."""
        row = self._run(
            tx, f"SELECT {columns} FROM toolnexus_call WHERE key = :key{self._d.lock}", key=key
        ).fetchone()
        if row is None:
            raise KeyError(key)
        return row

    def _in(self, tx: Tx, sql: str, keys: Sequence[str], **params: Any) -> builtins.list[Any]:
        """``sql`` (holding ``{keys}``, a list of marks) run for ``keys``, a chunk at a time."""
        rows: builtins.list[Any] = []
        for chunk in _chunks(keys):
            marks, named = _marks("k", chunk)
            cursor = self._run(tx, sql.format(keys=marks), **named, **params)
            if sql.lstrip().upper().startswith("SELECT"):
                rows.extend(cursor.fetchall())
        return rows

    # --- the schema ----------------------------------------------------------------------------

    def _open_schema(self, create: bool) -> None:
        with self._read() as tx:
            found = self._format(tx)
            if found == STORE_FORMAT:
                self._check_tables(tx)
        if found == STORE_FORMAT:
            if not self.read_only:
                self._d.prepare_writes()
            return
        if found > STORE_FORMAT:
            raise StoreError(
                f"{self.where} holds a store of format {found}; this toolnexus reads format {STORE_FORMAT}"
            )
        if found == 0 and (self.read_only or not create):
            raise StoreError(f"{self.where} holds no toolnexus store")
        if self.read_only:
            raise StoreError(
                f"{self.where} holds a store of format {found}; this toolnexus reads format {STORE_FORMAT}"
                " (open it once for writing to upgrade it)"
            )
        self._d.prepare_writes()
        with self._d.transaction(write=True, schema=True) as tx:
            found = self._format(tx)  # again, under the lock: another opener may have been first
            if found < STORE_FORMAT:
                now = self._wall()
                for migration in self._d.migrations:
                    if migration.format <= found:
                        continue
                    for step in migration.steps:
                        if isinstance(step, str):
                            tx.run(step)
                        else:
                            step(tx, now)
                tx.run(
                    "UPDATE toolnexus_meta SET value = :format WHERE name = 'format'",
                    {"format": str(STORE_FORMAT)},
                )
                if found:
                    logger.info("%s upgraded from format %s to %s", self.where, found, STORE_FORMAT)
            elif found > STORE_FORMAT:
                raise StoreError(
                    f"{self.where} holds a store of format {found};"
                    f" this toolnexus reads format {STORE_FORMAT}"
                )
            self._check_tables(tx)

    def _format(self, tx: Tx) -> int:
        """The store's format; 0 when the database holds none. ``StoreError`` for a database
        whose same-named tables are not a toolnexus store's (nothing in it is read)."""
        names = {name for name in self._d.table_names(tx) if not name.startswith("sqlite_")}
        meta = next((name for name in ("toolnexus_meta", "toolnexus_store") if name in names), None)
        ours = names & ({*_TABLES, *_EARLIER_TABLES})
        if meta is None:
            if ours:
                raise StoreError(self._foreign(min(ours)))
            if self._d.owns_database and names:
                raise StoreError(
                    f"{self.where} is a database of another program, not a toolnexus store: nothing in it "
                    "was read or changed"
                )
            return 0
        if self._d.columns(tx, meta) != _TABLES["toolnexus_meta"]:
            raise StoreError(self._foreign(meta))
        row = tx.run(f"SELECT value FROM {meta} WHERE name = 'format'").fetchone()
        text = row[0] if row is not None else None
        if not isinstance(text, str) or not text.isdigit() or len(text) > 6:
            raise StoreError(f"{self.where}: the store's format is unreadable: {str(text)[:40]!r}")
        return int(text)

    def _check_tables(self, tx: Tx) -> None:
        for table, columns in _TABLES.items():
            if self._d.columns(tx, table) != columns:
                raise StoreError(self._foreign(table))

    def _foreign(self, table: str) -> str:
        return (
            f"{self.where}: the table {table} is not a toolnexus store's: refused; nothing in it "
            "was read or changed"
        )

    # --- parking and answering -------------------------------------------------------------

    def put(self, pending: Pending, *, follows: str | None = None, deadline: float | None = None) -> str:
        """Keep ``pending``, ``waiting`` (a parked task without a question: ``working``, due a
        poll after its interval); return its key, a fresh random string of 16 hex digits.

        Args:
            pending: the parked call.
            follows: the key of the call it continues (the server asked again about it).
            deadline: the host's own deadline, in seconds from now: the call ``expired`` if
                it still waits then (as when a question's ``expiresAt`` passes).
        """
        text = encode_pending(pending)
        if follows is not None:
            check_key(follows)
        seconds = check_seconds(deadline, caller="", name="deadline")
        status: Status = "working" if pending.task is not None and not pending.requests else "waiting"
        with self._write() as tx:
            key = self._insert(tx, pending, text, seconds, follows)
            event = self._log(tx, Event("parked", key, status, pending.server, pending.target))
            self._d.notify(tx, key)
        fire(self.on_event, event)
        return key

    def put_live(self, pending: Pending, *, token: str, lease: float, deadline: float | None = None) -> str:
        """Keep a *live* question (``live``): one whose call is held open in the process that
        asked it, which waits for the answer given elsewhere (the inbox, ``toolnexus answer``)
        and takes it itself: [`ask_in`][toolnexus.durable.ask_in] puts its questions so.
        Return its key.

        Args:
            pending: the question, as a ``Pending`` (what is called, by which server).
            token: the holder's token: [`renew_held`][toolnexus.durable.SqliteStore.renew_held]
                extends the leases of everything it holds, [`held`][toolnexus.durable.SqliteStore.held]
                tells their statuses, [`withdraw`][toolnexus.durable.SqliteStore.withdraw] ends one.
            lease: seconds the holder's lease lasts unless renewed; once it runs out (the
                holder died) the question can no longer be answered, and ``sweep`` marks it
                ``withdrawn``.
            deadline: seconds from now after which it can no longer be answered (as when a
                question's ``expiresAt`` passes).
        """
        text = encode_pending(pending)
        if not isinstance(token, str) or not 16 <= len(token) <= 100:
            raise ValueError("put_live: token must be a str of 16 to 100 characters")
        lease = check_lease(lease)
        seconds = check_seconds(deadline, caller="", name="deadline")
        with self._write() as tx:
            key = self._insert(tx, pending, text, seconds, None, live=(token, lease))
            event = self._log(tx, Event("asked", key, "live", pending.server, pending.target))
            self._d.notify(tx, key)
        fire(self.on_event, event)
        return key

    def renew_held(self, token: str, lease: float) -> int:
        """Extend to ``lease`` seconds from now the lease of every ``live`` question the
        holder ``token`` names; how many there are. (A holder renews all its questions in
        one write, every third of its lease, while it waits.)"""
        lease = check_lease(lease)
        with self._write() as tx:
            renewed: int = self._run(
                tx,
                "UPDATE toolnexus_call SET lease_until = :now + :lease"
                " WHERE token = :token AND status = 'live'",
                token=str(token),
                lease=lease,
            ).rowcount
        return renewed

    def held(self, token: str) -> dict[str, Status]:
        """The status of every question the holder ``token`` names, by key: ``live`` while it
        waits, ``answered`` once its answer is recorded (read it with
        [`answers`][toolnexus.durable.SqliteStore.answers]), ``withdrawn`` (a live question
        whose lease or time ran out reads ``withdrawn`` here already, as ``record`` refuses
        it). One query, however many it holds."""
        with self._read() as tx:
            rows = self._run(
                tx,
                "SELECT key, CASE WHEN status = 'live' AND (lease_until < :now OR expires < :now)"
                " THEN 'withdrawn' ELSE status END FROM toolnexus_call WHERE token = :token",
                token=str(token),
            ).fetchall()
        return {str(key): status for key, status in rows if status in STATUSES}

    def withdraw(self, key: str, token: str, reason: str) -> Status:
        """End the live question under ``key`` unanswered: ``withdrawn``, with ``reason``
        kept; any answer posted after is refused. Returns its status after: ``withdrawn``,
        or ``answered`` when its answer was recorded first (then read it: it came in time).

        Raises:
            KeyError: nothing is kept under ``key``.
            LeaseLostError: ``token`` does not hold it.
        """
        key = check_key(key)
        with self._write() as tx:
            status, server, target, holder = self._row(tx, key, "status, server, target, token")
            if holder != token:
                raise LeaseLostError(f"{key} is not held by this token")
            if status != "live":
                after: Status = status
                return after
            self._run(
                tx,
                "UPDATE toolnexus_call SET status = 'withdrawn', error = :error, lease_until = NULL,"
                " updated = :now WHERE key = :key",
                key=key,
                error=str(reason)[:500],
            )
            event = self._log(tx, Event("withdrawn", key, "withdrawn", server, target, str(reason)[:500]))
            self._d.notify(tx, key)
        fire(self.on_event, event)
        return "withdrawn"

    def _insert(
        self,
        tx: Tx,
        pending: Pending,
        text: str,
        deadline: float | None,
        follows: str | None,
        live: tuple[str, float] | None = None,
    ) -> str:
        wall = self._wall()
        token, lease = live if live is not None else (None, 0.0)
        task = pending.task is not None and live is None
        status = "live" if live is not None else "working" if task and not pending.requests else "waiting"
        while True:
            key = new_key()
            inserted = self._run(
                tx,
                "INSERT INTO toolnexus_call (key, created, pending, status, server, method, target, asked,"
                " expires, updated, follows, live, token, lease_until, poll_at) VALUES (:key, :created,"
                " :pending, :status, :server, :method, :target, :asked, :expires, :now, :follows, :live,"
                " :token, CASE WHEN :live = 1 THEN :now + :lease END, CASE WHEN :working = 1 THEN :now"
                " + :poll_in END) ON CONFLICT DO NOTHING",
                status=status,
                working=int(status == "working"),
                poll_in=task_poll_delay(pending.task.poll_interval_ms) if pending.task is not None else 0.0,
                live=int(live is not None),
                token=token,
                lease=lease,
                key=key,
                created=utc_timestamp(now=wall),
                pending=text,
                server=pending.server,
                method=pending.method,
                target=pending.target,
                asked=len(pending.requests),
                expires=earliest_expiry(pending, deadline, now=wall),
                follows=follows,
            ).rowcount
            if inserted:  # else that key is taken (one in 2**64): draw another
                return key

    def get(self, key: str) -> Pending:
        """The pending kept under ``key``.

        Raises:
            KeyError: nothing is kept under ``key``.
            ValueError: what is kept there is not a pending this toolnexus reads.
        """
        with self._read() as tx:
            row = self._run(
                tx, "SELECT pending FROM toolnexus_call WHERE key = :key", key=check_key(key)
            ).fetchone()
        if row is None:
            raise KeyError(key)
        return decode_pending(key, row[0])

    def list(self) -> builtins.list[tuple[str, Pending]]:
        """Every call whose record reads, with its key, oldest first, whatever its status
        (see [`calls`][toolnexus.durable.SqliteStore.calls] for the statuses and the records
        that do not read)."""
        return [(call.key, call.pending) for call in self.calls() if call.pending is not None]

    def calls(self, *, status: Status | None = None) -> builtins.list[Call]:
        """Every call (or those of one ``status``), oldest first. A record (or an answer) that
        does not read is reported as a ``failed`` call whose ``error`` says why (its
        ``pending`` ``None`` when the record is what does not read); the others are
        unaffected."""
        if status is not None and status not in STATUSES:
            raise ValueError(f"status must be one of {', '.join(STATUSES)}, not {str(status)[:40]!r}")
        where = " WHERE c.status = :status" if status is not None else ""
        with self._read() as tx:
            rows = self._run(
                tx, f"SELECT {CALL_COLUMNS} FROM toolnexus_call c{where} ORDER BY c.seq", status=status
            ).fetchall()
            answered = self._run(
                tx,
                "SELECT a.key, a.request_id, a.answer FROM toolnexus_answer a"
                f" JOIN toolnexus_call c ON c.key = a.key{where}",
                status=status,
            ).fetchall()
        by_key: dict[str, builtins.list[tuple[Any, Any]]] = {}
        for key, request_id, text in answered:
            by_key.setdefault(str(key), []).append((request_id, text))
        calls = [_call_of(row, by_key.get(str(row[0]), [])) for row in rows]
        if status is not None:  # a record that does not read reports failed
            calls = [call for call in calls if call.status == status]
        return calls

    def call(self, key: str) -> Call:
        """The call kept under ``key``, with its status and outcome; ``KeyError`` when none."""
        key = check_key(key)
        with self._read() as tx:
            row = self._run(
                tx, f"SELECT {CALL_COLUMNS} FROM toolnexus_call WHERE key = :key", key=key
            ).fetchone()
            answered = self._run(
                tx, "SELECT request_id, answer FROM toolnexus_answer WHERE key = :key", key=key
            ).fetchall()
        if row is None:
            raise KeyError(key)
        return _call_of(row, [tuple(answer) for answer in answered])

    def record(
        self, key: str, answer: Answer | Mapping[str, Any], *, by: str | None = None, via: str | None = None
    ) -> None:
        """Keep ``answer`` for the request of the call under ``key`` whose id is ``answer.id``;
        when it is the last one missing, the call becomes ``ready``.

        The answer is checked as [`resume`][toolnexus.durable.resume] checks it (defaults laid
        in, content validated against the form), so a mistake surfaces while the human is
        still there. The form is read before the write transaction, so a slow form never
        holds up another writer. Of two answers to one request recorded at once, from any
        processes, exactly one is kept: the other gets ``ValueError``.

        The call's history keeps who gave it (``by``: a person's name or identity) and
        through what (``via``: ``"inbox"``, ``"terminal"``, ...), with the request's id and
        the answer's action (accept, decline, cancel), never its content.

        Raises:
            KeyError: nothing is kept under ``key``.
            ValueError: the call holds no request with that id, the request is already
                answered, the call no longer waits (``ready``, ``resuming`` or finished),
                or the content does not fit the form (the message names the fields).
        """
        key = check_key(key)
        caller = f"{type(self).__name__}.record"
        actor, way = _who(by, "by"), _who(via, "via")
        answer = check_answer(self.get(key), key, answer, caller)
        with self._write() as tx:
            status, asked, server, target, lapsed = self._row(
                tx,
                key,
                "status, asked, server, target,"
                " CASE WHEN status = 'live' AND (lease_until < :now OR expires < :now) THEN 1 ELSE 0 END",
            )
            if lapsed:  # its holder is gone or its time ran out: as good as withdrawn
                status = "withdrawn"
            inserted = self._run(
                tx,
                "INSERT INTO toolnexus_answer (key, request_id, answer) VALUES (:key, :request_id, :answer)"
                " ON CONFLICT DO NOTHING",
                key=key,
                request_id=answer.id,
                answer=dumps(answer.to_dict()),
            ).rowcount
            if not inserted:
                raise ValueError(f"{caller}: {answer.id} of {key} is already answered")
            if status == "withdrawn":  # raised inside: the answer is rolled back, recorded nowhere
                raise ValueError(f"{caller}: {key} was withdrawn: the call that asked it no longer waits")
            if status not in OPEN:
                raise ValueError(f"{caller}: {key} is {status}, no longer waiting for answers")
            (count,) = self._run(
                tx, "SELECT count(*) FROM toolnexus_answer WHERE key = :key", key=key
            ).fetchone()
            self._keep(tx, "answer", key, status, _said(answer), actor, way)
            done: Literal["answered", "ready"] | None = None
            event: Event | None = None
            if count >= asked:
                done = "answered" if status == "live" else "ready"
                self._run(
                    tx,
                    "UPDATE toolnexus_call SET status = :status, updated = :now WHERE key = :key",
                    key=key,
                    status=done,
                )
                event = self._log(tx, Event(done, key, done, server, target))
            self._d.notify(tx, key, ready=done == "ready")
        if event is not None:
            fire(self.on_event, event)

    def answers(self, key: str) -> dict[str, Answer]:
        """The answers recorded for the call under ``key``, request id to ``Answer``;
        ``KeyError`` when nothing is kept under ``key``, ``ValueError`` when one does not read."""
        key = check_key(key)
        with self._read() as tx:
            known = self._run(tx, "SELECT 1 FROM toolnexus_call WHERE key = :key", key=key).fetchone()
            rows = self._run(
                tx, "SELECT request_id, answer FROM toolnexus_answer WHERE key = :key", key=key
            ).fetchall()
        if known is None:
            raise KeyError(key)
        return {str(request_id): decode_answer(key, request_id, text) for request_id, text in rows}

    def remove(self, key: str) -> None:
        """Forget the call under ``key`` and its answers; ``KeyError`` when there is none."""
        key = check_key(key)
        with self._write() as tx:
            row = self._row(tx, key, "server, target")
            self._run(tx, "DELETE FROM toolnexus_answer WHERE key = :key", key=key)
            self._run(tx, "DELETE FROM toolnexus_history WHERE key = :key", key=key)
            self._run(tx, "DELETE FROM toolnexus_call WHERE key = :key", key=key)
            self._d.notify(tx, key)
        fire(self.on_event, Event("removed", key, None, row[0], row[1]))

    # --- pages -------------------------------------------------------------------------------

    @staticmethod
    def _page_where(
        limit: object, before: object, server: object, status: object = None
    ) -> tuple[str, dict[str, Any]]:
        """The ``WHERE ... ORDER BY ... LIMIT`` of a page of calls, newest first, by keyset."""
        if isinstance(limit, bool) or not isinstance(limit, int) or not 0 < limit <= 1000:
            raise ValueError(f"page: limit must be an int from 1 to 1000, not {limit!r}")
        where: builtins.list[str] = []
        params: dict[str, Any] = {"limit": limit + 1}
        if before is not None:
            if not isinstance(before, str) or not (before.isascii() and before.isdigit()) or len(before) > 18:
                raise ValueError("page: before must be a cursor from an earlier page")
            where.append("seq < :before")
            params["before"] = int(before)
        if server is not None:
            where.append("server = :server")
            params["server"] = check_key(server)
        if status is not None:
            if isinstance(status, str):
                wanted: tuple[object, ...] = (status,)
            elif isinstance(status, Collection):
                wanted = tuple(status)
            else:
                raise TypeError(
                    f"page: status must be a status or a collection of them, not {type(status).__name__}"
                )
            if not wanted or any(one not in STATUSES for one in wanted):
                raise ValueError(f"page: status must be one or more of {', '.join(STATUSES)}")
            marks, named = _marks("st", sorted(set(wanted)))
            where.append(f"status IN ({marks})")
            params.update(named)
        sql = (" WHERE " + " AND ".join(where)) if where else ""
        return sql + " ORDER BY seq DESC LIMIT :limit", params

    def page(
        self,
        *,
        limit: int = 50,
        before: str | None = None,
        server: str | None = None,
        status: Status | Collection[Status] | None = None,
    ) -> tuple[builtins.list[tuple[str, str, Pending | ValueError]], str | None]:
        """One page of parked calls, newest first: ``(rows, cursor)``.

        Each row is ``(key, created, pending)``, ``created`` the RFC 3339 time it was parked;
        a record that does not read gives the ``ValueError`` saying why in place of its
        pending, so one bad row does not hide the others. ``cursor`` is ``None`` on the
        last page; passed back as ``before`` it gives the next (older) page. Each page is
        read by keyset (``seq < cursor``), so its cost does not grow with the number of calls
        in the store. With ``server``, only the calls parked from the server of that name; with
        ``status`` (one, or several), only the calls recorded in that status (a live question
        whose holder is gone is recorded ``live`` until a sweep, and read ``withdrawn``).
        (Statuses: [`page_calls`][toolnexus.durable.SqliteStore.page_calls].)
        """
        sql, params = self._page_where(limit, before, server, status)
        with self._read() as tx:
            rows = self._run(
                tx, "SELECT seq, key, created, pending FROM toolnexus_call" + sql, **params
            ).fetchall()
        cursor = str(rows[limit - 1][0]) if len(rows) > limit else None
        out: builtins.list[tuple[str, str, Pending | ValueError]] = []
        for _, key, created, text in rows[:limit]:
            try:
                out.append((str(key), str(created), decode_pending(str(key), text)))
            except ValueError as err:
                out.append((str(key), str(created), err))
        return out, cursor

    def page_calls(
        self,
        *,
        limit: int = 50,
        before: str | None = None,
        server: str | None = None,
        status: Status | Collection[Status] | None = None,
    ) -> tuple[builtins.list[Call], str | None]:
        """One page of calls with their statuses, newest first: ``(calls, cursor)``.

        The page of [`page`][toolnexus.durable.SqliteStore.page] (the same order, cursor and
        ``server`` filter), each row the [`Call`][toolnexus.durable.Call] that
        [`call`][toolnexus.durable.SqliteStore.call] gives for its key, read in two queries
        however long the page: a list that shows statuses (the inbox's) needs no read per
        call. A record that does not read is a ``failed`` call whose ``error`` says why.
        """
        sql, params = self._page_where(limit, before, server, status)
        with self._read() as tx:
            rows = self._run(tx, f"SELECT seq, {CALL_COLUMNS} FROM toolnexus_call" + sql, **params).fetchall()
            keys = [str(row[1]) for row in rows[:limit]]
            answered = self._in(
                tx, "SELECT key, request_id, answer FROM toolnexus_answer WHERE key IN ({keys})", keys
            )
        cursor = str(rows[limit - 1][0]) if len(rows) > limit else None
        by_key: dict[str, builtins.list[tuple[Any, Any]]] = {}
        for key, request_id, text in answered:
            by_key.setdefault(str(key), []).append((request_id, text))
        return [_call_of(tuple(row[1:]), by_key.get(str(row[1]), [])) for row in rows[:limit]], cursor

    # --- claiming and finishing ------------------------------------------------------------

    def claim(
        self,
        *,
        lease: float,
        server: object = ANY_SERVER,
        limit: int = 1,
        key: str | None = None,
        by: str | None = None,
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
            by: the claimer's name (a worker's), kept in each call's history.

        A claimed call whose record or answers do not read is marked ``failed`` with the
        reason and not returned.
        """
        checked_lease = check_lease(lease)
        checked_limit = check_limit(limit)
        check_server(server)
        checked_key: str | None = None
        if key is not None:
            checked_key, checked_limit = check_key(key), 1
        actor = _who(by, "by")
        out: builtins.list[Claim] = []
        while len(out) < checked_limit:
            taken, claims = self._claim_once(
                checked_lease, server, checked_limit - len(out), checked_key, actor
            )
            out.extend(claims)
            if not taken:
                break
        return out

    def _claim_once(
        self, lease: float, server: object, limit: int, key: str | None, actor: str | None
    ) -> tuple[int, builtins.list[Claim]]:
        token = secrets.token_hex(12)
        params: dict[str, Any] = {"limit": limit}
        where = (
            "(status = 'ready' OR (status = 'working' AND poll_at <= :now)"
            " OR (status = 'resuming' AND lease_until < :now))"
        ) + _from_server(server, params)
        if key is not None:
            where += " AND key = :key"
            params["key"] = key
        with self._write() as tx:
            if self._d.returning:
                rows = self._run(
                    tx,
                    f"WITH picked AS (SELECT key FROM toolnexus_call WHERE {where}"
                    f" ORDER BY seq LIMIT :limit{self._d.skip_locked})"
                    f" UPDATE toolnexus_call c SET {_CLAIM_SET} FROM picked WHERE c.key = picked.key"
                    " RETURNING c.key, c.pending, c.attempts, c.lease_until, c.server, c.target, c.seq",
                    token=token,
                    lease=lease,
                    **params,
                ).fetchall()
                picked = [str(row[0]) for row in rows]
                if not picked:
                    return 0, []
            else:
                picked = [
                    str(row[0])
                    for row in self._run(
                        tx,
                        f"SELECT key FROM toolnexus_call WHERE {where}"
                        f" ORDER BY seq LIMIT :limit{self._d.skip_locked}",
                        **params,
                    ).fetchall()
                ]
                if not picked:
                    return 0, []
                self._in(
                    tx,
                    f"UPDATE toolnexus_call SET {_CLAIM_SET} WHERE key IN ({{keys}})",
                    picked,
                    token=token,
                    lease=lease,
                )
                rows = self._in(
                    tx,
                    "SELECT key, pending, attempts, lease_until, server, target, seq FROM toolnexus_call"
                    " WHERE key IN ({keys})",
                    picked,
                )
            answer_rows = self._in(
                tx, "SELECT key, request_id, answer FROM toolnexus_answer WHERE key IN ({keys})", picked
            )
            events = [
                self._log(tx, Event("claimed", str(row[0]), "resuming", row[4], row[5]), actor, "worker")
                for row in sorted(rows, key=lambda r: r[6])
            ]
            self._d.notify(tx, picked[0])
        # Read after the transaction, so that a slow record never holds the lock; one that
        # does not read is marked failed with the reason.
        by_key: dict[str, builtins.list[tuple[Any, Any]]] = {}
        for claimed_key, request_id, text in answer_rows:
            by_key.setdefault(str(claimed_key), []).append((request_id, text))
        out = []
        for event, (claimed_key, text, attempts, until, *_) in zip(
            events, sorted(rows, key=lambda r: r[6]), strict=True
        ):
            claimed_key = str(claimed_key)
            fire(self.on_event, event)
            try:
                pending = decode_pending(claimed_key, text)
                answers = {
                    str(request_id): decode_answer(claimed_key, request_id, answer)
                    for request_id, answer in by_key.get(claimed_key, [])
                }
            except ValueError as err:
                logger.warning("%s does not read: marked failed", claimed_key)
                with contextlib.suppress(LeaseLostError):
                    self.fail(claimed_key, token, str(err))
                continue
            out.append(Claim(claimed_key, pending, answers, token, int(attempts), float(until)))
        return len(rows), out

    def _end(
        self, tx: Tx, key: str, token: str, sets: str, *, ready: bool = False, **params: Any
    ) -> tuple[Any, Any]:
        """End the claim ``token`` holds on ``key`` with ``sets`` (an UPDATE's SET list), in
        ``tx``; its server and target. ``LeaseLostError`` when the claim no longer holds."""
        key = check_key(key)
        mine = "key = :key AND token = :token AND status = 'resuming'"
        if self._d.returning:
            sql, then = f"UPDATE toolnexus_call SET {sets} WHERE {mine} RETURNING server, target", None
        else:
            sql, then = f"SELECT server, target FROM toolnexus_call WHERE {mine}{self._d.lock}", sets
        row = self._run(tx, sql, key=key, token=token, **(params if then is None else {})).fetchone()
        if row is None:
            raise LeaseLostError(_LOST.format(key=key))
        if then is not None:
            self._run(tx, f"UPDATE toolnexus_call SET {then} WHERE key = :key", key=key, **params)
        self._d.notify(tx, key, ready=ready)
        return row[0], row[1]

    def renew(self, key: str, token: str, lease: float) -> float:
        """Extend the claim's lease to ``lease`` seconds from now (the store's clock); returns
        the new deadline.

        Raises:
            LeaseLostError: the claim is no longer this token's.
        """
        lease = check_lease(lease)
        key = check_key(key)
        renewing = (
            "UPDATE toolnexus_call SET lease_until = :now + :lease"
            " WHERE key = :key AND token = :token AND status = 'resuming'"
        )
        with self._write() as tx:
            if self._d.returning:
                row = self._run(
                    tx, renewing + " RETURNING lease_until", key=key, token=token, lease=lease
                ).fetchone()
            else:
                changed = self._run(tx, renewing, key=key, token=token, lease=lease).rowcount
                row = (
                    self._run(
                        tx, "SELECT lease_until FROM toolnexus_call WHERE key = :key", key=key
                    ).fetchone()
                    if changed
                    else None
                )
            if row is None:
                raise LeaseLostError(_LOST.format(key=key))
            until = row[0]
        return float(until)

    def finish(self, key: str, token: str, result: Mapping[str, Any]) -> None:
        """End the claim: ``done``, with ``result`` (the server's, as JSON) kept.

        Raises:
            LeaseLostError: the claim is no longer this token's; nothing is changed.
        """
        text = outcome_json(result)
        with self._write() as tx:
            server, target = self._end(
                tx,
                key,
                token,
                "status = 'done', outcome = :outcome, error = NULL, token = NULL, lease_until = NULL,"
                " updated = :now",
                outcome=text,
            )
            event = self._log(tx, Event("finished", key, "done", server, target))
        fire(self.on_event, event)

    def finish_parked(self, key: str, token: str, pending: Pending) -> str:
        """End the claim: ``done``, because the server asked again; ``pending`` (the new round)
        is parked under a new key, which ``follows`` this one, in the same transaction.

        Raises:
            LeaseLostError: the claim is no longer this token's; nothing is changed.
        """
        key = check_key(key)
        text = encode_pending(pending)
        with self._write() as tx:
            new = self._insert(tx, pending, text, None, key)
            server, target = self._end(
                tx,
                key,
                token,
                "status = 'done', next = :next, outcome = NULL, error = NULL, token = NULL,"
                " lease_until = NULL, updated = :now",
                next=new,
            )  # a lost claim raises here, and the new call is rolled back with it
            ended = self._log(tx, Event("finished", key, "done", server, target, f"asked again: {new}"))
            parked = self._log(tx, Event("parked", new, "waiting", pending.server, pending.target))
        fire(self.on_event, ended)
        fire(self.on_event, parked)
        return new

    def fail(self, key: str, token: str, error: str, *, retry: bool = False) -> None:
        """End the claim: ``failed`` with ``error`` kept, or, with ``retry``, ``ready`` again
        (the error kept until the next outcome).

        Raises:
            LeaseLostError: the claim is no longer this token's; nothing is changed.
        """
        status: Status = "ready" if retry else "failed"
        with self._write() as tx:
            server, target = self._end(
                tx,
                key,
                token,
                "status = :status, error = :error, token = NULL, lease_until = NULL, updated = :now",
                ready=retry,
                status=status,
                error=str(error),
            )
            event = self._log(
                tx, Event("ready" if retry else "finished", key, status, server, target, str(error))
            )
        fire(self.on_event, event)

    def release(self, key: str, token: str) -> None:
        """End the claim without an outcome: ``ready`` again, for any resumer.

        Raises:
            LeaseLostError: the claim is no longer this token's; nothing is changed.
        """
        with self._write() as tx:
            server, target = self._end(
                tx,
                key,
                token,
                "status = 'ready', token = NULL, lease_until = NULL, updated = :now",
                ready=True,
            )
            event = self._log(tx, Event("ready", key, "ready", server, target, "given back unresumed"))
        fire(self.on_event, event)

    # --- parked tasks ------------------------------------------------------------------------

    def task_working(
        self, key: str, token: str, *, poll_in: float, note: str | None, pending: Pending | None = None
    ) -> None:
        """End a claim on a parked task the server still works on: ``working``, claimable
        again in ``poll_in`` seconds; ``note`` (its status message) kept, cut to 500
        characters; ``pending``, when given, replaces its record (its questions answered).

        Raises:
            LeaseLostError: the claim is no longer this token's; nothing is changed.
        """
        poll_in = check_seconds(poll_in, caller="task_working", name="poll_in", none=False, zero=True) or 0.0
        text = encode_pending(_task_record(pending, "task_working")) if pending is not None else None
        kept = _note(note)
        with self._write() as tx:
            row = self._run(
                tx, "SELECT note FROM toolnexus_call WHERE key = :key", key=check_key(key)
            ).fetchone()
            self._end(
                tx,
                key,
                token,
                "status = 'working', poll_at = :now + :poll_in, note = :note, token = NULL,"
                " lease_until = NULL, updated = :now, pending = COALESCE(:pending, pending)",
                poll_in=poll_in,
                note=kept,
                pending=text,
            )
            if row is not None and row[0] != kept:  # the history keeps each message once, not each poll
                self._keep(tx, "working", key, "working", kept)

    def task_asks(self, key: str, token: str, pending: Pending, *, note: str | None) -> None:
        """End a claim on a parked task that asks: its record becomes ``pending`` (the task,
        with its questions of the moment), ``waiting`` for their answers (``ready`` once all
        are recorded, for the claim that sends them); ``note`` kept.

        Raises:
            LeaseLostError: the claim is no longer this token's; nothing is changed.
            ValueError: ``pending`` is not a task's, or holds no question.
        """
        pending = _task_record(pending, "task_asks")
        if not pending.requests:
            raise ValueError("task_asks: pending holds no question")
        text = encode_pending(pending)
        with self._write() as tx:
            (earlier,) = self._run(
                tx, "SELECT count(*) FROM toolnexus_answer WHERE key = :key", key=check_key(key)
            ).fetchone()
            server, target = self._end(
                tx,
                key,
                token,
                "status = 'waiting', pending = :pending, asked = :asked, expires = :expires, note = :note,"
                " poll_at = NULL, token = NULL, lease_until = NULL, updated = :now",
                pending=text,
                asked=int(earlier) + len(pending.requests),
                expires=earliest_expiry(pending, now=self._wall()),
                note=_note(note),
            )
            event = self._log(tx, Event("parked", key, "waiting", server, target, _asks(pending)))
        fire(self.on_event, event)

    def task_ended(self, key: str, token: str, status: Literal["cancelled", "expired"], reason: str) -> None:
        """End a claim on a parked task that ended without a result: ``cancelled`` (by the
        server) or ``expired`` (its time to live ran out), with ``reason`` kept.

        Raises:
            LeaseLostError: the claim is no longer this token's; nothing is changed.
        """
        if status not in ("cancelled", "expired"):
            raise ValueError(f"task_ended: status must be cancelled or expired, not {str(status)[:40]!r}")
        with self._write() as tx:
            server, target = self._end(
                tx,
                key,
                token,
                "status = :status, error = :error, poll_at = NULL, token = NULL, lease_until = NULL,"
                " updated = :now",
                status=status,
                error=str(reason),
            )
            event = self._log(tx, Event("finished", key, status, server, target, str(reason)))
        fire(self.on_event, event)

    def next_poll(self, *, server: object = ANY_SERVER) -> float | None:
        """Seconds until the earliest ``working`` task is due a poll (0 when one is due now),
        or ``None`` when none works: how long a worker may sleep."""
        check_server(server)
        params: dict[str, Any] = {}
        where = "status = 'working'" + _from_server(server, params)
        with self._read() as tx:
            row = self._run(
                tx, f"SELECT min(poll_at) - :now FROM toolnexus_call WHERE {where}", **params
            ).fetchone()
        if row is None or row[0] is None:
            return None
        return max(0.0, float(row[0]))

    def retry(self, key: str, *, by: str | None = None) -> None:
        """Put a ``failed`` call back to ``ready``: a person decided to try it again.

        Raises:
            KeyError: nothing is kept under ``key``.
            ValueError: the call is not ``failed``, or its record does not read.
        """
        self.get(key)  # KeyError, or ValueError for a record that does not read
        with self._write() as tx:
            row = self._row(tx, key, "status, server, target")
            if row[0] != "failed":
                raise ValueError(f"{key} is {row[0]}, not failed")
            self._run(
                tx, "UPDATE toolnexus_call SET status = 'ready', updated = :now WHERE key = :key", key=key
            )
            event = self._log(tx, Event("ready", key, "ready", row[1], row[2], "retried"), _who(by, "by"))
            self._d.notify(tx, key, ready=True)
        fire(self.on_event, event)

    def expire(self, key: str, reason: str = "the host's deadline passed", *, by: str | None = None) -> None:
        """Mark the call under ``key`` ``expired`` with ``reason``, unless it is being resumed
        or is finished (``ValueError``); ``KeyError`` when there is none."""
        key = check_key(key)
        with self._write() as tx:
            row = self._row(tx, key, "status, server, target")
            if row[0] not in ("waiting", "ready", "working"):
                raise ValueError(f"{key} is {row[0]}; only a waiting, ready or working call can expire")
            self._run(
                tx,
                "UPDATE toolnexus_call SET status = 'expired', error = :error, updated = :now"
                " WHERE key = :key",
                key=key,
                error=str(reason),
            )
            event = self._log(
                tx, Event("finished", key, "expired", row[1], row[2], str(reason)), _who(by, "by")
            )
            self._d.notify(tx, key)
        fire(self.on_event, event)

    def sweep(self) -> int:
        """Mark ``expired`` every waiting call whose deadline passed (a question's
        ``expiresAt``, or the host's ``deadline``); make ``ready`` again every call whose
        resumer's lease ran out (counted in its ``leases_lost``); mark ``withdrawn`` every
        live question whose holder's lease or time ran out; purge finished calls older than
        the retention. Returns how many calls expired."""
        with self._write() as tx:
            expired = [
                (key, server, target, _TASK_EXPIRED if status == "working" else _EXPIRED)
                for key, server, target, status in self._run(
                    tx,
                    "SELECT key, server, target, status FROM toolnexus_call"
                    " WHERE status IN ('waiting', 'working') AND expires < :now"
                    f" ORDER BY seq{self._d.lock}",
                ).fetchall()
            ]
            for reason in (_EXPIRED, _TASK_EXPIRED):
                self._in(
                    tx,
                    "UPDATE toolnexus_call SET status = 'expired', error = :error, poll_at = NULL,"
                    " updated = :now WHERE key IN ({keys})",
                    [str(row[0]) for row in expired if row[3] == reason],
                    error=reason,
                )
            lapsed = self._run(
                tx,
                "SELECT key, server, target FROM toolnexus_call"
                " WHERE status = 'resuming' AND lease_until < :now"
                f" ORDER BY seq{self._d.lock}",
            ).fetchall()
            self._in(
                tx,
                "UPDATE toolnexus_call SET status = 'ready', token = NULL, lease_until = NULL,"
                " lost = lost + 1,"
                " updated = :now WHERE key IN ({keys})",
                [str(row[0]) for row in lapsed],
            )
            withdrawn = self._run(
                tx,
                "SELECT key, server, target, CASE WHEN lease_until < :now THEN 1 ELSE 0 END"
                " FROM toolnexus_call WHERE status = 'live' AND (lease_until < :now OR expires < :now)"
                f" ORDER BY seq{self._d.lock}",
            ).fetchall()
            for gone in (1, 0):
                self._in(
                    tx,
                    "UPDATE toolnexus_call SET status = 'withdrawn', error = :error, lease_until = NULL,"
                    " updated = :now WHERE key IN ({keys})",
                    [str(row[0]) for row in withdrawn if row[3] == gone],
                    error=_GONE if gone else _LATE,
                )
            if self.retention is not None:
                finished = (
                    "status IN ('done', 'failed', 'expired', 'cancelled', 'answered', 'withdrawn')"
                    " AND updated < :now - :retention"
                )
                for table in ("toolnexus_answer", "toolnexus_history"):
                    self._run(
                        tx,
                        f"DELETE FROM {table} WHERE key IN (SELECT key FROM toolnexus_call WHERE {finished})",
                        retention=self.retention,
                    )
                self._run(tx, f"DELETE FROM toolnexus_call WHERE {finished}", retention=self.retention)
            events = [
                *(
                    Event("finished", str(key), "expired", server, target, why)
                    for key, server, target, why in expired
                ),
                *(
                    Event("ready", str(key), "ready", server, target, "a resumer's lease ran out")
                    for key, server, target in lapsed
                ),
                *(
                    Event("withdrawn", str(key), "withdrawn", server, target, _GONE if gone else _LATE)
                    for key, server, target, gone in withdrawn
                ),
            ]
            for event in events:
                self._log(tx, event)
            if expired or lapsed or withdrawn:
                self._d.notify(tx, str((expired or lapsed or withdrawn)[0][0]), ready=bool(lapsed))
        for event in events:
            fire(self.on_event, event)
        return len(expired)

    # --- history -----------------------------------------------------------------------------

    def _log(self, tx: Tx, event: Event, actor: str | None = None, via: str | None = None) -> Event:
        """Keep ``event`` in the call's history, in ``tx`` (so with the change it tells of);
        return it, to be fired once the change is committed."""
        self._keep(tx, event.kind, event.key, event.status, event.error, actor, via)
        return event

    def _keep(
        self,
        tx: Tx,
        kind: HistoryKind,
        key: str,
        status: Status | None,
        detail: str | None = None,
        actor: str | None = None,
        via: str | None = None,
    ) -> None:
        """One entry of a call's history, in ``tx``."""
        self._run(
            tx,
            "INSERT INTO toolnexus_history (key, at, kind, status, actor, via, detail)"
            " VALUES (:key, :now, :kind, :status, :actor, :via, :detail)",
            key=key,
            kind=kind,
            status=status,
            actor=actor,
            via=via,
            detail=detail[:_DETAIL_LIMIT] if detail is not None else None,
        )

    def history(self, key: str) -> builtins.list[HistoryEntry]:
        """What happened to the call under ``key``, oldest first: each change of its status
        (parked, asked, claimed by which worker, finished how), each answer (by whom, through
        what, its request's id and action: never its content), each time a person opened it.
        ``KeyError`` when nothing is kept under ``key``."""
        key = check_key(key)
        with self._read() as tx:
            known = self._run(tx, "SELECT 1 FROM toolnexus_call WHERE key = :key", key=key).fetchone()
            rows = self._run(
                tx,
                "SELECT at, kind, status, actor, via, detail FROM toolnexus_history WHERE key = :key"
                " ORDER BY seq",
                key=key,
            ).fetchall()
        if known is None:
            raise KeyError(key)
        return [_entry(row) for row in rows]

    def opened(self, key: str, *, by: str | None, via: str | None = None) -> None:
        """Keep in the call's history that ``by`` opened it (a page of the inbox): once per
        person and way; ``KeyError`` when nothing is kept under ``key``."""
        key = check_key(key)
        actor, way = _who(by, "by"), _who(via, "via")
        with self._write() as tx:
            (status,) = self._row(tx, key, "status")
            seen = self._run(
                tx, "SELECT actor, via FROM toolnexus_history WHERE key = :key AND kind = 'opened'", key=key
            ).fetchall()
            if (actor, way) not in {(row[0], row[1]) for row in seen}:
                self._keep(tx, "opened", key, status, None, actor, way)

    # --- notifications: each target's place in the history ----------------------------------

    @property
    def instance(self) -> str:
        """The store's own random name, given when it was made: an event id is it and an entry's
        place in the history."""
        with self._read() as tx:
            row = tx.run("SELECT value FROM toolnexus_meta WHERE name = 'instance'").fetchone()
        return str(row[0]) if row is not None else "store"

    def notified(self, key: str, *, target: str, what: str) -> None:
        """Keep in the call's history that the notification ``what`` (its type) about it went
        to ``target`` (the target's name: never a URL)."""
        key = check_key(key)
        with self._write() as tx:
            row = self._run(tx, "SELECT status FROM toolnexus_call WHERE key = :key", key=key).fetchone()
            if row is not None:  # removed meanwhile: nothing to tell of
                self._keep(tx, "notified", key, row[0], str(what)[:100], _who(target, "target"))

    def remind(self, after: float) -> int:
        """Keep a ``reminded`` entry in the history of every question that has waited ``after``
        seconds since it was asked, or since its last reminder (a notifier then tells its
        targets again); how many. Of any number of notifiers doing so at once, one reminds."""
        after = check_lease(after, "after")
        with self._write() as tx:
            due = self._run(
                tx,
                "SELECT c.key, c.status FROM toolnexus_call c WHERE c.status IN ('waiting', 'live')"
                " AND c.updated < :now - :after AND NOT EXISTS (SELECT 1 FROM toolnexus_history h"
                " WHERE h.key = c.key AND h.kind = 'reminded' AND h.at > :now - :after)"
                f" ORDER BY c.seq{self._d.lock}",
                after=after,
            ).fetchall()
            for key, status in due:
                self._keep(tx, "reminded", str(key), status, f"unanswered for {span(after)}")
            if due:
                self._d.notify(tx, str(due[0][0]))
        return len(due)

    @property
    def link_key(self) -> str:
        """The key the store signs its answer links with (made with the store; whoever reads
        the store may make links, as they may record answers)."""
        with self._read() as tx:
            row = tx.run("SELECT value FROM toolnexus_meta WHERE name = 'link_key'").fetchone()
        if row is None:
            raise StoreError(f"{self.where} has no link key")
        return str(row[0])

    def take_target(self, target: str, holder: str, lease: float) -> int | None:
        """Take the sending to ``target`` for ``lease`` seconds, as ``holder`` (one sender per
        target at a time, in any process): its place in the history, the ``seq`` of the last
        entry sent; ``None`` when another holds it, or when it waits out a failure's pause. A
        target seen for the first time starts at the history's end: it is told what happens
        from now on."""
        lease = check_lease(lease)
        with self._write() as tx:
            self._run(  # (the WHERE makes SQLite read ON CONFLICT as the upsert it is)
                tx,
                "INSERT INTO toolnexus_cursor (target, seq) SELECT :target, COALESCE(max(seq), 0)"
                " FROM toolnexus_history WHERE true ON CONFLICT DO NOTHING",
                target=target,
            )
            taken = self._run(
                tx,
                "UPDATE toolnexus_cursor SET holder = :holder, lease_until = :now + :lease"
                " WHERE target = :target AND (holder IS NULL OR holder = :holder OR lease_until < :now)"
                " AND (next_at IS NULL OR next_at <= :now)",
                target=target,
                holder=holder,
                lease=lease,
            ).rowcount
            if not taken:
                return None
            (seq,) = self._run(
                tx, "SELECT seq FROM toolnexus_cursor WHERE target = :target", target=target
            ).fetchone()
        return int(seq)

    def sendable(self, after: int, *, limit: int = 50) -> builtins.list[Sendable]:
        """The history's entries after ``after`` (a place), oldest first, at most ``limit``,
        with their call's key, server and target (an entry of a call since removed is left
        out)."""
        with self._read() as tx:
            rows = self._run(
                tx,
                "SELECT h.seq, h.key, c.server, c.target, h.at, h.kind, h.status, h.actor, h.via, h.detail"
                " FROM toolnexus_history h JOIN toolnexus_call c ON c.key = h.key"
                " WHERE h.seq > :after ORDER BY h.seq LIMIT :limit",
                after=int(after),
                limit=check_limit(limit),
            ).fetchall()
        return [Sendable(int(row[0]), str(row[1]), row[2], row[3], _entry(row[4:])) for row in rows]

    def target_sent(self, target: str, holder: str, seq: int, *, lease: float = 60.0) -> None:
        """``target`` was sent everything up to ``seq``: its place moves there, its failures
        forgotten, the holder's hold renewed for ``lease`` seconds. ``LeaseLostError`` when
        ``holder`` no longer holds it."""
        with self._write() as tx:
            moved = self._run(
                tx,
                "UPDATE toolnexus_cursor SET seq = :seq, attempts = 0, next_at = NULL, error = NULL,"
                " lease_until = :now + :lease WHERE target = :target AND holder = :holder",
                target=target,
                holder=holder,
                seq=int(seq),
                lease=check_lease(lease),
            ).rowcount
        if not moved:
            raise LeaseLostError(f"the sending to {target} is no longer this sender's")

    def target_failed(
        self, target: str, holder: str, error: str, *, first: float = 1.0, longest: float = 300.0
    ) -> float:
        """Sending to ``target`` failed: it is let go, and nobody sends to it for a pause that
        doubles with each failure in a row, from ``first`` up to ``longest`` seconds; returns
        the pause."""
        with self._write() as tx:
            row = self._run(
                tx, "SELECT attempts FROM toolnexus_cursor WHERE target = :target", target=target
            ).fetchone()
            pause = float(min(first * 2 ** min(int(row[0]) if row is not None else 0, 30), longest))
            self._run(
                tx,
                "UPDATE toolnexus_cursor SET attempts = attempts + 1, next_at = :now + :pause,"
                " error = :error, holder = NULL, lease_until = NULL"
                " WHERE target = :target AND holder = :holder",
                target=target,
                holder=holder,
                pause=pause,
                error=str(error)[:_DETAIL_LIMIT],
            )
        return pause

    def release_target(self, target: str, holder: str) -> None:
        """Let go of the sending to ``target`` (another sender may take it at once)."""
        with self._write() as tx:
            self._run(
                tx,
                "UPDATE toolnexus_cursor SET holder = NULL, lease_until = NULL"
                " WHERE target = :target AND holder = :holder",
                target=target,
                holder=holder,
            )

    # --- waking ------------------------------------------------------------------------------

    def watch(self, *, ready_only: bool = False) -> Watcher:
        """A [`Watcher`][toolnexus.durable.Watcher] of the store's changes for one consumer:
        its ``wait(timeout)`` (or ``await wait_async(timeout)``) returns ``True`` when the
        store may hold something new since that watcher last looked: a call parked, answered,
        claimed, finished, removed, in any process. Each consumer (a worker, an inbox page, a
        live question) takes its own; all the watchers of one store object share one
        connection (or, for SQLite, one poller) that wakes them. With ``ready_only`` (a
        worker's), it wakes only when a call may have become ready to claim: PostgreSQL tells
        which changes those are; SQLite cannot, and wakes it on every commit."""
        return self._changes.watch(ready_only=ready_only)
