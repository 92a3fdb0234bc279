"""Workers as processes: ``toolnexus worker`` x4 on one store (a SQLite file, and PostgreSQL), 1,000
parked calls answered by other processes while the workers run, against a server that counts
how often each tool body runs. Every call ends ``done`` and each body runs exactly once; with
workers killed (SIGKILL) at random moments (400 of the calls answered), none is lost and any
extra run is one the guarantee allows: a call whose resumer was killed after it sent the retry,
taken over when its lease ran out. Also: PostgreSQL restarted under running workers, a database
unreachable at start.
"""

from __future__ import annotations

import collections
import contextlib
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import anyio
import pytest
from mcp import Client

from servers.counting_server import build_server
from support import forkserver
from support.postgres import PostgresServer
from toolnexus import durable
from toolnexus.durable import Pending, open_store

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]  # a thousand calls on a loaded machine

KEY = os.urandom(32)
SERVER = Path(__file__).resolve().parent / "servers" / "counting_server.py"
CALLS = 1000
KILLS = 8
KILLED_CALLS = 400
"""The calls answered while workers are killed: eight kills spread over 400 calls try as many
moments as over 1,000 (a kill lands between two statements of one call whatever the count),
for two fifths of the CPU."""
RECORDER = """
import sys
from toolnexus import Answer
from toolnexus.durable import open_store

spec, keys = sys.argv[1], sys.argv[2:]
with open_store(spec, create=False) as store:
    for key in keys:
        (request,) = store.get(key).requests
        store.record(key, Answer(request.id, True, {"word": "w" + key[:6]}))
"""


@pytest.fixture(params=["sqlite", "postgres"])
def spec(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "calls.db")
    url: str = request.getfixturevalue("postgres_url")
    return url


async def _park(spec: str, count: int) -> list[str]:
    server = build_server(KEY, None)
    keys = []
    with open_store(spec) as store:
        async with Client(server, elicitation_callback=durable.park_only) as client:
            for n in range(count):
                outcome = await durable.call_tool_or_park(client, "job", {"n": n})
                assert isinstance(outcome, Pending)
                keys.append(store.put(outcome))
    return keys


def park(spec: str, count: int) -> list[str]:
    return anyio.run(_park, spec, count)


