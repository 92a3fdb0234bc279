"""Live questions: [`ask_in`][toolnexus.durable.ask_in], a resolver that asks in a store and
waits, the call held open, for the answer a person gives elsewhere (the inbox, ``toolnexus
answer``, another program).

Parking ends the call and resumes it later; asking live keeps it open. It is what works with
the servers people run: every server that asks the 2025-11-25 way (in the middle of the call:
the reference server, FastMCP's ``ctx.elicit``, any server on ``mcp`` 1.x) can only be
answered live. On 2026-07-28 a round is answered live too, without parking.

How one resolver holds its questions: one holder token per event loop, one watcher, and one
look at the store per change for all of them (``held``: the statuses of every question the
token holds, one query), so a thousand questions open at once cost one read per change, not
a thousand; their leases are renewed together, every third of the lease, in one write.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Final

from ._pending import Pending
from ._store import check_lease
from ._time import check_seconds, read_expires_at, utc_timestamp
from ._util import type_name
from ._wire import Answer, Request
from .errors import LeaseLostError, StoreUnavailableError

if TYPE_CHECKING:
    from ._store import Status, Store
    from ._watch import Watcher

__all__ = ["DEFAULT_LIVE_LEASE", "LiveResolver", "ask_in"]

logger = logging.getLogger(__name__)

DEFAULT_LIVE_LEASE: Final = 30.0
"""Seconds a live question's lease lasts unless its holder renews it (every third of it)."""

_ENDED: Final = "the call that asked it ended before an answer came (the connection ended, the host gave up)"
_RETRY_RENEW: Final = 0.5  # seconds before a renewal the store could not take is tried again


class _Holder:
    """The live questions one resolver holds on one event loop: one token, one watcher, and
    rounds: each round waits for a change (or the time to renew), renews the leases when due,
    and reads the statuses of every question held, in one query. Whichever waiting question
    comes first runs the round; the others wait for its end."""

    def __init__(self, store: Store, lease: float) -> None:
        import anyio

        self.store = store
        self.lease = lease
        self.token = secrets.token_hex(16)
        self.statuses: dict[str, Status] = {}
        self.held = 0
        self.watcher: Watcher | None = None
        self.round = 0
        self.round_done = anyio.Event()
        self.pumping = False
        self.renew_at = anyio.current_time() + lease / 3

    async def ready(self) -> None:
        """The watcher, made before the first question is put: no change is missed."""
        if self.watcher is None:
            import anyio.to_thread

            self.watcher = await anyio.to_thread.run_sync(self.store.watch)

    async def next_round(self, after: int) -> int:
        """Wait for the round after ``after`` to end; its number."""
        import anyio
        import anyio.to_thread

        if self.round != after:
            return self.round
        if self.pumping:
            await self.round_done.wait()
            return self.round
        self.pumping = True
        try:
            assert self.watcher is not None
            now = anyio.current_time()
            changed = await self.watcher.wait_async(max(0.0, self.renew_at - now))
            now = anyio.current_time()
            if now >= self.renew_at and self.held:
                try:
                    await anyio.to_thread.run_sync(self.store.renew_held, self.token, self.lease)
                    self.renew_at = now + self.lease / 3
                except StoreUnavailableError as err:
                    logger.warning("cannot renew the live questions' lease (%s); trying again", err)
                    self.renew_at = now + _RETRY_RENEW
                changed = True
            elif now >= self.renew_at:
                self.renew_at = now + self.lease / 3
            if changed:
                with contextlib.suppress(StoreUnavailableError):
                    self.statuses = await anyio.to_thread.run_sync(self.store.held, self.token)
        finally:
            self.pumping = False
            self.round += 1
            done, self.round_done = self.round_done, anyio.Event()
            done.set()
        return self.round

    async def settled(self, key: str) -> Status:
        """Wait until the question under ``key`` is answered or withdrawn; which."""
        started = self.round
        seen = started
        while True:
            status = self.statuses.get(key)
            if status in ("answered", "withdrawn"):
                return status
            if status is None and self.round >= started + 2:  # a full look that did not find it
                return "withdrawn"  # removed from the store
            seen = await self.next_round(seen)


