"""The ``toolnexus`` command, run as a real subprocess against the bundled demo server.

Every scripted session is a real ``toolnexus`` process (the console script, or
``python -m toolnexus``) that starts the demo ``MCPServer`` over stdio (or reaches it over
streamable HTTP) and reads its answers from a scripted stdin. The scripted sessions of
this module are started together, a few at a time, by one fixture, so the suite pays for
the interpreter start-ups in parallel; each test then checks one of them.

A browser is never launched: ``BROWSER`` points at a script that only records the URL
it was given.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import socket
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from support import forkserver
from support.environment import environment
from support.http_process import http_server_process
from support.processes import Processes
from toolnexus.cli import main

PYTHON = sys.executable
TOOLNEXUS = str(Path(sys.executable).with_name("toolnexus"))
# The demo server, forked by the fork server when the command starts it (support/launch.py).
DEMO_SERVER = forkserver.server_command([PYTHON, "-m", "toolnexus._demo_server"])
SIGN_IN_URL = "https://auth.example.com/authorize?client_id=toolnexus-demo&scope=deploy"
SUSPICIOUS_URL = "http://bob@xn--pple-43d.com/login"
DEPLOYED_DEFAULTS = "Deployed to production with 3 replicas; the team is notified; note: routine deploy."


@dataclass
class Session:
    """One scripted run of the command."""

    argv: list[str]
    stdin: str | None  # None: stdin is /dev/null
    log: bool = False
    result: subprocess.CompletedProcess[str] | None = field(default=None, repr=False)
    log_path: Path | None = None
    browser_record: Path | None = None

    @property
    def out(self) -> str:
        assert self.result is not None
        return self.result.stdout

    @property
    def err(self) -> str:
        assert self.result is not None
        return self.result.stderr

    @property
    def code(self) -> int:
        assert self.result is not None
        return self.result.returncode

    def log_records(self) -> list[dict[str, Any]]:
        assert self.log_path is not None
        return [json.loads(line) for line in self.log_path.read_text(encoding="utf-8").splitlines()]

    def browser_opened(self) -> list[str]:
        assert self.browser_record is not None
        if not self.browser_record.exists():
            return []
        return self.browser_record.read_text(encoding="utf-8").splitlines()


HTTP_URL = "{http_url}"
"""Stands for the URL of the demo server over streamable HTTP (the ``demo_http_url`` fixture)."""


def call(tool: str, stdin: str | None, *extra: str) -> Session:
    """``toolnexus call`` against the demo server over stdio (one server process per call)."""
    return Session([TOOLNEXUS, "call", "--stdio", DEMO_SERVER, tool, *extra], stdin)


def call_http(tool: str, stdin: str | None, *extra: str) -> Session:
    """``toolnexus call`` against the one demo server over streamable HTTP (cheaper)."""
    return Session([TOOLNEXUS, "call", "--url", HTTP_URL, tool, *extra], stdin)


SESSIONS: dict[str, Session] = {
    # toolnexus demo
    "demo-unattended": Session([TOOLNEXUS, "demo"], None),
    "demo-all-yes-legacy": Session(
        [PYTHON, "-m", "toolnexus", "demo", "--protocol", "legacy"],
        "production\n3\n\n\n\ny\ny\nada\nhunter2\n\n",
        log=True,
    ),
    "demo-all-no-2026": Session(
        [PYTHON, "-m", "toolnexus", "demo", "--protocol", "2026-07-28", "--log-values"],
        "staging\n1\nn\nhello\n\nn\n\n",
        log=True,
    ),
    "demo-refusals": Session([TOOLNEXUS, "demo"], "staging\n:decline\ny\n:cancel\n"),
    # toolnexus call: one path of the dialogue each, over stdio and over streamable HTTP.
    # (The demo sessions above cover the rest: the secret guard, URL consent y and n,
    # :decline, :cancel and end of input.)
    "defaults": Session(
        [TOOLNEXUS, "call", "--stdio", DEMO_SERVER, "deploy"], "production\n3\n\n\n\n", log=True
    ),
    "re-ask": call_http("deploy", "prod\nproduction\n11\nlots\n4\n\n\n\n"),
    "re-ask-exhausted": call_http("deploy", "prod\nprd\nproduktion\n"),
    "review-n": call_http("deploy", "staging\n2\n\n\nn\n"),
    "review-e": call_http("deploy", "staging\n2\n\n\ne\nproduction\n\nn\n\n\n"),
    "url-no-browser": call_http("sign_in", "yes\n", "--no-browser"),
    "url-warnings": call_http("sign_in", "\n", json.dumps({"url": SUSPICIOUS_URL})),
    # the legacy era over streamable HTTP (the 2026 era is the default of the sessions above)
    "http-legacy-form": call_http("deploy", "staging\n1\nn\nhotfix\n\n", "--protocol", "legacy"),
    "http-legacy-url": call_http("sign_in", "y\n", "--protocol", "legacy"),
    # failures
    "http-tool-error": call_http("nope", None),
    "tool-error": call("no_such_tool", None),
    "tool-error-detail": call_http("sign_in", None, json.dumps({"url": 3})),
    "server-exits": Session(
        [TOOLNEXUS, "call", "--stdio", f"{shlex.quote(PYTHON)} -c 'raise SystemExit(1)'", "deploy"], None
    ),
    "no-server": Session([TOOLNEXUS, "call", "--stdio", "/nonexistent/mcp-server --flag", "deploy"], None),
}


DOCS_PAGE = Path(__file__).resolve().parent.parent / "docs" / "console.md"
DOCS_COMMANDS = [
    line
    for block in re.findall(
        r"^```sh\n(.*?)^```", DOCS_PAGE.read_text(encoding="utf-8"), re.DOTALL | re.MULTILINE
    )
    for line in block.replace("\\\n", " ").splitlines()  # a line ending in \ goes on
    if line.strip() and not line.lstrip().startswith("#")
]
"""The shell commands shown on the docs page: each runs here, so the page cannot rot."""
for number, command in enumerate(DOCS_COMMANDS, 1):
    SESSIONS[f"docs-{number}"] = Session(["bash", "-c", command], None)


def run_session(session: Session, directory: Path, http_url: str) -> Session:
    directory.mkdir(parents=True, exist_ok=True)
    env = environment(directory)
    session.browser_record = directory / "opened.txt"
    argv = [http_url if arg == HTTP_URL else arg for arg in session.argv]
    if session.log:
        session.log_path = directory / "traffic.jsonl"
        argv += ["--log", str(session.log_path)]
    if forkserver.handles(argv):  # a process of its own, without the interpreter's start
        session.result = forkserver.run(argv, input=session.stdin, env=env, cwd=directory, timeout=120)
        return session
    # A shell line (a docs page's): its toolnexus and python go through the fork server too.
    env["PATH"] = os.pathsep.join((str(forkserver.path_shims(directory / "bin")), env["PATH"]))
    session.result = subprocess.run(
        argv,
        input=session.stdin,
        stdin=subprocess.DEVNULL if session.stdin is None else None,
        capture_output=True,
        text=True,
        env=env,
        cwd=directory,
        timeout=120,
        check=False,
        start_new_session=True,  # no controlling terminal: the dialogue goes to stderr
    )
    return session


@pytest.fixture(scope="module")
def sessions(tmp_path_factory: pytest.TempPathFactory, demo_http_url: str) -> dict[str, Session]:
    """Run every scripted session of ``SESSIONS``, a few at a time."""
    root = tmp_path_factory.mktemp("cli")
    workers = max(2, min(8, (os.cpu_count() or 2) * 2))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = {
            name: pool.submit(run_session, s, root / name, demo_http_url) for name, s in SESSIONS.items()
        }
        return {name: future.result() for name, future in futures.items()}


def result_line(session: Session) -> str:
    """The tool's result: the last line ``toolnexus call`` prints."""
    return session.out.rstrip("\n").splitlines()[-1]


