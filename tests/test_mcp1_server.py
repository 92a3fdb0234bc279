"""A real server on the MCP 1.x SDK (``mcp<2``), answered at the console through the bridge.

Such a server writes every optional field as ``anyOf: [T, {type: null}]``; before the form
model the console refused the whole form and sent cancel. The server runs over stdio in a
virtual environment of its own, made on first use (by the test command's uv, else by pip) and
reused by later runs and other clones on the machine: ``$TOOLNEXUS_MCP1_VENV``, by default
``~/.cache/toolnexus-tests/mcp1-venv``.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from support.live import answering
from support.venvs import python_with
from toolnexus import Answer, Request, elicitation_callback
from toolnexus.console import ConsoleResolver
from toolnexus.durable import ask_in, open_store

MCP1_VENV = Path(
    os.environ.get("TOOLNEXUS_MCP1_VENV") or Path.home() / ".cache" / "toolnexus-tests" / "mcp1-venv"
)
SERVER = Path(__file__).resolve().parent / "servers" / "mcp1_server.py"


@pytest.fixture(scope="session")
def mcp1_python() -> Path:
    return python_with("mcp1-venv", "mcp>=1.20,<2", "import mcp.server.fastmcp", directory=MCP1_VENV)


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_an_mcp1_form_with_optional_fields_is_answered_at_the_console(
    mcp1_python: Path, mode: str
) -> None:
    out = io.StringIO()
    # email; nickname left empty; age; newsletter left at its default (no); send at the review.
    console = ConsoleResolver(
        "mcp1", stdin=io.StringIO("ada@example.com\n\n36\n\n\n"), stdout=out, colour=False
    )
    server = StdioServerParameters(command=str(mcp1_python), args=[str(SERVER)])
    async with Client(server, elicitation_callback=elicitation_callback(console), mode=mode) as client:
        result = await client.call_tool("contact", {})
    received = json.loads(result.content[0].text)  # type: ignore[union-attr]

    content = {"email": "ada@example.com", "nickname": None, "age": 36, "newsletter": False}
    assert received == {"action": "accept", "content": content}
    transcript = out.getvalue()
    assert "Nickname (nickname)" in transcript
    assert "a whole number of at least 0 · optional" in transcript
    assert "cannot be answered" not in transcript


def test_the_command_keeps_an_mcp1_servers_refusal_of_the_probe_off_the_terminal(
    mcp1_python: Path, tmp_path: Path
) -> None:
    """Under ``--protocol auto``, an mcp 1.x server logs a validation dump of the
    ``server/discover`` probe on its stderr; the command says so in one line instead."""
    from support import forkserver

    toolnexus = str(Path(sys.executable).with_name("toolnexus"))
    done = forkserver.run(
        [toolnexus, "call", "--stdio", f"{mcp1_python} {SERVER}", "contact"],
        input="ada@example.com\n\n36\n\n\n",
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["action"] == "accept"
    assert "validation error" not in done.stderr
    said = [line for line in done.stderr.splitlines() if line.startswith("toolnexus:")]
    assert said == [
        "toolnexus: warning: the server refused the protocol probe (server/discover) and logged it on "
        "its stderr (left out here); --protocol legacy skips the probe, --server-stderr FILE keeps the log"
    ]


@pytest.mark.parametrize("after", [0.5, 3.0, 8.0])
def test_an_mcp1_server_killed_while_its_question_is_shown_is_one_line_and_exit_3(
    mcp1_python: Path, tmp_path: Path, after: float
) -> None:
    """A server nobody here wrote (the 1.x SDK's FastMCP), killed at several moments after it
    asked: the question is withdrawn within 5 s, one line names the server, exit 3."""
    import select
    import signal
    import time

    from support import forkserver
    from support.terminal import children

    toolnexus = str(Path(sys.executable).with_name("toolnexus"))
    command = f"{mcp1_python} {SERVER}"
    proc = forkserver.popen(
        [toolnexus, "call", "--stdio", command, "contact", "--protocol", "legacy"],
        stdin=subprocess.PIPE,  # open, never written: the question stays on screen
        cwd=tmp_path,
    )
    assert proc.stderr is not None
    assert proc.stdout is not None
    err = b""
    try:
        deadline = time.monotonic() + 120  # a limit against a hang, never a speed check
        while b"email: " not in err and time.monotonic() < deadline:
            if select.select([proc.stderr], [], [], 0.1)[0]:
                err += os.read(proc.stderr.fileno(), 65536) or b""
        assert b"email: " in err, err.decode(errors="replace")
        time.sleep(after)
        os.kill(children(proc.pid)[0], signal.SIGKILL)
        killed = time.monotonic()
        while b"(question withdrawn" not in err and time.monotonic() < killed + 60:
            if select.select([proc.stderr], [], [], 0.1)[0]:
                err += os.read(proc.stderr.fileno(), 65536) or b""
        found_after = time.monotonic() - killed
        out, rest = proc.communicate(timeout=60)
    finally:
        proc.kill()
    text = (err + rest).decode(errors="replace")
    assert proc.returncode == 3, text
    assert found_after < 5.0, f"withdrawn {found_after:.1f} s after the kill:\n{text}"
    assert out == b""
    said = [line for line in text.splitlines() if line.startswith("toolnexus:")]
    assert len(said) == 1, text
    assert f"the server `{command}`"[:60] in said[0], text
    for noise in ("Traceback", "ExceptionGroup", "Error in"):
        assert noise not in text, text


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_an_mcp1_servers_question_is_answered_live_from_another_store_object(
    mcp1_python: Path, tmp_path: Path, mode: str
) -> None:
    """A server on ``mcp<2`` asks mid-call (``ctx.elicit``, its optional fields ``anyOf: [T,
    {type: null}]``); the SDK's ``mcp.Client`` with ``elicitation_callback(ask_in(store))``
    holds the call open while another store object records the answer; the server receives
    exactly that content, and the store shows the question answered, live."""
    content = {"email": "ada@example.com", "nickname": "Ada", "age": 36, "newsletter": True}

    def respond(request: Request) -> Answer:
        return Answer(request.id, True, dict(content))

    path = tmp_path / "live.db"
    server = StdioServerParameters(command=str(mcp1_python), args=[str(SERVER)])
    with open_store(path) as store:
        callback = elicitation_callback(ask_in(store, server="mcp1-server", target="contact"))
        with answering(str(path), respond) as answered:
            async with Client(server, elicitation_callback=callback, mode=mode) as client:
                result = await client.call_tool("contact", {})
        received = json.loads(result.content[0].text)  # type: ignore[union-attr]

        assert received == {"action": "accept", "content": content}
        (key,) = answered
        call = store.call(key)
        assert (call.status, call.live, call.server, call.error) == ("answered", True, "mcp1-server", None)
        assert call.pending is not None
        assert call.pending.target == "contact"
        (request,) = call.pending.requests
        assert (request.kind, request.prompt) == ("input", "Who are you?")
        assert store.answers(key) == {request.id: Answer(request.id, True, content)}
