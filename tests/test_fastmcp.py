"""``toolnexus.fastmcp.elicitation_handler`` with the real libraries: FastMCP's ``Client`` over
stdio and streamable HTTP in both protocol eras, a pydantic-ai ``Agent`` whose ``MCPToolset``
calls an eliciting tool, ``ConsoleResolver`` at a pseudo-terminal, and the import guard; and
live questions (``durable.ask_in(store)`` as the resolver) answered from another store object,
through FastMCP's ``Client`` and through a pydantic-ai ``Agent``.

The server is the project's own (``servers.elicit_server``); its journal shows what it received.
The live questions are asked by a server nobody here wrote, FastMCP 4's own
(``servers.fastmcp_server``, run in an environment of its own), with ``ctx.elicit``.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast

import anyio
import pytest
from fastmcp import Client as FastMCPClient
from fastmcp.client.elicitation import create_elicitation_callback
from fastmcp.client.transports import StdioTransport
from mcp.client.session import ClientRequestContext
from mcp_types import ElicitRequestFormParams, ElicitResult, ErrorData, TextContent

from servers.harness import ERA_VERSIONS, Era, tag_of
from support import forkserver
from support.live import answering
from support.processes import TESTS_DIR, Processes
from support.values import FULL_PROFILE, PROFILE
from toolnexus import Answer, Request
from toolnexus.durable import ask_in, open_store
from toolnexus.fastmcp import _FASTMCP_CHECKS_CONTENT, _fastmcp_checks_content, elicitation_handler

_MODES: dict[Era, Any] = {"legacy": "legacy", "2026": "auto"}


def _text(result: Any) -> str:
    content = result.content
    assert len(content) == 1
    assert isinstance(content[0], TextContent)
    text: str = content[0].text
    return text


async def _call(client: FastMCPClient[Any], tool: str, tag: str) -> dict[str, Any]:
    outcome = json.loads(_text(await client.call_tool(tool, {"tag": tag})))
    assert isinstance(outcome, dict)
    return outcome


class Scripted:
    """A resolver whose answer depends on the word the tool call was tagged with."""

    def __init__(self, secret: str) -> None:
        self.secret = secret
        self.seen: list[Request] = []

    async def __call__(self, request: Request) -> Answer:
        self.seen.append(request)
        how = tag_of(request).split("-")[0]
        if how == "accept":
            return Answer(request.id, True, dict(PROFILE))
        if how == "partial":  # no email, and a field the form lacks: validation refuses it
            return Answer(request.id, True, {"name": "Ada", "age": 36, "note": self.secret})
        if how == "visit":  # URL mode: data is never sent as content
            return Answer(request.id, True, {"note": self.secret})
        if how == "decline":
            return Answer(request.id, False, reason="declined")
        if how == "cancel":
            return Answer(request.id, False, reason="cancelled")
        if how == "raise":
            raise RuntimeError(f"resolver failed: {self.secret}")
        if how == "slow":
            await anyio.sleep(60)  # cancelled by the handler's timeout
        raise AssertionError(f"unexpected tag in {request.prompt!r}")


# (tool, tag word, what the server must report); legacy-only tools are added per era.
CASES = [
    ("form", "accept", "accept"),
    ("form", "partial", "cancel"),
    ("form", "decline", "decline"),
    ("form", "cancel", "cancel"),
    ("form", "raise", "cancel"),
    ("form", "slow", "cancel"),
    ("url", "visit", "accept"),
    ("url", "decline", "decline"),
]
LEGACY_CASES = [("form_elicit", "accept", "accept"), ("url_elicit", "visit", "accept")]


@pytest.mark.anyio
@pytest.mark.parametrize("era", ["legacy", "2026"])
@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_fastmcp_client_in_both_eras(transport: str, era: Era, request: pytest.FixtureRequest) -> None:
    secret = f"secret-{uuid.uuid4().hex}"
    wait_for = Scripted(secret)
    target: Any
    if transport == "stdio":
        forkserver.start()  # the server forked by the fork server: a second of CPU less than a new one
        command, *args = shlex.split(
            forkserver.server_command([sys.executable, "-m", "servers.elicit_server", "stdio"])
        )
        target = StdioTransport(command, args, cwd=str(TESTS_DIR), keep_alive=False)
    else:
        target = request.getfixturevalue("http_server_url")
    cases = CASES + (LEGACY_CASES if era == "legacy" else [])
    outcomes: dict[str, dict[str, Any]] = {}
    handler = elicitation_handler(wait_for, timeout=1.0)  # room for a loaded machine
    async with FastMCPClient(target, elicitation_handler=handler, mode=_MODES[era]) as client:
        assert client.protocol_version == ERA_VERSIONS[era]

        async def run(tool: str, tag: str) -> None:
            outcomes[tag] = await _call(client, tool, tag)

        async with anyio.create_task_group() as group:  # all at once: the timeout is waited once
            for tool, word, _ in cases:
                group.start_soon(run, tool, f"{word}-{tool}-{uuid.uuid4().hex[:8]}")
        journal = _text(await client.call_tool("journal_dump", {}))

    for tool, word, expected in cases:
        (outcome,) = [o for tag, o in outcomes.items() if tag.startswith(f"{word}-{tool}-")]
        assert outcome["era"] == ERA_VERSIONS[era]
        assert outcome["tool"] == tool
        assert outcome["action"] == expected, (tool, word, outcome)
        if tool.startswith("form") and expected == "accept":  # newsletter: the form's default
            assert outcome["content"] == {**PROFILE, "newsletter": False}
        else:
            assert outcome["content"] is None  # URL accept: no content, whatever data held
    # Each tool call asked once or more (a 2026 retry may ask again), and only as asked.
    assert {tag_of(r).split("-")[0] for r in wait_for.seen} == {word for _, word, _ in cases}
    assert secret not in journal  # not the exception's text, the URL answer's data, a refused answer
    assert "resolver failed" not in journal


def _form_params(schema: dict[str, Any]) -> ElicitRequestFormParams:
    return ElicitRequestFormParams(message="Code?", requested_schema=schema)


PATTERN_SCHEMA = {
    "type": "object",
    "properties": {"code": {"type": "string", "pattern": "^[a-z]+$"}},
    "required": ["code"],
}


async def _installed_fastmcp_checks(params: ElicitRequestFormParams, content: dict[str, Any]) -> bool:
    """Whether the installed FastMCP, handed an accepted ``content`` that does not fit, sends the
    server an error quoting it (4.2 does; 4.1 passes the answer on for the server to judge)."""

    async def bare(message: str, response_type: Any, params: Any, context: Any) -> ElicitResult:
        return ElicitResult(action="accept", content=content)

    sent = await create_elicitation_callback(bare)(cast(ClientRequestContext, None), params)
    if isinstance(sent, ErrorData):
        assert str(next(iter(content.values()))) in sent.message
        return True
    assert sent.action == "accept"
    return False


@pytest.mark.anyio
@pytest.mark.parametrize("validate", [True, False])
async def test_what_fastmcp_would_reject_is_cancelled_first(validate: bool) -> None:
    # toolnexus's own validation leaves `pattern` alone; FastMCP 4.2 checks it and would send
    # the server its error text, which quotes the value. Through FastMCP's real wrapping:
    secret = "SECRET-123"

    def answer(request: Request) -> Answer:
        return Answer(request.id, True, {"code": secret})

    def fits(request: Request) -> Answer:
        return Answer(request.id, True, {"code": "abc"})

    context = cast(ClientRequestContext, None)  # passed through opaquely by both layers
    params = _form_params(PATTERN_SCHEMA)
    fastmcp_checks = await _installed_fastmcp_checks(params, {"code": secret})
    assert fastmcp_checks is _FASTMCP_CHECKS_CONTENT  # the version gate matches what FastMCP does
    result = await create_elicitation_callback(elicitation_handler(answer, validate=validate))(
        context, params
    )
    assert isinstance(result, ElicitResult)  # never FastMCP's ErrorData
    if fastmcp_checks:
        assert result == ElicitResult(action="cancel")
    else:
        assert result == ElicitResult(action="accept", content={"code": secret})
    fine = await create_elicitation_callback(elicitation_handler(fits, validate=validate))(context, params)
    assert fine == ElicitResult(action="accept", content={"code": "abc"})


@pytest.mark.anyio
@pytest.mark.parametrize("apply_defaults", [True, False])
async def test_apply_defaults_is_passed_through(apply_defaults: bool) -> None:
    schema = {
        "type": "object",
        "properties": {"env": {"type": "string"}, "replicas": {"type": "integer", "default": 1}},
        "required": ["env"],
    }

    def answer(request: Request) -> Answer:
        return Answer(request.id, True, {"env": "staging"})

    handler = elicitation_handler(answer, apply_defaults=apply_defaults)
    result = await create_elicitation_callback(handler)(
        cast(ClientRequestContext, None), _form_params(schema)
    )
    expected: dict[str, Any] = {"env": "staging", "replicas": 1} if apply_defaults else {"env": "staging"}
    assert result == ElicitResult(action="accept", content=expected)


@pytest.mark.parametrize(
    ("version", "checks"), [("4.1.8", False), ("4.2.0", True), ("4.10.0rc1", True), ("5.0", True), ("", True)]
)
def test_which_fastmcp_versions_check_content(version: str, checks: bool) -> None:
    assert _fastmcp_checks_content(version) is checks


def test_bad_arguments_are_refused_by_name() -> None:
    def fine(request: Request) -> Answer:
        return Answer(request.id, False)

    with pytest.raises(TypeError, match="apply_defaults"):
        elicitation_handler(fine, apply_defaults="yes")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="wait_for"):
        elicitation_handler(42)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="timeout"):
        elicitation_handler(fine, timeout=-1)
    with pytest.raises(TypeError, match="validate"):
        elicitation_handler(fine, validate=1)  # type: ignore[arg-type]


# --- pydantic-ai --------------------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize("era", ["legacy", "2026"])
async def test_pydantic_ai_agent_tool_call_gets_the_resolvers_answer(era: Era, http_server_url: str) -> None:
    from pydantic_ai import Agent
    from pydantic_ai.mcp import MCPToolset
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    tag = f"agent-{uuid.uuid4().hex[:8]}"

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        # First turn: call the MCP tool; second: hand back what it returned.
        for message in messages:
            for part in message.parts:
                if isinstance(part, ToolReturnPart):
                    return ModelResponse(parts=[TextPart(str(part.content))])
        assert "form" in [tool.name for tool in info.function_tools]
        return ModelResponse(parts=[ToolCallPart("form", {"tag": tag})])

    asked: list[Request] = []

    def wait_for(request: Request) -> Answer:  # a plain function: run in a worker thread
        asked.append(request)
        return Answer(request.id, True, {**PROFILE, "newsletter": True})

    handler = elicitation_handler(wait_for)
    if era == "legacy":  # the era is a Client setting, so the toolset takes a built Client
        toolset: MCPToolset[None] = MCPToolset(
            FastMCPClient(http_server_url, elicitation_handler=handler, mode="legacy")
        )
    else:
        toolset = MCPToolset(http_server_url, elicitation_handler=handler)
    agent = Agent(FunctionModel(model), toolsets=[toolset])
    with _pydantic_ai_modern_session_warning(era):
        result = await agent.run("Fill in my profile")
    outcome = json.loads(result.output)
    assert outcome == {
        "era": ERA_VERSIONS[era],
        "tool": "form",
        "action": "accept",
        "content": {**PROFILE, "newsletter": True},
    }
    assert asked
    assert [(r.kind, tag_of(r)) for r in asked] == [("input", tag)] * len(asked)


@contextmanager
def _pydantic_ai_modern_session_warning(era: Era) -> Iterator[None]:
    """pydantic-ai warns that the handler "will never be called" on a 2026-07-28 session,
    though the elicitations embedded in an ``InputRequiredResult`` do reach it."""
    if era == "legacy":
        yield
        return
    with pytest.warns(UserWarning, match="will never be called"):
        yield


# --- the import guard ---------------------------------------------------------------------

BLOCKED_IMPORT = """
import importlib, json, sys

