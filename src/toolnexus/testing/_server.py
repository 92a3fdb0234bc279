"""The in-process ``MCPServer`` behind [`elicit_through_server`][toolnexus.testing.elicit_through_server].

Imports the SDK's server and client, so it is imported only when a test asks a question.
"""

from __future__ import annotations

import json
from typing import Any

from mcp import Client
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import (
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitRequestURLParams,
    ElicitResult,
    InputRequiredResult,
)

from ..mcp import WaitFor, elicitation_callback

__all__ = ["run_elicitation"]

_KEY = "question"
_ELICITATION_ID = "toolnexus-testing"


async def run_elicitation(
    resolver: WaitFor,
    schema: dict[str, Any] | None,
    url: str | None,
    message: str,
    era: str,
    options: dict[str, Any],
) -> ElicitResult | str:
    """Connect a client wired to ``resolver`` to a fresh server in ``era``; call its one tool.

    Returns the ``ElicitResult`` the server received, or what went wrong, for the caller to raise.
    """
    params: ElicitRequestFormParams | ElicitRequestURLParams
    if schema is not None:
        params = ElicitRequestFormParams(message=message, requested_schema=schema)
    else:
        assert url is not None
        params = ElicitRequestURLParams(message=message, url=url, elicitation_id=_ELICITATION_ID)
    received: list[ElicitResult] = []
    server = MCPServer("toolnexus-testing")

    @server.tool()
    async def ask(ctx: Context) -> str | InputRequiredResult:
        """Ask the one question, in the era the client negotiated."""
        if era == "2026-07-28":
            responses = ctx.input_responses or {}
            if _KEY not in responses:
                return InputRequiredResult(input_requests={_KEY: ElicitRequest(params=params)})
            raw = responses[_KEY].model_dump(mode="json", by_alias=True, exclude_none=True)
            received.append(ElicitResult.model_validate(raw))
        elif isinstance(params, ElicitRequestFormParams):
            received.append(await ctx.session.elicit_form(message, params.requested_schema, ctx.request_id))
        else:
            received.append(
                await ctx.session.elicit_url(message, params.url, params.elicitation_id, ctx.request_id)
            )
        return "asked"

    callback = elicitation_callback(resolver, **options)
    mode = "legacy" if era == "2025-11-25" else era
    async with Client(server, elicitation_callback=callback, mode=mode) as client:
        if client.protocol_version != era:  # pragma: no cover - the SDK changed its negotiation
            return f"the client negotiated {client.protocol_version}, not {era}"
        result = await client.call_tool("ask", {})
    if result.is_error or len(received) != 1:
        text = " ".join(getattr(item, "text", "") for item in result.content)
        return f"the test server's question failed: {json.dumps(text)}"
    return received[0]
