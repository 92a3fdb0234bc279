"""The groups the test command runs the end-to-end tests in: one pytest process per group, side
by side, each selecting its group by marker (``pytest -m group_workers``).

tests/conftest.py marks every ``e2e`` test with its group's marker (``group_command``, ...,
registered in pyproject.toml); scripts/test names groups, never test files. A test module's
group follows from its name, so a new module needs no word here unless it belongs with one of
the named groups: every other end-to-end test is in ``group_others``.
"""

from __future__ import annotations

from fnmatch import fnmatch

import pytest

__all__ = ["GROUPS", "LAST", "OTHERS", "group_of", "selected_group"]

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
    # 4 worker processes x 1,000 calls, on both stores: a chain of its own.
    "workers": ("test_workers_e2e.py",),
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
LAST = ("test_forkserver.py",)
"""Modules whose tests run after every other test of their run: one of them kills the fork
server, and with it every server a session fixture had it fork (the other tests' HTTP servers)."""


def group_of(module: str) -> str:
    """The group of the end-to-end tests of the test module named ``module`` (``test_x.py``)."""
    for group, patterns in GROUPS.items():
        if any(fnmatch(module, pattern) for pattern in patterns):
            return group
    return OTHERS


def selected_group(config: pytest.Config) -> str | None:
    """The group that ``-m`` selects when it is one group's marker alone (``-m group_workers``),
    else None: then no test module can be left out before it is collected."""
    expression = str(config.getoption("markexpr", "") or "").strip()
    group = expression.removeprefix("group_")
    return group if group != expression and group in (*GROUPS, OTHERS) else None