class Block:
    def __init__(self, prefix):
        self.prefix = prefix
    def find_spec(self, name, path=None, target=None):
        if name == self.prefix or name.startswith(self.prefix + "."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

import toolnexus, toolnexus.mcp  # neither needs FastMCP (test_import_cost: nor loads it)
out = {}
for prefix in ("fastmcp", "fastmcp.client"):
    for name in [m for m in sys.modules if m == "fastmcp" or m.startswith(("fastmcp.", "toolnexus.fastmcp"))]:
        del sys.modules[name]
    sys.meta_path.insert(0, Block(prefix))
    try:
        importlib.import_module("toolnexus.fastmcp")
        out[prefix] = None
    except ImportError as err:
        out[prefix] = [type(err).__name__, str(err)]
    sys.meta_path.pop(0)
importlib.import_module("toolnexus.fastmcp")  # unblocked: it does load FastMCP
out["loaded"] = "fastmcp" in sys.modules
print(json.dumps(out))
"""


def test_without_fastmcp_the_import_error_names_the_extra(processes: Processes) -> None:
    proc = processes.python(BLOCKED_IMPORT, check=True)
    out = json.loads(proc.stdout)
    assert out["loaded"]
    kind, message = out["fastmcp"]
    assert kind == "ImportError"
    assert "\n" not in message
    assert "pip install 'toolnexus-mcp[fastmcp]'" in message
    # A FastMCP that is there but broken is not reported as missing.
    if out["fastmcp.client"] is not None:  # FastMCP's own __init__ imports its client
        assert out["fastmcp.client"] == ["ModuleNotFoundError", "No module named 'fastmcp.client'"]


# --- ConsoleResolver through FastMCP, at a terminal ---------------------------------------

AT_A_TERMINAL = """
import asyncio, sys
sys.path.insert(0, {tests!r})
from fastmcp import Client
from servers.elicit_server import build_server
from toolnexus.console import ConsoleResolver
from toolnexus.fastmcp import _FASTMCP_CHECKS_CONTENT, _fastmcp_checks_content, elicitation_handler

async def main():
    server, _ = build_server()
    handler = elicitation_handler(ConsoleResolver("elicit-server"))
    async with Client(server, elicitation_handler=handler) as client:
        result = await client.call_tool("form", {{"tag": "pty"}})
        print("Result:", result.content[0].text)

asyncio.run(main())
"""


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")
def test_console_resolver_through_fastmcp_at_a_terminal(tmp_path: Path, processes: Processes) -> None:
    import os

    from support.terminal import ANSI

    env = dict(os.environ, TERM="dumb")
    term = processes.terminal(
        [sys.executable, "-c", AT_A_TERMINAL.format(tests=str(TESTS_DIR))], env, tmp_path
    )
    try:
        term.wait_for("name: ")
        term.type(b"Ada Lovelace\r")
        term.wait_for("age: ")
        term.type(b"36\r")
        term.wait_for("email: ")
        term.type(b"ada@example.com\r")
        term.wait_for("newsletter")
        term.type(b"y\r")
        term.wait_for("Send? [Y/n/e] ")
        term.type(b"\r")
        term.wait_for("Result: ")
        assert term.finish() == 0
    finally:
        term.kill()
    screen = ANSI.sub("", term.screen)
    assert "elicit-server" in screen  # which server asks
    result = json.loads(screen.split("Result: ", 1)[1].strip())
    assert result["action"] == "accept"
    assert result["content"] == {**PROFILE, "newsletter": True}


# --- live questions (durable.ask_in) from a FastMCP server ---------------------------------

FASTMCP_VENV = Path(
    os.environ.get("TOOLNEXUS_FASTMCP_VENV") or Path.home() / ".cache" / "toolnexus-tests" / "fastmcp-venv"
)
"""FastMCP's server side, in an environment of its own: the ``fastmcp`` extra installs the
client only, and the server needs packages the project does not. Made on first use (by the test
command's uv, else by pip) and reused by later runs and other clones on the machine."""
FASTMCP_SERVER = TESTS_DIR / "servers" / "fastmcp_server.py"
FASTMCP_SERVER_NAME = "fastmcp-server"
UV = TESTS_DIR.parent / ".venv-uv" / "bin" / "uv"
_fastmcp_pythons: list[Path] = []  # the environment, once it is known to work (once a session)


def _fastmcp_server_python(processes: Processes) -> Path:
    """The Python of an environment with FastMCP 4's server side in it; made if it is not."""
    if _fastmcp_pythons:
        return _fastmcp_pythons[0]
    python = FASTMCP_VENV / "bin" / "python"
    probe = [str(python), "-c", "from fastmcp import FastMCP, Context"]
    if not (python.exists() and processes.run(probe).returncode == 0):
        requirement = "fastmcp>=4.1.6,<4.3"  # the releases the extra's client covers
        if UV.exists():
            made = processes.run(
                [str(UV), "venv", "--quiet", "--clear", "--python", sys.executable, str(FASTMCP_VENV)]
            )
            assert made.returncode == 0, made.stderr
            argv = [str(UV), "pip", "install", "--quiet", "--python", str(python), requirement]
        else:
            import venv

            venv.create(FASTMCP_VENV, with_pip=True, clear=True)
            argv = [
                str(python),
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                requirement,
            ]
        install = processes.run(argv, timeout=300)
        if install.returncode != 0:
            pytest.skip(
                f"FastMCP's server could not be installed: {install.stderr.strip().splitlines()[-1:]}"
            )
    _fastmcp_pythons.append(python)
    return python


@pytest.fixture
def fastmcp_server(processes: Processes) -> StdioTransport:
    """A FastMCP 4 server (servers/fastmcp_server.py) to start over stdio, its tools asking with
    ``ctx.elicit``, mid-call."""
    python = _fastmcp_server_python(processes)
    return StdioTransport(str(python), [str(FASTMCP_SERVER)], cwd=str(TESTS_DIR), keep_alive=False)


async def _call_json(client: FastMCPClient[Any], tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    outcome = json.loads(_text(await client.call_tool(tool, arguments)))
    assert isinstance(outcome, dict)
    return outcome


APPROVAL: dict[str, Any] = {"environment": "production", "replicas": 3, "confirm": True}
"""An answer to the FastMCP server's ``deploy`` form, every field away from anything a default
or a coercion could produce."""


def _approve(request: Request) -> Answer:
    """The answer to each of the FastMCP server's questions (the caller checks the prompts:
    this runs in the answering thread, where a failed assert would only stall the test)."""
    if request.prompt == "What should we call you?":
        return Answer(request.id, True, {"value": "Ada"})
    return Answer(request.id, True, dict(APPROVAL))


def _respond(request: Request) -> Answer | None:
    """How the other store object answers the FastMCP server's questions: ``Deploy db?`` is
    declined, ``Deploy slow?`` left to run out, the others approved (the caller checks the
    prompts: this runs in the answering thread, where a failed assert would only stall the
    test)."""
    if request.prompt == "Deploy db?":
        return Answer.decline(request)
    if request.prompt == "Deploy slow?":
        return None
    return _approve(request)


@pytest.mark.anyio
async def test_a_fastmcp_servers_questions_are_answered_declined_and_withdrawn_live(
    fastmcp_server: StdioTransport, tmp_path: Path
) -> None:
    """FastMCP's ``ctx.elicit`` (2025-11-25, mid-call), through FastMCP's own ``Client`` and the
    toolnexus handler whose resolver is ``ask_in(store)`` (a host's resolver choosing among
    three, by question, in one session):

    - answered: the call stays open while another store object records the answer, and the
      tool gets exactly that content (a model, and a scalar FastMCP unwraps);
    - declined: a decline recorded elsewhere is what ``ctx.elicit`` returns
      (``DeclinedElicitation``), not a cancel;
    - unanswered in time (``timeout=0.5``): ``ctx.elicit`` returns a cancel (§10's expired),
      the question is withdrawn with the reason, and an answer given after is refused and
      recorded nowhere.

    The store shows each question with its outcome, live, from the server named."""
    path = tmp_path / "live.db"
    with open_store(path) as store:
        approving = ask_in(store, server=FASTMCP_SERVER_NAME)
        declining = ask_in(store, server=FASTMCP_SERVER_NAME, target="deploy")
        slow = ask_in(store, timeout=0.5, server=FASTMCP_SERVER_NAME)

        async def choose(request: Request) -> Answer:
            chosen = {"Deploy db?": declining, "Deploy slow?": slow}.get(request.prompt, approving)
            return await chosen(request)

        handler = elicitation_handler(choose)
        with answering(str(path), _respond) as seen:
            async with FastMCPClient(fastmcp_server, elicitation_handler=handler, mode="legacy") as client:
                assert client.protocol_version == "2025-11-25"
                deployed = await _call_json(client, "deploy", {"service": "api"})
                named = await _call_json(client, "nickname", {})
                declined = await _call_json(client, "deploy", {"service": "db"})
                withdrawn = await _call_json(client, "deploy", {"service": "slow"})
        assert deployed == {"action": "accept", "content": APPROVAL}
        assert named == {"action": "accept", "content": "Ada"}
        assert declined == {"action": "decline", "content": None}
        assert withdrawn == {"action": "cancel", "content": None}
        assert len(seen) == 4
        calls = {}
        for key in seen:
            call = store.call(key)
            (request,) = store.get(key).requests
            calls[request.prompt] = (call, request)
            assert (call.live, call.server) == (True, FASTMCP_SERVER_NAME)
        assert sorted(calls) == ["Deploy api?", "Deploy db?", "Deploy slow?", "What should we call you?"]
        for prompt in ("Deploy api?", "What should we call you?"):
            call, request = calls[prompt]
            assert (call.status, call.error) == ("answered", None)
            assert store.answers(call.key) == {request.id: _approve(request)}
        call, request = calls["Deploy db?"]
        assert (call.status, call.error) == ("answered", None)
        assert call.pending is not None
        assert call.pending.target == "deploy"
        assert store.answers(call.key) == {request.id: Answer(request.id, False, None, "declined")}
        call, request = calls["Deploy slow?"]
        assert (call.status, call.error) == ("withdrawn", "no answer came within 0.5 s")
        with pytest.raises(ValueError, match="was withdrawn"):
            store.record(call.key, _approve(request))
        assert store.answers(call.key) == {}
        assert store.calls(status="live") == []


@pytest.mark.anyio
async def test_a_pydantic_ai_agents_call_to_a_fastmcp_tool_is_answered_live(
    fastmcp_server: StdioTransport, tmp_path: Path
) -> None:
    """A pydantic-ai ``Agent`` (``FunctionModel``, no LLM) calls the FastMCP server's tool
    through ``MCPToolset``; the tool's question waits in the store (``ask_in``) until another
    store object answers it, and the agent's run ends with the tool's report of that answer."""
    from pydantic_ai import Agent
    from pydantic_ai.mcp import MCPToolset
    from pydantic_ai.models.function import FunctionModel

    path = tmp_path / "live.db"
    with open_store(path) as store:
        handler = elicitation_handler(ask_in(store, server=FASTMCP_SERVER_NAME))
        toolset: MCPToolset[None] = MCPToolset(
            FastMCPClient(fastmcp_server, elicitation_handler=handler, mode="legacy")
        )
        agent = Agent(FunctionModel(_calls_once("deploy", {"service": "api"})), toolsets=[toolset])
        with answering(str(path), _approve) as answered:
            result = await agent.run("Deploy the api")
        assert json.loads(result.output) == {"action": "accept", "content": APPROVAL}
        (key,) = answered
        call = store.call(key)
        assert (call.status, call.live, call.server) == ("answered", True, FASTMCP_SERVER_NAME)
        assert [request.prompt for request in store.get(key).requests] == ["Deploy api?"]


# End to end by choice (its server is in process): run once, on the default Python, with the
# other pydantic-ai tests. On each other Python's new environment, importing pydantic-ai and
# FastMCP's client is about 5 s of CPU (compiling them), for the one quick test that used it.
@pytest.mark.e2e
@pytest.mark.anyio
async def test_a_pydantic_ai_agents_2026_round_is_answered_live(tmp_path: Path) -> None:
    """The same through a 2026-07-28 session (the SDK's ``MCPServer`` in process, whose ``form``
    tool asks in an ``InputRequiredResult``): the round's question, which pydantic-ai warns its
    handler will never see, waits in the store and is answered from another store object."""
    from pydantic_ai import Agent
    from pydantic_ai.mcp import MCPToolset
    from pydantic_ai.models.function import FunctionModel

    from servers.elicit_server import build_server

    path = tmp_path / "live.db"
    with open_store(path) as store:
        handler = elicitation_handler(ask_in(store, server="elicit-server", target="form"))
        toolset: MCPToolset[None] = MCPToolset(build_server()[0], elicitation_handler=handler)
        agent = Agent(FunctionModel(_calls_once("form", {"tag": "agent-live"})), toolsets=[toolset])

        def fill_in(request: Request) -> Answer:
            return Answer(request.id, True, dict(FULL_PROFILE))

        with answering(str(path), fill_in) as answered, _pydantic_ai_modern_session_warning("2026"):
            result = await agent.run("Fill in my profile")
        assert json.loads(result.output) == {
            "era": ERA_VERSIONS["2026"],
            "tool": "form",
            "action": "accept",
            "content": FULL_PROFILE,
        }
        assert answered  # a retried round may ask again: each was answered
        for key in answered:
            call = store.call(key)
            assert (call.status, call.live, call.server) == ("answered", True, "elicit-server")


def _calls_once(tool: str, arguments: dict[str, Any]) -> Any:
    """A ``FunctionModel`` function: on its first turn it calls ``tool``; once the tool has
    returned, it hands back what the tool returned, as the run's output."""
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import AgentInfo

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        for message in messages:
            for part in message.parts:
                if isinstance(part, ToolReturnPart):
                    return ModelResponse(parts=[TextPart(str(part.content))])
        assert tool in [t.name for t in info.function_tools]
        return ModelResponse(parts=[ToolCallPart(tool, arguments)])

    return model
