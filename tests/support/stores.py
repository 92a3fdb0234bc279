"""Stores for the tests: the ``backend`` fixture runs a test on a SqliteStore file and on a
PostgresStore in a database of its own (marked e2e: it needs the PostgreSQL server)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from toolnexus.durable import PostgresStore, SqliteStore, open_store

__all__ = ["Backend", "Store", "backend"]

Store = SqliteStore | PostgresStore


class Backend:
    """Opens store objects on one store (each with connections of its own) and reaches under them."""

    def __init__(self, kind: str, spec: str) -> None:
        self.kind = kind
        self.spec = spec
        self.opened: list[Store] = []

    def open(self, **options: Any) -> Store:
        store = open_store(self.spec, **options)
        self.opened.append(store)
        return store

    def sql(self, sqlite: str, postgres: str, params: tuple[Any, ...] = ()) -> None:
        """Write under the store, as a hand or another program would."""
        if self.kind == "sqlite":
            import sqlite3

            with sqlite3.connect(self.spec) as db:
                db.execute(sqlite, params)
        else:
            import psycopg

            with psycopg.connect(self.spec, autocommit=True) as conn:
                conn.execute(postgres, params)

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
