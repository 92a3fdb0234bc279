"""A server on the MCP 1.x Python SDK (``mcp<2``), the one most deployed servers still use.

Run by ``tests/test_mcp1_server.py`` in a virtual environment of its own (``mcp<2`` cannot
share ours). Its ``contact`` tool asks with ``ctx.elicit(message, Contact)``, and the SDK 1.x
writes each optional field the way pydantic does, ``anyOf: [T, {type: null}]``; it reports
the action and the content it received, as JSON.
"""

from __future__ import annotations

import json

from mcp.server.fastmcp import Context, FastMCP
from pydantic import BaseModel, Field


class Contact(BaseModel):
    email: str = Field(description="Where we write to you")
    nickname: str | None = Field(default=None, description="What we call you")
    age: int | None = Field(default=None, ge=0)
    newsletter: bool = False


server = FastMCP("mcp1-server")


@server.tool()
async def contact(ctx: Context) -> str:
    """Ask for a contact, report what came back."""
    result = await ctx.elicit("Who are you?", Contact)
    content = result.data.model_dump() if result.action == "accept" else None
    return json.dumps({"action": result.action, "content": content})


if __name__ == "__main__":
    server.run("stdio")
