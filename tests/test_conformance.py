"""The official MCP conformance suite against toolnexus's conformance client.

``@modelcontextprotocol/conformance`` (pinned in ``tests/conformance/package-lock.json``) plays a
mock server for each client scenario and judges what the client puts on the wire; the client is
``tests/conformance/client.py``: ``mcp.Client`` with ``toolnexus.elicitation_callback``. Every
client scenario of the suite that is not about auth runs, once per protocol era it belongs to
(the suite judges the two eras apart), and each run is held to its ``checks.json``:

- every check passes, except the expected failures listed below, each with its reason; an
  expected failure that starts passing fails the test too, so the list cannot go stale;
- the number of passing checks is the one this suite version gives, so a run that stops early
  cannot pass by having nothing checked;
- the client exits cleanly (its last line on stdout says so), unless an expected failure says
  which SDK error stops it.

The scenarios run a few at a time, from one fixture. The suite needs npm (and installs Node 22
when the machine's is older): the module is skipped, saying why, only when npm cannot reach its
registry. Cost: about 15 runs of a Node process and a Python client, 20-40 s of CPU.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from support import forkserver
from support.needs import unavailable
from support.npm import NpmUnreachableError

CONFORMANCE_DIR = Path(__file__).resolve().parent / "conformance"
sys.path.insert(0, str(CONFORMANCE_DIR))
import suite as conformance  # noqa: E402  (the installer lives beside the client, stdlib only)

LEGACY, MODERN = "2025-11-25", "2026-07-28"
SPEC_VERSIONS = (LEGACY, MODERN)
"""The protocol eras toolnexus supports; the suite runs a scenario at one of them at a time."""

PASSING: dict[tuple[str, str], int] = {
    ("initialize", LEGACY): 1,
    ("tools_call", LEGACY): 2,
    ("tools_call", MODERN): 2,
    ("elicitation-sep1034-client-defaults", LEGACY): 5,
    ("sse-retry", LEGACY): 3,
    ("request-metadata", MODERN): 5,
    ("sep-2322-client-request-state", MODERN): 5,
    ("http-standard-headers", MODERN): 9,
    ("http-custom-headers", MODERN): 18,
    ("http-invalid-tool-headers", MODERN): 12,
    ("json-schema-ref-no-deref", MODERN): 1,
    ("json-schema-2020-12-preservation", LEGACY): 9,
    ("json-schema-2020-12-preservation", MODERN): 9,
}
"""Each (scenario, era) the suite has that is not about auth, and how many of its checks pass."""


@dataclass(frozen=True)
class Expected:
    """A known failure: why, which checks fail, and the SDK error the client exits with, if any."""

    reason: str
    checks: frozenset[str] = frozenset()
    client_error: str | None = None


EXPECTED_FAILURES: dict[tuple[str, str], Expected] = {
    ("sep-2322-client-request-state", MODERN): Expected(
        "the SDK's: mcp 2.3 rejects a tools/call result with no resultType (a pydantic ValidationError) "
        "where 2026-07-28 says to treat it as complete; every check passes, the client exits 1",
        client_error="CallToolResult.resultType\n  Field required",
    ),
    ("request-metadata", MODERN): Expected(
        "the SDK's: mcp 2.3 does not retry a request the server rejects with -32022 (unsupported "
        "protocol version) with a version from the error's supported list; the client exits 1",
        checks=frozenset({"sep-2575-client-retry-supported-version"}),
        client_error="Unsupported protocol version",
    ),
}

NOT_RUN = {
    "auth/": "authorization: toolnexus adds nothing to the SDK's OAuth client",
    "sep-2640-": "the skills extension (SEP-2640) is for hosts that load skills; neither mcp 2.3 nor "
    "toolnexus is one, and extensions are optional (SEP-1730)",
}
"""Client scenarios of the suite that are not run, by name prefix, and why."""


@dataclass
class Run:
    scenario: str
    version: str
    checks: list[dict[str, Any]]
    stdout: str
    stderr: str
    log: str


@pytest.fixture(scope="module")
def suite() -> conformance.Suite:
    try:
        return conformance.ensure_installed()
    except NpmUnreachableError as err:
        unavailable("the MCP conformance suite", f"cannot be installed: {err}")


def run_scenario(suite: conformance.Suite, scenario: str, version: str, out: Path) -> Run:
    # The client forked by the fork server (support/launch.py): the suite starts a process of
    # its own for each scenario, which then costs milliseconds of CPU, not a second.
    client = forkserver.server_command([sys.executable, str(CONFORMANCE_DIR / "client.py")])
    argv = suite.command("client", "--command", client, "--scenario", scenario, "--spec-version", version)
    argv += ["--timeout", "60000", "-o", str(out)]
    env = dict(os.environ, NO_COLOR="1")
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=180, check=False)
    found = sorted(out.glob("*/checks.json"))
    if not found:
        pytest.fail(f"{scenario} at {version}: the suite wrote no checks.json:\n{proc.stdout}{proc.stderr}")
    result = found[-1].parent
    return Run(
        scenario,
        version,
        json.loads(found[-1].read_text(encoding="utf-8")),
        (result / "stdout.txt").read_text(encoding="utf-8"),
        (result / "stderr.txt").read_text(encoding="utf-8"),
        proc.stdout + proc.stderr,
    )


@pytest.fixture(scope="module")
def runs(suite: conformance.Suite, tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], Run]:
    """Every (scenario, era) of ``PASSING``, run a few at a time."""
    root = tmp_path_factory.mktemp("conformance")
    forkserver.start()
    with ThreadPoolExecutor(max_workers=4) as pool:
        futures = {
            key: pool.submit(run_scenario, suite, *key, root / f"{key[0]}-{key[1]}") for key in PASSING
        }
        return {key: future.result() for key, future in futures.items()}


def problems(run: Run, passing: int, expected: Expected | None) -> Iterator[str]:
    failing = {c["id"] for c in run.checks if c["status"] in ("FAILURE", "WARNING")}
    allowed = expected.checks if expected else frozenset()
    for check in run.checks:
        if check["status"] in ("FAILURE", "WARNING") and check["id"] not in allowed:
            yield f"{check['status']} {check['id']}: {check.get('errorMessage') or check.get('description')}"
    for check_id in sorted(allowed - failing):
        yield f"{check_id} is listed as an expected failure but did not fail: remove it from the list"
    passed = sum(1 for c in run.checks if c["status"] == "SUCCESS")
    if passed != passing:
        yield f"{passed} checks passed, where this suite version passes {passing}"
    clean_exit = run.stdout.rstrip().endswith("conformance client: done")
    error = expected.client_error if expected else None
    if error is None and not clean_exit:
        yield f"the client did not finish; its stderr ends:\n{run.stderr[-2000:]}"
    if error is not None and clean_exit:
        yield f"the client finished cleanly, yet an expected failure says it stops with {error!r}: remove it"
    if error is not None and not clean_exit and error not in run.stderr:
        yield f"the client stopped, but not with {error!r}; its stderr ends:\n{run.stderr[-2000:]}"


# The first test also waits for the module's fixture, which runs every scenario (four at a time):
# on a machine busy with the rest of the test command that takes longer than one test's limit.
@pytest.mark.timeout(900)
@pytest.mark.parametrize(("scenario", "version"), list(PASSING), ids=[f"{s}@{v}" for s, v in PASSING])
def test_scenario(runs: dict[tuple[str, str], Run], scenario: str, version: str) -> None:
    run = runs[scenario, version]
    found = list(problems(run, PASSING[scenario, version], EXPECTED_FAILURES.get((scenario, version))))
    assert not found, "\n".join(found) + f"\n\nthe suite's report:\n{run.log[-4000:]}"


def test_every_client_scenario_of_the_suite_is_run(suite: conformance.Suite) -> None:
    listing = subprocess.run(
        suite.command("list", "--client"), capture_output=True, text=True, timeout=120, check=True
    ).stdout
    offered: set[tuple[str, str]] = set()
    for name, versions in re.findall(r"^\s*- (\S+) \[([^\]]*)\]", listing, re.MULTILINE):
        if name.startswith(tuple(NOT_RUN)):
            continue
        offered |= {(name, v) for v in versions.split(",") if v in SPEC_VERSIONS}
    assert offered, listing
    assert offered == set(PASSING)


def test_expected_failures_are_runs_of_the_suite() -> None:
    assert set(EXPECTED_FAILURES) <= set(PASSING)
    assert all(e.reason and (e.checks or e.client_error) for e in EXPECTED_FAILURES.values())