class Parked:
    """:data:`CALLS` calls parked once per kind of store and copied into each later test's
    store (a file, a database from a template): parking is the same work each time, about
    3 s of CPU."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.copies: dict[str, tuple[str, list[str]]] = {}  # kind: the copy, and its keys
        self.postgres: str | None = None  # a database on the server that holds the copy

    def into(self, spec: str) -> list[str]:
        """The calls parked in the empty store at ``spec``; their keys."""
        import shutil

        kind = "postgres" if spec.startswith("postgresql://") else "sqlite"
        if kind not in self.copies:
            keys = park(spec, CALLS)
            if kind == "postgres":
                copy = "parked_" + os.urandom(6).hex()
                self.postgres = spec
                _admin(spec, f"CREATE DATABASE {copy} TEMPLATE {_database(spec)}")
            else:
                copy = str(self.directory / "calls.db")
                shutil.copyfile(spec, copy)
            self.copies[kind] = (copy, keys)
            return keys
        copy, keys = self.copies[kind]
        if kind == "postgres":
            _admin(spec, f"DROP DATABASE {_database(spec)} WITH (FORCE)")
            _admin(spec, f"CREATE DATABASE {_database(spec)} TEMPLATE {copy}")
        else:
            shutil.copyfile(copy, spec)
        return keys

    def drop(self) -> None:
        if self.postgres is not None:
            copy, _ = self.copies["postgres"]
            _admin(self.postgres, f"DROP DATABASE IF EXISTS {copy} WITH (FORCE)")


def _database(spec: str) -> str:
    from urllib.parse import urlsplit

    return urlsplit(spec).path[1:]


def _admin(spec: str, statement: str) -> None:
    """Run ``statement`` on the server of ``spec``, connected to its ``postgres`` database."""
    from urllib.parse import urlsplit, urlunsplit

    import psycopg

    with psycopg.connect(urlunsplit(urlsplit(spec)._replace(path="/postgres")), autocommit=True) as conn:
        conn.execute(statement)


@pytest.fixture(scope="module")
def parked(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Parked]:
    made = Parked(tmp_path_factory.mktemp("parked"))
    yield made
    made.drop()


class Workers:
    """``toolnexus worker`` processes on one store, started and killed at will."""

    def __init__(self, spec: str, count_file: Path, tmp: Path, lease: float, delay: float = 0.0) -> None:
        self.spec = spec
        self.count_file = count_file
        self.tmp = tmp
        self.lease = lease
        self.delay = delay
        self.running: list[forkserver.Forked] = []
        self.killed: list[int] = []
        self.started = 0

    def start(self) -> None:
        self.started += 1
        server = forkserver.server_command(
            [
                *(sys.executable, str(SERVER), "--key", KEY.hex(), "--count", str(self.count_file)),
                *("--delay", str(self.delay)),
            ]
        )
        with (self.tmp / f"worker-{self.started}.out").open("wb") as out:
            proc = forkserver.popen(
                [
                    *(sys.executable, "-m", "toolnexus", "worker", self.spec, "--stdio", server),
                    *("--lease", str(self.lease), "--idle", "1"),
                ],
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
        self.running.append(proc)

    def kill_one(self, rng: random.Random) -> None:
        proc = self.running.pop(rng.randrange(len(self.running)))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        self.killed.append(proc.pid)

    def stop(self) -> None:
        """Every worker ended at once (its line per call is already written)."""
        for proc in self.running:
            proc.kill()
        for proc in self.running:
            proc.wait()

    def lost(self) -> set[str]:
        """The keys a worker reported ``lost``: its lease ran out while the server worked
        (a stall on a loaded machine), so another worker may have resumed the call too."""
        return {
            line.split()[0]
            for line in self.output().splitlines()
            if line.endswith("lost: the lease ran out; another worker may resume it")
        }

    def output(self) -> str:
        return "".join(path.read_text(errors="replace") for path in sorted(self.tmp.glob("worker-*.out")))


@pytest.fixture
def workers(spec: str, tmp_path: Path) -> Iterator[Workers]:
    made = Workers(spec, tmp_path / "runs", tmp_path, lease=10)
    yield made
    made.stop()


def record_from_other_processes(spec: str, keys: list[str], processes: int = 2) -> list[forkserver.Forked]:
    shuffled = keys[:]
    random.Random(7).shuffle(shuffled)
    return [
        forkserver.popen(
            [sys.executable, "-c", RECORDER, spec, *shuffled[i::processes]],
            stdin=None,
            stdout=None,
            stderr=None,
        )
        for i in range(processes)
    ]


def wait_until_all_done(spec: str, count: int, timeout: float, workers: Workers) -> dict[str, str]:
    """Each call's status once ``count`` calls are ``done``. While it waits it counts them
    with one SQL statement: reading every call through the store decodes 1,000 records, about
    0.1 s of CPU a look, and the looks go on for as long as the workers take."""
    deadline = time.monotonic() + timeout
    with _status_counter(spec) as counted:
        while counted().get("done", 0) != count:
            if time.monotonic() > deadline:
                pytest.fail(f"after {timeout} s: {counted()}; workers said:\n{workers.output()[-3000:]}")
            time.sleep(0.3)
    with open_store(spec, create=False, read_only=True) as store:
        return {call.key: call.status for call in store.calls()}


@contextlib.contextmanager
def _status_counter(spec: str) -> Iterator[Callable[[], dict[str, int]]]:
    """A function giving how many calls of the store at ``spec`` have each status."""
    query = "SELECT status, count(*) FROM {} GROUP BY status"
    if spec.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(spec, autocommit=True) as conn:
            yield lambda: dict(conn.execute(query.format("toolnexus_call")).fetchall())
    else:
        import sqlite3

        db = sqlite3.connect(f"{Path(spec).as_uri()}?mode=ro", uri=True)
        try:
            yield lambda: dict(db.execute(query.format("toolnexus_call")).fetchall())
        finally:
            db.close()


def ran(count_file: Path) -> int:
    """How many tool bodies ran so far (their lines in the count file)."""
    try:
        return count_file.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def runs(count_file: Path) -> dict[int, list[int]]:
    """Each job's runs: the pids of the workers whose server ran it, in order."""
    by_job: dict[int, list[int]] = collections.defaultdict(list)
    for line in count_file.read_text().splitlines():
        n, worker_pid, _ = line.split(" ", 2)
        by_job[int(n)].append(int(worker_pid))
    return by_job


