"""A real PostgreSQL server for the tests: started once per session, in a temporary directory, on
a free port, and stopped at the end.

The Debian server (``/usr/lib/postgresql/N/bin``: ``initdb``, ``pg_ctl``) refuses to run as
root, so when the tests run as root the data directory belongs to the ``postgres`` user and
the server runs as it (``runuser``). ``scripts/test`` installs the server where it is
missing. Without one (or without psycopg), a test that needs it fails with the reason when
``CI=true`` and is skipped with the reason on a developer's machine.

``TOOLNEXUS_TEST_POSTGRES=postgresql://...`` uses a server of your own instead (each test
still gets an empty database of its own there, made for it or emptied after an earlier test,
and those made are dropped at the end).
"""

from __future__ import annotations

import contextlib
import glob
import os
import secrets
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from .needs import unavailable

if TYPE_CHECKING:
    import psycopg

__all__ = ["PostgresServer", "postgres_server", "postgres_url"]


def _unavailable(reason: str) -> None:
    unavailable("PostgreSQL", reason)


def _bin_dir() -> Path | None:
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=lambda p: int(Path(p).parts[-3].split(".")[0])
    )
    if found:
        return Path(found[-1]).parent
    on_path = shutil.which("pg_ctl")
    return Path(on_path).parent if on_path else None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class PostgresServer:
    """A PostgreSQL server in a temporary directory, as the ``postgres`` user when run as root."""

    def __init__(self, bin_dir: Path) -> None:
        self.bin_dir = bin_dir
        self.root = Path(tempfile.mkdtemp(prefix="toolnexus-pg-"))
        self.data = self.root / "data"
        self.port = _free_port()
        self.log = self.root / "server.log"
        self.databases = _Databases(self)
        self._as_postgres = os.geteuid() == 0
        if self._as_postgres:
            shutil.chown(self.root, "postgres")
        self._run(
            [
                *(str(bin_dir / "initdb"), "-D", str(self.data), "-A", "trust", "-U", "postgres"),
                *("--no-sync", "--no-locale", "-E", "UTF8"),  # no locale the machine may lack
            ],
            timeout=120,
        )

    def _run(self, argv: list[str], timeout: float = 60) -> None:
        if self._as_postgres:
            argv = ["runuser", "-u", "postgres", "--", *argv]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
        if done.returncode != 0:
            raise RuntimeError(
                f"{argv[-1] if not argv else ' '.join(argv[:6])} failed: {done.stderr[-2000:]}"
            )

    def start(self) -> None:
        # fsync off: a test server need not survive a power cut. synchronous_commit stays on,
        # so a commit is in the WAL (the OS's buffers) before it is acknowledged, and an
        # immediate stop (restart) loses nothing acknowledged, as on a real server.
        options = (
            f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off"
            " -c full_page_writes=off -c max_connections=200"
        )
        self._run(
            [
                str(self.bin_dir / "pg_ctl"),
                "-D",
                str(self.data),
                "-o",
                options,
                "-l",
                str(self.log),
                "-w",
                "start",
            ]
        )

    def stop(self, mode: str = "fast") -> None:
        self._run([str(self.bin_dir / "pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "stop"])

    def restart(self) -> None:
        """Stop at once (every connection cut) and start again on the same port."""
        self.stop("immediate")
        self.start()

    def url(self, dbname: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{dbname}"

    def cleanup(self) -> None:
        with contextlib.suppress(Exception):
            self.stop("immediate")
        shutil.rmtree(self.root, ignore_errors=True)


class _External:
    """A server of the developer's own (``TOOLNEXUS_TEST_POSTGRES``); it cannot be restarted."""

    def __init__(self, url: str) -> None:
        self._url = url
        self.databases = _Databases(self)

    def url(self, dbname: str = "postgres") -> str:
        from psycopg.conninfo import conninfo_to_dict, make_conninfo

        parts = conninfo_to_dict(self._url)
        parts["dbname"] = dbname
        return make_conninfo("", **parts)

    def restart(self) -> None:
        pytest.skip("TOOLNEXUS_TEST_POSTGRES: a server of your own is not restarted by the tests")


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer | _External]:
    """The session's PostgreSQL server."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        _unavailable("psycopg is not installed (pip install -e '.[postgres]')")
    external = os.environ.get("TOOLNEXUS_TEST_POSTGRES")
    if external:
        server: PostgresServer | _External = _External(external)
        try:
            yield server
        finally:
            server.databases.drop_spares()
        return
    bin_dir = _bin_dir()
    if bin_dir is None:
        _unavailable("no PostgreSQL server is installed (apt-get install postgresql)")
        return
    server = PostgresServer(bin_dir)
    try:
        server.start()
        yield server
    finally:
        server.cleanup()


class _Databases:
    """The databases the tests are given on one server. ``CREATE DATABASE`` copies the
    template's catalogs, about a quarter of a second of the server's CPU each (measured), and
    the suite asks for a few dozen: so a database a test is done with is made empty again (its
    connections cut, its ``public`` schema made anew, checked to hold nothing else) and renamed,
    and the next test gets it. Each test still gets a name no test had before, so a process an
    earlier test left behind cannot reach the next test's database. A database that does not
    empty so is dropped, as every one was before."""

    def __init__(self, server: PostgresServer | _External) -> None:
        self.server = server
        self.spare: list[str] = []

    def take(self) -> str:
        import psycopg

        if self.spare:
            return self.spare.pop()
        name = _new_name()
        with psycopg.connect(self.server.url(), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return name

    def give_back(self, name: str) -> None:
        import psycopg

        try:
            self._cut_connections(name)
            with psycopg.connect(self.server.url(name), autocommit=True) as conn:
                conn.execute("SET lock_timeout = '5s'")
                conn.execute("DROP SCHEMA public CASCADE")
                conn.execute("CREATE SCHEMA public AUTHORIZATION pg_database_owner")
                conn.execute("GRANT USAGE ON SCHEMA public TO PUBLIC")
                (left,) = conn.execute(_LEFT_BEHIND).fetchone() or (1,)
            if left == 0:
                renamed = _new_name()
                with psycopg.connect(self.server.url(), autocommit=True) as conn:
                    self._cut_connections(name, conn)  # any that came back meanwhile
                    conn.execute(f"ALTER DATABASE {name} RENAME TO {renamed}")
                self.spare.append(renamed)
                return
        except psycopg.Error:
            pass
        self.drop(name)

    def _cut_connections(self, name: str, conn: psycopg.Connection[Any] | None = None) -> None:
        import psycopg

        with contextlib.ExitStack() as stack:
            if conn is None:
                conn = stack.enter_context(psycopg.connect(self.server.url(), autocommit=True))
            ended = conn.execute(
                "SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity"
                " WHERE datname = %s AND pid <> pg_backend_pid()",
                (name,),
            ).fetchall()
            if not all(done for (done,) in ended):
                raise psycopg.OperationalError(f"a connection to {name} did not end")

    def drop(self, name: str) -> None:
        import psycopg

        deadline = time.monotonic() + 10
        while True:
            try:
                with psycopg.connect(self.server.url(), autocommit=True) as conn:
                    conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
                return
            except psycopg.OperationalError:
                if time.monotonic() > deadline:
                    return
                time.sleep(0.2)

    def drop_spares(self) -> None:
        while self.spare:
            self.drop(self.spare.pop())


def _new_name() -> str:
    return "t_" + secrets.token_hex(6)


# What a test could leave in a database beside the public schema's objects: other schemas,
# large objects, event triggers, publications. None, or the database is dropped.
_LEFT_BEHIND = """
SELECT (SELECT count(*) FROM pg_namespace
        WHERE nspname NOT IN ('public', 'information_schema') AND nspname NOT LIKE 'pg\\_%')
     + (SELECT count(*) FROM pg_largeobject_metadata)
     + (SELECT count(*) FROM pg_event_trigger)
     + (SELECT count(*) FROM pg_publication)
"""


@pytest.fixture
def postgres_url(postgres_server: PostgresServer | _External) -> Iterator[str]:
    """An empty database of this test's own on the session's server (made for it, or one an
    earlier test had, emptied: see ``_Databases``)."""
    databases = postgres_server.databases
    name = databases.take()
    try:
        yield postgres_server.url(name)
    finally:
        databases.give_back(name)
