"""A task's progress on standard error, while a call runs as a task (MCP 2026-07-28's tasks
extension, which the commands that call tools declare).

At a terminal, one line rewritten in place while the task works: its tool, its status
message and the time elapsed, taken down before a question is asked and when the call ends.
Into a pipe or a file, plain lines: one when the status changes, and for a new status
message at most one every :data:`PIPE_EVERY` seconds.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, TextIO

from .._time import span
from ._output import one_line

if TYPE_CHECKING:
    from ..tasks import TasksExtension, TaskStatus

__all__ = ["PIPE_EVERY", "TaskProgress"]

PIPE_EVERY = 20.0
"""Seconds between two lines of a task's status messages into a pipe (its status changes are
each said at once)."""
_WIDTH = 100  # the longest line shown at a terminal


class TaskProgress:
    """The status callback of the commands' ``TasksExtension``, and its line."""

    def __init__(
        self, stream: TextIO, *, terminal: bool, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._stream = stream
        self._terminal = terminal
        self._clock = clock
        self._shown: TaskStatus | None = None  # the status on the terminal's line
        self._since = 0.0  # when that status came (by our clock), for the time elapsed
        self._said: tuple[str, str] | None = None  # the last line written into a pipe: task, status
        self._said_at = -PIPE_EVERY

    def extension(self) -> TasksExtension:
        from ..tasks import TasksExtension

        return TasksExtension(on_status=self)

    def __call__(self, status: TaskStatus) -> None:
        if self._terminal:
            if status.status == "working":
                self._shown, self._since = status, self._clock() - status.elapsed
                self._draw()
            else:
                self.clear()  # a question comes, or the task ended: the line goes
            return
        now = self._clock()
        changed = self._said != (status.task_id, status.status)
        if changed or now - self._said_at >= PIPE_EVERY:
            self._said, self._said_at = (status.task_id, status.status), now
            self._write(self._text(status, status.elapsed) + "\n")

    def tick(self) -> None:
        """Redraw the terminal's line with the time elapsed now (every second, while shown)."""
        if self._terminal and self._shown is not None:
            self._draw()

    def clear(self) -> None:
        if self._shown is not None:
            self._shown = None
            self._write("\r\x1b[K")

    def _draw(self) -> None:
        assert self._shown is not None
        self._write("\r\x1b[K" + self._text(self._shown, self._clock() - self._since)[:_WIDTH])

    @staticmethod
    def _text(status: TaskStatus, elapsed: float) -> str:
        said = f"toolnexus: task {one_line(status.tool)}: {status.status.replace('_', ' ')}"
        if status.message:
            said += f": {one_line(status.message)[:_WIDTH]}"
        return f"{said} ({span(elapsed, to_the_second=True)})"

    def _write(self, text: str) -> None:
        try:
            self._stream.write(text)
            self._stream.flush()
        except (OSError, ValueError):  # stderr closed: the progress is not worth failing for
            pass
