"""Importing toolnexus loads the SDK's wire types, never its transport stack, jsonschema or
FastMCP (only ``toolnexus.fastmcp`` imports FastMCP)."""

from __future__ import annotations

import json

import pytest

from support.processes import Processes

HEAVY = [
    "mcp.client",
    "mcp.server",
    "mcp.shared",
    "starlette",
    "uvicorn",
    "httpx2",
    "jsonschema",
    "anyio",
    "fastmcp",
    "pydantic_ai",
]

PROBE = """
import json, sys
import {module}
loaded = sorted({{h for h in {heavy!r} for name in sys.modules if name == h or name.startswith(h + ".")}})
print(json.dumps(loaded))
"""


@pytest.mark.parametrize("module", ["toolnexus", "toolnexus.mcp", "toolnexus.mcp, toolnexus"])
def test_import_loads_no_transport_and_no_jsonschema(module: str, processes: Processes) -> None:
    code = PROBE.format(module=module, heavy=HEAVY)
    out = processes.python(code, check=True).stdout
    assert json.loads(out) == []


def test_the_probe_sees_heavy_modules_when_they_are_loaded(processes: Processes) -> None:
    # The probe itself must be able to fail: importing the SDK's client does load them.
    code = PROBE.format(module="mcp.client", heavy=HEAVY)
    out = processes.python(code, check=True).stdout
    assert "mcp.client" in json.loads(out)