# --- toolnexus demo --------------------------------------------------------------------


def test_demo_unattended_runs_to_the_end_and_exits_0(sessions: dict[str, Session]) -> None:
    s = sessions["demo-unattended"]
    assert s.code == 0, s.err
    assert "[1/3] deploy" in s.err
    assert "[2/3] sign_in" in s.err
    assert "[3/3] connect_database" in s.err
    assert "Result: Deploy cancelled: nothing was deployed." in s.err
    assert "Result: Sign-in cancelled." in s.err
    assert "Result: Database login cancelled: not connected." in s.err
    assert s.err.count("(end of input)") == 3
    assert s.browser_opened() == []


def test_demo_answers_everything_in_the_legacy_era(sessions: dict[str, Session]) -> None:
    s = sessions["demo-all-yes-legacy"]
    assert s.code == 0, s.err
    assert f"Result: {DEPLOYED_DEFAULTS}" in s.err
    assert "Result: Sign-in page opened" in s.err
    assert "Result: Connected to the demo database as ada." in s.err
    assert s.browser_opened() == [SIGN_IN_URL]
    assert "hunter2" not in s.err  # the secret is not echoed


def test_demo_log_has_each_request_and_masked_answer(sessions: dict[str, Session]) -> None:
    records = sessions["demo-all-yes-legacy"].log_records()
    assert [r["event"] for r in records] == ["request", "answer"] * 3
    requests = [r["request"] for r in records if r["event"] == "request"]
    answers = [r for r in records if r["event"] == "answer"]
    assert [r["kind"] for r in requests] == ["input", "authorization", "input"]
    assert requests[0]["prompt"] == "Where should the demo service be deployed?"
    assert list(requests[0]["data"]["schema"]["properties"]) == ["environment", "replicas", "notify", "note"]
    assert requests[1]["url"] == SIGN_IN_URL
    for request, answer in zip(requests, answers, strict=True):
        assert answer["id"] == request["id"] == answer["answer"]["id"]
        assert answer["seconds"] >= 0
    assert answers[0]["answer"]["data"] == {
        "environment": "***",
        "replicas": "***",
        "notify": "***",
        "note": "***",
    }
    assert answers[1]["answer"] == {"id": requests[1]["id"], "ok": True}
    assert answers[2]["answer"]["data"] == {"username": "***", "password": "***"}
    assert "hunter2" not in sessions["demo-all-yes-legacy"].log_path.read_text()  # type: ignore[union-attr]


