"""The line a task's progress makes on stderr (toolnexus.cli._tasks.TaskProgress), on a clock
the tests move: at a terminal and into a pipe."""

from __future__ import annotations

import io

from toolnexus.cli._tasks import PIPE_EVERY, TaskProgress
from toolnexus.tasks import TaskStatus


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def status(state: str, message: str | None = None, elapsed: float = 0.0) -> TaskStatus:
    return TaskStatus("report", "t1", state, message, elapsed)  # type: ignore[arg-type]


def test_into_a_pipe_status_changes_at_once_and_messages_at_most_one_each_period() -> None:
    out, clock = io.StringIO(), Clock()
    progress = TaskProgress(out, terminal=False, clock=clock)
    progress(status("working"))
    for n in range(1, 40):  # a message a second, for 39 s
        clock.now += 1
        progress(status("working", f"{n} of 39", elapsed=n))
    progress(status("input_required", elapsed=40))
    progress(status("completed", "done", elapsed=75))
    progress.tick()  # nothing is redrawn into a pipe
    assert out.getvalue().splitlines() == [
        "toolnexus: task report: working (0 s)",
        f"toolnexus: task report: working: {int(PIPE_EVERY)} of 39 ({int(PIPE_EVERY)} s)",
        "toolnexus: task report: input required (40 s)",
        "toolnexus: task report: completed: done (1 min 15 s)",
    ]


def test_at_a_terminal_one_line_is_redrawn_while_working_and_taken_down_after() -> None:
    out, clock = io.StringIO(), Clock()
    progress = TaskProgress(out, terminal=True, clock=clock)
    progress(status("working", "rendering"))
    clock.now += 61
    progress.tick()
    progress(status("input_required"))  # a question comes: the line goes first
    progress.tick()  # nothing shown: nothing redrawn
    assert out.getvalue() == (
        "\r\x1b[Ktoolnexus: task report: working: rendering (0 s)"
        "\r\x1b[Ktoolnexus: task report: working: rendering (1 min 01 s)"
        "\r\x1b[K"
    )


def test_a_servers_message_is_one_escaped_line_and_cut_to_the_width() -> None:
    out = io.StringIO()
    progress = TaskProgress(out, terminal=True, clock=Clock())
    progress(status("working", "evil\x1b[2J\nsecond line " + "x" * 500, elapsed=7200))
    line = out.getvalue()
    assert line.count("\x1b") == 1  # the line's own clearing code only
    assert "\n" not in line
    assert len(line) <= len("\r\x1b[K") + 100


def test_a_closed_stderr_does_not_fail_the_call() -> None:
    out = io.StringIO()
    out.close()
    TaskProgress(out, terminal=False)(status("working"))  # no exception
