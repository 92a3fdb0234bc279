"""The groups the test command runs the tests in: one pytest process per group, side by side,
each selecting its group by marker (``pytest -m group_workers``).

Every test is in one group. An end-to-end test (``e2e``) is in its module's group of ``GROUPS``,
or in ``group_others``; a quick test in ``group_quick_1`` or ``group_quick_2`` (every other
module, in name order), the quick tier's two processes. tests/conftest.py marks each test with
its group's marker (registered in pyproject.toml); scripts/test names groups, never test files.
A module's groups follow from its name, so a new module needs no word here unless it belongs
with one of the named groups.
"""

from __future__ import annotations

from fnmatch import fnmatch
from functools import cache
from pathlib import Path

import pytest

from .processes import TESTS_DIR

__all__ = ["GROUPS", "LAST", "OTHERS", "QUICK_PARTS", "elsewhere", "group_of", "groups", "selected_group"]

GROUPS = {
    # The command as a process: the command's own tests, the live questions' and the inbox's
    # commands, the docs examples, and the fork server they all run through.
    "command": (
        "test_cli*.py",
        "test_live_cli.py",
        "test_live_scale.py",
        "test_inbox_cli.py",
        "test_docs_examples.py",
        "test_forkserver.py",
    ),
    # 4 worker processes x 1,000 calls, on both stores: a chain of its own, at a lower priority.
    "workers": ("test_workers_e2e.py",),
    # Parked tasks and notifications: workers polling tasks, killed, their server killed, and
    # notifiers sending to receivers that fail and come back. They mostly wait (leases, polls,
    # pauses), so a process of their own runs them beside the others at little cost; with them
    # the stores' own tests on PostgreSQL (the others' group ended last).
    "tasks": (
        "test_tasks_parked*.py",
        "test_notify.py",
        "test_store_contract.py",
        "test_durable_store.py",
        "test_store_commands.py",
    ),
    # Browsers, the docs site and programs nobody here wrote (the conformance suite, an mcp<2
    # server, FastMCP's tasks on Redis): mostly waiting on other programs.
    "outside": (
        "test_conformance.py",
        "test_docs_browser.py",
        "test_docs_site.py",
        "test_inbox_browser.py",
        "test_live_browser.py",
        "test_mcp1_server.py",
        "test_tasks_fastmcp.py",
        "test_urls_browser.py",
    ),
}
"""Each group and the test modules (shell patterns) whose end-to-end tests it runs."""
OTHERS = "others"
"""The group of every end-to-end test no pattern of ``GROUPS`` names."""
QUICK_PARTS = 2
"""The quick tests' groups, ``quick_1`` and ``quick_2``: they mostly wait (deadlines, leases,
threads), so two processes, each every other test module, end in about half the time on two
cores."""
LAST = ("test_forkserver.py",)
"""Modules whose tests run after every other test of their run: one of them kills the fork
server, and with it every server a session fixture had it fork (the other tests' HTTP servers)."""


@cache
def _modules() -> tuple[str, ...]:
    return tuple(sorted(path.name for path in TESTS_DIR.glob("test_*.py")))


def group_of(module: str, *, e2e: bool) -> str:
    """The group of the end-to-end (``e2e``) or the quick tests of the test module ``module``
    (``test_x.py``)."""
    if not e2e:
        index = _modules().index(module) if module in _modules() else 0
        return f"quick_{index % QUICK_PARTS + 1}"
    for group, patterns in GROUPS.items():
        if any(fnmatch(module, pattern) for pattern in patterns):
            return group
    return OTHERS


def groups() -> tuple[str, ...]:
    """Every group, as its marker names it after ``group_``."""
    return (*GROUPS, OTHERS, *(f"quick_{part}" for part in range(1, QUICK_PARTS + 1)))


def selected_group(config: pytest.Config) -> str | None:
    """The group that ``-m`` selects when it is one group's marker alone (``-m group_workers``),
    else None: then no test module can be left out before it is collected."""
    expression = str(config.getoption("markexpr", "") or "").strip()
    group = expression.removeprefix("group_")
    return group if group != expression and group in groups() else None


def elsewhere(module: Path, group: str) -> bool:
    """Whether the test module ``module`` has no test of ``group`` (it has one group for its
    end-to-end tests and one for its quick tests); False for any other file."""
    if module.parent.resolve() != TESTS_DIR or not fnmatch(module.name, "test_*.py"):
        return False
    return group not in (group_of(module.name, e2e=True), group_of(module.name, e2e=False))
