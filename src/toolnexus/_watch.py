"""Wake-ups from a store: one source per store object feeds a watcher per consumer.

A consumer (a worker's idle loop, one open inbox page, a live question waiting for its
answer) asks the store for a [`Watcher`][toolnexus.durable.Watcher] of its own, so that two
consumers never take each other's wake-ups. Behind all the watchers of one store object is
one thread reading one source: SQLite's ``PRAGMA data_version`` polled on a connection of its
own (every commit to the file, from any process), or PostgreSQL's ``LISTEN`` on one
connection (every change the store makes sends ``NOTIFY``). A watcher that waits costs
nothing until the source says something changed; many watchers cost no more reads of the
store than one.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Callable
from typing import Final, Protocol

__all__ = ["CHANGED", "READY", "ChangeSource", "Changes", "Watcher"]

logger = logging.getLogger(__name__)

_SOURCE_SLICE: Final = 0.25
"""Seconds the source thread waits at a time, so that closing the store ends it soon."""
_RECONNECT: Final = (0.1, 2.0)
"""First and longest pause before the source is opened again after it failed."""

CHANGED: Final = 1
"""A source's report: the store changed."""
READY: Final = 2
"""A source's report: a call may have become ready to claim (what a worker waits for)."""
EVERYTHING: Final = CHANGED | READY


class ChangeSource(Protocol):
    """What a database dialect gives the watchers: a blocking look for the next change."""

    slice: float
    """Seconds the watchers' thread looks at a time (at most a quarter of a second), and so
    at most how long closing the store waits for it."""

    def listen(self, wanted: int) -> None:
        """Report the changes ``wanted`` (``READY``, or ``CHANGED | READY``) from now on,
        which may save a source that can tell them apart every other wake-up."""

    def next(self, timeout: float) -> int:
        """Block until the store changes, or ``timeout`` seconds pass (then ``0``): what
        changed, as [`CHANGED`][toolnexus._watch.CHANGED] and [`READY`][toolnexus._watch.READY]
        (a source that cannot tell says both). Raises when the source is lost (a database
        restart): it is then closed and opened again, and every watcher is woken (something
        may have been missed)."""

    def close(self) -> None:
        """Release the source's connection."""


class Changes:
    """The change count of one store object, fed by one daemon thread that reads its source;
    started by the first [`watch`][toolnexus._watch.Changes.watch], ended by ``close``."""

    def __init__(self, open_source: Callable[[], ChangeSource], name: str) -> None:
        self._open_source = open_source
        self._name = name
        self._cond = threading.Condition()
        self._version = 0
        self._ready_version = 0
        self._closed = False
        self._thread: threading.Thread | None = None
        self._started = threading.Event()
        self._callbacks: set[Callable[[], None]] = set()
        self._wanted = 0  # what the watchers want reported
        self._listening = 0  # what the source reports (when it can be reached)
        self._down = False  # the source cannot be reached now

    @property
    def version(self) -> int:
        with self._cond:
            return self._version

    def watch(self, *, ready_only: bool = False) -> Watcher:
        """A new watcher, which sees every change from now on (the source is listening when
        this returns, unless the database cannot be reached: then it is woken when it can);
        with ``ready_only``, only the changes that may have made a call ready to claim.

        The first watcher that wants every change, on a store object whose watchers wanted
        only ready changes until then, may wait for the source's current look to end (a
        quarter of a second at most) while it starts listening for more."""
        wanted = READY if ready_only else EVERYTHING
        with self._cond:
            if self._closed:
                raise RuntimeError(f"{self._name} is closed")
            self._wanted |= wanted
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name=f"toolnexus watcher of {self._name}", daemon=True
                )
                self._thread.start()
        self._started.wait(10)
        with self._cond:
            self._cond.wait_for(
                lambda: self._listening & wanted == wanted or self._down or self._closed,
                _SOURCE_SLICE * 8,
            )
            return Watcher(self, ready_only)

    def _run(self) -> None:
        source: ChangeSource | None = None
        pause = _RECONNECT[0]
        missed = False
        listening = 0
        while not self._closed:
            if source is None:
                try:
                    source = self._open_source()
                except Exception as err:
                    logger.debug("cannot watch %s: %s", self._name, err)
                    self._set_listening(0, down=True)
                    self._started.set()
                    missed = True
                    self._sleep(pause)
                    pause = min(pause * 2, _RECONNECT[1])
                    continue
                pause = _RECONNECT[0]
                listening = 0
            try:
                with self._cond:
                    wanted = self._wanted
                if wanted != listening:
                    source.listen(wanted)
                    listening = wanted
                    self._set_listening(listening, down=False)
                self._started.set()
                if missed:  # back after an outage: a change may have gone unseen
                    missed = False
                    self.bump(EVERYTHING)
                flags = source.next(min(source.slice, _SOURCE_SLICE))
                if flags:
                    self.bump(flags)
            except Exception as err:
                logger.debug("lost the watch on %s: %s", self._name, err)
                with contextlib.suppress(Exception):
                    source.close()
                source = None
                missed = True
                self._set_listening(0, down=True)
                self._started.set()
        if source is not None:
            with contextlib.suppress(Exception):
                source.close()

    def _set_listening(self, listening: int, *, down: bool) -> None:
        with self._cond:
            self._listening, self._down = listening, down
            self._cond.notify_all()

    def _sleep(self, seconds: float) -> None:
        with self._cond:
            self._cond.wait_for(lambda: self._closed, seconds)

    def bump(self, flags: int = EVERYTHING) -> None:
        """Count a change (``flags``: what changed) and wake every watcher."""
        with self._cond:
            self._version += 1
            if flags & READY:
                self._ready_version += 1
            self._cond.notify_all()
            callbacks = list(self._callbacks)
        for callback in callbacks:
            callback()

    def close(self) -> None:
        """End the thread (within a quarter of a second) and wake every watcher."""
        with self._cond:
            if self._closed:
                return
            self._closed = True
            thread = self._thread
        self.bump()
        if thread is not None and thread is not threading.current_thread():
            thread.join(2)


