"""``toolnexus tools (--stdio "CMD ARGS" | --url URL)``: a server's tools, with what each
does and the arguments it takes, so a user can find what to ``call``."""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import TYPE_CHECKING, Any

from .._util import escape_text
from ._base import EXIT_OK, EXIT_TOOL_ERROR, CliError, Command, Context
from ._connection import add_connection_options, connection_closed, run_connected, server_from
from ._interactive import add_output_options
from ._output import reason
from ._results import json_text

if TYPE_CHECKING:
    from mcp import Client
    from mcp_types import Tool

__all__ = ["COMMAND", "MAX_PAGES", "describe"]

MAX_PAGES = 100
"""Pages of ``tools/list`` read at most (a server that never stops paging is cut off there)."""


def _arguments(parser: argparse.ArgumentParser) -> None:
    add_connection_options(parser)
    add_output_options(parser)


def _type_of(spec: Any) -> str:
    if not isinstance(spec, dict):
        return "any"
    kind = spec.get("type")
    if isinstance(kind, list):
        return " or ".join(str(k) for k in kind)
    if isinstance(kind, str):
        if kind == "array" and isinstance(spec.get("items"), dict):
            return f"array of {_type_of(spec['items'])}"
        return kind
    if isinstance(spec.get("enum"), list):
        return "one of " + ", ".join(json.dumps(v, ensure_ascii=False) for v in spec["enum"][:20])
    for union in ("anyOf", "oneOf"):
        if isinstance(spec.get(union), list):
            return " or ".join(_type_of(member) for member in spec[union][:10])
    return "any"


def describe(tool: Tool) -> str:
    """A tool as text: its name, its description, and one line per argument (its type,
    whether it is required, its default, its description). The one-line items are escaped
    here (a line break in a name would fake the next entry); the description is left for
    the writer, which escapes it at a terminal."""
    title = f" ({escape_text(tool.title)})" if tool.title and tool.title != tool.name else ""
    lines = [escape_text(tool.name) + title]
    if tool.description:
        lines += ["  " + line for line in tool.description.strip().splitlines()]
    schema = tool.input_schema if isinstance(tool.input_schema, dict) else {}
    properties = schema.get("properties")
    listed = schema.get("required")
    required: list[Any] = listed if isinstance(listed, list) else []
    if isinstance(properties, dict) and properties:
        lines.append("  arguments:")
        for name, spec in properties.items():
            line = f"    {escape_text(str(name))}: {escape_text(_type_of(spec))}"
            if name in required:
                line += ", required"
            if isinstance(spec, dict) and "default" in spec:
                line += f", default {escape_text(json.dumps(spec['default'], ensure_ascii=False))}"
            if isinstance(spec, dict) and isinstance(spec.get("description"), str):
                line += f": {escape_text(' '.join(spec['description'].split()))}"
            lines.append(line)
    else:
        lines.append("  arguments: none")
    support = getattr(tool.execution, "task_support", None) if tool.execution is not None else None
    if support in ("optional", "required"):  # 2025-11-25's execution.taskSupport
        lines.append(f"  runs as a task: {support}")
    return "\n".join(lines)


def _run(args: argparse.Namespace, context: Context) -> int:
    server = server_from(args, context.stack)
    output = context.output

    async def body(client: Client) -> int:
        from mcp import MCPError

        tools: list[Tool] = []
        cursor: str | None = None
        try:
            for _ in range(MAX_PAGES):
                page = await client.list_tools(cursor=cursor)
                tools.extend(page.tools)
                cursor = page.next_cursor
                if cursor is None:
                    break
        except MCPError as err:
            if connection_closed(err):
                raise
            raise CliError(EXIT_TOOL_ERROR, f"the server would not list its tools: {reason(err)}") from None
        if args.json:
            listed = [tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in tools]
            output.result(json_text(listed))
        elif tools:
            output.result("\n\n".join(describe(tool) for tool in tools))
        else:
            output.error(f"{server.label} has no tools")
        return EXIT_OK

    from ..tasks import TasksExtension

    # The capabilities `call` declares (form and URL elicitation, tasks): a server may list a
    # tool only to a client that can answer it.
    return asyncio.run(
        run_connected(
            server,
            body,
            protocol=args.protocol,
            connect_timeout=args.connect_timeout,
            elicitation_callback=_never_asked,
            extensions=[TasksExtension()],
        )
    )


async def _never_asked(context: Any, params: Any) -> Any:
    """The elicitation callback of a listing, which asks nothing: a question is cancelled."""
    from mcp_types import ElicitResult

    return ElicitResult(action="cancel")


COMMAND = Command(
    name="tools",
    help="list a server's tools, with their descriptions and arguments",
    description="Connect to an MCP server and list its tools: each one's name, description and "
    "arguments (type, required, default, description), and whether it runs as a task. With --json, "
    "the tools as the server "
    "describes them (name, description, inputSchema).",
    arguments=_arguments,
    run=_run,
)
