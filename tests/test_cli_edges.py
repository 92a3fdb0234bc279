"""``toolnexus call`` at the edges, against real servers in real processes.

The server is ``servers/edge_server.py`` over stdio (URL elicitation by error, a tool that
asks the 2025-11-25 way, hostile text, structured content, the environment, stderr), and,
when the npm registry is reachable, the reference test server
``@modelcontextprotocol/server-everything``. Every command runs without a controlling
terminal (its own session), so its questions go to stderr and stdout holds the result alone.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from servers.edge_server import HOSTILE, HOSTILE_FIELDS
from support import forkserver
from support.environment import environment as support_environment
from support.http_process import http_server_process
from support.processes import Processes

PYTHON = sys.executable
TOOLNEXUS = str(Path(sys.executable).with_name("toolnexus"))
TESTS = Path(__file__).resolve().parent
# The edge server, forked by the fork server when the command starts it (support/launch.py).
EDGE = forkserver.server_command([PYTHON, str(TESTS / "servers" / "edge_server.py")])
ESCAPES = ("\x1b", "\u202e", "\x07")


def environment(directory: Path, **extra: str) -> dict[str, str]:
    """The user's environment, with a stand-in browser that also loads the test server's own
    sign-in site on 127.0.0.1 (support/environment.py)."""
    return support_environment(directory, load_local=True, **extra)


def run(
    directory: Path, args: list[str], stdin: str = "", command: str = "call", **env: str
) -> subprocess.CompletedProcess[str]:
    directory.mkdir(parents=True, exist_ok=True)
    return forkserver.run(
        [TOOLNEXUS, command, *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=environment(directory, **env),
        cwd=directory,
        timeout=120,
        check=False,
        start_new_session=True,  # no controlling terminal
    )


def lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("toolnexus:")]


def one_message(stderr: str) -> str:
    found = lines(stderr)
    assert len(found) == 1, stderr
    assert "Traceback" not in stderr
    return found[0]


HTTP = "{edge_http_url}"
"""Stands for the URL of the one edge server over streamable HTTP (cheaper than a server each)."""

# Independent runs, started together a few at a time (each is a toolnexus process; the stdio
# ones start a server process too).
RUNS: dict[str, tuple[list[str], str, dict[str, str]]] = {
    "declined": (["--url", HTTP, "needs_sign_in", '{"tag": "d"}'], "n\n", {}),
    "legacy-way-legacy": (["--url", HTTP, "ask_legacy_way", "--protocol", "legacy"], "Ada\n\n", {}),
    "hostile-pipe": (["--url", HTTP, "hostile_text", "--protocol", "legacy"], "", {}),
    "hostile-json": (["--url", HTTP, "hostile_text", "--json", "--protocol", "legacy"], "", {}),
    "hostile-error": (["--url", HTTP, "hostile_error"], "", {}),
    "hostile-rpc-error": (["--url", HTTP, "hostile_rpc_error"], "", {}),
    "structured-json": (["--url", HTTP, "structured", '{"n": 21}', "--json"], "", {}),
    "plain-json": (["--url", HTTP, "env", '{"name": "NOPE_NOT_SET"}', "--json"], "", {}),
    "verbose": (["--url", HTTP, "structured", '{"n": 1}', "-v"], "", {}),
    "env-inherited": (
        ["--stdio", EDGE, "env", '{"name": "TOOLNEXUS_TOKEN"}'],
        "",
        {"TOOLNEXUS_TOKEN": "t-1"},
    ),
    "env-override": (
        [
            "--stdio",
            EDGE,
            "--env",
            "TOOLNEXUS_TOKEN=t-2",
            "--env",
            "EMPTY=",
            "env",
            '{"name": "TOOLNEXUS_TOKEN"}',
        ],
        "",
        {"TOOLNEXUS_TOKEN": "t-1"},
    ),
    "server-stderr": (
        ["--stdio", EDGE, "--server-stderr", "server.err", "to_stderr", '{"text": "from-the-server"}'],
        "",
        {},
    ),
    "server-stderr-default": (["--stdio", EDGE, "to_stderr", '{"text": "from-the-server"}'], "", {}),
    "connect-timeout": (["--stdio", "sleep 60", "--connect-timeout", "1", "t"], "", {}),
    "park-hostile-pipe": (["--url", HTTP, "plain_hostile", "--park", "store.db"], "", {}),
    "tools": (["--stdio", EDGE], "", {}),
    "hostile-names-defaults": (["--url", HTTP, "hostile_form", "--accept-defaults"], "", {}),
    "hostile-names-answers": (["--url", HTTP, "hostile_form", "--answers", "{answers}"], "", {}),
    "park-per-process-key": (["--stdio", EDGE, "ask_new_way", "--park", "store.db"], "", {}),
    "tools-json": (["--url", HTTP, "--json"], "", {}),
}
COMMANDS = {"tools": "tools", "tools-json": "tools"}
"""The runs of another command than ``call``."""


@pytest.fixture(scope="module")
def edge_http_url() -> Iterator[str]:
    """The edge server over streamable HTTP on 127.0.0.1, stopped at teardown."""
    with http_server_process(
        lambda fd: [PYTHON, str(TESTS / "servers" / "edge_server.py"), "--http-fd", str(fd)]
    ) as base:
        yield base + "/mcp"


@pytest.fixture(scope="module")
def runs(
    tmp_path_factory: pytest.TempPathFactory, edge_http_url: str
) -> dict[str, subprocess.CompletedProcess[str]]:
    root = tmp_path_factory.mktemp("edges")
    policy = root / "accept.json"
    policy.write_text(json.dumps({"rules": [{"kind": "input", "action": "accept"}]}), encoding="utf-8")
    with ThreadPoolExecutor(max_workers=4) as pool:
        futures = {
            name: pool.submit(
                run,
                root / name,
                [{HTTP: edge_http_url, "{answers}": str(policy)}.get(arg, arg) for arg in args],
                stdin,
                COMMANDS.get(name, "call"),
                **env,
            )
            for name, (args, stdin, env) in RUNS.items()
        }
        done = {name: future.result() for name, future in futures.items()}
    done["__root__"] = subprocess.CompletedProcess([], 0, str(root), "")
    return done


# --- URL elicitation by error (-32042) ----------------------------------------------------


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")
def test_url_elicitation_by_error_completion_stops_the_wait(tmp_path: Path) -> None:
    """At a terminal: the user consents, the browser loads the URL, the server says it is
    complete; the console stops waiting for Enter by itself, and the call is retried once."""
    from support.terminal import ANSI, Terminal

    argv = [TOOLNEXUS, "call", "--stdio", EDGE, "needs_sign_in", '{"tag": "t"}', "--protocol", "legacy"]
    env = dict(environment(tmp_path), TERM="xterm-256color", FETCH_DELAY="1")
    term = Terminal(argv, env, tmp_path)
    try:
        term.wait_for("Open this URL in your browser? [y/N] ")
        term.type(b"y\r")
        term.wait_for("Press Enter when you have finished in the browser: ")
        term.wait_for("The server says you have finished there.")  # no Enter was typed
        term.wait_for("signed in: t after 1 visits")
        assert term.finish() == 0
    finally:
        term.kill()
    assert "→ accepted" in ANSI.sub("", term.screen)
    assert len((tmp_path / "opened.txt").read_text().splitlines()) == 1


def test_url_elicitation_by_error_from_a_script_waits_for_its_enter(tmp_path: Path) -> None:
    arguments = '{"tag": "s", "complete": false}'  # the server never says it is complete
    r = run(tmp_path, ["--stdio", EDGE, "needs_sign_in", arguments, "--protocol", "legacy"], "y\n\n")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "signed in: s after 1 visits\n"
    assert "Press Enter when you have finished in the browser: \n" in r.stderr


def test_a_declined_url_names_it_and_exits_1(runs: dict[str, Any]) -> None:
    r = runs["declined"]
    assert r.returncode == 1
    message = one_message(r.stderr)
    assert message.startswith("toolnexus: needs_sign_in: the server needs a URL visited first")
    assert message.endswith("/done/d-1 (declined)")
    assert r.stdout == ""


# --- the 2025-11-25 way under --protocol auto ----------------------------------------------


def test_asking_the_2025_way_under_auto_says_to_use_legacy(tmp_path: Path, edge_http_url: str) -> None:
    # Run on its own, not beside the other runs: under --protocol auto the SDK gives the
    # server 10 s to answer its server/discover probe and falls back to the 2025-11-25
    # handshake when it does not, which a server starved of CPU (the whole test command on two
    # cores) can miss. Such a run asks the question the old way; it is run once more.
    for attempt in range(2):
        r = run(tmp_path / f"run{attempt}", ["--url", edge_http_url, "ask_legacy_way"])
        if "What is your name?" not in r.stderr:
            break
    assert r.returncode == 1, r.stderr
    message = one_message(r.stderr)
    assert message.startswith(
        "toolnexus: ask_legacy_way failed: the server asks its questions the 2025-11-25 way"
    )
    assert message.endswith("run again with --protocol legacy")


def test_and_under_legacy_it_works(runs: dict[str, Any]) -> None:
    r = runs["legacy-way-legacy"]
    assert r.returncode == 0, r.stderr
    assert r.stdout == "accept: Ada\n"
    assert "What is your name?" in r.stderr  # the question went to stderr, not stdout


# --- server text: escaped at a terminal and on stderr, unchanged to a pipe ------------------


def test_result_to_a_pipe_is_unchanged(runs: dict[str, Any]) -> None:
    r = runs["hostile-pipe"]
    assert r.returncode == 0, r.stderr
    assert r.stdout == f"result: {HOSTILE}\n"


def test_json_result_is_unchanged(runs: dict[str, Any]) -> None:
    r = runs["hostile-json"]
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == {"result": f"result: {HOSTILE}"}  # MCPServer's structured wrap


def test_server_log_lines_are_one_escaped_line_on_stderr(runs: dict[str, Any]) -> None:
    r = runs["hostile-pipe"]
    logged = [line for line in lines(r.stderr) if "the server logs" in line]
    assert len(logged) == 1, r.stderr
    assert logged[0].startswith("toolnexus: warning: the server logs: log: \\x1b]0;pwned\\x07")
    assert "\\u202eevil" in logged[0]
    assert not any(ch in r.stderr for ch in ESCAPES)


@pytest.mark.parametrize("name", ["hostile-error", "hostile-rpc-error"])
def test_error_messages_are_escaped(runs: dict[str, Any], name: str) -> None:
    r = runs[name]
    assert r.returncode == 1
    message = one_message(r.stderr)
    assert message.startswith(f"toolnexus: {name.replace('-', '_')} failed: ")
    assert "\\x1b[2J" in message
    assert not any(ch in r.stderr for ch in ESCAPES)


def test_json_prints_structured_content(runs: dict[str, Any]) -> None:
    r = runs["structured-json"]
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == {"n": 21, "double": 42}


def test_json_without_structured_content_prints_the_result(runs: dict[str, Any]) -> None:
    r = runs["plain-json"]
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == {"content": [{"type": "text", "text": "None"}], "isError": False}


def test_verbose_says_more_in_one_line_each(runs: dict[str, Any]) -> None:
    r = runs["verbose"]
    assert r.returncode == 0, r.stderr
    assert "toolnexus: info: connected to http://127.0.0.1:" in r.stderr
    assert "protocol 2026-07-28" in r.stderr
    assert "Traceback" not in r.stderr
    assert "connected to" not in runs["structured-json"].stderr  # not without -v


# --- the server's environment and stderr ------------------------------------------------------


def test_stdio_server_gets_the_users_environment(runs: dict[str, Any]) -> None:
    assert runs["env-inherited"].stdout == "'t-1'\n"


def test_env_option_overrides(runs: dict[str, Any]) -> None:
    assert runs["env-override"].stdout == "'t-2'\n"


def test_server_stderr_goes_to_the_file(runs: dict[str, Any]) -> None:
    r = runs["server-stderr"]
    assert r.returncode == 0, r.stderr
    assert "from-the-server" not in r.stderr
    root = Path(runs["__root__"].stdout)
    assert "from-the-server" in (root / "server-stderr" / "server.err").read_text()
    assert "from-the-server" in runs["server-stderr-default"].stderr


# --- usage errors ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--url", "127.0.0.1:8765/mcp", "t"],
            "toolnexus: --url: 127.0.0.1:8765/mcp is not an http:// or https:// URL",
        ),
        (
            ["--url", "localhost:8765/mcp", "t"],
            "toolnexus: --url: localhost:8765/mcp is not an http:// or https://",
        ),
        (
            ["--url", "ftp://example.com/", "t"],
            "toolnexus: --url: ftp://example.com/ is not an http:// or https://",
        ),
        (["--url", "http://x:port/", "t"], "toolnexus: --url: http://x:port/ is not a URL"),
        (["--stdio", "x", "--env", "NOEQUALS", "t"], "toolnexus: --env: 'NOEQUALS' is not KEY=VALUE"),
        (
            ["--url", "http://127.0.0.1:1/", "--env", "A=1", "t"],
            "toolnexus: --env applies to a server started",
        ),
        (["--url", "http://127.0.0.1:1/", "--server-stderr", "f", "t"], "toolnexus: --server-stderr applies"),
    ],
)
def test_usage_errors_exit_2(args: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    from toolnexus.cli import main

    assert main(["call", *args]) == 2
    err = capsys.readouterr().err
    assert one_message(err).startswith(message)


# --- the connection ends while a question waits ---------------------------------------------------


def children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(child) for child in (task / "children").read_text().split()]
    return found


def _kill_the_server_while_it_asks(
    tmp_path: Path, argv: list[str], server: str = EDGE, after: float = 0.0
) -> tuple[int, str, bytes]:
    """Run ``toolnexus call`` with stdin open and never written, kill its server ``after``
    seconds once the question (a form whose first field is ``name``) is on screen; the exit
    status, stderr and stdout."""
    proc = forkserver.popen(
        [TOOLNEXUS, "call", "--stdio", server, *argv],
        stdin=subprocess.PIPE,  # open, and never written: the question waits
        env=environment(tmp_path),
        cwd=tmp_path,
    )
    assert proc.stderr is not None
    err = b""
    try:
        for _ in range(600):  # a limit against a hang, never a speed check
            ready, _, _ = select.select([proc.stderr], [], [], 0.1)
            if ready:
                err += os.read(proc.stderr.fileno(), 65536)
            if b"name: " in err or proc.poll() is not None:
                break
        assert b"name: " in err, err
        servers = children(proc.pid)
        assert len(servers) == 1
        time.sleep(after)
        os.kill(servers[0], signal.SIGKILL)
        status = proc.wait(timeout=60)  # stdin stays open: only the withdrawal can end the question
        assert proc.stdout is not None
        out: bytes = proc.stdout.read()
        err += proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
    return status, err.decode(), out


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads child processes from /proc")
def test_server_dies_while_a_question_waits_withdraws_it_and_exits_3(tmp_path: Path) -> None:
    status, text, out = _kill_the_server_while_it_asks(tmp_path, ["ask_legacy_way", "--protocol", "legacy"])
    assert status == 3, text
    assert "(question withdrawn: the connection ended)" in text
    message = one_message(text)
    assert message.startswith("toolnexus: the connection to the server `")
    assert message.endswith("` was lost")
    assert out == b""


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads child processes from /proc")
def test_server_dies_while_a_2026_question_waits_withdraws_it_and_exits_3(tmp_path: Path) -> None:
    # From 2026-07-28 on no request is open while the question is shown: a ping notices.
    status, text, out = _kill_the_server_while_it_asks(tmp_path, ["ask_new_way"])
    assert status == 3, text
    assert "(question withdrawn: the connection ended)" in text
    message = one_message(text)
    assert message.startswith("toolnexus: the connection to the server `")
    assert message.endswith("` was lost")
    assert out == b""


# --- the reference test server (npm) ---------------------------------------------------------------


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads child processes from /proc")
@pytest.mark.parametrize("after", [0.5, 3.0, 8.0])
def test_reference_server_killed_while_its_question_waits_withdraws_it_and_exits_3(
    server_everything: str, tmp_path: Path, after: float
) -> None:
    """A server nobody here wrote (Node, on the TypeScript SDK) killed at several moments while
    its form is on screen: the question is withdrawn and the command ends, as with a Python
    server."""
    status, text, out = _kill_the_server_while_it_asks(
        tmp_path, ["trigger-elicitation-request"], server=server_everything, after=after
    )
    assert status == 3, text
    assert "mcp-servers/everything asks" in text
    assert "(question withdrawn: the connection ended)" in text
    message = one_message(text)
    assert message.startswith("toolnexus: the connection to the server `")
    assert message.endswith("` was lost")
    assert out == b""


def test_reference_server_url_elicitation_by_error(server_everything: str, tmp_path: Path) -> None:
    """``trigger-url-elicitation`` with ``errorPath``: -32042 with a prerequisite URL; once it
    is accepted the call is retried, and the retry asks for the URL in the middle of the call."""
    arguments = json.dumps({"url": "https://example.com/flow", "errorPath": True})
    # y: open the prerequisite; Enter: back from the browser; y: the retry's own URL.
    r = run(tmp_path, ["--stdio", server_everything, "trigger-url-elicitation", arguments], "y\n\ny\n")
    assert r.returncode == 0, r.stderr
    assert "User completed the URL elicitation flow" in r.stdout
    assert "URL:  https://modelcontextprotocol.io" in r.stderr  # the prerequisite, shown in full
    assert "URL:  https://example.com/flow" in r.stderr
    assert (tmp_path / "opened.txt").read_text().splitlines() == [
        "https://modelcontextprotocol.io",
        "https://example.com/flow",
    ]


def test_reference_server_url_elicitation_declined(server_everything: str, tmp_path: Path) -> None:
    arguments = json.dumps({"url": "https://example.com/flow", "errorPath": True})
    r = run(tmp_path, ["--stdio", server_everything, "trigger-url-elicitation", arguments], "n\n")
    assert r.returncode == 1
    assert one_message(r.stderr) == (
        "toolnexus: trigger-url-elicitation: the server needs a URL visited first, and the user did not "
        "accept: https://modelcontextprotocol.io (declined)"
    )


# --- the handshake's deadline, a closed stdout -----------------------------------------------------


def test_a_server_that_never_answers_the_handshake_is_exit_3_after_connect_timeout(
    runs: dict[str, Any],
) -> None:
    r = runs["connect-timeout"]
    assert r.returncode == 3, r.stderr
    assert one_message(r.stderr) == (
        "toolnexus: cannot connect to the server `sleep 60`: no answer within 1 s (--connect-timeout)"
    )


def test_stdout_closed_in_the_middle_of_the_result_is_141(tmp_path: Path) -> None:
    proc = forkserver.popen(
        [TOOLNEXUS, "call", "--stdio", EDGE, "big", '{"lines": 200000}'],
        stdin=subprocess.DEVNULL,
        env=environment(tmp_path),
        cwd=tmp_path,
    )
    assert proc.stdout is not None
    assert proc.stderr is not None
    try:
        assert proc.stdout.readline() == b"line 1\n"  # the output has started
        proc.stdout.close()  # as `| head -1` does once it has what it wants
        err = proc.stderr.read().decode()
        assert proc.wait(timeout=60) == 141, err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stderr.close()
    assert "toolnexus:" not in err
    assert "Traceback" not in err


# --- results of durable calls: escaped at a terminal, as they came to a pipe --------------------------


def parked_key(directory: Path, url: str, tool: str) -> str:
    r = run(directory, ["--url", url, tool, "--park", "store.db"])
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def record_name(store: Path, key: str) -> None:
    from toolnexus import Answer
    from toolnexus.durable import open_store

    with open_store(store, create=False) as opened:
        (request,) = opened.get(key).requests
        opened.record(key, Answer(request.id, True, {"name": "Ada"}))


def test_call_park_prints_a_result_given_at_once_as_it_came_to_a_pipe(runs: dict[str, Any]) -> None:
    r = runs["park-hostile-pipe"]
    assert r.returncode == 0, r.stderr
    assert r.stdout == f"result: {HOSTILE}\n"


def test_resume_prints_the_result_as_it_came_to_a_pipe(edge_http_url: str, tmp_path: Path) -> None:
    key = parked_key(tmp_path, edge_http_url, "hostile_after_asking")
    record_name(tmp_path / "store.db", key)
    resumed = forkserver.run(
        [TOOLNEXUS, "resume", "store.db", key, "--url", edge_http_url],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=environment(tmp_path),
        timeout=120,
        check=False,
        start_new_session=True,
    )
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout == f"result: {HOSTILE} accept\n"


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")
@pytest.mark.parametrize("command", ["call --park", "resume"])
def test_durable_results_are_escaped_at_a_terminal(edge_http_url: str, tmp_path: Path, command: str) -> None:
    from support.terminal import Terminal

    if command == "resume":
        key = parked_key(tmp_path, edge_http_url, "hostile_after_asking")
        record_name(tmp_path / "store.db", key)
        argv = [TOOLNEXUS, "resume", "store.db", key, "--url", edge_http_url]
    else:
        argv = [TOOLNEXUS, "call", "--url", edge_http_url, "plain_hostile", "--park", "store.db"]
    term = Terminal(argv, dict(environment(tmp_path), TERM="xterm-256color"), tmp_path)
    try:
        term.wait_for("result: ")
        assert term.finish() == 0
    finally:
        term.kill()
    escaped = "result: \\x1b]0;pwned\\x07\\x1b[2J\\x1b[8mhidden\\x1b[0m Password: \\u202eevil\\u202c end"
    assert escaped in term.screen
    assert not any(ch in term.screen for ch in ESCAPES)


# --- toolnexus tools ----------------------------------------------------------------------------------


def test_tools_lists_each_tool_with_its_description_and_arguments(runs: dict[str, Any]) -> None:
    r = runs["tools"]
    assert r.returncode == 0, r.stderr
    assert (
        "needs_sign_in\n"
        "  Needs the user to sign in at a URL first (-32042), then succeeds.\n"
        "  arguments:\n"
        "    tag: string, required\n"
        "    count: integer, default 1\n"
        "    complete: boolean, default true\n"
    ) in r.stdout
    assert "ask_new_way\n  Asks through a Resolve dependency" in r.stdout
    assert "toolnexus:" not in r.stderr


def test_tools_json_gives_the_tools_as_the_server_describes_them(runs: dict[str, Any]) -> None:
    r = runs["tools-json"]
    assert r.returncode == 0, r.stderr
    tools = {tool["name"]: tool for tool in json.loads(r.stdout)}
    assert {"needs_sign_in", "ask_new_way", "structured"} <= set(tools)
    assert tools["structured"]["inputSchema"]["properties"]["n"]["type"] == "integer"
    assert tools["structured"]["inputSchema"]["required"] == ["n"]


def test_park_over_stdio_warns_when_a_new_server_process_refuses_the_state(runs: dict[str, Any]) -> None:
    # The edge server seals its request state with a key of its own process (the SDK's default).
    r = runs["park-per-process-key"]
    assert r.returncode == 0, r.stderr
    key = r.stdout.strip()
    assert len(key) == 16
    said = lines(r.stderr)
    assert said[0].startswith(f"toolnexus: parked as {key}: 1 question waits")
    assert said[1].startswith("toolnexus: warning: the server `")
    assert "refused the parked call's state on a new connection" in said[1]
    assert len(said) == 2, r.stderr
    assert "requestState rejected" not in r.stderr  # the probe's server log stays off the terminal


@pytest.mark.parametrize("name", ["hostile-names-defaults", "hostile-names-answers"])
def test_the_report_of_an_answer_given_without_asking_is_escaped(runs: dict[str, Any], name: str) -> None:
    r = runs[name]
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == {"action": "accept", "content": dict.fromkeys(HOSTILE_FIELDS, "x")}
    (report,) = [line for line in lines(r.stderr) if ": accept " in line]
    for escaped in ("rev\\u202eersed", "csi\\x9b2J", "zero\\u200bwidth"):
        assert escaped in report, report
    for raw in ("\u202e", "\u009b", "\u200b"):
        assert raw not in r.stderr


# --- a Ctrl-C while the command still loads the SDK ---------------------------------------

CTRL_C_AS_THE_SDK_LOADS = '''
"""A Ctrl-C (SIGINT to this process) the moment the SDK or pydantic starts loading, whichever
comes first (a test's sitecustomize)."""
import os
import signal
import sys

# SIGINT as Python sets it for a process started from a terminal. A test run started in the
# background of a shell without job control passes SIGINT on ignored, and Python keeps it so.
signal.signal(signal.SIGINT, signal.default_int_handler)


class _CtrlC:
    def find_spec(self, name, path=None, target=None):
        if name in ("mcp", "mcp_types", "pydantic"):
            sys.meta_path.remove(self)
            os.kill(os.getpid(), signal.SIGINT)
        return None


sys.meta_path.insert(0, _CtrlC())
'''


@pytest.mark.parametrize("how", ["script", "python -m"])
def test_a_ctrl_c_while_the_command_loads_is_one_line_and_exit_130(
    tmp_path: Path, how: str, processes: Processes
) -> None:
    # A new interpreter, not the fork server's (which has the SDK loaded already): the SDK
    # takes about a second to load, a window in which a Ctrl-C printed Python's traceback
    # (``import toolnexus`` loaded the SDK's types before ``main`` could handle one).
    (tmp_path / "sitecustomize.py").write_text(CTRL_C_AS_THE_SDK_LOADS, encoding="utf-8")
    command = (
        [str(Path(sys.executable).parent / "toolnexus")]
        if how == "script"
        else [sys.executable, "-m", "toolnexus"]
    )
    done = processes.run(
        [*command, "tools", "--stdio", "true"],  # never reached: interrupted before it connects
        env=environment(tmp_path, PYTHONPATH=str(tmp_path)),
    )
    assert (done.returncode, done.stderr, done.stdout) == (130, "toolnexus: interrupted\n", "")


def test_tools_lists_what_call_can_reach_on_the_reference_server(
    server_everything: str, tmp_path: Path
) -> None:
    """``tools`` declares what ``call`` does (form and URL elicitation, tasks): the reference
    server then lists its elicitation tools, which it hides from a client that cannot answer
    them, and says which tool runs as a task."""
    listed = run(tmp_path, ["--stdio", server_everything], command="tools")
    assert listed.returncode == 0, listed.stderr
    names = [line.split(" ")[0] for line in listed.stdout.splitlines() if line and not line.startswith(" ")]
    assert {"trigger-elicitation-request", "trigger-url-elicitation", "simulate-research-query"} <= set(names)
    research = listed.stdout.split("simulate-research-query", 1)[1].split("\n\n", 1)[0]
    assert "\n  runs as a task: required" in research
    assert listed.stdout.count("runs as a task") == 1


def test_call_runs_the_reference_servers_task_required_tool_as_a_task(
    server_everything: str, tmp_path: Path
) -> None:
    """2025-11-25: ``simulate-research-query`` runs only as a task ("requires task
    augmentation" before); ``call`` asks for one, shows its progress, and asks its question."""
    arguments = json.dumps({"topic": "bees", "ambiguous": True})
    r = run(tmp_path, ["--stdio", server_everything, "simulate-research-query", arguments], "current\n\n")
    assert r.returncode == 0, r.stderr
    assert "# Research Report: bees (current)" in r.stdout
    assert "toolnexus: task simulate-research-query: working: Gathering sources..." in r.stderr
    assert "Please clarify what you're looking for" in r.stderr
