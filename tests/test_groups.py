"""The tests' groups (support/groups.py): decided in one place, by marker.

scripts/test runs each group as a process of its own with ``-m group_X`` and names no test file;
tests/conftest.py marks each test with its group's marker, which pyproject.toml registers
(``--strict-markers`` would fail a group it does not know).
"""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace
from typing import cast

import pytest

from support.groups import GROUPS, LAST, OTHERS, QUICK_PARTS, elsewhere, group_of, groups, selected_group
from support.processes import TESTS_DIR

SCRIPT = TESTS_DIR.parent / "scripts" / "test"
MODULES = sorted(path.name for path in TESTS_DIR.glob("test_*.py"))


def test_the_test_command_selects_every_group_by_its_marker_and_names_no_test_file() -> None:
    script = SCRIPT.read_text(encoding="utf-8")
    assert re.findall(r"\btest_\w+\.py\b", script) == []
    assert '-m "group_$group"' in script, "each e2e group is run by its marker"
    assert set(re.findall(r'^run "[^"]*" e2e (\w+)\b', script, re.MULTILINE)) == {*GROUPS, OTHERS}
    assert '-m "group_quick_$part"' in script, "each quick group is run by its marker"
    parts = re.findall(r"^ *for part in ([0-9 ]+);", script, re.MULTILINE)
    assert parts == [" ".join(str(part) for part in range(1, QUICK_PARTS + 1))]


def test_every_group_is_a_registered_marker(pytestconfig: pytest.Config) -> None:
    registered = {line.split(":")[0] for line in pytestconfig.getini("markers")}
    assert {f"group_{group}" for group in groups()} <= registered


def test_each_module_named_in_a_group_exists_and_is_in_one_group_only() -> None:
    for group, patterns in GROUPS.items():
        for pattern in patterns:
            matched = [module for module in MODULES if Path(module).match(pattern)]
            assert matched, f"{group}: {pattern} names no test module"
            assert {group_of(module, e2e=True) for module in matched} == {group}, pattern
    assert set(LAST) <= set(MODULES)


def test_a_module_no_group_names_is_in_the_others_group() -> None:
    assert group_of("test_cli_something_new.py", e2e=True) == "command"
    assert group_of("test_something_new.py", e2e=True) == OTHERS
    assert group_of("test_workers_e2e.py", e2e=True) == "workers"


def test_the_quick_groups_take_every_other_module() -> None:
    quick = [group_of(module, e2e=False) for module in MODULES]
    assert quick == [f"quick_{index % QUICK_PARTS + 1}" for index in range(len(MODULES))]


def _config(markexpr: str) -> pytest.Config:
    """What ``selected_group`` reads of pytest's configuration: the ``-m`` expression."""
    options = {"markexpr": markexpr}
    return cast(pytest.Config, SimpleNamespace(getoption=lambda name, default=None: options.get(name)))


@pytest.mark.parametrize(
    ("markexpr", "group"),
    [
        ("group_workers", "workers"),
        (" group_others ", OTHERS),
        ("group_quick_2", "quick_2"),
        ("", None),
        ("e2e", None),
        ("not e2e", None),
        ("group_workers or group_command", None),  # the whole tree is collected, then selected
        ("group_nothing", None),
    ],
)
def test_only_a_group_marker_alone_is_a_selected_group(markexpr: str, group: str | None) -> None:
    assert selected_group(_config(markexpr)) == group


def test_a_group_leaves_out_the_modules_without_a_test_of_it() -> None:
    first, second = TESTS_DIR / MODULES[0], TESTS_DIR / MODULES[1]
    assert [elsewhere(first, "quick_1"), elsewhere(first, "quick_2")] == [False, True]
    assert [elsewhere(second, "quick_1"), elsewhere(second, "quick_2")] == [True, False]
    assert not elsewhere(TESTS_DIR / "test_workers_e2e.py", "workers")
    assert elsewhere(TESTS_DIR / "test_workers_e2e.py", "command")
    assert not elsewhere(TESTS_DIR / "conftest.py", "workers")  # not a test module
    assert not elsewhere(TESTS_DIR / "support" / "test_x.py", "workers")  # not in tests/


def test_every_test_of_this_run_carries_its_group(request: pytest.FixtureRequest) -> None:
    for item in request.session.items:
        e2e = item.get_closest_marker("e2e") is not None
        marked = [mark.name for mark in item.iter_markers() if mark.name.startswith("group_")]
        assert marked == [f"group_{group_of(item.path.name, e2e=e2e)}"], item.nodeid
