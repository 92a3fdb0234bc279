"""An MCPServer that asks whatever ``requestedSchema`` a test gives it, in either era.

The SDK's ``ctx.elicit`` builds the schema from a pydantic model, and a hostile server is
not so polite: this one sends the schema exactly as given. The tool ``ask(name)`` asks the
schema registered under ``name`` (``elicitation/create`` mid-call up to 2025-11-25, an
``InputRequiredResult`` round from 2026-07-28 on) and returns, as JSON, the result the
server received: ``{"action", "content"}``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import ElicitRequest, ElicitRequestFormParams, InputRequiredResult
from mcp_types.version import is_version_at_least

__all__ = ["build_raw_server"]

_KEY = "form"


def build_raw_server(schemas: Mapping[str, dict[str, Any]], name: str = "raw-form-server") -> MCPServer:
    server = MCPServer(name)

    @server.tool()
    async def ask(schema: str, ctx: Context) -> str | InputRequiredResult:
        """Ask the registered schema called ``schema`` and report what came back."""
        params = ElicitRequestFormParams(message=f"Fill in {schema}", requested_schema=schemas[schema])
        if ctx.protocol_version is not None and is_version_at_least(ctx.protocol_version, "2026-07-28"):
            if not ctx.input_responses or _KEY not in ctx.input_responses:
                return InputRequiredResult(input_requests={_KEY: ElicitRequest(params=params)})
            raw = ctx.input_responses[_KEY].model_dump(mode="json", by_alias=True, exclude_none=True)
        else:
            result = await ctx.session.elicit_form(
                params.message, params.requested_schema, related_request_id=ctx.request_id
            )
            raw = result.model_dump(mode="json", by_alias=True, exclude_none=True)
        return json.dumps({"action": raw.get("action"), "content": raw.get("content")})

    return server
