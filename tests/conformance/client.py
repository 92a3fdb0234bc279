"""The client that the official MCP conformance suite drives: ``mcp.Client`` with toolnexus's bridge.

The suite (``@modelcontextprotocol/conformance``) starts a mock server for one scenario, runs
``python client.py URL`` with the scenario's name in ``MCP_CONFORMANCE_SCENARIO`` (and, for some
scenarios, data in ``MCP_CONFORMANCE_CONTEXT``), and judges what reaches the wire. Every
elicitation goes through ``toolnexus.elicitation_callback``, so the suite checks the bridge as a
host uses it, not a handler written for the test.

The protocol era comes from ``MCP_CONFORMANCE_PROTOCOL_VERSION`` (the suite's ``--spec-version``):
up to ``2025-11-25`` the initialize handshake, from ``2026-07-28`` the stateless protocol.

On success the last line on stdout is ``conformance client: done``; the test reads it, since the
suite's ``checks.json`` does not record how the client exited.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from mcp import Client
from mcp.client.client import ConnectMode

from toolnexus import Answer, Request, elicitation_callback

DONE = "conformance client: done"


def accept_without_typing(request: Request) -> Answer:
    """The resolver: a person who accepts every question without typing anything.

    For a form, what reaches the server is then the form's defaults (the bridge lays them in
    for the fields left empty); for a URL, the consent.
    """
    return Answer(request.id, True, {} if request.kind == "input" else None)


def mode_for(version: str | None) -> ConnectMode:
    if not version:
        return "auto"
    return "legacy" if version <= "2025-11-25" else version


def sample_arguments(input_schema: dict[str, Any]) -> dict[str, Any]:
    """A value of the right type for each required parameter of a tool."""
    samples = {"string": "x", "integer": 1, "number": 1.5, "boolean": True}
    properties = input_schema.get("properties") or {}
    return {
        name: samples.get(properties.get(name, {}).get("type"), "x")
        for name in input_schema.get("required") or []
    }


async def list_only(client: Client, context: dict[str, Any]) -> None:
    await client.list_tools()


async def call_first_tool(client: Client, context: dict[str, Any]) -> None:
    """``tools/list``, then the first tool with ``{a: 2, b: 3}`` (the suite's ``add_numbers``)."""
    tools = (await client.list_tools()).tools
    if tools:
        await client.call_tool(tools[0].name, {"a": 2, "b": 3})


async def call_every_tool(client: Client, context: dict[str, Any]) -> None:
    for tool in (await client.list_tools()).tools:
        await client.call_tool(tool.name, sample_arguments(tool.input_schema))


async def echo_schema(client: Client, context: dict[str, Any]) -> None:
    """Send the focal tool's input schema back verbatim, as the scenario asks."""
    tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    focal = tools["json_schema_2020_12_tool"]
    await client.call_tool("json_schema_echo", {"schema": focal.input_schema})


async def call_given_tools(client: Client, context: dict[str, Any]) -> None:
    """The tool calls the suite hands over in ``MCP_CONFORMANCE_CONTEXT``, as given."""
    await client.list_tools()
    for call in context["toolCalls"]:
        await client.call_tool(call["name"], call.get("arguments") or {})


async def use_everything(client: Client, context: dict[str, Any]) -> None:
    """Every tool, resource and prompt the server lists."""
    await call_every_tool(client, context)
    for resource in (await client.list_resources()).resources:
        await client.read_resource(str(resource.uri))
    for prompt in (await client.list_prompts()).prompts:
        await client.get_prompt(prompt.name, {})


SCENARIOS: dict[str, Callable[[Client, dict[str, Any]], Awaitable[None]]] = {
    "initialize": list_only,
    "tools_call": call_first_tool,
    "elicitation-sep1034-client-defaults": call_every_tool,
    "sse-retry": call_every_tool,
    "request-metadata": list_only,
    "sep-2322-client-request-state": call_every_tool,
    "http-standard-headers": use_everything,
    "http-custom-headers": call_given_tools,
    "http-invalid-tool-headers": call_every_tool,
    "json-schema-ref-no-deref": list_only,
    "json-schema-2020-12-preservation": echo_schema,
}
"""What the client does in each scenario the suite has that is not about auth."""


async def run(scenario: str, url: str, version: str | None, context: dict[str, Any]) -> None:
    callback = elicitation_callback(accept_without_typing)
    async with Client(url, elicitation_callback=callback, mode=mode_for(version)) as client:
        await SCENARIOS[scenario](client, context)


def main(argv: list[str]) -> int:
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    if len(argv) < 2 or scenario not in SCENARIOS:
        names = ", ".join(SCENARIOS)
        print(f"usage: MCP_CONFORMANCE_SCENARIO=<one of {names}> {argv[0]} URL", file=sys.stderr)
        return 2
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    anyio.run(run, scenario, argv[-1], os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION"), context)
    print(DONE, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
