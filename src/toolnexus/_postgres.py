"""[`PostgresStore`][toolnexus.durable.PostgresStore]: the store engine over PostgreSQL, for hosts
whose agents, workers and inbox run on many machines. This module holds only what is
PostgreSQL's: its connections (a few, checked and replaced after a restart), claims by
``SELECT ... FOR UPDATE SKIP LOCKED``, leases on the database's clock, wake-ups by
``LISTEN``/``NOTIFY``, read-only sessions, and the DDL of each format; the lifecycle is
``_engine``'s.

Needs psycopg 3: ``pip install 'toolnexus-mcp[postgres]'``. psycopg is imported only when a
``PostgresStore`` is made.
"""

from __future__ import annotations

import contextlib
import functools
import re
import threading
import time
import urllib.parse
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from ._engine import Migration, StoreEngine, Tx, fill_targets, name_the_store
from ._store import DEFAULT_RETENTION, EventHook
from ._time import Clock, check_seconds
from ._watch import CHANGED, READY
from .errors import StoreError, StoreUnavailableError

if TYPE_CHECKING:
    import psycopg

__all__ = ["CHANNEL", "READY_CHANNEL", "PostgresStore", "redact_store"]

CHANNEL: Final = "toolnexus_store"
"""The ``NOTIFY`` channel of every change: at commit, whenever a call changes, ``r:KEY`` when
it may have become ready to claim, ``c:KEY`` for any other change."""
READY_CHANNEL: Final = "toolnexus_ready"
"""The ``NOTIFY`` channel of the changes that may have made a call ready to claim (``r:KEY``,
sent on [`CHANNEL`][toolnexus.durable.CHANNEL] too): what workers listen for, without being
woken by every question asked, claimed or finished."""

_LOCK_ID: Final = 0x746F6F6C6E6578  # the advisory lock held while the schema changes ("toolnex")
_CHECK_IDLE: Final = 0.5  # seconds a pooled connection may idle before it is checked when taken
_BUSY: Final = 30.0  # seconds to wait for one of the pool's connections before giving up

_MIGRATIONS: Final = (
    Migration(  # PostgreSQL stores began at format 2
        2,
        (
            "CREATE TABLE toolnexus_meta (name text PRIMARY KEY, value text NOT NULL)",
            "CREATE TABLE toolnexus_call ("
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
            "CREATE INDEX toolnexus_call_status ON toolnexus_call (status, seq)",
            "CREATE TABLE toolnexus_answer ("
            " key text NOT NULL REFERENCES toolnexus_call (key) ON DELETE CASCADE,"
            " request_id text NOT NULL,"
            " answer text NOT NULL,"
            " PRIMARY KEY (key, request_id))",
            "INSERT INTO toolnexus_meta (name, value) VALUES ('format', '2')",
        ),
    ),
    Migration(
        3,
        (  # what a call is, and leases lost
            "ALTER TABLE toolnexus_call ADD COLUMN method text",
            "ALTER TABLE toolnexus_call ADD COLUMN target text",
            "ALTER TABLE toolnexus_call ADD COLUMN lost integer NOT NULL DEFAULT 0",
            fill_targets,
        ),
    ),
    Migration(
        4,
        (  # live questions: a call held open while a person answers elsewhere
            "ALTER TABLE toolnexus_call ADD COLUMN live integer NOT NULL DEFAULT 0",
            "CREATE INDEX toolnexus_call_token ON toolnexus_call (token)",
        ),
    ),
    Migration(
        5,
        (  # parked tasks: polled by a worker when due, their status message kept
            "ALTER TABLE toolnexus_call ADD COLUMN poll_at float8",
            "ALTER TABLE toolnexus_call ADD COLUMN note text",
        ),
    ),
    Migration(
        6,
        (  # each call's history: who answered, which worker resumed it, how it ended
            "CREATE TABLE toolnexus_history ("
            " seq bigserial PRIMARY KEY,"
            " key text NOT NULL,"
            " at float8 NOT NULL,"
            " kind text NOT NULL,"
            " status text,"
            " actor text,"
            " via text,"
            " detail text)",
            "CREATE INDEX toolnexus_history_key ON toolnexus_history (key, seq)",
            # each notification target's place in the history (an outbox), and who sends to it
            "CREATE TABLE toolnexus_cursor ("
            " target text PRIMARY KEY,"
            " seq bigint NOT NULL,"
            " holder text,"
            " lease_until float8,"
            " attempts integer NOT NULL DEFAULT 0,"
            " next_at float8,"
            " error text)",
            name_the_store,
        ),
    ),
)


