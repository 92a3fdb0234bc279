"""toolnexus.durable against the SDK's own MCPServer, in process: park, store as JSON, resume.

Every test parks a call on one ``mcp.Client``, sends the ``Pending`` through JSON, closes
that client, and resumes on a second ``Client`` to the same server (or to a second server
built with the same request-state key, as a restarted server would be). The server's
journal shows what reached it.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Literal

import pytest
from mcp import Client, MCPError
from mcp.server.mcpserver import MCPServer
from mcp_types import INVALID_PARAMS, CallToolResult, ListRootsResult, Root, TextContent

from servers.durable_server import build_server
from toolnexus import Answer, Request, durable
from toolnexus.durable import Pending

pytestmark = pytest.mark.anyio

KEY = os.urandom(32)
ROOT_URI = "file:///work/project"


async def list_roots(context: Any) -> ListRootsResult:
    return ListRootsResult(roots=[Root(uri=ROOT_URI)])  # type: ignore[arg-type]


@asynccontextmanager
async def connect(server: MCPServer, mode: Literal["auto", "legacy"] = "auto") -> AsyncIterator[Client]:
    async with Client(
        server, elicitation_callback=durable.park_only, list_roots_callback=list_roots, mode=mode
    ) as client:
        yield client


def through_json(pending: Pending) -> Pending:
    """What a store does: to JSON text and back."""
    back = Pending.from_dict(json.loads(json.dumps(pending.to_dict())))
    assert back == pending
    return back


def reported(result: object) -> dict[str, Any]:
    assert isinstance(result, CallToolResult), result
    assert not result.is_error, result.content
    first = result.content[0]
    assert isinstance(first, TextContent)
    loaded: dict[str, Any] = json.loads(first.text)
    return loaded


def tool_calls(journal: list[Any]) -> list[dict[str, Any]]:
    return [params for method, params in journal if method == "tools/call"]


async def park(server: MCPServer, tool: str, arguments: dict[str, Any] | None = None) -> Pending:
    async with connect(server) as client:
        outcome = await durable.call_tool_or_park(client, tool, arguments or {})
    assert isinstance(outcome, Pending), outcome
    return through_json(outcome)


async def resume(server: MCPServer, pending: Pending, answers: Any) -> Any:
    """Resume on a new client; an error is raised as ``durable.resume`` raised it (leaving
    ``async with Client(...)`` would wrap it in an exception group)."""
    failure: Exception | None = None
    async with connect(server) as client:
        try:
            return await durable.resume(client, pending, answers)
        except Exception as err:
            failure = err
    raise failure


# --- one round, every outcome -----------------------------------------------------------------


async def test_a_form_parks_and_resumes_on_a_second_client_with_defaults_laid_in() -> None:
    server, journal = build_server(KEY)
    pending = await park(server, "profile", {"tag": "t1"})
    assert pending.method == "tools/call"
    assert pending.target == "profile"
    assert pending.arguments == {"tag": "t1"}
    assert pending.server == "durable-server"
    assert pending.request_state is not None
    (request,) = pending.requests
    assert request.id.startswith("elc-")
    assert request.kind == "input"
    assert request.prompt == "Profile for t1"
    assert request.data is not None
    assert set(request.data["schema"]["properties"]) == {"name", "age", "newsletter"}

    result = await resume(server, pending, {request.id: Answer(request.id, True, {"name": "Ada", "age": 36})})
    assert reported(result) == {
        "tool": "profile",
        "tag": "t1",
        "action": "accept",
        "content": {"name": "Ada", "age": 36, "newsletter": False},
    }
    last = tool_calls(journal)[-1]
    assert last["requestState"] == pending.request_state
    (response,) = last["inputResponses"].values()
    assert response["content"] == {"name": "Ada", "age": 36, "newsletter": False}  # the default, sent


async def test_a_restarted_server_with_the_same_key_accepts_the_state() -> None:
    first, _ = build_server(KEY)
    pending = await park(first, "profile", {"tag": "t2"})
    restarted, _ = build_server(KEY)
    answer = Answer(pending.requests[0].id, True, {"name": "Bo", "age": 7, "newsletter": True})
    assert reported(await resume(restarted, pending, [answer]))["content"]["name"] == "Bo"


async def test_a_server_on_another_key_rejects_the_state_with_the_sdks_error() -> None:
    pending = await park(build_server(KEY)[0], "profile", {"tag": "t3"})
    other, _ = build_server(os.urandom(32))
    answer = Answer(pending.requests[0].id, True, {"name": "Bo", "age": 7})
    with pytest.raises(MCPError) as caught:
        await resume(other, pending, [answer])
    assert caught.value.code == INVALID_PARAMS


async def test_url_mode_accept_carries_no_content() -> None:
    server, journal = build_server(KEY)
    pending = await park(server, "link", {"tag": "u1"})
    (request,) = pending.requests
    assert (request.kind, request.url, request.prompt) == (
        "authorization",
        "https://auth.example.com/?tag=u1",
        "Sign in for u1",
    )
    result = await resume(server, pending, {request.id: {"id": request.id, "ok": True, "data": {"x": "y"}}})
    assert reported(result) == {"tool": "link", "tag": "u1", "action": "accept", "content": None}
    assert tool_calls(journal)[-1]["inputResponses"] == {"link": {"action": "accept"}}


@pytest.mark.parametrize(
    ("reason", "action"),
    [("declined", "decline"), ("cancelled", "cancel"), ("expired", "cancel"), (None, "cancel")],
)
async def test_a_refusal_reaches_the_server_as_decline_or_cancel(reason: str | None, action: str) -> None:
    server, _ = build_server(KEY)
    pending = await park(server, "profile", {"tag": "r"})
    result = await resume(server, pending, [Answer(pending.requests[0].id, False, None, reason)])
    assert reported(result)["action"] == action


# --- several questions --------------------------------------------------------------------


async def test_two_rounds_in_a_row_park_twice() -> None:
    server, journal = build_server(KEY)
    first = await park(server, "two_rounds")
    assert first.input_keys == ("name",)
    second = await resume(server, first, [Answer(first.requests[0].id, True, {"name": "Cy"})])
    assert isinstance(second, Pending)
    second = through_json(second)
    assert second.input_keys == ("confirm",)
    assert second.requests[0].prompt == "Go on?"
    assert second.requests[0].id != first.requests[0].id
    assert second.request_state is not None
    assert second.request_state != first.request_state
    result = await resume(server, second, [Answer(second.requests[0].id, True, {"go": True})])
    assert reported(result) == {
        "tool": "two_rounds",
        "name": {"name": "Cy", "team": "platform"},
        "action": "accept",
        "content": {"go": True},
    }
    assert tool_calls(journal)[-1]["requestState"] == second.request_state


async def test_a_round_with_two_elicitations_needs_both_answers() -> None:
    server, _ = build_server(KEY)
    pending = await park(server, "pair")
    assert pending.input_keys == ("first", "second")
    first, second = pending.requests
    assert (first.prompt, second.prompt) == ("First person?", "Second person?")
    answers = {
        first.id: Answer(first.id, True, {"name": "Di"}),
        second.id: Answer(second.id, False, None, "declined"),
    }
    result = reported(await resume(server, pending, answers))
    assert result["first"] == {"action": "accept", "content": {"name": "Di", "team": "platform"}}
    assert result["second"] == {"action": "decline", "content": None}


async def test_a_roots_request_beside_an_elicitation_is_answered_by_the_resuming_clients_callback() -> None:
    server, journal = build_server(KEY)
    pending = await park(server, "with_roots")
    assert pending.input_keys == ("who",)
    assert pending.other_inputs == {"roots": {"method": "roots/list"}}
    result = await resume(
        server, pending, [Answer(pending.requests[0].id, True, {"name": "Ed", "team": "web"})]
    )
    assert reported(result) == {
        "tool": "with_roots",
        "roots": [ROOT_URI],
        "action": "accept",
        "content": {"name": "Ed", "team": "web"},
    }
    sent = tool_calls(journal)[-1]["inputResponses"]
    assert set(sent) == {"who", "roots"}


async def test_a_round_with_nothing_for_a_human_is_answered_at_once() -> None:
    server, _ = build_server(KEY)
    async with connect(server) as client:
        result = await durable.call_tool_or_park(client, "roots_only", {})
    assert reported(result) == {"tool": "roots_only", "roots": [ROOT_URI]}


async def test_a_prompt_and_a_resource_park_and_resume() -> None:
    server, _ = build_server(KEY)
    async with connect(server) as client:
        prompt = await durable.get_prompt(client, "greeting")
        resource = await durable.read_resource(client, "note://plan")
    assert isinstance(prompt, Pending)
    assert isinstance(resource, Pending)
    prompt, resource = through_json(prompt), through_json(resource)
    assert (prompt.method, prompt.target) == ("prompts/get", "greeting")
    assert (resource.method, resource.target, resource.arguments) == ("resources/read", "note://plan", None)
    async with connect(server) as client:
        got = await durable.resume(client, prompt, [Answer(prompt.requests[0].id, True, {"name": "Flo"})])
        read = await durable.resume(
            client, resource, [Answer(resource.requests[0].id, True, {"name": "Gus"})]
        )
    text = got.messages[0].content  # type: ignore[union-attr]
    assert isinstance(text, TextContent)
    assert text.text == "Hello, Flo!"
    assert read.contents[0].text == "plan for Gus"  # type: ignore[union-attr]


async def test_expires_in_sets_every_requests_deadline() -> None:
    server, _ = build_server(KEY)
    async with connect(server) as client:
        pending = await durable.call_tool_or_park(client, "pair", {}, expires_in=3600)
        with pytest.raises(ValueError, match="expires_in"):
            await durable.call_tool_or_park(client, "pair", {}, expires_in=0)
        with pytest.raises(ValueError, match=r"expires_in 1000000000000\.0 s ends after the year 9999"):
            await durable.call_tool_or_park(client, "pair", {}, expires_in=1e12)
    assert isinstance(pending, Pending)
    deadlines = {request.expiresAt for request in pending.requests}
    assert len(deadlines) == 1
    (deadline,) = deadlines
    assert deadline is not None
    assert deadline.endswith("Z")


# --- what is refused before anything is sent -------------------------------------------------


async def test_content_that_does_not_fit_is_refused_naming_the_fields_and_nothing_is_sent() -> None:
    server, journal = build_server(KEY)
    pending = await park(server, "profile", {"tag": "v"})
    before = len(journal)
    request_id = pending.requests[0].id
    with pytest.raises(ValueError, match="age") as caught:
        await resume(server, pending, [Answer(request_id, True, {"name": "Ada", "age": "old"})])
    assert request_id in str(caught.value)
    assert "old" not in str(caught.value)
    with pytest.raises(ValueError, match="'nested'"):
        await resume(
            server, pending, [Answer(request_id, True, {"name": "Ada", "age": 1, "nested": {"a": 1}})]
        )
    assert tool_calls(journal[before:]) == []


async def test_a_missing_or_unknown_answer_is_refused_naming_the_ids_and_nothing_is_sent() -> None:
    server, journal = build_server(KEY)
    pending = await park(server, "pair")
    before = len(journal)
    first, second = (request.id for request in pending.requests)
    with pytest.raises(ValueError, match=f"no answer for {second}"):
        await resume(server, pending, [Answer(first, True, {"name": "Hal"})])
    with pytest.raises(ValueError, match="'elc-other'") as caught:
        await resume(
            server,
            pending,
            {
                first: Answer(first, True, {"name": "Hal"}),
                second: Answer(second, True, {"name": "Ida"}),
                "elc-other": Answer("elc-other", True, {}),
            },
        )
    assert "does not hold" in str(caught.value)
    with pytest.raises(ValueError, match="two answers"):
        await resume(
            server, pending, [Answer(first, True, {"name": "Hal"}), Answer(first, True, {"name": "Jo"})]
        )
    assert tool_calls(journal[before:]) == []


async def test_a_legacy_connection_cannot_park() -> None:
    server, journal = build_server(KEY)
    async with connect(server, mode="legacy") as client:
        assert client.protocol_version == "2025-11-25"
        with pytest.raises(RuntimeError, match="2025-11-25") as caught:
            await durable.call_tool_or_park(client, "profile", {"tag": "l"})
        assert "elicitation_callback" in str(caught.value)
        for call in (durable.get_prompt(client, "greeting"), durable.read_resource(client, "note://x")):
            with pytest.raises(RuntimeError, match="2025-11-25"):
                await call
    pending = await park(server, "profile", {"tag": "l"})
    async with connect(server, mode="legacy") as client:
        with pytest.raises(RuntimeError, match="2025-11-25"):
            await durable.resume(
                client, pending, [Answer(pending.requests[0].id, True, {"name": "Al", "age": 1})]
            )
    assert [params["name"] for params in tool_calls(journal)] == ["profile"]  # only the one that parked


async def test_a_tampered_request_state_reaches_the_server_byte_for_byte_and_its_rejection_the_caller() -> (
    None
):
    server, journal = build_server(KEY)
    pending = await park(server, "profile", {"tag": "x"})
    assert pending.request_state is not None
    state = pending.request_state
    flipped = "A" if state[-5] != "A" else "B"
    tampered = dataclasses.replace(pending, request_state=state[:-5] + flipped + state[-4:] + " \u00e9")
    answer = Answer(pending.requests[0].id, True, {"name": "Eve", "age": 30})
    with pytest.raises(MCPError) as caught:
        await resume(server, tampered, [answer])
    assert caught.value.code == INVALID_PARAMS
    assert caught.value.error.message == "Invalid or expired requestState"
    assert tool_calls(journal)[-1]["requestState"] == tampered.request_state


async def test_park_only_answers_an_inline_question_with_cancel() -> None:
    server, _ = build_server(KEY)
    async with connect(server) as client:
        result = await client.call_tool("profile", {"tag": "inline"})
    assert reported(result)["action"] == "cancel"


# --- Pending as a value --------------------------------------------------------------------

REQUEST = Request("elc-a-1", "input", "Name?", None, {"schema": {"type": "object"}})
PENDING = Pending("tools/call", "deploy", {"env": "prod"}, "state==", ("k",), (REQUEST,), {}, "srv")


def test_pending_is_frozen_and_its_dict_has_a_format_version() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        PENDING.target = "other"  # type: ignore[misc]
    wire = PENDING.to_dict()
    assert wire == {
        "format": "toolnexus.pending",
        "version": 1,
        "method": "tools/call",
        "target": "deploy",
        "arguments": {"env": "prod"},
        "requestState": "state==",
        "server": "srv",
        "requests": [{"key": "k", "request": REQUEST.to_dict()}],
    }
    assert Pending.from_dict(json.loads(json.dumps(wire))) == PENDING


@pytest.mark.parametrize(
    ("change", "names"),
    [
        ({"format": "other"}, "Pending.format"),
        ({"version": 3}, "Pending.version"),
        ({"task": {"id": "t"}}, "'task'"),  # a parked task's record is version 2 alone
        ({"version": "1"}, "Pending.version"),
        ({"method": "tools/list"}, "Pending.method"),
        ({"target": 3}, "Pending.target"),
        ({"arguments": []}, "Pending.arguments"),
        ({"requestState": 5}, "Pending.requestState"),
        ({"server": 5}, "Pending.server"),
        ({"requests": []}, "Pending.requests"),
        ({"requests": {}}, "Pending.requests"),
        ({"requests": [{"key": "k"}]}, "Pending.requests[0]"),
        (
            {"requests": [{"key": "k", "request": {"id": "x", "kind": "input"}}]},
            "Pending.requests[0].request",
        ),
        ({"requests": [{"key": 1, "request": REQUEST.to_dict()}]}, "Pending.requests keys[0]"),
        ({"otherInputs": {"r": {"method": "tools/call"}}}, "Pending.otherInputs['r']"),
        ({"otherInputs": {"r": {"method": "sampling/createMessage"}}}, "Pending.otherInputs['r']"),
        ({"otherInputs": {"k": {"method": "roots/list"}}}, "Pending.otherInputs['k']"),
        ({"extra": 1}, "'extra'"),
    ],
)
def test_from_dict_rejects_anything_else_naming_the_field(change: dict[str, Any], names: str) -> None:
    wire = {**PENDING.to_dict(), **change}
    with pytest.raises(ValueError, match=re.escape(names)):
        Pending.from_dict(wire)


@pytest.mark.parametrize("missing", ["format", "version", "method", "target", "requests"])
def test_from_dict_names_a_missing_field(missing: str) -> None:
    wire = PENDING.to_dict()
    del wire[missing]
    with pytest.raises(ValueError, match=f"Pending.{missing} is missing"):
        Pending.from_dict(wire)


def test_from_dict_rejects_what_is_not_a_mapping() -> None:
    with pytest.raises(ValueError, match="mapping"):
        Pending.from_dict([])  # type: ignore[arg-type]


def test_repeated_ids_or_keys_are_refused() -> None:
    with pytest.raises(ValueError, match="input_keys repeat"):
        Pending("tools/call", "t", None, None, ("k", "k"), (REQUEST, dataclasses.replace(REQUEST, id="b")))
    with pytest.raises(ValueError, match="ids repeat"):
        Pending("tools/call", "t", None, None, ("k", "j"), (REQUEST, REQUEST))


async def test_wrong_types_are_refused_naming_the_argument() -> None:
    client: Any = None  # never reached: the arguments are checked first
    with pytest.raises(TypeError, match="call_tool: name must be a str"):
        await durable.call_tool_or_park(client, 3, {})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="call_tool: arguments must be a dict"):
        await durable.call_tool_or_park(client, "t", [])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="get_prompt: name must be a str"):
        await durable.get_prompt(client, None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="read_resource: uri must be a str"):
        await durable.read_resource(client, b"note://x")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="resume: pending must be a Pending"):
        await durable.resume(client, PENDING.to_dict(), [])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="resume: answers must map request ids"):
        await durable.resume(client, PENDING, "elc-a-1")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"resume: answers\[0\] must be an Answer"):
        await durable.resume(client, PENDING, [42])  # type: ignore[list-item]
    with pytest.raises(ValueError, match=r"resume: answers\['elc-a-1'\]: Answer.ok is missing"):
        await durable.resume(client, PENDING, {"elc-a-1": {"id": "elc-a-1"}})
    with pytest.raises(TypeError, match="resume: expires_in must be a number"):
        await durable.resume(client, PENDING, [], expires_in="soon")  # type: ignore[arg-type]