class Watcher:
    """One consumer's view of a store's changes: ``wait`` returns ``True`` when the store may
    hold something new since this watcher last returned ``True``.

    ```python
    watcher = store.watch()
    while True:
        ...  # look at the store
        watcher.wait(5)  # until something changes, or 5 s
    ```

    A change is any commit to the store, from any process (SQLite), or any change made
    through a toolnexus store object (PostgreSQL's ``NOTIFY``). Each watcher has its own
    mark: a worker and an inbox page watching one store object both see every change.
    """

    def __init__(self, changes: Changes, ready_only: bool) -> None:
        self._changes = changes
        self._ready_only = ready_only
        self._seen = self._version()

    def _version(self) -> int:
        changes = self._changes
        return changes._ready_version if self._ready_only else changes._version

    def _fresh(self) -> bool:
        version = self._version()
        if version != self._seen:
            self._seen = version
            return True
        return False

    def wait(self, timeout: float) -> bool:
        """Block until something changed since this watcher last returned ``True``, or
        ``timeout`` seconds pass (then ``False``)."""
        changes = self._changes
        deadline = time.monotonic() + max(0.0, float(timeout))
        with changes._cond:
            while not self._fresh():
                left = deadline - time.monotonic()
                if left <= 0 or changes._closed:
                    return False
                changes._cond.wait(left)
            return True

    async def wait_async(self, timeout: float) -> bool:
        """As [`wait`][toolnexus.durable.Watcher.wait], without holding a thread: on asyncio,
        the watcher's thread wakes the loop; on another event loop, it waits in a worker
        thread a quarter of a second at a time. Cancelling it is safe."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return await self._wait_in_threads(timeout)
        changes = self._changes
        woken = asyncio.Event()

        def wake() -> None:
            with contextlib.suppress(RuntimeError):  # a loop already closed
                loop.call_soon_threadsafe(woken.set)

        with changes._cond:
            if self._fresh():
                return True
            changes._callbacks.add(wake)
        try:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(woken.wait(), max(0.0, float(timeout)))
        finally:
            with changes._cond:
                changes._callbacks.discard(wake)
        with changes._cond:
            return self._fresh()

    async def _wait_in_threads(self, timeout: float) -> bool:
        import anyio
        import anyio.to_thread

        deadline = anyio.current_time() + max(0.0, float(timeout))
        while True:
            left = deadline - anyio.current_time()
            if await anyio.to_thread.run_sync(self.wait, max(0.0, min(left, 0.25)), abandon_on_cancel=True):
                return True
            if left <= 0.25:
                return False