_PASSWORD_WORD: Final = re.compile(r"(\bpassword\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s']*)", re.IGNORECASE)


def redact_store(spec: str) -> str:
    """``spec`` (a store as a command takes it: a file's path, a ``postgresql://`` URL or a
    libpq ``key=value`` string) with any password in it replaced by ``***``, for messages,
    logs and listings: ``postgresql://app:***@db.internal/agents``."""
    if not isinstance(spec, str):
        return str(spec)
    if spec.lower().startswith(("postgresql://", "postgres://")):
        try:
            parts = urllib.parse.urlsplit(spec)
        except ValueError:
            return spec.split("://", 1)[0] + "://***"
        netloc = parts.netloc
        if "@" in netloc:
            userinfo, _, hosts = netloc.rpartition("@")
            if ":" in userinfo:
                userinfo = userinfo.split(":", 1)[0] + ":***"
            netloc = f"{userinfo}@{hosts}"
        query = parts.query
        if query:
            pairs = urllib.parse.parse_qsl(query, keep_blank_values=True)
            if any(name.lower() == "password" for name, _ in pairs):
                query = urllib.parse.urlencode(
                    [(name, "***" if name.lower() == "password" else value) for name, value in pairs],
                    safe="*",
                )
        return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
    if "=" in spec:
        return _PASSWORD_WORD.sub(lambda found: found.group(1) + "***", spec)
    return spec


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


@functools.lru_cache(maxsize=512)
def _pyformat(sql: str) -> str:
    """The engine's named parameters (``:key``) as psycopg's (``%(key)s``)."""
    return re.sub(r"(?<![:\w]):([A-Za-z_]\w*)", r"%(\1)s", sql)


class _Tx:
    __slots__ = ("_conn",)

    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self._conn = conn

    def run(self, sql: str, params: Mapping[str, Any] | None = None) -> psycopg.Cursor[Any]:
        return self._conn.execute(_pyformat(sql), params or None)


class _Listen:
    """The watchers' source: ``LISTEN`` on a connection of its own, on
    [`READY_CHANNEL`][toolnexus.durable.READY_CHANNEL] while only ready changes are wanted
    (a worker's), on [`CHANNEL`][toolnexus.durable.CHANNEL] once any watcher wants every
    change."""

    slice: float = 0.25  # notifies() cannot be interrupted: closing the store waits this long

    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self._conn = conn
        self._channel: str | None = None

    def listen(self, wanted: int) -> None:
        channel = CHANNEL if wanted & CHANGED else READY_CHANNEL
        if channel == self._channel:
            return
        self._conn.execute(f"LISTEN {channel}")  # the new one first: no change falls between
        if self._channel is not None:
            self._conn.execute(f"UNLISTEN {self._channel}")
        self._channel = channel

    def next(self, timeout: float) -> int:
        """What the notifications that came say (``r:KEY``: a call became ready; ``c:KEY``:
        another change); 0 when none came within ``timeout``."""
        flags = 0
        for notice in self._conn.notifies(timeout=timeout, stop_after=1):
            flags |= _flags(notice.payload)
        if not flags:
            return 0
        # A burst (a worker finishing calls) is one wake-up: take what else has come. (After
        # the first generator has ended: each holds the connection's lock.)
        for notice in self._conn.notifies(timeout=0.001):
            flags |= _flags(notice.payload)
        return flags

    def close(self) -> None:
        self._conn.close()


def _flags(payload: str) -> int:
    return READY | CHANGED if payload.startswith("r:") else CHANGED


