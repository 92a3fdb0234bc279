"""Stores for the tests: the ``backend`` fixture runs a test on a SqliteStore file and on a
PostgresStore in a database of its own (marked e2e: it needs the PostgreSQL server), with a
clock the test moves (deadlines, leases and retention pass without sleeping)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from toolnexus.durable import PostgresStore, SqliteStore, open_store

__all__ = ["Backend", "FakeClock", "Store", "backend"]

Store = SqliteStore | PostgresStore


class FakeClock:
    """A clock that stands still until the test moves it (seconds since the epoch, starting
    at the machine's time, so that dates the tests write read as the past or the future)."""

    def __init__(self) -> None:
        self.now = time.time()
        self._lock = threading.Lock()

    def __call__(self) -> float:
        with self._lock:
            return self.now

    def advance(self, seconds: float) -> None:
        with self._lock:
            self.now += seconds


class Backend:
    """Opens store objects on one store (each with connections of its own) and reaches under
    them. Each is opened on the backend's fake clock unless the test gives ``clock=``."""

    def __init__(self, kind: str, spec: str) -> None:
        self.kind = kind
        self.spec = spec
        self.clock = FakeClock()
        self.opened: list[Store] = []

    def open(self, **options: Any) -> Store:
        options.setdefault("clock", self.clock)
        store = open_store(self.spec, **options)
        self.opened.append(store)
        return store

    def sql(self, sqlite: str, postgres: str, params: tuple[Any, ...] = ()) -> None:
        """Write under the store, as a hand or another program would."""
        if self.kind == "sqlite":
            import sqlite3

            with sqlite3.connect(self.spec) as db:
                db.execute(sqlite, params)
            db.close()
        else:
            import psycopg

            with psycopg.connect(self.spec, autocommit=True) as conn:
                conn.execute(postgres, params)

    def query(self, sql: str) -> list[tuple[Any, ...]]:
        """Read under the store (the same SQL on both)."""
        if self.kind == "sqlite":
            import sqlite3

            with sqlite3.connect(self.spec) as db:
                rows = [tuple(row) for row in db.execute(sql).fetchall()]
            db.close()
            return rows
        import psycopg

        with psycopg.connect(self.spec, autocommit=True) as conn:
            return [tuple(row) for row in conn.execute(sql).fetchall()]

    def close(self) -> None:
        for store in self.opened:
            store.close()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.e2e)])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    """One store, in SQLite and in PostgreSQL."""
    if request.param == "sqlite":
        made = Backend("sqlite", str(tmp_path / "store.db"))
    else:
        made = Backend("postgres", request.getfixturevalue("postgres_url"))
    yield made
    made.close()