def test_demo_in_the_2026_era_declines_and_logs_values(sessions: dict[str, Session]) -> None:
    s = sessions["demo-all-no-2026"]
    assert s.code == 0, s.err
    # Pinned to 2026-07-28 (no discover probe), the server is still named.
    assert s.err.count("── toolnexus-demo asks ──") == 3
    assert "The MCP server asks" not in s.err
    assert "Result: Deployed to staging with 1 replica; nobody is notified; note: hello." in s.err
    assert "Result: Sign-in declined." in s.err
    assert "Result: Database login declined: not connected." in s.err
    answers = [r["answer"] for r in s.log_records() if r["event"] == "answer"]
    assert answers[0]["data"] == {"environment": "staging", "replicas": 1, "notify": False, "note": "hello"}
    assert [a.get("reason") for a in answers] == [None, "declined", "declined"]


# --- toolnexus call: the dialogue ------------------------------------------------------


def test_defaults_are_taken_with_enter(sessions: dict[str, Session]) -> None:
    s = sessions["defaults"]
    assert s.code == 0, s.err
    assert result_line(s) == DEPLOYED_DEFAULTS
    assert "notify [Y/n]: \n" in s.err
    assert "note [routine deploy]: \n" in s.err


def test_wrong_answers_are_asked_again(sessions: dict[str, Session]) -> None:
    s = sessions["re-ask"]
    assert s.code == 0, s.err
    assert "'environment' must be one of: staging, production" in s.err
    assert "'replicas' must be at most 10" in s.err
    assert "'replicas' must be an integer" in s.err
    assert result_line(s).startswith("Deployed to production with 4 replicas;")


def test_three_wrong_answers_cancel(sessions: dict[str, Session]) -> None:
    s = sessions["re-ask-exhausted"]
    assert s.code == 0, s.err
    assert "no valid answer after 3 tries" in s.err
    assert result_line(s) == "Deploy cancelled: nothing was deployed."