class _Dialect:
    owns_database: bool = False
    lock: str = " FOR UPDATE"
    skip_locked: str = " FOR UPDATE SKIP LOCKED"
    clock_sql: str | None = "CAST(extract(epoch from statement_timestamp()) AS double precision)"
    returning: bool = True
    migrations: Sequence[Migration] = _MIGRATIONS

    def __init__(self, dsn: str, pool_size: int, connect_timeout: int, read_only: bool) -> None:
        import psycopg.conninfo

        self.where = _where(dsn)
        self._dsn = dsn
        self._options: dict[str, Any] = {"autocommit": True, "connect_timeout": connect_timeout}
        if read_only:  # every transaction of the session read-only, whatever the SQL says
            given = psycopg.conninfo.conninfo_to_dict(dsn).get("options") or ""
            self._options["options"] = f"{given} -c default_transaction_read_only=on".strip()
        self._size = pool_size
        self._slots = threading.BoundedSemaphore(pool_size)
        self._idle: list[tuple[psycopg.Connection[Any], float]] = []
        self._lock = threading.Lock()
        self._closed = False

    def _connect(self) -> psycopg.Connection[Any]:
        import psycopg

        try:
            return psycopg.connect(self._dsn, **self._options)
        except psycopg.Error as err:
            raise StoreUnavailableError(f"cannot reach {self.where}: {_reason(err)}") from None

    def prepare_writes(self) -> None:
        """Nothing to prepare."""

    def _take(self) -> psycopg.Connection[Any]:
        """An idle connection (checked by a round trip when it idled long enough for the
        database to have restarted meanwhile), or a new one."""
        import psycopg

        while True:
            with self._lock:
                if self._closed:
                    raise StoreUnavailableError(f"the store at {self.where} is closed")
                if not self._idle:
                    break
                conn, since = self._idle.pop()
            if conn.broken or conn.closed:
                continue
            if time.monotonic() - since > _CHECK_IDLE:
                try:
                    conn.execute("")
                except psycopg.Error:
                    with contextlib.suppress(Exception):
                        conn.close()
                    continue
            return conn
        return self._connect()

    def _give_back(self, conn: psycopg.Connection[Any]) -> None:
        with self._lock:
            if not self._closed and not conn.broken and not conn.closed:
                self._idle.append((conn, time.monotonic()))
                return
        with contextlib.suppress(Exception):
            conn.close()

    @contextlib.contextmanager
    def transaction(self, *, write: bool, schema: bool = False) -> Iterator[Tx]:
        import psycopg

        if not self._slots.acquire(timeout=_BUSY):
            raise StoreUnavailableError(
                f"all {self._size} connections to {self.where} stayed busy for {_BUSY:g} s"
            )
        conn: psycopg.Connection[Any] | None = None
        try:
            conn = self._take()
            with conn.transaction():
                if schema:
                    conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_ID,))
                yield _Tx(conn)
        except (psycopg.OperationalError, psycopg.InterfaceError) as err:
            if conn is not None:
                with contextlib.suppress(Exception):
                    conn.close()
            raise StoreUnavailableError(f"lost {self.where}: {_reason(err)}") from None
        except psycopg.errors.ReadOnlySqlTransaction:
            raise StoreError(f"{self.where} was opened read-only") from None
        except psycopg.DatabaseError as err:
            raise StoreError(f"{self.where}: {_reason(err)}") from None
        finally:
            if conn is not None:
                self._give_back(conn)
            self._slots.release()

    def table_names(self, tx: Tx) -> set[str]:
        rows = tx.run(
            "SELECT table_name FROM information_schema.tables"
            " WHERE table_schema = current_schema() AND starts_with(table_name, 'toolnexus_')"
        ).fetchall()
        return {str(row[0]) for row in rows}

    def columns(self, tx: Tx, table: str) -> set[str]:
        rows = tx.run(
            "SELECT column_name FROM information_schema.columns"
            " WHERE table_schema = current_schema() AND table_name = :t",
            {"t": table},
        ).fetchall()
        return {str(row[0]) for row in rows}

    def notify(self, tx: Tx, key: str, *, ready: bool = False) -> None:
        if ready:
            tx.run(
                "SELECT pg_notify(:channel, :payload), pg_notify(:ready, :payload)",
                {"channel": CHANNEL, "ready": READY_CHANNEL, "payload": "r:" + key},
            )
        else:
            tx.run("SELECT pg_notify(:channel, :payload)", {"channel": CHANNEL, "payload": "c:" + key})

    def change_source(self) -> _Listen:
        return _Listen(self._connect())

    def close(self) -> None:
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for conn, _ in idle:
            with contextlib.suppress(Exception):
                conn.close()


