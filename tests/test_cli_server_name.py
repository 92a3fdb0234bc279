"""The server's name the command shows in each question's header, on a connection pinned to
2026-07-28 (no handshake, so it is asked with ``server/discover``), against the SDK's own
MCPServer in process."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client, MCPError
from mcp.server.mcpserver import MCPServer
from mcp_types import INTERNAL_ERROR, REQUEST_TIMEOUT

from toolnexus.cli._connection import DISCOVER_ATTEMPTS, server_name

pytestmark = pytest.mark.anyio


def slow_at_first(client: Client, failures: int, code: int = REQUEST_TIMEOUT) -> list[int]:
    """The first ``failures`` probes fail with ``code`` (as the SDK's 10 s timeout does while
    a stdio server starts on a loaded machine); later ones reach the server."""
    real = client.session.send_discover
    calls: list[int] = []

    async def send_discover(version: str) -> dict[str, Any]:
        calls.append(len(calls))
        if len(calls) <= failures:
            raise MCPError(code=code, message="Request 'server/discover' timed out")
        return await real(version)

    client.session.send_discover = send_discover  # type: ignore[method-assign]
    return calls


async def test_the_name_is_asked_for_on_a_pinned_connection() -> None:
    async with Client(MCPServer("far-away"), mode="2026-07-28") as client:
        assert client.server_info is None
        assert await server_name(client) == "far-away"


async def test_a_probe_that_timed_out_is_sent_again() -> None:
    async with Client(MCPServer("slow-starter"), mode="2026-07-28") as client:
        calls = slow_at_first(client, DISCOVER_ATTEMPTS - 1)
        assert await server_name(client) == "slow-starter"
    assert len(calls) == DISCOVER_ATTEMPTS


async def test_the_name_is_given_up_after_the_last_attempt_or_another_error() -> None:
    async with Client(MCPServer("never"), mode="2026-07-28") as client:
        calls = slow_at_first(client, DISCOVER_ATTEMPTS)
        assert await server_name(client) is None
        assert len(calls) == DISCOVER_ATTEMPTS
        refused = slow_at_first(client, 1, INTERNAL_ERROR)
        assert await server_name(client) is None
        assert len(refused) == 1  # only a timeout is worth another probe
