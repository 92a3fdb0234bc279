"""The command's hold on a stdio server's stderr during the protocol probe
(``cli._connection._StderrGate``): an ``mcp`` 1.x server's validation dump of the refused
``server/discover`` is left out, however late the thread that reads the pipe runs, and
everything else reaches our stderr in order."""

from __future__ import annotations

import contextlib
import logging
import threading
import time

import pytest

from toolnexus.cli import _connection

DUMP = "Failed to validate request: 31 validation errors for ClientRequest\nPingRequest.method\n" * 40


def test_a_dump_written_just_before_the_release_is_left_out(
    capfd: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    # The server writes its dump, then answers; the command releases as soon as the answer
    # is read. Here the release follows the write at once, before the reading thread ran:
    # the dump must still be seen, and held back.
    for _ in range(50):
        gate = _connection._StderrGate()
        gate.errlog.write(DUMP)
        gate.errlog.flush()
        with caplog.at_level(logging.WARNING):
            gate.release(refused_probe=True)
        gate.errlog.write("after the handshake\n")
        gate.close()
        err = capfd.readouterr().err
        assert "validation error" not in err
        assert err == "after the handshake\n"
    assert "refused the protocol probe" in caplog.text


def test_without_a_refusal_what_was_held_comes_first_then_the_rest(capfd: pytest.CaptureFixture[str]) -> None:
    gate = _connection._StderrGate()
    gate.errlog.write("starting\n")
    gate.errlog.flush()
    gate.release(refused_probe=False)
    gate.release(refused_probe=False)  # a second release changes nothing
    gate.errlog.write("serving\n")
    gate.close()
    assert capfd.readouterr().err == "starting\nserving\n"


def test_a_server_that_floods_its_stderr_is_held_to_the_limit_and_released_at_once(
    capfd: pytest.CaptureFixture[str],
) -> None:
    gate = _connection._StderrGate()
    stop = threading.Event()
    line = "x" * 1023 + "\n"

    def flood() -> None:
        with contextlib.suppress(OSError):
            while not stop.is_set():
                gate.errlog.write(line * 64)
                gate.errlog.flush()

    writer = threading.Thread(target=flood, daemon=True)
    writer.start()
    try:
        time.sleep(0.5)  # megabytes written while held
        started = time.monotonic()
        gate.release(refused_probe=False)  # bounded reads: not stuck behind the writer
        assert time.monotonic() - started < 5
    finally:
        stop.set()
        writer.join(timeout=10)
        gate.close()
    err = capfd.readouterr().err
    assert len(err) >= _connection._StderrGate.HELD_LIMIT  # what was held, then what followed
    assert set(err) == {"x", "\n"}
