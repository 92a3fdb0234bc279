"""Shared fixtures: the anyio backend, and the elicitation server on each transport.

The server modules import the SDK's server stack, so they are imported only by the fixtures
that need them.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from support.fuzzing import register_profile
from support.groups import LAST, elsewhere, group_of, selected_group
from support.http_process import served_mcp_url
from support.npm import server_everything  # noqa: F401  (the MCP reference test server, over stdio)
from support.postgres import postgres_server, postgres_url  # noqa: F401  (PostgreSQL, for the store tests)
from support.processes import TESTS_DIR, Processes, forbid_processes_in, quick_test
from support.stores import backend  # noqa: F401  (each store test on SQLite and on PostgreSQL)

register_profile()

if TYPE_CHECKING:
    from mcp import StdioServerParameters

    from servers.harness import Target
    from support.docs_site import Build

E2E = pytest.mark.e2e
"""End to end: the test starts processes or servers. The test command runs these on one Python,
in groups (``group_command``, ...: support/groups.py), and the rest, the quick tests (``-m "not
e2e"``), on every Python it covers. Which tests are ``e2e`` is decided here, by three rules, so
a new test in one of these places is marked without a word."""
TRANSPORTS = ["inprocess", "stdio", "http"]
E2E_MODULES = {
    "test_cli_edges.py",
    "test_cli_failures.py",
    "test_cli_tasks.py",
    "test_cli_terminal.py",
    "test_conformance.py",
    "test_docs_browser.py",
    "test_docs_examples.py",
    "test_docs_site.py",
    "test_forkserver.py",
    "test_durable_cli.py",
    "test_inbox_browser.py",
    "test_inbox_cli.py",
    "test_live_browser.py",
    "test_live_cli.py",
    "test_mcp1_server.py",
    "test_release.py",
    "test_tasks_fastmcp.py",
    "test_notify.py",
    "test_tasks_parked.py",
    "test_tasks_parked_e2e.py",
}
"""Rule 1: modules whose tests run processes (or, ``test_tasks_parked.py`` and
``test_notify.py``, workers and notifiers waiting on polls, pauses and receivers for seconds in
this one), every test in them. (``test_cli.py`` is left to rule
2, so that its in-process tests of the arguments stay quick.)"""
E2E_FIXTURES = {
    "processes",
    "server_everything",
    "sessions",
    "demo_http_url",
    "http_server_url",
    "stdio_fork_server",
    "postgres_server",
    "postgres_url",
    "browser",
}
"""Rule 2: a test that uses a fixture starting processes (``processes`` for a test's own)."""
E2E_TRANSPORTS = {"stdio", "http"}
"""Rule 3: a test parametrized with one of these transports (the ``target`` fixture's and others')."""


def is_e2e(item: pytest.Item) -> bool:
    if item.path.name in E2E_MODULES:
        return True
    if E2E_FIXTURES.intersection(getattr(item, "fixturenames", ())):
        return True
    callspec = getattr(item, "callspec", None)
    params = callspec.params.values() if callspec is not None else ()
    return any(isinstance(value, str) and value in E2E_TRANSPORTS for value in params)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """With ``-m group_X`` alone (as the test command runs each group, support/groups.py), the
    test modules without a test of that group are not even imported: collecting the whole tree
    cost each of those processes about 1.5 s of CPU."""
    group = selected_group(config)
    return True if group is not None and elsewhere(collection_path, group) else None


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if is_e2e(item):
            item.add_marker(E2E)
        e2e = item.get_closest_marker("e2e") is not None  # by the rules above, or by hand
        item.add_marker(f"group_{group_of(item.path.name, e2e=e2e)}")  # support/groups.py
    items.sort(key=lambda item: item.path.name in LAST)  # stable: the order is kept otherwise


forbid_processes_in()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> object:
    """A test that is not ``e2e`` fails if it starts a process (support/processes.py), so a
    quick run (``-m "not e2e"``) starts none."""
    if item.get_closest_marker("e2e") is None:
        quick_test.append(item.nodeid)
    try:
        return (yield)
    finally:
        quick_test.clear()


@pytest.fixture
def processes() -> Iterator[Processes]:
    """Start processes from a test (support/processes.py); the test is ``e2e``."""
    started = Processes()
    try:
        yield started
    finally:
        started.close()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(params=TRANSPORTS)
def target(request: pytest.FixtureRequest) -> Target:
    """The elicitation server on each transport: a fresh in-process ``MCPServer``, a stdio
    subprocess (started by ``mcp.Client`` itself; see ``stdio_fork_server``) or the shared
    streamable HTTP server."""
    if request.param == "inprocess":
        from servers.elicit_server import build_server

        return build_server()[0]
    if request.param == "stdio":
        forked: StdioServerParameters = request.getfixturevalue("stdio_fork_server")
        return forked
    url: str = request.getfixturevalue("http_server_url")
    return url


@pytest.fixture(scope="session")
def stdio_fork_server() -> StdioServerParameters:
    """How ``mcp.Client`` starts the elicitation server as a stdio subprocess whose server is
    forked from the fork server, which has imported the SDK already (``support/launch.py``
    says how): the same server on the same pipes, without a second of start-up per test."""
    from mcp import StdioServerParameters

    from support import forkserver

    forkserver.start()
    server = forkserver.server_command([sys.executable, "-m", "servers.elicit_server", "stdio"])
    command, *args = shlex.split(server)
    return StdioServerParameters(command=command, args=args, cwd=TESTS_DIR)


@pytest.fixture(scope="session")
def docs_build(tmp_path_factory: pytest.TempPathFactory) -> Build:
    """The docs site and what its build printed, built once for the tests that read it
    (support/docs_site.py)."""
    from support.docs_site import build_site

    return build_site(tmp_path_factory.mktemp("site"))


@pytest.fixture(scope="session")
def site(docs_build: Build) -> Path:
    """The built docs site."""
    return docs_build.site


@pytest.fixture(scope="session")
def http_server_url() -> Iterator[str]:
    """The elicitation server over streamable HTTP on 127.0.0.1, in a subprocess, up
    (``/health`` answers) before the first test uses it and stopped at teardown."""
    with served_mcp_url("elicit_server") as url:
        yield url