class LiveResolver:
    """An async §10 resolver that asks each question in a store, as a *live* question, and
    waits for the answer given elsewhere: made by [`ask_in`][toolnexus.durable.ask_in].

    ``await resolver(request)`` returns the [`Answer`][toolnexus.Answer] recorded for it (by
    the inbox, ``toolnexus answer``, ``store.record``), or, unanswered:
    ``Answer.expire(request)`` when its time ran out (the server gets ``cancel``, §10's
    expired), ``Answer.cancel(request)`` when it was withdrawn in the store (its lease ran
    out: this process stalled for longer than the lease, or a person removed it). Cancelled
    (the connection ended, the host's timeout, Ctrl-C, another answerer first), it withdraws
    the question with the reason before the cancellation goes on. A withdrawn question can
    no longer be answered anywhere.
    """

    def __init__(
        self,
        store: Store,
        *,
        timeout: float | None,
        lease: float,
        server: str | None,
        target: str | None,
        on_asked: Callable[[Request, str], None] | None = None,
    ) -> None:
        self.store = store
        self.on_asked = on_asked
        self.timeout = timeout
        self.lease = lease
        self.server = server
        self.target = target
        self._holders: dict[int, _Holder] = {}
        self._reasons: dict[str, str] = {}
        self.asked: dict[str, str] = {}
        """The key each question waiting now is kept under in the store, by request id."""

    def __repr__(self) -> str:
        return f"ask_in({self.store!r})"

    def withdraw(self, request_id: str, reason: str) -> None:
        """Say why the question ``request_id`` is about to be cancelled (``first_answer``
        calls this for the resolvers it did not take the answer from): the store then shows
        the question withdrawn with ``reason``, such as "answered elsewhere"."""
        self._reasons[str(request_id)] = str(reason)

    def _holder(self) -> _Holder:
        try:
            loop: object = asyncio.get_running_loop()
        except RuntimeError:  # another event loop than asyncio's: one holder for it
            loop = None
        holder = self._holders.get(id(loop))
        if holder is None:
            holder = self._holders[id(loop)] = _Holder(self.store, self.lease)
        return holder

    async def __call__(self, request: Request) -> Answer:
        import anyio
        import anyio.to_thread

        if not isinstance(request, Request):
            raise TypeError(f"ask_in: the resolver takes a Request, not {type_name(request)}")
        holder = self._holder()
        await holder.ready()
        deadline = self._deadline(request)
        shown = request
        if self.timeout is not None:  # the stored question carries its deadline (the time left)
            when = utc_timestamp(max(0.0, deadline - anyio.current_time()))
            shown = Request(request.id, request.kind, request.prompt, request.url, request.data, when)
        pending = Pending(
            "tools/call", self.target or "", None, None, ("question",), (shown,), {}, self.server
        )
        # Shielded: a cancellation that comes while the question is being put waits for it,
        # so that the question is withdrawn (below), never left to lapse with its lease.
        with anyio.CancelScope(shield=True):
            key = await anyio.to_thread.run_sync(
                lambda: self.store.put_live(
                    pending, token=holder.token, lease=self.lease, deadline=self.timeout
                )
            )
        holder.held += 1
        self.asked[request.id] = key
        try:
            if self.on_asked is not None:
                try:
                    self.on_asked(request, key)
                except Exception as err:  # a host's observer must not end the question
                    logger.warning("ask_in: on_asked raised %s; ignored", type_name(err))
            with anyio.move_on_at(deadline) as scope:
                status = await holder.settled(key)
            if scope.cancelled_caught:
                status = await self._withdraw(holder, key, self._late())
                if status != "answered":
                    return Answer.expire(request)
            if status == "answered":
                answers = await anyio.to_thread.run_sync(self.store.answers, key)
                return answers[request.id]
            return Answer.cancel(request)  # withdrawn in the store: nobody will answer it
        except BaseException:
            reason = self._reasons.get(request.id, _ENDED)
            with anyio.CancelScope(shield=True):
                await self._withdraw(holder, key, reason)
            raise
        finally:
            holder.held -= 1
            self.asked.pop(request.id, None)
            self._reasons.pop(request.id, None)

    def _deadline(self, request: Request) -> float:
        """When to stop waiting, on the event loop's clock: the resolver's ``timeout`` or
        the request's ``expiresAt``, whichever comes first."""
        import anyio

        now = anyio.current_time()
        moments = [now + self.timeout] if self.timeout is not None else []
        expires = read_expires_at(request.expiresAt)
        if expires is not None:
            moments.append(now + (expires - time.time()))
        return min(moments) if moments else float("inf")

    def _late(self) -> str:
        if self.timeout is not None:
            return f"no answer came within {self.timeout:g} s"
        return "its deadline passed before an answer came"

    async def _withdraw(self, holder: _Holder, key: str, reason: str) -> Status:
        """Withdraw ``key`` with ``reason``, in a worker thread; its status after (``answered``
        when the answer came first). A store that cannot be reached leaves it to lapse."""
        import anyio.to_thread

        try:
            status: Status = await anyio.to_thread.run_sync(self.store.withdraw, key, holder.token, reason)
        except (StoreUnavailableError, KeyError, LeaseLostError) as err:
            logger.warning("could not withdraw %s (%s): it lapses with its lease", key, err)
            return "withdrawn"
        return status


