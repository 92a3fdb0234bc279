"""A real PostgreSQL server for the tests: started once per session, in a temporary directory, on
a free port, and stopped at the end.

The Debian server (``/usr/lib/postgresql/N/bin``: ``initdb``, ``pg_ctl``) refuses to run as
root, so when the tests run as root the data directory belongs to the ``postgres`` user and
the server runs as it (``runuser``). ``scripts/test`` installs the server where it is
missing. Without one (or without psycopg), a test that needs it fails with the reason when
``CI=true`` and is skipped with the reason on a developer's machine.

``TOOLNEXUS_TEST_POSTGRES=postgresql://...`` uses a server of your own instead (each test
still gets a database of its own, made and dropped there).
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

import pytest

__all__ = ["PostgresServer", "postgres_server", "postgres_url"]


def _unavailable(reason: str) -> None:
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"PostgreSQL is needed in CI and {reason}", pytrace=False)
    pytest.skip(f"PostgreSQL: {reason} (scripts/test installs it; CI fails here)")


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
        yield _External(external)
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


@pytest.fixture
def postgres_url(postgres_server: PostgresServer | _External) -> Iterator[str]:
    """A database of this test's own on the session's server, dropped after it."""
    import psycopg

    name = "t_" + secrets.token_hex(6)
    admin = postgres_server.url()
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    try:
        yield postgres_server.url(name)
    finally:
        deadline = time.monotonic() + 10
        while True:
            try:
                with psycopg.connect(admin, autocommit=True) as conn:
                    conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
                break
            except psycopg.OperationalError:
                if time.monotonic() > deadline:
                    break
                time.sleep(0.2)
