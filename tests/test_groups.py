"""The end-to-end tests' groups (support/groups.py): decided in one place, by marker.

scripts/test runs each group as a process of its own with ``-m group_X`` and names no test file;
tests/conftest.py marks each ``e2e`` test with its group's marker, which pyproject.toml registers
(``--strict-markers`` would fail a group it does not know).
"""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace
from typing import cast

import pytest

from support.groups import GROUPS, LAST, OTHERS, group_of, selected_group
from support.processes import TESTS_DIR

SCRIPT = TESTS_DIR.parent / "scripts" / "test"
MODULES = sorted(path.name for path in TESTS_DIR.glob("test_*.py"))


def test_the_test_command_selects_every_group_by_its_marker_and_names_no_test_file() -> None:
    script = SCRIPT.read_text(encoding="utf-8")
    assert re.findall(r"\btest_\w+\.py\b", script) == []
    assert re.findall(r'-m "group_\$group"', script), "each group is run by its marker"
    run = set(re.findall(r'^run "[^"]*" e2e (\w+)\b', script, re.MULTILINE))
    assert run == {*GROUPS, OTHERS}


def test_every_group_is_a_registered_marker(pytestconfig: pytest.Config) -> None:
    registered = {line.split(":")[0] for line in pytestconfig.getini("markers")}
    assert {f"group_{group}" for group in (*GROUPS, OTHERS)} <= registered


def test_each_module_named_in_a_group_exists_and_is_in_one_group_only() -> None:
    for group, patterns in GROUPS.items():
        for pattern in patterns:
            matched = [module for module in MODULES if Path(module).match(pattern)]
            assert matched, f"{group}: {pattern} names no test module"
            assert {group_of(module) for module in matched} == {group}, pattern
    assert set(LAST) <= set(MODULES)


def test_a_module_no_group_names_is_in_the_others_group() -> None:
    assert group_of("test_cli_something_new.py") == "command"
    assert group_of("test_something_new.py") == OTHERS
    assert group_of("test_workers_e2e.py") == "workers"


def _config(markexpr: str) -> pytest.Config:
    """What ``selected_group`` reads of pytest's configuration: the ``-m`` expression."""
    options = {"markexpr": markexpr}
    return cast(pytest.Config, SimpleNamespace(getoption=lambda name, default=None: options.get(name)))


@pytest.mark.parametrize(
    ("markexpr", "group"),
    [
        ("group_workers", "workers"),
        (" group_others ", OTHERS),
        ("", None),
        ("e2e", None),
        ("not e2e", None),
        ("group_workers or group_command", None),  # the whole tree is collected, then selected
        ("group_nothing", None),
    ],
)
def test_only_one_group_marker_alone_leaves_the_other_modules_uncollected(
    markexpr: str, group: str | None
) -> None:
    assert selected_group(_config(markexpr)) == group


def test_every_e2e_test_of_this_run_carries_its_group_and_no_other_test_one(
    request: pytest.FixtureRequest,
) -> None:
    # The tests this run selected (the quick tier's: none is e2e, none has a group).
    for item in request.session.items:
        groups = [mark.name for mark in item.iter_markers() if mark.name.startswith("group_")]
        expected = [f"group_{group_of(item.path.name)}"] if item.get_closest_marker("e2e") else []
        assert groups == expected, item.nodeid
