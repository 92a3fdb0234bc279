"""A server on FastMCP 4 (the ``fastmcp`` package's server side), which nobody here wrote.

Run by ``tests/test_fastmcp.py`` over stdio, in a virtual environment of its own: the project's
``fastmcp`` extra is FastMCP's client only (``fastmcp-slim[client]``), and its server side
needs packages the project does not install. Its tools ask the 2025-11-25 way, in the middle
of the call, with FastMCP's ``ctx.elicit`` (refused on a 2026-07-28 connection: connect with
``mode="legacy"``), and report what came back as JSON ``{"action", "content"}``:

- ``deploy(service)``: ``ctx.elicit(f"Deploy {service}?", Approval)``, a pydantic model (an
  enum, a bounded integer, a boolean); ``content`` is the model FastMCP built, dumped.
- ``nickname()``: ``ctx.elicit("What should we call you?", str)``, a scalar, which FastMCP
  asks as a form of one field, ``value``, and hands the tool unwrapped.
"""

from __future__ import annotations

import json
from typing import Literal

from fastmcp import Context, FastMCP
from pydantic import BaseModel, Field

NAME = "fastmcp-server"


class Approval(BaseModel):
    environment: Literal["staging", "production"] = Field(description="Where to deploy")
    replicas: int = Field(ge=1, le=10, description="How many copies to run")
    confirm: bool = Field(description="Go ahead")


server = FastMCP(NAME)


@server.tool
async def deploy(service: str, ctx: Context) -> str:
    """Ask for the approval of a deployment, report what came back."""
    result = await ctx.elicit(f"Deploy {service}?", Approval)
    content = result.data.model_dump() if result.action == "accept" else None
    return json.dumps({"action": result.action, "content": content})


@server.tool
async def nickname(ctx: Context) -> str:
    """Ask for a name (a scalar), report what came back."""
    result = await ctx.elicit("What should we call you?", str)
    content = result.data if result.action == "accept" else None
    return json.dumps({"action": result.action, "content": content})


if __name__ == "__main__":
    server.run("stdio", show_banner=False, log_level="WARNING")  # no startup chatter
