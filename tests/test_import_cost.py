"""Importing toolnexus, or the command's entry point ``toolnexus.cli``, loads nothing of the SDK
(each name is loaded when first used); ``toolnexus.mcp`` loads the SDK's wire types, never its
transport stack, jsonschema or FastMCP (only ``toolnexus.fastmcp`` imports FastMCP)."""

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


@pytest.mark.parametrize("module", ["toolnexus", "toolnexus.cli"])
def test_the_package_and_the_commands_entry_point_load_nothing_of_the_sdk(
    module: str, processes: Processes
) -> None:
    # So that the command can treat a Ctrl-C while the SDK loads as any other interruption
    # (tests/test_cli_edges.py), and a host pays for what it uses.
    code = PROBE.format(module=module, heavy=[*HEAVY, "mcp", "mcp_types", "pydantic"])
    out = processes.python(code, check=True).stdout
    assert json.loads(out) == []


def test_the_commands_package_exposes_its_entry_point_alone() -> None:
    import toolnexus.cli

    assert toolnexus.cli.__all__ == ["main"]


@pytest.mark.parametrize("module", ["toolnexus", "toolnexus.cli"])
def test_every_public_name_is_there_when_used(module: str) -> None:
    import importlib

    imported = importlib.import_module(module)
    for name in imported.__all__:
        assert getattr(imported, name) is not None, name
    assert set(imported.__all__) <= set(dir(imported))
    with pytest.raises(AttributeError, match=f"module '{module}' has no attribute 'nope'"):
        imported.nope  # noqa: B018 - the lookup is the test


def test_a_name_loaded_when_used_is_its_homes_own() -> None:
    import toolnexus
    from toolnexus._wire import Answer
    from toolnexus.mcp import elicitation_callback

    assert toolnexus.Answer is Answer
    assert toolnexus.elicitation_callback is elicitation_callback
