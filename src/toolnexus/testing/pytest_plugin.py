"""toolnexus's pytest plugin, registered as ``toolnexus`` (the ``pytest11`` entry point).

It provides one fixture, ``elicit_server``. Loading the plugin imports only this module and
the wire values; the SDK's server and client are imported when a test asks a question.
Turn it off with ``-p no:toolnexus``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest

__all__ = ["elicit_server"]


@pytest.fixture
def elicit_server() -> Callable[..., Awaitable[Any]]:
    """Ask a resolver a question through a real in-process ``MCPServer``, in a protocol era.

    The fixture is [`elicit_through_server`][toolnexus.testing.elicit_through_server]: call it
    with the resolver and ``schema=`` (a JSON schema or a pydantic model) or ``url=``, and
    ``era="2025-11-25"`` or ``"2026-07-28"``; await the ``ElicitResult`` the server received.

        @pytest.mark.anyio
        async def test_accepts(elicit_server):
            result = await elicit_server(my_resolver, schema=Deploy, era="2026-07-28")
            assert result.action == "accept"
    """
    from . import elicit_through_server

    return elicit_through_server
