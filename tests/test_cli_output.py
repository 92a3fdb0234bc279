"""The command's logging (``toolnexus.cli._output``): one line each on stderr, the records of
a connection's end shown with ``-v`` only."""

from __future__ import annotations

import contextlib
import logging

import pytest

from toolnexus.cli._output import Output, configure_logging


def said(verbose: int, capsys: pytest.CaptureFixture[str], log: logging.Logger, *args: object) -> str:
    with contextlib.ExitStack() as stack:
        configure_logging(verbose, Output(stack), stack)
        log.warning(*args)
    return capsys.readouterr().err


def test_a_server_reaped_after_the_loop_closed_shows_with_v_only(capsys: pytest.CaptureFixture[str]) -> None:
    # What asyncio's child watcher logs when the command's Ctrl-C stopped the server and a
    # loaded machine reaped it after the client's loop had closed: not the user's concern.
    late = ("Loop %r that handles pid %r is closed", "<_UnixSelectorEventLoop closed=True>", 4242)
    asyncio_log = logging.getLogger("asyncio")
    assert said(0, capsys, asyncio_log, *late) == ""
    assert said(1, capsys, asyncio_log, *late) == (
        "toolnexus: warning: Loop '<_UnixSelectorEventLoop closed=True>' that handles pid 4242 is closed\n"
    )
    # asyncio's other warnings are shown as they were.
    assert said(0, capsys, asyncio_log, "Executing %s took %.3f seconds", "<Task>", 0.5) == (
        "toolnexus: warning: Executing <Task> took 0.500 seconds\n"
    )


def test_transport_records_are_shown_with_v_only(capsys: pytest.CaptureFixture[str]) -> None:
    stdio = logging.getLogger("mcp.client.stdio")
    assert said(0, capsys, stdio, "MCP server process %d is still alive", 7) == ""
    assert said(1, capsys, stdio, "MCP server process %d is still alive", 7) == (
        "toolnexus: warning: MCP server process 7 is still alive\n"
    )
    assert said(0, capsys, logging.getLogger("toolnexus.worker"), "the store failed") == (
        "toolnexus: warning: the store failed\n"
    )