def test_review_n_declines(sessions: dict[str, Session]) -> None:
    s = sessions["review-n"]
    assert (
        "Review:\n  Environment: staging\n  Replicas: 2\n  Notify the team: yes\n  Note: routine deploy\n"
        in s.err
    )
    assert result_line(s) == "Deploy declined: nothing was deployed."


def test_review_e_edits_before_sending(sessions: dict[str, Session]) -> None:
    s = sessions["review-e"]
    assert s.code == 0, s.err
    assert s.err.count("Review:") == 2
    assert "replicas [2]: \n" in s.err
    assert (
        result_line(s) == "Deployed to production with 2 replicas; nobody is notified; note: routine deploy."
    )


def section(session: Session, tool: str) -> str:
    """What ``toolnexus demo`` showed for one of its tools, up to the next tool."""
    start = session.err.index(f"] {tool}: ")
    end = session.err.find("\n[", start)
    return session.err[start : end if end != -1 else None]


@pytest.mark.parametrize(
    ("name", "tool", "outcome", "result"),
    [
        ("demo-refusals", "deploy", "declined", "Deploy declined: nothing was deployed."),
        ("demo-refusals", "connect_database", "cancelled", "Database login cancelled: not connected."),
        ("demo-unattended", "deploy", "cancelled", "Deploy cancelled: nothing was deployed."),
    ],
    ids=[":decline", ":cancel", "end-of-input"],
)
def test_decline_cancel_and_end_of_input(
    sessions: dict[str, Session], name: str, tool: str, outcome: str, result: str
) -> None:
    s = sessions[name]
    assert s.code == 0, s.err
    shown = section(s, tool)
    assert f"→ {outcome}" in shown
    assert f"Result: {result}" in shown


def test_secret_guard_declines_by_default(sessions: dict[str, Session]) -> None:
    shown = section(sessions["demo-all-no-2026"], "connect_database")
    assert "seems to ask for a secret ('password')" in shown
    assert "The MCP spec forbids servers to ask for passwords" in shown
    assert "Continue anyway? [y/N] \n" in shown
    assert "username" not in shown.split("Continue anyway?")[1]
    assert "Result: Database login declined: not connected." in shown


def test_secret_guard_y_continues(sessions: dict[str, Session]) -> None:
    shown = section(sessions["demo-all-yes-legacy"], "connect_database")
    assert "Continue anyway? [y/N] y\n" in shown
    assert "Result: Connected to the demo database as ada." in shown
    assert "hunter2" not in shown


@pytest.mark.parametrize("name", ["demo-refusals", "demo-all-yes-legacy"], ids=["2026", "legacy"])
def test_url_consent_y_opens_the_browser(sessions: dict[str, Session], name: str) -> None:
    s = sessions[name]
    shown = section(s, "sign_in")
    assert f"  URL:  {SIGN_IN_URL}\n" in shown
    assert "  Host: auth.example.com\n" in shown
    assert "Open this URL in your browser? [y/N] y\n" in shown
    assert "Opened in your browser." in shown
    assert s.browser_opened() == [SIGN_IN_URL]
    assert "Result: Sign-in page opened" in shown


def test_url_consent_n_declines(sessions: dict[str, Session]) -> None:
    s = sessions["demo-all-no-2026"]
    shown = section(s, "sign_in")
    assert "Open this URL in your browser? [y/N] n\n" in shown
    assert s.browser_opened() == []
    assert "Result: Sign-in declined." in shown


def test_url_consent_y_without_browser_prints_the_url(sessions: dict[str, Session]) -> None:
    s = sessions["url-no-browser"]
    assert f"Open this URL by hand: {SIGN_IN_URL}" in s.err
    assert s.browser_opened() == []
    assert result_line(s).startswith("Sign-in page opened")


def test_url_warnings_for_http_punycode_and_user_name(sessions: dict[str, Session]) -> None:
    s = sessions["url-warnings"]
    assert f"  URL:  {SUSPICIOUS_URL}\n" in s.err
    assert "  Host: xn--pple-43d.com\n" in s.err
    assert "! the URL is not https" in s.err
    assert "! the host is punycode (it reads as 'аpple.com')" in s.err
    assert "! the URL carries a user name or password" in s.err
    assert s.browser_opened() == []
    assert result_line(s) == "Sign-in declined."


