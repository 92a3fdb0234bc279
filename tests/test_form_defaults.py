"""Defaults and real servers' shapes, end to end: an in-process MCPServer asks, the bridge
answers, and the server's own record of what it received is checked, in both eras."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from mcp import Client
from pydantic import BaseModel, Field

from servers.raw_form_server import build_raw_server
from toolnexus import Answer, Request, elicitation_callback
from toolnexus.console import ConsoleResolver

# The form of the official conformance scenario elicitation-sep1034-client-defaults: every
# field optional, every field with a default, one of each type.
SEP_1034 = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "default": "John Doe"},
        "age": {"type": "integer", "default": 30},
        "score": {"type": "number", "default": 95.5},
        "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
        "verified": {"type": "boolean", "default": True},
    },
}
SEP_1034_DEFAULTS = {"name": "John Doe", "age": 30, "score": 95.5, "status": "active", "verified": True}


class Contact(BaseModel):
    """A model as a server on the MCP 1.x SDK declares it: optional fields are ``X | None``."""

    email: str = Field(json_schema_extra={"format": "email"})
    nickname: str | None = None
    age: int | None = Field(default=None, ge=0)
    tier: str = Field(default="free", json_schema_extra={"enum": ["free", "pro"]})


# What ``ctx.elicit(message, Contact)`` sends on the mcp<2 SDK: pydantic's own JSON schema,
# with ``anyOf: [T, {type: null}]`` and ``default: null`` for each optional field.
MCP1_CONTACT = Contact.model_json_schema()

SCHEMAS = {"sep-1034": SEP_1034, "mcp1-contact": MCP1_CONTACT}


@pytest.fixture(scope="module")
def server() -> Any:
    return build_raw_server(SCHEMAS)


async def ask(server: Any, schema: str, callback: Any, mode: str) -> dict[str, Any]:
    async with Client(server, elicitation_callback=callback, mode=mode) as client:
        result = await client.call_tool("ask", {"schema": schema})
    received: dict[str, Any] = json.loads(result.content[0].text)  # type: ignore[union-attr]
    return received


def accept_empty(request: Request) -> Answer:
    return Answer(request.id, True, {})


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_an_empty_accept_of_a_form_of_defaults_sends_the_defaults(server: Any, mode: str) -> None:
    received = await ask(server, "sep-1034", elicitation_callback(accept_empty), mode)
    assert received == {"action": "accept", "content": SEP_1034_DEFAULTS}


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_what_the_resolver_answers_wins_over_a_default(server: Any, mode: str) -> None:
    def answer(request: Request) -> Answer:
        return Answer(request.id, True, {"age": 41, "verified": False})

    received = await ask(server, "sep-1034", elicitation_callback(answer), mode)
    assert received == {"action": "accept", "content": {**SEP_1034_DEFAULTS, "age": 41, "verified": False}}


@pytest.mark.anyio
async def test_apply_defaults_false_sends_the_answer_as_it_is(server: Any) -> None:
    received = await ask(server, "sep-1034", elicitation_callback(accept_empty, apply_defaults=False), "auto")
    assert received == {"action": "accept", "content": {}}


def test_apply_defaults_must_be_a_bool() -> None:
    with pytest.raises(TypeError, match="apply_defaults must be a bool"):
        elicitation_callback(accept_empty, apply_defaults=1)  # type: ignore[arg-type]


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_an_mcp1_form_with_optional_fields_is_answered_at_the_console(server: Any, mode: str) -> None:
    # email; nickname left empty; age; tier left at its default; then send at the review.
    out = io.StringIO()
    console = ConsoleResolver(
        "mcp1", stdin=io.StringIO("ada@example.com\n\n36\n\n\n"), stdout=out, colour=False
    )
    received = await ask(server, "mcp1-contact", elicitation_callback(console), mode)

    # nickname, left empty, gets its declared default: null.
    content = {"email": "ada@example.com", "age": 36, "tier": "free", "nickname": None}
    assert received == {"action": "accept", "content": content}
    assert "not a text, number" not in out.getvalue()
    assert "Nickname (nickname)" in out.getvalue()