class PostgresStore(StoreEngine):
    """Parked calls and their answers in a PostgreSQL database, shared by any number of
    processes on any number of machines.

    ```python
    store = PostgresStore("postgresql://toolnexus@db.internal/agents")
    ```

    The same lifecycle engine as [`SqliteStore`][toolnexus.durable.SqliteStore] (the same
    methods, the same errors, one contract test suite). A claim is one transaction over
    ``SELECT ... FOR UPDATE SKIP LOCKED``, so concurrent resumers never wait for each other
    and never get the same call; leases are timed by the database's clock, so the machines'
    clocks need not agree. Every change sends ``NOTIFY`` on
    [`CHANNEL`][toolnexus.durable.CHANNEL] (and one that may have made a call ready, on
    [`READY_CHANNEL`][toolnexus.durable.READY_CHANNEL] too), which the store's watchers
    listen for (one connection per store object). The tables (``toolnexus_meta``, ``toolnexus_call``,
    ``toolnexus_answer``) are made on first use, and an older format upgraded, under an
    advisory lock; a newer format, or same-named tables that are not a store's, are refused.
    Connections (at most ``pool_size``) are checked when taken after idling and replaced
    when broken, so the store carries on as soon as the database is back after a restart;
    an operation that meets a lost connection raises
    [`StoreUnavailableError`][toolnexus.errors.StoreUnavailableError] and the next one
    reconnects.

    Args:
        dsn: a libpq connection string or ``postgresql://`` URL.
        create: make the tables when absent; otherwise a database without them is refused.
        read_only: never write: the sessions are read-only (``default_transaction_read_only``),
            and every method that writes raises ``StoreError``.
        retention: seconds a finished call is kept before ``sweep`` purges it (``None``: for ever).
        on_event: the notification hook, as for ``SqliteStore``.
        pool_size: most connections held at once, from 1 to 100 (the watchers hold one more,
            of their own).
        connect_timeout: seconds to wait for the database when connecting: a whole number
            from 2 (libpq's floor) to 3600.
        clock: the store's clock, for tests (seconds since the epoch); by default the
            database's.

    Raises:
        StoreUnavailableError: the database cannot be reached.
        StoreError: its schema is newer than this toolnexus, its ``toolnexus_`` tables are
            not a store's, or (``create=False`` or ``read_only``) it holds no store.
        ValueError: ``pool_size`` or ``connect_timeout`` out of range.
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
        connect_timeout: float = 5,
        clock: Clock | None = None,
    ) -> None:
        if not isinstance(dsn, str):
            raise TypeError(f"PostgresStore: dsn must be a str, not {type(dsn).__name__}")
        if isinstance(pool_size, bool) or not isinstance(pool_size, int):
            raise TypeError(f"PostgresStore: pool_size must be an int, not {type(pool_size).__name__}")
        if not 1 <= pool_size <= 100:
            raise ValueError(f"PostgresStore: pool_size must be from 1 to 100, not {pool_size!r}")
        timeout = check_seconds(
            connect_timeout,
            caller="PostgresStore",
            name="connect_timeout",
            none=False,
            least=2,
            most=3600,
            whole=True,
        )
        assert timeout is not None
        try:
            import psycopg  # noqa: F401
        except ImportError:
            message = "PostgresStore needs psycopg 3: pip install 'toolnexus-mcp[postgres]'"
            raise ImportError(message) from None
        self.dsn = dsn
        dialect = _Dialect(dsn, pool_size, int(timeout), bool(read_only))
        super().__init__(
            dialect, create=create, read_only=read_only, retention=retention, on_event=on_event, clock=clock
        )