def test_call_log_file(sessions: dict[str, Session]) -> None:
    records = sessions["defaults"].log_records()
    assert [r["event"] for r in records] == ["request", "answer"]
    assert records[1]["answer"]["data"] == {
        "environment": "***",
        "replicas": "***",
        "notify": "***",
        "note": "***",
    }


# --- the docs page --------------------------------------------------------------------


def test_docs_page_commands_run(sessions: dict[str, Session]) -> None:
    assert len(DOCS_COMMANDS) >= 2
    for number, command in enumerate(DOCS_COMMANDS, 1):
        s = sessions[f"docs-{number}"]
        assert s.code == 0, f"{command}\n{s.out}\n{s.err}"
    outputs = "".join(sessions[f"docs-{n}"].out for n in range(1, len(DOCS_COMMANDS) + 1))
    assert DEPLOYED_DEFAULTS in outputs


# --- failures --------------------------------------------------------------------------


def one_line(text: str) -> str:
    lines = text.strip().splitlines()
    assert len(lines) == 1, text
    return lines[0]


def test_tool_error_is_one_line_on_stderr_and_exit_1(sessions: dict[str, Session]) -> None:
    s = sessions["tool-error"]
    assert s.code == 1
    assert one_line(s.err) == "toolnexus: no_such_tool failed: Unknown tool: no_such_tool"
    assert s.out == ""


def test_tool_error_line_keeps_the_detail(sessions: dict[str, Session]) -> None:
    s = sessions["tool-error-detail"]
    assert s.code == 1
    line = one_line(s.err)
    assert line.startswith("toolnexus: sign_in failed: Error executing tool sign_in: 1 validation error")
    assert "; url; Input should be a valid string" in line  # the field and what is wrong with it
    assert "errors.pydantic.dev" not in line


def test_error_line_is_capped() -> None:
    from toolnexus.cli._results import ERROR_LINE_LIMIT, error_line

    line = error_line("first\n\n  second   part\n" + "x" * 1000)
    assert line.startswith("first; second part; xxx")
    assert len(line) == ERROR_LINE_LIMIT
    assert line.endswith("…")
    assert error_line("\n \n") == "the tool reported an error without a message"


def test_stdio_server_that_exits_at_start_says_so(sessions: dict[str, Session]) -> None:
    s = sessions["server-exits"]
    assert s.code == 3
    assert one_line(s.err) == (
        f"toolnexus: cannot connect to the server `{PYTHON} -c 'raise SystemExit(1)'`: "
        "the server process exited before it answered"
    )


