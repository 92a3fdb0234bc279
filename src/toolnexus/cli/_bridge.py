"""The main-thread bridge: the MCP client runs its event loop in a second thread while the
questions are answered in the main one.

A blocking ``input()`` in the main thread has line editing, and Ctrl-C (a SIGINT, which
Python delivers to the main thread) cancels the question on screen instead of killing the
client. When the client's work ends while a question is shown (the connection was lost),
the question is withdrawn: a signal (``SIGUSR1``) interrupts the main thread's read.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import queue
import signal
import threading
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

from .._wire import Request
from ._base import EXIT_CONNECTION, EXIT_INTERRUPTED, CliError
from ._output import Output

__all__ = ["ENDED", "Bridge", "Withdrawn", "run_answering_here"]

Work = Callable[["Bridge"], Awaitable[int]]


ENDED = "withdrawn: the connection ended"
"""Why a question on screen is taken down when the client's work ends under it."""


class Withdrawn(BaseException):
    """Raised in the main thread (by a signal) when the question it shows is no longer wanted:
    the connection ended, or another answerer was first (``reason`` says which).

    A BaseException, so that the resolver's own ``except Exception`` lets it through."""

    def __init__(self, reason: str = ENDED) -> None:
        super().__init__(reason)
        self.reason = reason


class Bridge:
    """Hands each Request from the event loop's thread to the main thread and back.

    Awaitable resolver for the loop's side (``await bridge(request)``); :meth:`serve` runs
    on the main thread's side.
    """

    def __init__(
        self, wait_for: Callable[[Request], Any], quit_requested: Callable[[], bool], output: Output
    ) -> None:
        self._wait_for = wait_for
        self._quit_requested = quit_requested
        self._output = output
        # None: the client is done, stop serving.
        self._queue: queue.Queue[tuple[Request, concurrent.futures.Future[Any]] | None] = queue.Queue()
        self.asking = threading.Event()
        """Set while the main thread shows a question."""
        self.showing: str | None = None
        """The id of the request the main thread shows, while it shows one."""
        self.withdrawn = False
        self.interrupt: Callable[[str], None] | None = None
        """Takes the question on screen down with a reason (set by ``run_answering_here``)."""
        self.end_call: Callable[[], None] | None = None
        """Set (in the client's thread) while a tool is called: ends that call alone, so that
        the connection stays up for what ending it sends (a task's ``tasks/cancel``)."""

    async def __call__(self, request: Request) -> Any:
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self._queue.put((request, future))
        return await asyncio.wrap_future(future)

    def finish(self) -> None:
        self._queue.put(None)

    def withdraw(self, request_id: str, reason: str) -> None:
        """The question ``request_id`` is no longer wanted (``first_answer``: another
        answerer was first): taken down from the screen with one line saying ``reason``
        when it is shown; one still waiting its turn is dropped by its cancellation."""
        if self.showing == request_id and self.interrupt is not None:
            self.interrupt(reason)

    def serve(self) -> bool:
        """Answer requests in this (the main) thread until :meth:`finish` (``True``) or
        until the user asks to quit (``False``). A closed stdout stops it too
        (:class:`BrokenPipeError`): no question can be shown. :class:`Withdrawn` with
        [`ENDED`][toolnexus.cli._bridge.ENDED] (the client ended while a question was shown)
        ends it too, as finished; another reason (answered elsewhere) takes the question
        down with one line, and the next question is asked."""
        while True:
            try:
                item = self._queue.get()
                if item is None:
                    return True
                request, future = item
                if not future.set_running_or_notify_cancel():
                    continue
                self.showing = request.id
                self.asking.set()
                try:
                    with self._output.question():
                        future.set_result(self._wait_for(request))
                except BrokenPipeError:
                    raise  # the caller stops the client, which drops the pending question
                except Exception as err:
                    future.set_exception(err)
                finally:
                    self.asking.clear()
                    self.showing = None
                if self._quit_requested():
                    return False
            except Withdrawn as withdrawn:
                if withdrawn.reason == ENDED:
                    self.withdrawn = True
                    return True
                self._output.say()
                self._output.say(f"(question {withdrawn.reason})")


WITHDRAW_SIGNAL: int | None = getattr(signal, "SIGUSR1", None)


