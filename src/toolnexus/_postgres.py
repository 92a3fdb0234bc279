"""[`PostgresStore`][toolnexus.durable.PostgresStore]: parked calls in PostgreSQL, for hosts whose
agents, workers and inbox run on many machines. The same lifecycle and claim rule as
[`SqliteStore`][toolnexus.durable.SqliteStore] (one contract test suite runs against both):
claims by ``SELECT ... FOR UPDATE SKIP LOCKED``, wake-ups by ``LISTEN``/``NOTIFY``, leases on the
database's clock, a versioned schema created on first use.

Needs psycopg 3 and its pool: ``pip install 'toolnexus[postgres]'``. Imported only when a
``PostgresStore`` is made.
"""

from __future__ import annotations

import builtins
import contextlib
import logging
import secrets
import threading
import time
import weakref
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, Final

from ._pending import Pending
from ._store import (
    ANY_SERVER,
    DEFAULT_RETENTION,
    STATUSES,
    STORE_FORMAT,
    Call,
    Claim,
    Event,
    EventHook,
    LeaseLostError,
    Status,
    StoreError,
    StoreUnavailableError,
    call_of,
    check_answer,
    check_deadline,
    check_key,
    check_lease,
    check_retention,
    claim_until,
    decode_answer,
    decode_pending,
    dumps,
    earliest_expiry,
    encode_pending,
    fire,
    new_key,
    outcome_json,
    page_calls_of,
    page_query,
    page_rows,
)
from ._util import utc_timestamp
from ._wire import Answer

if TYPE_CHECKING:
    import psycopg
    from psycopg_pool import ConnectionPool

__all__ = ["CHANNEL", "PostgresStore"]

logger = logging.getLogger(__name__)

CHANNEL: Final = "toolnexus_store"
"""The ``NOTIFY`` channel: a call's key is sent on it when the call becomes ready."""

_NOW: Final = "extract(epoch from clock_timestamp())::float8"
_LOCK_ID: Final = 0x746F6F6C6E6578  # the advisory lock held while the schema is made ("toolnex")
_SCHEMA: Final = (
    "CREATE TABLE IF NOT EXISTS toolnexus_meta (name text PRIMARY KEY, value text NOT NULL)",
    "CREATE TABLE IF NOT EXISTS toolnexus_call ("
    " seq bigserial UNIQUE,"
    " key text PRIMARY KEY,"
    " created text NOT NULL,"
    " pending text NOT NULL,"
    " status text NOT NULL,"
    " server text,"
    " asked integer NOT NULL,"
    " expires float8,"
    " updated float8 NOT NULL,"
    " token text,"
    " lease_until float8,"
    " attempts integer NOT NULL DEFAULT 0,"
    " outcome text,"
    " error text,"
    " follows text,"
    " next text)",
    "CREATE INDEX IF NOT EXISTS toolnexus_call_status ON toolnexus_call (status, seq)",
    "CREATE TABLE IF NOT EXISTS toolnexus_answer ("
    " key text NOT NULL REFERENCES toolnexus_call (key) ON DELETE CASCADE,"
    " request_id text NOT NULL,"
    " answer text NOT NULL,"
    " PRIMARY KEY (key, request_id))",
)
_CALL_COLUMNS: Final = (
    "key, status, pending, server, created, updated, attempts, lease_until, error, outcome, follows, next"
)
_CHECK_IDLE: Final = 0.5  # seconds a pooled connection may idle before it is checked on use
_LOST: Final = "the claim on {key} was lost: its lease ran out and it was taken since"


def _where(dsn: str) -> str:
    """The database a DSN names, for messages: host, port and name, never a password."""
    try:
        from psycopg.conninfo import conninfo_to_dict

        parts = conninfo_to_dict(dsn)
    except Exception:
        return "PostgreSQL"
    host = parts.get("host") or "localhost"
    port = parts.get("port") or "5432"
    name = parts.get("dbname") or parts.get("user") or ""
    return f"PostgreSQL at {host}:{port}/{name}"


def _reason(err: BaseException) -> str:
    text = " ".join(str(err).split()) or type(err).__name__
    return text[:300]