def test_server_that_cannot_start_is_one_line_and_exit_3(sessions: dict[str, Session]) -> None:
    s = sessions["no-server"]
    assert s.code == 3
    line = one_line(s.err)
    assert line.startswith("toolnexus: cannot connect to the server `/nonexistent/mcp-server --flag`:")


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["deploy", "{not json"], "toolnexus: JSON_ARGS is not valid JSON"),
        (["deploy", "[1, 2]"], "toolnexus: JSON_ARGS must be a JSON object"),
        (
            ["--protocol", "1999-01-01", "deploy"],
            "toolnexus: --protocol: must be one of auto, legacy, 2026-07-28",
        ),
        (
            ["--protocol", "2025-11-25", "deploy"],
            "toolnexus: --protocol: 2025-11-25 is reached through the initialize handshake: "
            "use --protocol legacy",
        ),
        (["--stdio", "", "deploy"], "toolnexus: --stdio needs a command"),
    ],
)
def test_usage_errors_exit_2(extra: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["call", *extra] if "--stdio" in extra else ["call", "--stdio", DEMO_SERVER, *extra]
    assert main(argv) == 2
    assert one_line(capsys.readouterr().err).startswith(message)


@pytest.mark.parametrize("argv", [["--help"], ["demo", "--help"], ["call", "--help"]])
def test_help(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: toolnexus")
    if argv[0] == "call":
        for option in ("--stdio", "--url", "--protocol", "--log", "TOOL", "JSON_ARGS"):
            assert option in out
    if argv[0] != "--help":
        from mcp_types.version import MODERN_PROTOCOL_VERSIONS

        flat = " ".join(out.split())
        # --protocol offers exactly what the SDK's Client(mode=...) takes.
        for mode in ("auto", "legacy", *MODERN_PROTOCOL_VERSIONS):
            assert mode in flat
        assert "such as" not in flat
    if argv[0] == "demo":
        assert "--log" in out


def test_call_needs_a_server(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["call", "deploy"])
    assert exit_info.value.code == 2
    assert "--stdio" in capsys.readouterr().err


# --- streamable HTTP -------------------------------------------------------------------


@pytest.fixture(scope="module")
def demo_http_url() -> Iterator[str]:
    """The demo server over streamable HTTP on 127.0.0.1, stopped at teardown."""
    with http_server_process(
        lambda fd: [PYTHON, "-m", "toolnexus._demo_server", "--http-fd", str(fd)]
    ) as base:
        yield base + "/mcp"


def run_call(
    processes: Processes, argv: list[str], stdin: str, directory: Path
) -> subprocess.CompletedProcess[str]:
    return processes.run(
        [TOOLNEXUS, "call", *argv],
        input=stdin,
        env=environment(directory),
        cwd=directory,
        start_new_session=True,
    )


def test_legacy_era_over_streamable_http(sessions: dict[str, Session]) -> None:
    form, url = sessions["http-legacy-form"], sessions["http-legacy-url"]
    assert form.code == 0, form.err
    assert result_line(form) == "Deployed to staging with 1 replica; nobody is notified; note: hotfix."
    assert url.code == 0, url.err
    assert url.browser_opened() == [SIGN_IN_URL]
    assert result_line(url).startswith("Sign-in page opened")


def test_tool_error_over_streamable_http(sessions: dict[str, Session]) -> None:
    s = sessions["http-tool-error"]
    assert s.code == 1
    assert one_line(s.err) == "toolnexus: nope failed: Unknown tool: nope"


def test_unreachable_url_is_one_line_and_exit_3(tmp_path: Path, processes: Processes) -> None:
    probe = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()  # nothing listens on this port any more
    result = run_call(processes, ["--url", f"http://127.0.0.1:{port}/mcp", "deploy"], "", tmp_path)
    assert result.returncode == 3
    assert one_line(result.stderr).startswith(f"toolnexus: cannot connect to http://127.0.0.1:{port}/mcp: ")


# --- a closed stdout -------------------------------------------------------------------


def test_closed_stdout_stops_quietly_with_141(tmp_path: Path, processes: Processes) -> None:
    # The question goes to stderr (no terminal); the result meets the closed stdout.
    argv = [TOOLNEXUS, "call", "--stdio", DEMO_SERVER, "sign_in"]
    read_end, write_end = os.pipe()
    os.close(read_end)  # as `| head` does once it has what it wants
    try:
        result = processes.run(
            argv,
            stdout=write_end,
            stderr=subprocess.PIPE,
            env=environment(tmp_path),
            cwd=tmp_path,
            start_new_session=True,
        )
    finally:
        os.close(write_end)
    assert result.returncode == 141
    assert "→ cancelled" in result.stderr
    assert "toolnexus:" not in result.stderr
    assert "Traceback" not in result.stderr


def test_the_review_shows_a_choice_by_its_title() -> None:
    import io

    from toolnexus.console import ConsoleResolver
    from toolnexus.testing import form_request

    schema = {
        "type": "object",
        "properties": {
            "hero": {"type": "string", "oneOf": [{"const": "hero-1", "title": "Hero One"}]},
            "sidekicks": {
                "type": "array",
                "items": {"anyOf": [{"const": "s-1", "title": "Robin"}, {"const": "s-2", "title": "Alfred"}]},
            },
        },
    }
    shown = io.StringIO()
    resolver = ConsoleResolver("s", stdin=io.StringIO("1\n2,1\n\n"), stdout=shown)
    answer = resolver(form_request(schema))
    assert answer.data == {"hero": "hero-1", "sidekicks": ["s-2", "s-1"]}
    assert "Review:\n  hero: Hero One\n  sidekicks: Alfred, Robin\n" in shown.getvalue()