@contextlib.contextmanager
def _withdrawal(armed: threading.Event, reasons: list[str]) -> Iterator[None]:
    """While inside, the withdraw signal raises :class:`Withdrawn` in the main thread when
    ``armed`` is set (and is ignored otherwise), with the last of ``reasons``."""
    if WITHDRAW_SIGNAL is None or threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: object) -> None:
        if armed.is_set():
            armed.clear()
            raise Withdrawn(reasons[-1] if reasons else ENDED)

    previous = signal.signal(WITHDRAW_SIGNAL, handler)
    try:
        yield
    finally:
        armed.clear()
        signal.signal(WITHDRAW_SIGNAL, previous)


END_CALL_PATIENCE = 8.0
"""Seconds a call stopped by Ctrl-C has to end by itself (a task's ``tasks/cancel`` waits up
to 5 s for its reply) before the client is stopped."""


def run_answering_here(
    work: Work, wait_for: Callable[[Request], Any], quit_requested: Callable[[], bool], output: Output
) -> int:
    """Run ``work(bridge)`` on an event loop in a second thread, answering the questions it
    hands to ``bridge`` with ``wait_for`` in this one; ``work``'s exit status.

    Stops the client and exits 130 on Ctrl-C outside a question, or when
    ``quit_requested()`` is true after an answer (a second Ctrl-C, Ctrl-D at a terminal).
    When ``work`` ends while a question is shown, the question is withdrawn. What ``work``
    raises is raised here.
    """
    bridge = Bridge(wait_for, quit_requested, output)
    outcome: list[int | BaseException] = []
    loop_box: list[tuple[asyncio.AbstractEventLoop, asyncio.Task[int]]] = []
    armed = threading.Event()
    reasons: list[str] = []
    main_id = threading.main_thread().ident

    def interrupt(reason: str) -> None:
        """Take the question on screen down: the main thread's read is interrupted."""
        if not bridge.asking.is_set() or WITHDRAW_SIGNAL is None or main_id is None:
            return
        reasons.append(reason)
        armed.set()
        with contextlib.suppress(OSError, ValueError):
            signal.pthread_kill(main_id, WITHDRAW_SIGNAL)

    bridge.interrupt = interrupt

    async def runner() -> int:
        task = asyncio.current_task()
        assert task is not None
        loop_box.append((asyncio.get_running_loop(), task))
        return await work(bridge)

    def target() -> None:
        # Ctrl-C must reach the main thread, where the resolver reads: a process-directed
        # SIGINT taken by this thread would leave the main thread blocked in its read.
        blocked = {signal.SIGINT} | ({WITHDRAW_SIGNAL} if WITHDRAW_SIGNAL is not None else set())
        if hasattr(signal, "pthread_sigmask"):
            signal.pthread_sigmask(signal.SIG_BLOCK, blocked)
        try:
            outcome.append(asyncio.run(runner()))
        except BaseException as err:
            outcome.append(err)
        finally:
            bridge.finish()
            interrupt(ENDED)  # a question on screen is no longer wanted: interrupt its read

    def stop() -> None:
        if loop_box:
            loop, task = loop_box[0]
            end_call = bridge.end_call
            if end_call is not None:  # end the call first, and give it time to say so
                loop.call_soon_threadsafe(end_call)
                thread.join(timeout=END_CALL_PATIENCE)
            if thread.is_alive():
                loop.call_soon_threadsafe(task.cancel)
        thread.join(timeout=10)

    thread = threading.Thread(target=target, name="toolnexus-client", daemon=True)
    with _withdrawal(armed, reasons):
        try:
            thread.start()
            finished = bridge.serve()
            if not finished:
                stop()
                raise CliError(EXIT_INTERRUPTED, "interrupted")
            try:
                thread.join()
            except Withdrawn:  # the question ended just before the signal came
                thread.join()
        except KeyboardInterrupt:
            stop()
            raise CliError(EXIT_INTERRUPTED, "interrupted") from None
        except BrokenPipeError:
            stop()
            raise
    if bridge.withdrawn:
        output.say()
        output.say("(question withdrawn: the connection ended)")
    result = outcome[0] if outcome else CliError(EXIT_CONNECTION, "the client stopped unexpectedly")
    if isinstance(result, BaseException):
        raise result
    return result
