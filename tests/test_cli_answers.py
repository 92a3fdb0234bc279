"""``toolnexus call --answers FILE`` and ``--accept-defaults``, against the bundled demo server
over stdio, with no terminal (stdin is /dev/null): what the rules or the defaults answer
reaches the server, is printed masked, and what would be asked is cancelled.

The sessions are real ``python -m toolnexus`` processes, started together by one fixture.
"""

from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from support import forkserver
from toolnexus import Answer
from toolnexus.cli import main
from toolnexus.cli._unattended import defaults_answer
from toolnexus.testing import form_request, url_request

DEMO = ["--stdio", forkserver.server_command([sys.executable, "-m", "toolnexus._demo_server"])]
DEPLOY_PROMPT = "'Where should the demo service be deployed?'"


def write(path: Path, rules: list[dict[str, object]]) -> str:
    path.write_text(json.dumps({"rules": rules}), encoding="utf-8")
    return str(path)


@pytest.fixture(scope="module")
def sessions(tmp_path_factory: pytest.TempPathFactory) -> dict[str, subprocess.CompletedProcess[str]]:
    """Every session of this module, run at once."""
    tmp = tmp_path_factory.mktemp("answers")
    accept = write(
        tmp / "accept.json",
        [
            {"server": "other", "action": "decline"},
            {
                "server": "toolnexus-demo",
                "prompt": "^Where",
                "action": "accept",
                "values": {"environment": "staging", "replicas": 4, "note": "from CI"},
            },
        ],
    )
    ask = write(tmp / "ask.json", [{"kind": "input", "action": "ask"}])
    argv = {
        "accept": ["deploy", "--answers", accept, "--log", str(tmp / "traffic.jsonl")],
        "ask": ["deploy", "--answers", ask],
        "unmatched": ["sign_in", "--answers", ask],
        "defaults": ["deploy", "--accept-defaults"],
        "defaults-piped": ["deploy", "--accept-defaults"],
    }
    stdin = {"defaults-piped": "production\n3\n\n\n\n"}  # the fields, then Enter at the review

    def run(args: list[str]) -> subprocess.CompletedProcess[str]:
        name = next(name for name, argv_ in argv.items() if argv_ is args)
        return forkserver.run(
            [sys.executable, "-m", "toolnexus", "call", *DEMO, *args],
            input=stdin.get(name, ""),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    with ThreadPoolExecutor(max_workers=2) as pool:
        done = dict(zip(argv, pool.map(run, argv.values()), strict=True))
    log = tmp / "traffic.jsonl"
    done["log"] = subprocess.CompletedProcess([], 0, log.read_text(encoding="utf-8"), "")
    return done


def test_answers_from_a_policy_file_printed_masked_and_logged(
    sessions: dict[str, subprocess.CompletedProcess[str]],
) -> None:
    session = sessions["accept"]
    assert session.returncode == 0, session.stderr
    assert session.stdout == "Deployed to staging with 4 replicas; the team is notified; note: from CI.\n"
    assert (
        'toolnexus: rule 1: accept {"environment": "***", "replicas": "***", "notify": "***", "note": "***"} '
        f"(input: {DEPLOY_PROMPT})"
    ) in session.stderr
    assert "staging" not in session.stderr
    assert "from CI" not in session.stderr
    [request, answer] = [json.loads(line) for line in sessions["log"].stdout.splitlines()]
    assert request["event"] == "request"
    assert answer["answer"]["data"] == {
        "environment": "***",
        "replicas": "***",
        "notify": "***",
        "note": "***",
    }


def test_ask_and_unmatched_requests_are_cancelled_without_a_terminal(
    sessions: dict[str, subprocess.CompletedProcess[str]],
) -> None:
    ask, unmatched = sessions["ask"], sessions["unmatched"]
    assert (ask.returncode, ask.stdout) == (0, "Deploy cancelled: nothing was deployed.\n")
    assert f"toolnexus: rule 0: cancel (input: {DEPLOY_PROMPT})" in ask.stderr
    assert (unmatched.returncode, unmatched.stdout) == (0, "Sign-in cancelled.\n")
    assert "toolnexus: no rule matched: cancel (authorization: " in unmatched.stderr


def test_accept_defaults_asks_what_its_defaults_do_not_answer(
    sessions: dict[str, subprocess.CompletedProcess[str]],
) -> None:
    # deploy's form has required fields without defaults: it is asked as `call` asks it, from
    # stdin without a terminal; an empty stdin cancels it, as it would `call`.
    session = sessions["defaults"]
    assert (session.returncode, session.stdout) == (0, "Deploy cancelled: nothing was deployed.\n")
    assert "environment: (end of input)" in session.stderr
    piped = sessions["defaults-piped"]
    assert piped.returncode == 0, piped.stderr
    deployed = "Deployed to production with 3 replicas; the team is notified; note: routine deploy.\n"
    assert piped.stdout == deployed


@pytest.mark.parametrize(
    ("content", "words"),
    [
        ({"rules": [{"action": "maybe"}]}, "rule 0: action must be one of accept, decline, cancel, ask"),
        ({"rules": [{"action": "cancel", "colour": "red"}]}, "rule 0: unknown key 'colour'"),
        (None, "No such file"),
    ],
)
def test_a_wrong_policy_file_is_a_usage_error(
    content: object, words: str, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "answers.json"
    if content is not None:
        path.write_text(json.dumps(content), encoding="utf-8")
    assert main(["call", *DEMO, "deploy", "--answers", str(path)]) == 2
    err = capfd.readouterr().err
    assert err.startswith("toolnexus: --answers: ")
    assert words in err


def test_answers_and_accept_defaults_exclude_each_other(capfd: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["call", *DEMO, "deploy", "--answers", "a.json", "--accept-defaults"])
    assert stopped.value.code == 2
    assert "not allowed with argument" in capfd.readouterr().err


@pytest.mark.parametrize("answering", [["--answers", "a.json"], ["--accept-defaults"]])
def test_park_refuses_answers_it_would_not_use(
    answering: list[str], tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "parked.db"
    assert main(["call", *DEMO, "deploy", "--park", str(store), *answering]) == 2
    assert capfd.readouterr().err == "toolnexus: --park cannot be used with --answers or --accept-defaults\n"
    assert not store.exists()  # refused before anything was opened or started


def test_what_accept_defaults_accepts_by_itself() -> None:
    full = {
        "type": "object",
        "properties": {"region": {"type": "string", "default": "eu"}, "n": {"type": "integer", "default": 2}},
        "required": ["region"],
    }
    request = form_request(full)
    assert defaults_answer(request) == Answer(request.id, True, {"region": "eu", "n": 2})
    secret = {"type": "object", "properties": {"token": {"type": "string", "default": "x"}}}
    assert defaults_answer(form_request(secret)) is None
    assert (
        defaults_answer(
            form_request({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]})
        )
        is None
    )
    assert defaults_answer(url_request("https://auth.example.com/")) is None
