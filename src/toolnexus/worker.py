"""A worker: resume parked calls as they become ready, until stopped.

```python
from toolnexus import durable, worker

store = durable.open_store("postgresql://db.internal/agents")
await worker.Worker(store, "https://deployer.internal/mcp").run()
```

A [`Worker`][toolnexus.worker.Worker] keeps one connection to one server, and loops:
[`resume_ready`][toolnexus.durable.resume_ready] (claim, resume, record, one call at a
time), then sleeps on a [`Watcher`][toolnexus.durable.Watcher] of its own until the store
changes anywhere (``LISTEN``/``NOTIFY`` in PostgreSQL, a ``PRAGMA data_version`` check every
50 ms in SQLite) or ``idle`` seconds pass (a lease that ran out, a deadline). Any number of
workers, in any processes on any machines, may share a store: each call is resumed by one of
them.

Nothing raises out of the loop: a record that does not read is marked ``failed``, a store
that cannot be reached is retried with a growing pause, a connection to the server that
breaks is made again. ``toolnexus worker STORE (--stdio CMD | --url URL)`` runs one from
the command line.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TYPE_CHECKING, Any, Final

from ._store import ANY_SERVER, Event, EventHook, Status, Store, check_lease, fire
from ._time import check_seconds
from ._util import innermost
from ._watch import Watcher
from .durable import ResumeOutcome, park_only, resume_ready, resumer_name
from .errors import StoreError, StoreUnavailableError

if TYPE_CHECKING:
    from mcp import Client

    from .notify import Notifier

__all__ = ["Worker"]

logger = logging.getLogger(__name__)

_BACKOFF: Final = (0.2, 5.0)  # first and longest pause after a failure
_STOP_LATENCY: Final = 0.25
# The longest a stopped worker waits on the store before its loop ends, in seconds.


class Worker:
    """Resumes the calls parked in ``store`` from one server, as they become ready.

    Args:
        store: any [`Store`][toolnexus.durable.Store].
        server: what ``mcp.Client`` connects to: an ``MCPServer`` (in process), a
            ``StdioServerParameters``, or a streamable HTTP URL. Ignored with ``connect``.
        connect: instead of ``server``: a function giving a new async context manager that
            yields a connected ``mcp.Client`` (built with an ``elicitation_callback``), for
            a client of your own (roots and sampling callbacks, a protocol mode, auth).
        lease: seconds a claim holds without renewal (renewed every third of it while
            the server works).
        server_name: resume the calls recorded from the server of this name (``None``: an
            unnamed one); by default the connected server's own name.
        idle: the longest sleep between two looks at the store when nothing wakes it.
        retries: how often a failed resume goes back to ``ready`` before it stays ``failed``.
        on_outcome: called with each [`ResumeOutcome`][toolnexus.durable.ResumeOutcome].
        on_event: the notification hook, told of each finished call (and of the new call
            when the server asked again), as [`Event`][toolnexus.durable.Event]s.
        connect_timeout: the longest a connection may take to be made, in seconds (``None``:
            no limit). The first connection that takes longer makes ``run`` raise
            ``TimeoutError``; a reconnection that does is retried, as other failures are.
        name: the worker's name in the history of each call it claims (by default this
            machine's name and this process's id).
        notifier: a [`Notifier`][toolnexus.notify.Notifier] of the same store, to send its
            notifications while the worker runs.
    """

    def __init__(
        self,
        store: Store,
        server: Any = None,
        *,
        connect: Callable[[], AbstractAsyncContextManager[Client]] | None = None,
        lease: float = 60.0,
        server_name: str | object | None = ANY_SERVER,
        idle: float = 5.0,
        retries: int = 0,
        on_outcome: Callable[[ResumeOutcome], None] | None = None,
        on_event: EventHook | None = None,
        connect_timeout: float | None = None,
        name: str | None = None,
        notifier: Notifier | None = None,
    ) -> None:
        if connect is None and server is None:
            raise TypeError("Worker: give the server to connect to, or connect=")
        self.store = store
        self.lease = check_lease(lease)
        idle_seconds = check_seconds(idle, caller="Worker", name="idle", none=False, most=86400)
        assert idle_seconds is not None
        self.idle = idle_seconds
        self.retries = retries
        self.server_name = server_name
        self.on_outcome = on_outcome
        self.on_event = on_event
        self.connect_timeout = (
            None if connect_timeout is None else check_lease(connect_timeout, "connect_timeout")
        )
        self.name = name or resumer_name()
        self.notifier = notifier
        self._server = server
        self._connect = connect
        self._stopping = False
        self.resumed = 0
        """How many calls this worker has ended (any outcome)."""

    def stop(self) -> None:
        """Ask the loop to end after the call it is resuming (an idle worker ends within
        a quarter of a second)."""
        self._stopping = True

    def _new_client(self) -> AbstractAsyncContextManager[Client]:
        if self._connect is not None:
            return self._connect()
        from mcp import Client

        from .tasks import TasksExtension

        return Client(self._server, elicitation_callback=park_only, extensions=[TasksExtension()])

    @asynccontextmanager
    async def _client(self) -> AsyncIterator[Client]:
        if self.connect_timeout is None:
            async with self._new_client() as client:
                yield client
            return
        import math

        import anyio

        # A scope around the whole connection (the client's task groups open inside it),
        # whose deadline is lifted once connected.
        with anyio.CancelScope(deadline=anyio.current_time() + self.connect_timeout) as scope:
            async with self._new_client() as client:
                scope.deadline = math.inf
                yield client
        if scope.cancelled_caught:
            raise TimeoutError(f"no answer within {self.connect_timeout:g} s")

    def _report(self, outcome: ResumeOutcome) -> None:
        if outcome.status not in ("working", "waiting"):  # a parked task's step is not an end
            self.resumed += 1
        if self.on_outcome is not None:
            try:
                self.on_outcome(outcome)
            except Exception:
                logger.exception("the worker's on_outcome failed on %s", outcome.key)
        if self.on_event is not None and outcome.status in ("done", "failed", "cancelled", "expired"):
            status: Status = outcome.status
            fire(self.on_event, Event("finished", outcome.key, status, None, outcome.target, outcome.error))
        elif self.on_event is not None and outcome.status == "waiting":  # a parked task asks
            fire(self.on_event, Event("parked", outcome.key, "waiting", None, outcome.target))
            if outcome.next is not None:
                fire(self.on_event, Event("parked", outcome.next, "waiting", None, outcome.target))

    async def _store_call(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        import functools

        import anyio.to_thread

        return await anyio.to_thread.run_sync(functools.partial(fn, *args, **kwargs), abandon_on_cancel=True)

    async def run(self, *, once: bool = False) -> int:
        """Resume calls until [`stop`][toolnexus.worker.Worker.stop] (or, with ``once``, until
        none is ready); returns how many calls it ended. Raises only when the first
        connection to the server or the first look at the store fails (so a command can say
        so and exit); after that, failures are logged and retried. The worker's ``notifier``,
        if any, sends meanwhile."""
        if self.notifier is None:
            return await self._run(once)
        import anyio

        ended = 0
        async with anyio.create_task_group() as group:
            group.start_soon(self.notifier.run)
            try:
                ended = await self._run(once)
            finally:
                self.notifier.stop()
        return ended

    async def _run(self, once: bool) -> int:
        started = False
        pause = _BACKOFF[0]
        # Listening before the first look, for the calls that become ready to claim.
        watcher = await self._store_call(lambda: self.store.watch(ready_only=True))
        while not self._stopping:
            try:
                async with self._client() as client:
                    started = True
                    pause = _BACKOFF[0]
                    if await self._serve(client, once, watcher):
                        return self.resumed
            except StoreUnavailableError as err:
                if not started:
                    raise
                logger.warning("the store cannot be reached (%s); trying again in %.1f s", err, pause)
            except Exception as err:
                if not started:
                    raise
                logger.warning(
                    "the connection to the server failed (%s); connecting again in %.1f s", _cause(err), pause
                )
            await self._nap(pause)
            pause = min(pause * 2, _BACKOFF[1])
        return self.resumed

    async def _nap(self, seconds: float) -> None:
        """Sleep, in short slices, so that [`stop`][toolnexus.worker.Worker.stop] ends it soon."""
        import anyio

        deadline = anyio.current_time() + seconds
        while not self._stopping and (left := deadline - anyio.current_time()) > 0:
            await anyio.sleep(min(left, _STOP_LATENCY))

    async def _serve(self, client: Client, once: bool, watcher: Watcher) -> bool:
        """Resume on one connection; ``True`` when the worker is done, ``False`` to reconnect
        (a connection error propagates)."""
        import anyio

        pause = _BACKOFF[0]
        swept = -1e9
        while not self._stopping:
            try:
                if anyio.current_time() - swept > self.idle:
                    await self._store_call(self.store.sweep)
                    swept = anyio.current_time()
                outcomes = await resume_ready(
                    client,
                    self.store,
                    lease=self.lease,
                    server=self.server_name,
                    retries=self.retries,
                    on_outcome=self._report,
                    by=self.name,
                )
                pause = _BACKOFF[0]
            except (StoreUnavailableError, StoreError) as err:
                logger.warning("the store failed (%s); trying again in %.1f s", err, pause)
                await self._nap(pause)
                pause = min(pause * 2, _BACKOFF[1])
                continue
            if outcomes:
                continue
            if once:
                return True
            await self._idle(watcher, await self._store_call(self.store.next_poll, server=self.server_name))
        return True

    async def _idle(self, watcher: Watcher, due: float | None = None) -> None:
        """Wait for the store to change, up to ``idle`` seconds (or until a parked task is due
        its next poll, in ``due`` seconds), in short slices so that
        [`stop`][toolnexus.worker.Worker.stop] (set from a signal handler) ends the loop soon."""
        import anyio

        deadline = anyio.current_time() + (self.idle if due is None else min(self.idle, due))
        while not self._stopping:
            left = deadline - anyio.current_time()
            if left <= 0 or await watcher.wait_async(min(left, _STOP_LATENCY)):
                return


def _cause(err: BaseException) -> str:
    """What went wrong, for a log line: a group's first exception (the SDK's transports raise
    their failures in task groups), its type when it says nothing."""
    err = innermost(err)
    return " ".join(str(err).split())[:300] or type(err).__name__