class PostgresStore:
    """Parked calls and their answers in a PostgreSQL database, shared by any number of
    processes on any number of machines.

    ```python
    store = PostgresStore("postgresql://toolnexus@db.internal/agents")
    ```

    Behaves as [`SqliteStore`][toolnexus.durable.SqliteStore] does (the same methods, the
    same lifecycle, the same errors). A claim is one ``UPDATE`` over
    ``SELECT ... FOR UPDATE SKIP LOCKED``, so concurrent resumers never wait for each other
    and never get the same call; leases are timed by the database's clock, so the machines'
    clocks need not agree. Recording the last answer sends ``NOTIFY`` on
    [`CHANNEL`][toolnexus.durable.CHANNEL], which [`wait`][toolnexus.durable.PostgresStore.wait]
    listens for. The tables (``toolnexus_meta``, ``toolnexus_call``, ``toolnexus_answer``)
    are made on first use, under an advisory lock; a schema of a newer format is refused.
    Connections come from a small pool and are checked before use, so the store carries on
    after the database restarts; an operation that meets a lost connection raises
    [`StoreUnavailableError`][toolnexus.durable.StoreUnavailableError] and the next one
    reconnects.

    Args:
        dsn: a libpq connection string or ``postgresql://`` URL.
        create: make the tables when absent; otherwise a database without them is refused.
        read_only: never write (every method that writes raises ``StoreError``).
        retention: seconds a finished call is kept before ``sweep`` purges it (``None``: for ever).
        on_event: the notification hook, as for ``SqliteStore``.
        pool_size: most connections held at once (``wait`` holds one more, of its own).
        connect_timeout: seconds to wait for the database when connecting.

    Raises:
        StoreUnavailableError: the database cannot be reached.
        StoreError: its schema is newer than this toolnexus, or (``create=False`` or
            ``read_only``) it holds no store.
    """

    def __init__(
        self,
        dsn: str,
        *,
        create: bool = True,
        read_only: bool = False,
        retention: float | None = DEFAULT_RETENTION,
        on_event: EventHook | None = None,
        pool_size: int = 4,
        connect_timeout: float = 5.0,
    ) -> None:
        if not isinstance(dsn, str):
            raise TypeError(f"PostgresStore: dsn must be a str, not {type(dsn).__name__}")

        try:
            import psycopg  # noqa: F401
            from psycopg_pool import ConnectionPool
        except ImportError:
            raise ImportError(
                "PostgresStore needs psycopg 3 and psycopg-pool: pip install 'toolnexus[postgres]'"
            ) from None
        self.dsn = dsn
        self.where = _where(dsn)
        self.read_only = bool(read_only)
        self.retention = check_retention(retention)
        self.on_event = on_event
        self._connect_timeout = max(1, round(float(connect_timeout)))
        self._wait_lock = threading.Lock()
        self._listener: psycopg.Connection[Any] | None = None
        self._listener_lost = False
        self._last_used: weakref.WeakKeyDictionary[Any, float] = weakref.WeakKeyDictionary()
        self._check_schema(create)
        self._pool: ConnectionPool[Any] = ConnectionPool(
            dsn,
            min_size=1,
            max_size=max(1, int(pool_size)),
            kwargs={"autocommit": True, "connect_timeout": self._connect_timeout},
            check=self._check_connection,
            open=False,
            name="toolnexus",
            reconnect_timeout=0,
        )
        self._pool.open(wait=False)

    def __repr__(self) -> str:
        return f"PostgresStore({self.where!r})"

    def __enter__(self) -> PostgresStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the pool and the listening connection."""
        self._pool.close()
        with self._wait_lock:
            if self._listener is not None:
                with contextlib.suppress(Exception):
                    self._listener.close()
                self._listener = None

    def _check_connection(self, conn: psycopg.Connection[Any]) -> None:
        """The pool's ``check``: a round trip to the database for a connection idle longer than
        :data:`_CHECK_IDLE` (after a restart, the idle ones are found dead and replaced
        before use); one used a moment ago goes unchecked, and if the database went away in
        that moment the operation raises ``StoreUnavailableError`` and the next reconnects."""
        from psycopg_pool import ConnectionPool

        if time.monotonic() - self._last_used.get(conn, 0.0) > _CHECK_IDLE:
            ConnectionPool.check_connection(conn)

    def _connect(self) -> psycopg.Connection[Any]:
        import psycopg

        try:
            return psycopg.connect(self.dsn, autocommit=True, connect_timeout=self._connect_timeout)
        except psycopg.Error as err:
            raise StoreUnavailableError(f"cannot reach {self.where}: {_reason(err)}") from None

    def _check_schema(self, create: bool) -> None:
        import psycopg

        conn = self._connect()
        try:
            with conn.transaction():
                present = conn.execute("SELECT to_regclass('toolnexus_meta') IS NOT NULL").fetchone()
                if not (present and present[0]):
                    if self.read_only or not create:
                        raise StoreError(f"{self.where} holds no toolnexus store")
                    conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_ID,))
                    for statement in _SCHEMA:
                        conn.execute(statement)
                    conn.execute(
                        "INSERT INTO toolnexus_meta (name, value) VALUES ('format', %s)"
                        " ON CONFLICT DO NOTHING",
                        (str(STORE_FORMAT),),
                    )
                row = conn.execute("SELECT value FROM toolnexus_meta WHERE name = 'format'").fetchone()
        except psycopg.OperationalError as err:
            raise StoreUnavailableError(f"cannot reach {self.where}: {_reason(err)}") from None
        finally:
            conn.close()
        text = row[0] if row is not None else None
        if not isinstance(text, str) or not text.isdigit() or len(text) > 6:
            raise StoreError(f"{self.where}: the store's format is unreadable: {str(text)[:40]!r}")
        if int(text) != STORE_FORMAT:
            raise StoreError(
                f"{self.where} holds a store of format {text}; this toolnexus reads format {STORE_FORMAT}"
            )

    @contextlib.contextmanager
    def _conn(self, *, write: bool = False, single: bool = False) -> Iterator[psycopg.Connection[Any]]:
        """A pooled connection in one transaction (or, ``single``, for one statement, which is
        a transaction of its own); a lost database becomes ``StoreUnavailableError``."""
        import psycopg
        from psycopg_pool import PoolTimeout

        if write and self.read_only:
            raise StoreError(f"{self.where} was opened read-only")
        try:
            with self._pool.connection(timeout=self._connect_timeout) as conn:
                try:
                    if single:
                        yield conn
                    else:
                        with conn.transaction():
                            yield conn
                finally:
                    self._last_used[conn] = time.monotonic()
        except (psycopg.OperationalError, psycopg.InterfaceError, PoolTimeout) as err:
            raise StoreUnavailableError(f"lost {self.where}: {_reason(err)}") from None

    # --- parking and answering -------------------------------------------------------------

    def put(self, pending: Pending, *, follows: str | None = None, deadline: float | None = None) -> str:
        """Keep ``pending``, ``waiting``; return its key (16 random hex digits). As
        [`SqliteStore.put`][toolnexus.durable.SqliteStore.put]."""

        text = encode_pending(pending)
        if follows is not None:
            check_key(follows)
        expires = earliest_expiry(pending, check_deadline(deadline))
        with self._conn(write=True, single=True) as conn:
            key = self._insert(conn, pending, text, expires, follows)
        fire(self.on_event, Event("parked", key, "waiting", pending.server, pending.target))
        return key

    @staticmethod
    def _insert(
        conn: psycopg.Connection[Any], pending: Pending, text: str, expires: float | None, follows: str | None
    ) -> str:
        while True:
            key = new_key()
            row = conn.execute(
                "INSERT INTO toolnexus_call (key, created, pending, status, server, asked, expires, updated,"
                f" follows) VALUES (%s, %s, %s, 'waiting', %s, %s, %s, {_NOW}, %s)"
                " ON CONFLICT (key) DO NOTHING RETURNING key",
                (key, utc_timestamp(), text, pending.server, len(pending.requests), expires, follows),
            ).fetchone()
            if row is not None:
                return key

    def get(self, key: str) -> Pending:
        """The pending kept under ``key``; ``KeyError`` when none, ``ValueError`` when it does not read."""

        with self._conn(single=True) as conn:
            row = conn.execute(
                "SELECT pending FROM toolnexus_call WHERE key = %s", (check_key(key),)
            ).fetchone()
        if row is None:
            raise KeyError(key)
        return decode_pending(key, row[0])

    def list(self) -> builtins.list[tuple[str, Pending]]:
        """Every call whose record reads, with its key, oldest first."""
        return [(call.key, call.pending) for call in self.calls() if call.pending is not None]

    def calls(self, *, status: Status | None = None) -> builtins.list[Call]:
        """Every call (or those of one ``status``), oldest first; as
        [`SqliteStore.calls`][toolnexus.durable.SqliteStore.calls]."""

        if status is not None and status not in STATUSES:
            raise ValueError(f"status must be one of {', '.join(STATUSES)}, not {str(status)[:40]!r}")
        where, params = ("WHERE status = %s", (status,)) if status is not None else ("", ())
        with self._conn() as conn:
            rows = conn.execute(
                f"SELECT {_CALL_COLUMNS} FROM toolnexus_call {where} ORDER BY seq", params
            ).fetchall()
            answered = conn.execute(
                "SELECT a.key, a.request_id FROM toolnexus_answer a JOIN toolnexus_call c USING (key)"
                f" {where.replace('status', 'c.status')}",
                params,
            ).fetchall()
        ids: dict[str, set[str]] = {}
        for key, request_id in answered:
            ids.setdefault(key, set()).add(request_id)
        calls = [call_of(tuple(row), ids.get(row[0], set())) for row in rows]
        if status is not None:
            calls = [call for call in calls if call.status == status]
        return calls

    def call(self, key: str) -> Call:
        """The call kept under ``key``; ``KeyError`` when none."""

        key = check_key(key)
        with self._conn() as conn:
            row = conn.execute(
                f"SELECT {_CALL_COLUMNS} FROM toolnexus_call WHERE key = %s", (key,)
            ).fetchone()
            answered = conn.execute(
                "SELECT request_id FROM toolnexus_answer WHERE key = %s", (key,)
            ).fetchall()
        if row is None:
            raise KeyError(key)
        return call_of(tuple(row), {request_id for (request_id,) in answered})

    def record(self, key: str, answer: Answer | Mapping[str, Any]) -> None:
        """Keep ``answer``; the last one makes the call ``ready`` and sends ``NOTIFY``. As
        [`SqliteStore.record`][toolnexus.durable.SqliteStore.record]: the form is read before
        the row is locked; of two racing answers to one request exactly one is kept, the
        other gets ``ValueError``."""
        import psycopg

        key = check_key(key)
        answer = check_answer(self.get(key), key, answer, "PostgresStore.record")
        text = dumps(answer.to_dict())
        with self._conn(write=True) as conn:
            row = conn.execute(
                "SELECT status, asked, server FROM toolnexus_call WHERE key = %s FOR UPDATE", (key,)
            ).fetchone()
            if row is None:
                raise KeyError(key)
            status, asked, server = row
            try:
                with conn.transaction():  # a savepoint: the refusal leaves the transaction usable
                    conn.execute(
                        "INSERT INTO toolnexus_answer (key, request_id, answer) VALUES (%s, %s, %s)",
                        (key, answer.id, text),
                    )
            except psycopg.errors.UniqueViolation:
                raise ValueError(f"PostgresStore.record: {answer.id} of {key} is already answered") from None
            if status != "waiting":
                raise ValueError(f"PostgresStore.record: {key} is {status}, no longer waiting for answers")
            count = conn.execute("SELECT count(*) FROM toolnexus_answer WHERE key = %s", (key,)).fetchone()
            ready = count is not None and count[0] >= asked
            if ready:
                conn.execute(
                    f"UPDATE toolnexus_call SET status = 'ready', updated = {_NOW} WHERE key = %s", (key,)
                )
                conn.execute("SELECT pg_notify(%s, %s)", (CHANNEL, key))
        if ready:
            fire(self.on_event, Event("ready", key, "ready", server, None))

    def answers(self, key: str) -> dict[str, Answer]:
        """The answers recorded for ``key``; ``KeyError`` when none, ``ValueError`` when one does not read."""

        key = check_key(key)
        with self._conn() as conn:
            known = conn.execute("SELECT 1 FROM toolnexus_call WHERE key = %s", (key,)).fetchone()
            rows = conn.execute(
                "SELECT request_id, answer FROM toolnexus_answer WHERE key = %s", (key,)
            ).fetchall()
        if known is None:
            raise KeyError(key)
        return {str(request_id): decode_answer(key, request_id, text) for request_id, text in rows}

    def remove(self, key: str) -> None:
        """Forget the call under ``key`` and its answers; ``KeyError`` when there is none."""

        key = check_key(key)
        with self._conn(write=True, single=True) as conn:
            gone = conn.execute("DELETE FROM toolnexus_call WHERE key = %s", (key,)).rowcount
        if not gone:
            raise KeyError(key)

    def page(
        self, *, limit: int = 50, before: str | None = None, server: str | None = None
    ) -> tuple[builtins.list[tuple[str, str, Pending | ValueError]], str | None]:
        """One page of parked calls, newest first; as
        [`SqliteStore.page`][toolnexus.durable.SqliteStore.page]."""
        sql, params = page_query(limit, before, server, "%s")
        with self._conn(single=True) as conn:
            rows = conn.execute(
                "SELECT seq, key, created, pending FROM toolnexus_call" + sql, params
            ).fetchall()
        return page_rows(rows, limit)

    def page_calls(
        self, *, limit: int = 50, before: str | None = None, server: str | None = None
    ) -> tuple[builtins.list[Call], str | None]:
        """One page of calls with their statuses, newest first, in two queries; as
        [`SqliteStore.page_calls`][toolnexus.durable.SqliteStore.page_calls]."""
        sql, params = page_query(limit, before, server, "%s")
        with self._conn() as conn:
            rows = conn.execute(f"SELECT seq, {_CALL_COLUMNS} FROM toolnexus_call" + sql, params).fetchall()
            keys = [row[1] for row in rows[:limit]]
            answered = (
                conn.execute(
                    "SELECT key, request_id FROM toolnexus_answer WHERE key = ANY(%s)", (keys,)
                ).fetchall()
                if keys
                else []
            )
        return page_calls_of(rows, answered, limit)

    # --- claiming and finishing ------------------------------------------------------------

    def claim(
        self, *, lease: float, server: object = ANY_SERVER, limit: int = 1, key: str | None = None
    ) -> builtins.list[Claim]:
        """Claim up to ``limit`` ready calls (or ones whose lease ran out), oldest first, for
        ``lease`` seconds, skipping rows other claimers hold locked; with ``key``, that one
        call only. As [`SqliteStore.claim`][toolnexus.durable.SqliteStore.claim]."""

        return claim_until(self._claim_once, lease=lease, server=server, limit=limit, key=key)

    def _claim_once(
        self, lease: float, server: object, limit: int, key: str | None = None
    ) -> tuple[int, builtins.list[Claim]]:
        token = secrets.token_hex(12)
        where = f"(status = 'ready' OR (status = 'resuming' AND lease_until < {_NOW}))"
        params: builtins.list[Any] = []
        if server is not ANY_SERVER:
            where += " AND server IS NOT DISTINCT FROM %s"
            params.append(server)
        if key is not None:
            where += " AND key = %s"
            params.append(key)
        with self._conn(write=True) as conn:
            rows = conn.execute(
                "WITH picked AS (SELECT key FROM toolnexus_call"
                f" WHERE {where} ORDER BY seq LIMIT %s FOR UPDATE SKIP LOCKED)"
                f" UPDATE toolnexus_call c SET status = 'resuming', token = %s, lease_until = {_NOW} + %s,"
                f" attempts = c.attempts + 1, updated = {_NOW} FROM picked WHERE c.key = picked.key"
                " RETURNING c.key, c.pending, c.attempts, c.lease_until, c.seq",
                (*params, limit, token, lease),
            ).fetchall()
            keys = [row[0] for row in rows]
            answer_rows = (
                conn.execute(
                    "SELECT key, request_id, answer FROM toolnexus_answer WHERE key = ANY(%s)", (keys,)
                ).fetchall()
                if keys
                else []
            )
        by_key: dict[str, builtins.list[Any]] = {}
        for key, request_id, text in answer_rows:
            by_key.setdefault(key, []).append((request_id, text))
        out = []
        for key, text, attempts, until, _ in sorted(rows, key=lambda row: row[4]):
            try:
                pending = decode_pending(key, text)
                answers = {
                    str(request_id): decode_answer(key, request_id, answer)
                    for request_id, answer in by_key.get(key, [])
                }
            except ValueError as err:
                logger.warning("%s does not read: marked failed", key)
                with contextlib.suppress(LeaseLostError):
                    self.fail(key, token, str(err))
                continue
            out.append(Claim(key, pending, answers, token, int(attempts), float(until)))
        return len(rows), out

    def _end(self, key: str, token: str, sql: str, params: tuple[Any, ...]) -> str | None:

        key = check_key(key)
        with self._conn(write=True, single=True) as conn:
            row = conn.execute(sql + " RETURNING server", (*params, key, token)).fetchone()
        if row is None:
            raise LeaseLostError(_LOST.format(key=key))
        server: str | None = row[0]
        return server

    _MINE: Final = " WHERE key = %s AND token = %s AND status = 'resuming'"

    def renew(self, key: str, token: str, lease: float) -> float:
        """Extend the claim's lease to ``lease`` seconds from now (the database's clock);
        returns the new deadline. ``LeaseLostError`` when the claim is no longer this token's."""
        lease = check_lease(lease)
        with self._conn(write=True, single=True) as conn:
            row = conn.execute(
                f"UPDATE toolnexus_call SET lease_until = {_NOW} + %s"
                + self._MINE
                + " RETURNING lease_until",
                (lease, key, token),
            ).fetchone()
        if row is None:
            raise LeaseLostError(_LOST.format(key=key))
        return float(row[0])

    def finish(self, key: str, token: str, result: Mapping[str, Any]) -> None:
        """End the claim: ``done``, with ``result`` kept. ``LeaseLostError`` when lost."""
        text = outcome_json(result)
        server = self._end(
            key,
            token,
            "UPDATE toolnexus_call SET status = 'done', outcome = %s, error = NULL, token = NULL,"
            f" lease_until = NULL, updated = {_NOW}" + self._MINE,
            (text,),
        )
        fire(self.on_event, Event("finished", key, "done", server, None))

    def finish_parked(self, key: str, token: str, pending: Pending) -> str:
        """End the claim: ``done``, the server asked again; ``pending`` parked under a new key
        that ``follows`` this one, in the same transaction. ``LeaseLostError`` when lost."""

        key = check_key(key)
        text = encode_pending(pending)
        expires = earliest_expiry(pending)
        with self._conn(write=True) as conn:
            new = self._insert(conn, pending, text, expires, key)
            row = conn.execute(
                "UPDATE toolnexus_call SET status = 'done', next = %s, outcome = NULL, error = NULL,"
                f" token = NULL, lease_until = NULL, updated = {_NOW}" + self._MINE + " RETURNING key",
                (new, key, token),
            ).fetchone()
            if row is None:
                raise LeaseLostError(_LOST.format(key=key))  # rolls the new call back too
        fire(self.on_event, Event("finished", key, "done", pending.server, pending.target))
        fire(self.on_event, Event("parked", new, "waiting", pending.server, pending.target))
        return new

    def fail(self, key: str, token: str, error: str, *, retry: bool = False) -> None:
        """End the claim: ``failed`` with ``error`` kept, or ``ready`` again with ``retry``."""
        status: Status = "ready" if retry else "failed"
        server = self._end(
            key,
            token,
            "UPDATE toolnexus_call SET status = %s, error = %s, token = NULL, lease_until = NULL,"
            f" updated = {_NOW}" + self._MINE,
            (status, str(error)),
        )
        if retry:
            self._notify(key)
        fire(self.on_event, Event("ready" if retry else "finished", key, status, server, None, str(error)))

    def release(self, key: str, token: str) -> None:
        """End the claim without an outcome: ``ready`` again. ``LeaseLostError`` when lost."""
        self._end(
            key,
            token,
            f"UPDATE toolnexus_call SET status = 'ready', token = NULL, lease_until = NULL, updated = {_NOW}"
            + self._MINE,
            (),
        )
        self._notify(key)

    def _notify(self, key: str) -> None:
        with contextlib.suppress(StoreUnavailableError), self._conn(write=True) as conn:
            conn.execute("SELECT pg_notify(%s, %s)", (CHANNEL, key))

    def retry(self, key: str) -> None:
        """Put a ``failed`` call back to ``ready``; ``ValueError`` when it is not failed."""
        self.get(key)
        with self._conn(write=True) as conn:
            row = conn.execute(
                f"UPDATE toolnexus_call SET status = 'ready', updated = {_NOW}"
                " WHERE key = %s AND status = 'failed' RETURNING key",
                (key,),
            ).fetchone()
            if row is None:
                current = conn.execute("SELECT status FROM toolnexus_call WHERE key = %s", (key,)).fetchone()
                raise ValueError(f"{key} is {current[0] if current else 'gone'}, not failed")
            conn.execute("SELECT pg_notify(%s, %s)", (CHANNEL, key))

    def expire(self, key: str, reason: str = "the host's deadline passed") -> None:
        """Mark a waiting or ready call ``expired`` with ``reason``; as ``SqliteStore.expire``."""

        key = check_key(key)
        with self._conn(write=True) as conn:
            row = conn.execute(
                "SELECT status, server FROM toolnexus_call WHERE key = %s FOR UPDATE", (key,)
            ).fetchone()
            if row is None:
                raise KeyError(key)
            if row[0] not in ("waiting", "ready"):
                raise ValueError(f"{key} is {row[0]}; only a waiting or ready call can expire")
            conn.execute(
                f"UPDATE toolnexus_call SET status = 'expired', error = %s, updated = {_NOW} WHERE key = %s",
                (str(reason), key),
            )
        fire(self.on_event, Event("finished", key, "expired", row[1], None, str(reason)))

    def sweep(self) -> int:
        """Expire waiting calls whose deadline passed; purge finished calls past the retention."""
        with self._conn(write=True) as conn:
            rows = conn.execute(
                "UPDATE toolnexus_call SET status = 'expired',"
                f" error = 'a question expired before it was answered', updated = {_NOW}"
                f" WHERE status = 'waiting' AND expires < {_NOW} RETURNING key, server"
            ).fetchall()
            if self.retention is not None:
                conn.execute(
                    "DELETE FROM toolnexus_call WHERE status IN ('done', 'failed', 'expired')"
                    f" AND updated < {_NOW} - %s",
                    (self.retention,),
                )
        for key, server in rows:
            fire(self.on_event, Event("finished", key, "expired", server, None, "a question expired"))
        return len(rows)

    # --- waiting ---------------------------------------------------------------------------

    def wait(self, timeout: float) -> bool:
        """Block until a call becomes ready (a ``NOTIFY`` on [`CHANNEL`][toolnexus.durable.CHANNEL]
        from any process), or ``timeout`` seconds pass; ``True`` when woken. Listens on a
        connection of its own, made on the first call and made again after the database
        restarts (then ``True``: a notice may have been missed)."""
        import psycopg

        timeout = max(0.0, float(timeout))
        with self._wait_lock:
            if self._listener is None:
                try:
                    listener = self._connect()
                    listener.execute(f"LISTEN {CHANNEL}")
                except (StoreUnavailableError, psycopg.Error):
                    self._listener_lost = True
                    time.sleep(min(timeout, 0.5))
                    return False
                self._listener = listener
                if self._listener_lost:  # back after an outage: something may have been missed
                    self._listener_lost = False
                    return True
            try:
                for _ in self._listener.notifies(timeout=timeout, stop_after=1):
                    return True
                return False
            except psycopg.Error:
                with contextlib.suppress(Exception):
                    self._listener.close()
                self._listener = None
                self._listener_lost = True
                time.sleep(min(timeout, 0.5))
                return False