def test_four_workers_resume_a_thousand_calls_each_exactly_once(
    spec: str, workers: Workers, parked: Parked
) -> None:
    keys = parked.into(spec)
    for _ in range(4):
        workers.start()
    recorders = record_from_other_processes(spec, keys)
    for recorder in recorders:
        assert recorder.wait(timeout=300) == 0
    statuses = wait_until_all_done(spec, CALLS, 400, workers)
    assert set(statuses) == set(keys)
    by_job = runs(workers.count_file)
    assert sorted(by_job) == list(range(CALLS))
    assert {n: pids for n, pids in by_job.items() if len(pids) != 1} == {}
    assert len({pid for pids in by_job.values() for pid in pids}) >= 2  # the work was shared
    lines = workers.output().splitlines()
    assert sum(line.endswith("  tool job  done") for line in lines) == CALLS
    with open_store(spec, create=False) as store:
        for key in keys[:20]:
            result = store.call(key).result
            assert result is not None
            assert result["content"][0]["text"].endswith(f": w{key[:6]}")


def test_workers_killed_at_random_lose_nothing_and_rerun_only_what_the_guarantee_allows(
    spec: str, workers: Workers, parked: Parked
) -> None:
    workers.lease = 3  # a killed worker's call is taken over 3 s after its last renewal
    keys = parked.into(spec)[:KILLED_CALLS]  # jobs 0 to 399; the others stay waiting
    rng = random.Random(os.getpid())
    for _ in range(4):
        workers.start()
    recorders = record_from_other_processes(spec, keys)
    # At random moments through the run, while calls remain: each kill when the tool bodies
    # that ran reach a random count between 5 % and 90 % of the calls (however fast they go).
    for threshold in sorted(rng.sample(range(KILLED_CALLS // 20, KILLED_CALLS * 9 // 10), KILLS)):
        deadline = time.monotonic() + 300
        while ran(workers.count_file) < threshold and time.monotonic() < deadline:
            time.sleep(0.02)
        workers.kill_one(rng)
        workers.start()
    with open_store(spec, create=False, read_only=True) as store:
        finished = sum(call.status == "done" for call in store.calls())
    assert finished < KILLED_CALLS, "every call was done before the last kill: the kills tested nothing"
    for recorder in recorders:
        assert recorder.wait(timeout=300) == 0
    wait_until_all_done(spec, KILLED_CALLS, 400, workers)
    by_job = runs(workers.count_file)
    assert sorted(by_job) == list(range(KILLED_CALLS))  # none lost, every call done
    assert len(workers.killed) == KILLS
    with open_store(spec, create=False) as store:
        calls = {call.key: call for call in store.calls()}
    job_of = {key: (call.pending.arguments or {})["n"] for key, call in calls.items() if call.pending}
    lost_jobs = {job_of[key] for key in workers.lost()}
    extra = {n: pids for n, pids in by_job.items() if len(pids) > 1}
    # An extra run is allowed only for a call whose resumer was killed after it sent the
    # retry and before it recorded the outcome (at most one per killed worker), or whose
    # resumer stalled past its lease and said so ("lost"); each such call was claimed again.
    from_kills = {n: pids for n, pids in extra.items() if n not in lost_jobs}
    assert len(from_kills) <= len(workers.killed), from_kills
    for n, pids in from_kills.items():
        assert all(pid in workers.killed for pid in pids[:-1]), (n, pids, workers.killed)
    for n in extra:
        (key,) = [key for key, job in job_of.items() if job == n]
        assert calls[key].attempts >= len(by_job[n]), (n, calls[key].attempts)


def test_postgresql_restarted_under_running_workers(
    postgres_server: PostgresServer, postgres_url: str, tmp_path: Path
) -> None:
    """Three workers with a lease of 3 s on 30 calls whose bodies take 0.2 s, PostgreSQL
    restarted twice while they work (the attack that ran 3 bodies twice a restart, when a
    finish waited out the pool's 5 s connect timeout and dropped its result): every call
    done, each body once, no lease lost."""
    workers = Workers(postgres_url, tmp_path / "runs", tmp_path, lease=3, delay=0.2)
    keys = park(postgres_url, 30)
    try:
        for _ in range(3):
            workers.start()
        for recorder in record_from_other_processes(postgres_url, keys, 1):
            assert recorder.wait(timeout=60) == 0
        for ran_before in (5, 15):
            wait_until_ran(workers.count_file, ran_before)
            postgres_server.restart()
        wait_until_all_done(postgres_url, 30, 120, workers)
    finally:
        workers.stop()
    by_job = runs(workers.count_file)
    assert sorted(by_job) == list(range(30))
    assert {n: pids for n, pids in by_job.items() if len(pids) != 1} == {}
    # No lease lost (the retries' warnings, "lost PostgreSQL at ...", are expected).
    assert workers.lost() == set(), workers.output()


def test_a_database_outage_shorter_than_the_lease_never_runs_a_tool_twice(
    postgres_server: PostgresServer, postgres_url: str, tmp_path: Path
) -> None:
    """One worker, a lease of 5 s, a tool body of 1.5 s; PostgreSQL cut at three moments: a
    restart before the claim, a restart while the body runs, and an outage (stopped for a
    second) over the moment the worker records the result. Each body runs once, each call
    ends done, and the worker never reports a lease lost."""
    workers = Workers(postgres_url, tmp_path / "runs", tmp_path, lease=5, delay=1.5)
    keys = park(postgres_url, 3)
    workers.start()
    try:
        time.sleep(1)  # connected and idle
        postgres_server.restart()  # 1. before a claim: the worker's idle connections die
        answer(postgres_url, keys[0])
        wait_until_done(postgres_url, keys[0], workers)

        answer(postgres_url, keys[1])  # 2. during the body
        wait_until_ran(workers.count_file, 2)
        postgres_server.restart()
        wait_until_done(postgres_url, keys[1], workers)

        answer(postgres_url, keys[2])  # 3. while the result is recorded
        wait_until_ran(workers.count_file, 3)
        time.sleep(1.0)  # the body ends 0.5 s into the outage
        postgres_server.stop("immediate")
        time.sleep(1.0)
        postgres_server.start()
        wait_until_done(postgres_url, keys[2], workers)
    finally:
        workers.stop()
    pid = workers.running[0].pid
    assert runs(workers.count_file) == {0: [pid], 1: [pid], 2: [pid]}  # each body once
    # No lease lost (the store's retry warnings, "lost PostgreSQL at ...", are expected).
    assert workers.lost() == set(), workers.output()
    with open_store(postgres_url, create=False, read_only=True) as store:
        assert [(c.status, c.attempts, c.leases_lost) for c in store.calls()] == [("done", 1, 0)] * 3


def test_an_idle_worker_stops_within_a_second_of_sigterm_during_an_outage(
    postgres_server: PostgresServer, postgres_url: str, tmp_path: Path
) -> None:
    workers = Workers(postgres_url, tmp_path / "runs", tmp_path, lease=5)
    park(postgres_url, 1)
    workers.start()
    (worker,) = workers.running
    try:
        time.sleep(1)
        postgres_server.stop("immediate")
        time.sleep(8)  # the worker's looks fail, and it backs off to its longest pause (5 s)
        sent = time.monotonic()
        worker.send_signal(signal.SIGTERM)
        worker.wait(timeout=30)
        took = time.monotonic() - sent
    finally:
        postgres_server.start()
        workers.stop()
    assert worker.returncode == 0, workers.output()
    assert took < 1.0, took


def answer(spec: str, key: str) -> None:
    from toolnexus import Answer

    with open_store(spec, create=False) as store:
        (request,) = store.get(key).requests
        store.record(key, Answer(request.id, True, {"word": "w" + key[:6]}))


def wait_until_ran(count_file: Path, count: int) -> None:
    deadline = time.monotonic() + 60
    while ran(count_file) < count:
        assert time.monotonic() < deadline, f"the body did not run {count} times in 60 s"
        time.sleep(0.02)


def wait_until_done(spec: str, key: str, workers: Workers) -> None:
    wait_until_all_done_subset(spec, [key], workers)


def wait_until_all_done_subset(spec: str, keys: list[str], workers: Workers) -> None:
    deadline = time.monotonic() + 60
    with open_store(spec, create=False, read_only=True) as store:
        while any(store.call(key).status != "done" for key in keys):
            if time.monotonic() > deadline:
                pytest.fail(f"not done in 60 s; workers said:\n{workers.output()[-3000:]}")
            time.sleep(0.2)


def test_a_database_unreachable_at_start_is_one_line_and_exit_3(tmp_path: Path) -> None:
    with socket_closed_port() as port:
        done = forkserver.run(
            [
                *(sys.executable, "-m", "toolnexus", "worker", f"postgresql://postgres@127.0.0.1:{port}/x"),
                *(
                    "--stdio",
                    f"{sys.executable} {SERVER} --key {KEY.hex()} --count {tmp_path / 'runs'}",
                    "--once",
                ),
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 3, done.stderr
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("toolnexus: cannot reach the store: cannot reach PostgreSQL at 127.0.0.1:")


def test_worker_once_drains_makes_a_missing_store_and_cannot_make_one_nowhere(tmp_path: Path) -> None:
    spec = str(tmp_path / "calls.db")
    keys = park(spec, 3)
    for recorder in record_from_other_processes(spec, keys[:2], 1):
        assert recorder.wait(timeout=60) == 0
    server = forkserver.server_command(
        [sys.executable, str(SERVER), "--key", KEY.hex(), "--count", str(tmp_path / "runs")]
    )
    done = forkserver.run(
        [sys.executable, "-m", "toolnexus", "worker", spec, "--stdio", server, "--once"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert sorted(done.stdout.splitlines()) == sorted(f"{key}  tool job  done" for key in keys[:2])
    made = forkserver.run(  # a worker writes: it makes its store on first use
        [sys.executable, "-m", "toolnexus", "worker", str(tmp_path / "new.db"), "--stdio", server, "--once"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (made.returncode, made.stdout, made.stderr) == (0, "", "")
    with open_store(str(tmp_path / "new.db"), create=False, read_only=True) as store:
        assert store.calls() == []
    nowhere = tmp_path / "no-such-dir" / "x.db"
    missing = forkserver.run(
        [sys.executable, "-m", "toolnexus", "worker", str(nowhere), "--stdio", server, "--once"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (missing.returncode, missing.stdout) == (2, "")
    assert missing.stderr == f"toolnexus: {nowhere}: cannot create a store there\n"


class socket_closed_port:  # noqa: N801 - used as a context manager
    """A port nothing listens on (bound, then closed)."""

    def __enter__(self) -> int:
        import socket

        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port: int = sock.getsockname()[1]
        return port

    def __exit__(self, *exc: object) -> None:
        pass


def test_a_server_that_cannot_be_started_is_one_line_and_exit_3(tmp_path: Path) -> None:
    spec = str(tmp_path / "calls.db")
    open_store(spec).close()
    done = forkserver.run(
        [sys.executable, "-m", "toolnexus", "worker", spec, "--stdio", "/nonexistent/server", "--once"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 3, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("toolnexus: cannot connect to ")


def test_a_server_that_never_answers_is_given_up_after_connect_timeout(tmp_path: Path) -> None:
    spec = str(tmp_path / "calls.db")
    open_store(spec).close()
    started = time.monotonic()
    done = forkserver.run(
        [sys.executable, "-m", "toolnexus", "worker", spec, "--stdio", "sleep 600", "--connect-timeout", "1"],
        timeout=120,
    )
    assert done.returncode == 3, done.stderr
    assert done.stderr == (
        "toolnexus: cannot connect to the server `sleep 600`: no answer within 1 s (--connect-timeout)\n"
    )
    assert time.monotonic() - started < 60  # loose: given up, not left waiting on the server