def ask_in(
    store: Store,
    *,
    timeout: float | None = None,
    lease: float = DEFAULT_LIVE_LEASE,
    server: str | None = None,
    target: str | None = None,
    on_asked: Callable[[Request, str], None] | None = None,
) -> LiveResolver:
    """A resolver (a ``wait_for``) that asks each question in ``store`` as a *live* question
    and waits, the call held open, for the answer given elsewhere: in the
    [inbox](../inbox.md), with ``toolnexus answer STORE KEY``, or by any program that calls
    ``store.record``.

    ```python
    callback = elicitation_callback(durable.ask_in(store, server="deployer"))
    async with Client(server, elicitation_callback=callback) as client:
        result = await client.call_tool("deploy", {})  # answered in the inbox
    ```

    It works wherever a resolver does: ``elicitation_callback``, the FastMCP handler,
    pydantic-ai, [`first_answer`][toolnexus.first_answer]; in both protocol eras (a
    2025-11-25 server's mid-call question, a 2026-07-28 round), over any transport. The
    answer reaches the waiting call through the store's wake-up (a watcher, not a fixed
    poll), and only that call, once; a second answer is refused as "already answered".

    A question whose call ends unanswered is *withdrawn*, with the reason, and can no longer
    be answered (an answer posted after is refused and recorded nowhere): when the resolver
    is cancelled (the connection is lost, the host's timeout, Ctrl-C, another answerer was
    first), when its ``timeout`` passes (the server gets ``cancel``, §10's expired), or when
    this process dies: it renews a lease on its questions while it waits, and once the lease
    runs out they read as withdrawn everywhere (``sweep`` records it).

    Args:
        store: any [`Store`][toolnexus.durable.Store].
        timeout: seconds to wait for an answer (``None``: as long as it takes, or until the
            request's ``expiresAt``).
        lease: seconds the questions stay answerable if this process stops renewing them
            (it renews every third of it).
        server: the name of the server that asks, shown with each question (the spec asks
            that the user can see which server asks).
        target: the tool that was called, shown with each question.
        on_asked: told each request and the key it waits under, once it waits in the store
            (to tell a person where to answer it).

    Raises:
        TypeError, ValueError: an argument out of range, at once.
    """
    if not callable(getattr(store, "put_live", None)):
        raise TypeError(f"ask_in: store must be a toolnexus Store, not {type_name(store)}")
    seconds = check_seconds(timeout, caller="ask_in", name="timeout")
    checked_lease = check_lease(lease)
    for name, value in (("server", server), ("target", target)):
        if value is not None and not isinstance(value, str):
            raise TypeError(f"ask_in: {name} must be a str or None, not {type_name(value)}")
    if on_asked is not None and not callable(on_asked):
        raise TypeError(f"ask_in: on_asked must be callable or None, not {type_name(on_asked)}")
    return LiveResolver(
        store, timeout=seconds, lease=checked_lease, server=server, target=target, on_asked=on_asked
    )
