"""The pytest plugin and the test resolvers, used as a user uses them: the sample module in
``tests/user_sample`` run by pytest's ``pytester``, against real in-process servers."""

from __future__ import annotations

from importlib.metadata import entry_points
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

QUIET = ["-p", "no:cacheprovider", "-p", "no:benchmark"]
"""The runs are in process: no cache files, and no pytest-benchmark (which runs ``git`` as it starts)."""
SAMPLE = Path(__file__).resolve().parent / "user_sample" / "resolver_tests.py"


def shows(lines: list[str], *message: str) -> None:
    """The report holds ``message``, line after line, as pytest prints an error (``E   ...``)."""
    for at, line in enumerate(lines):
        if line.endswith(message[0]):
            indent = len(line) - len(message[0])
            following = [text[indent:] for text in lines[at : at + len(message)]]
            if following == list(message):
                return
    raise AssertionError("the report does not show:\n" + "\n".join(message))


def test_the_plugin_is_registered_as_toolnexus() -> None:
    found = [ep for ep in entry_points(group="pytest11") if ep.name == "toolnexus"]
    assert [ep.value for ep in found] == ["toolnexus.testing.pytest_plugin"]


def test_a_users_test_module_runs_and_shows_why_a_script_fails(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_resolver=SAMPLE.read_text(encoding="utf-8"))
    result = pytester.runpytest(*QUIET, "-q")
    # 4 era-parametrized tests, the script, the replay, the masked log; 3 that fail on purpose.
    result.assert_outcomes(passed=7, failed=3)
    out = result.stdout
    shows(
        out.lines,
        "AssertionError: ScriptedResolver: request 1 does not match step 0: "
        "the prompt does not contain 'Sign in'",
        "  asked:    kind 'input', prompt 'Deploy where?', fields ['region', 'replicas']",
        "  expected: prompt='Sign in', action='accept'",
    )
    shows(
        out.lines,
        "AssertionError: ScriptedResolver: 1 of 2 steps left unused after 1 requests:",
        "  step 1: prompt='Confirm', action='cancel'",
    )
    shows(
        out.lines,
        "AssertionError: ReplayResolver: request 1 does not match recorded request 1",
        "  asked:    kind 'input', prompt 'Deploy where?', fields ['region']",
        "  recorded: kind 'input', prompt 'Deploy where?', fields ['region', 'replicas']",
    )
    failed = {line.split("::")[-1].split(" ")[0] for line in out.lines if line.startswith("FAILED")}
    assert failed == {"test_fails_wrong_prompt", "test_fails_steps_left", "test_fails_replay_of_another_form"}


def test_the_plugin_can_be_turned_off(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_uses_it(elicit_server):\n    assert callable(elicit_server)\n")
    pytester.runpytest(*QUIET).assert_outcomes(passed=1)
    result = pytester.runpytest(*QUIET, "-p", "no:toolnexus")
    result.assert_outcomes(errors=1)
    # The error is the fixture's absence, and nothing else.
    result.stdout.fnmatch_lines(["*fixture 'elicit_server' not found*"])
    assert "elicit_server" not in "".join(
        line for line in result.stdout.lines if "available fixtures" in line
    )
