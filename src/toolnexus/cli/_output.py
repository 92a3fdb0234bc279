"""The one output writer of the command, and its logging.

Where things go:

- the result (a tool's, a listing) goes to stdout: escaped (control, bidi and zero-width
  characters written as escapes) when stdout is a terminal, as it came to a pipe or a file,
  so that ``toolnexus call ... | jq`` gets the server's bytes;
- the dialogue (questions, prompts, notices, a walk-through's results) shares stdout when it
  is a terminal; else it goes to the terminal (``/dev/tty``) or, without one, to stderr;
  always escaped;
- failures, reports and log records are one line each on stderr, ``toolnexus: ...``,
  always escaped. While a question is shown at a terminal, log lines wait until it is
  answered, so that none lands inside the prompt line.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
import warnings
from collections.abc import Iterator
from typing import TextIO

from .._util import escape_text, innermost

__all__ = ["HELD_LINES_LIMIT", "Output", "configure_logging", "isatty", "one_line", "reason"]

HELD_LINES_LIMIT = 200
"""Log lines kept while a question is shown; past it they are counted, not kept."""
WRITE_PIECE = 65536
"""Characters of the result written (and flushed) at a time."""


def isatty(stream: TextIO) -> bool:
    """Whether ``stream`` is a terminal (a closed or odd stream is not)."""
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def one_line(text: str) -> str:
    """Text (a server's, often) as one escaped line: line breaks escaped too."""
    return escape_text(text)


def reason(err: BaseException) -> str:
    """The innermost, most specific cause of a failure, as one escaped line."""
    err = innermost(err)
    while err.__cause__ is not None and not str(err).strip():
        err = err.__cause__
    text = " ".join(str(err).split())
    name = type(err).__name__
    return one_line(f"{name}: {text}" if text else name)


class Output:
    """Where the result, the dialogue and the one-line reports go (see the module's text)."""

    def __init__(self, stack: contextlib.ExitStack) -> None:
        self.result_stream: TextIO = sys.stdout
        self.result_is_terminal = isatty(sys.stdout)
        self.dialogue: TextIO = sys.stdout if self.result_is_terminal else self._terminal(stack)
        # While a question is shown on the terminal stderr also writes to, log lines wait.
        self._hold = isatty(sys.stderr)
        self._lock = threading.Lock()
        self._asking = 0
        self._held: list[str] = []
        self._dropped = 0

    @staticmethod
    def _terminal(stack: contextlib.ExitStack) -> TextIO:
        if os.name == "posix":
            try:
                tty = open("/dev/tty", "w", encoding="utf-8", errors="replace")  # noqa: SIM115
            except OSError:  # no controlling terminal
                pass
            else:
                stack.callback(tty.close)
                return tty
        return sys.stderr

    def result(self, text: str) -> None:
        """Server text (or a listing of it) on stdout: escaped at a terminal, as it came to a
        pipe or a file; a line break is added when it has none."""
        if self.result_is_terminal:
            text = escape_text(text, lines=True)
        text += "\n" if text and not text.endswith("\n") else ""
        # In pieces, each flushed: one large write into a pipe whose reader has gone can end
        # short without an error; the next piece then fails, as it should (BrokenPipeError).
        for start in range(0, len(text), WRITE_PIECE):
            self.result_stream.write(text[start : start + WRITE_PIECE])
            self.result_stream.flush()

    def say(self, text: str = "") -> None:
        """A line of the dialogue (a notice, a walk-through's result), escaped."""
        self.dialogue.write(escape_text(text, lines=True) + "\n")
        self.dialogue.flush()

    def error(self, message: str) -> None:
        """``toolnexus: <message>`` on stderr, as one escaped line."""
        self._stderr(f"toolnexus: {escape_text(message)}")

    def log_line(self, line: str) -> None:
        """A log record's line (already one escaped line): held while a question is shown."""
        with self._lock:
            if self._asking and self._hold:
                if len(self._held) < HELD_LINES_LIMIT:
                    self._held.append(line)
                else:
                    self._dropped += 1
                return
        self._stderr(line)

    def _stderr(self, line: str) -> None:
        try:
            sys.stderr.write(line + "\n")
            sys.stderr.flush()
        except (OSError, ValueError):  # stderr closed: nowhere left to say it
            pass

    @contextlib.contextmanager
    def question(self) -> Iterator[None]:
        """While inside, a question is on screen: log lines wait, and are written after it."""
        with self._lock:
            self._asking += 1
        try:
            yield
        finally:
            with self._lock:
                self._asking -= 1
                held, self._held = (self._held, []) if not self._asking else ([], self._held)
                dropped, self._dropped = (self._dropped, 0) if not self._asking else (0, self._dropped)
            for line in held:
                self._stderr(line)
            if dropped:
                self._stderr(f"toolnexus: warning: {dropped} more log lines were left out")


class _OneLineFormatter(logging.Formatter):
    """``toolnexus: warning: <message>``: one line, escaped, no traceback."""

    def format(self, record: logging.LogRecord) -> str:
        try:
            text = record.getMessage()
        except Exception:  # a library's broken format string must not break the command
            text = str(record.msg)
        if record.exc_info and record.exc_info[1] is not None:
            text += f" ({type(record.exc_info[1]).__name__})"
        return f"toolnexus: {record.levelname.lower()}: {escape_text(' '.join(text.split()))}"


class _OutputHandler(logging.Handler):
    def __init__(self, output: Output) -> None:
        super().__init__()
        self.output = output

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.output.log_line(self.format(record))
        except Exception:
            self.handleError(record)


TRANSPORT_LOGGERS = ("mcp.client.streamable_http", "mcp.client.stdio", "mcp.shared", "httpx", "httpcore")
"""Loggers whose records tell how a connection ended, which the command says itself in its
own line: shown with ``-v`` only."""


SERVER_REAPED_LATE = "Loop %r that handles pid %r is closed"
"""asyncio's record (its child watcher's) of a server process that ended after the client's
event loop did: the command stopped the server on its way out (Ctrl-C, a lost connection)
and a loaded machine reaped it a moment late. Shown with ``-v`` only, as the transports'
records are."""


class _QuietTransports(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if record.name == "asyncio" and record.msg == SERVER_REAPED_LATE:
            return False
        return not any(
            record.name == name or record.name.startswith(name + ".") for name in TRANSPORT_LOGGERS
        )


def configure_logging(verbose: int, output: Output, stack: contextlib.ExitStack) -> None:
    """Warnings (and, with ``-v``, info; ``-vv``, debug) as one formatted line each on
    stderr, through ``output``. A Python warning (a library's deprecation) is one line,
    ``toolnexus: warning: Category: message``, never its source line. The transports' own
    records of a failing connection show with ``-v`` only: the command says how a
    connection ended in a line of its own. A failing thread is one line too."""
    root = logging.getLogger()
    handler = _OutputHandler(output)
    handler.setFormatter(_OneLineFormatter())
    if verbose <= 0:
        handler.addFilter(_QuietTransports())
    saved_level = root.level
    root.addHandler(handler)
    root.setLevel(logging.WARNING if verbose <= 0 else logging.INFO if verbose == 1 else logging.DEBUG)
    saved_show = warnings.showwarning
    saved_hook = threading.excepthook

    def show_warning(
        message: Warning | str,
        category: type[Warning],
        filename: str,
        lineno: int,
        file: TextIO | None = None,
        line: str | None = None,
    ) -> None:
        logging.getLogger("py.warnings").warning("%s: %s", category.__name__, message)

    def thread_failed(failure: threading.ExceptHookArgs) -> None:  # one line, not a traceback
        if failure.exc_value is not None and not isinstance(failure.exc_value, SystemExit):
            logging.getLogger(__name__).error("a thread failed: %s", reason(failure.exc_value))

    warnings.showwarning = show_warning
    threading.excepthook = thread_failed

    def restore() -> None:
        threading.excepthook = saved_hook
        warnings.showwarning = saved_show
        root.removeHandler(handler)
        root.setLevel(saved_level)

    stack.callback(restore)
