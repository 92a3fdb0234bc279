"""One contract for every store: SqliteStore and PostgresStore (a real server) pass the same tests.

The lifecycle (waiting, ready, resuming, done, failed, expired), claims (one claimer per
call, leases that run out), compare-and-set answers, the notification hook for every
transition, watchers (one per consumer, across store objects, each with connections of its
own as another process would have), rows that do not read, tables that are not a store's,
and the schema's migrations. Time is a clock the tests move (``support.stores.FakeClock``);
PostgreSQL's own clock has a test of its own.
"""

from __future__ import annotations

import dataclasses
import re
import threading
import time
from typing import Any

import pytest

from support.stores import Backend, Store
from toolnexus import Answer, Request
from toolnexus._store import STORE_FORMAT
from toolnexus._time import utc_timestamp
from toolnexus.durable import Call, Event, ParkedTask, Pending
from toolnexus.errors import LeaseLostError, StoreError

SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string", "minLength": 2}, "team": {"type": "string", "default": "web"}},
    "required": ["name"],
}


def pending(
    n: int = 0, *, server: str | None = "srv", expires_at: str | None = None, two: bool = True
) -> Pending:
    first = Request(f"elc-a-{n}", "input", "Name?", None, {"schema": SCHEMA}, expires_at)
    second = Request(f"elc-b-{n}", "authorization", "Sign in", "https://auth.example.com/")
    requests = (first, second) if two else (first,)
    return Pending(
        "tools/call",
        "deploy",
        {"n": n},
        f"state-{n}==",
        ("first", "second")[: len(requests)],
        requests,
        {},
        server,
    )


def answer_all(store: Store, key: str, n: int = 0) -> None:
    store.record(key, Answer(f"elc-a-{n}", True, {"name": "Ada"}))
    store.record(key, Answer(f"elc-b-{n}", True))


@pytest.fixture
def store(backend: Backend) -> Store:
    return backend.open()


# --- parking and answering ---------------------------------------------------------------------


def test_put_get_list_calls_answers_remove(store: Store, backend: Backend) -> None:
    keys = [store.put(pending(n)) for n in range(3)]
    assert len(set(keys)) == 3
    assert store.get(keys[1]) == pending(1)
    assert store.list() == [(key, pending(n)) for n, key in enumerate(keys)]
    assert [call.status for call in store.calls()] == ["waiting"] * 3
    call = store.call(keys[0])
    assert (call.key, call.pending, call.server, call.answered, call.attempts) == (
        keys[0],
        pending(0),
        "srv",
        frozenset(),
        0,
    )
    store.record(keys[0], Answer("elc-a-0", True, {"name": "Ada"}))
    assert store.call(keys[0]).status == "waiting"
    assert store.call(keys[0]).answered == {"elc-a-0"}
    store.record(keys[0], {"id": "elc-b-0", "ok": False, "reason": "declined"})
    assert store.call(keys[0]).status == "ready"
    assert store.answers(keys[0]) == {
        "elc-a-0": Answer("elc-a-0", True, {"name": "Ada"}),
        "elc-b-0": Answer("elc-b-0", False, None, "declined"),
    }
    assert [call.key for call in store.calls(status="ready")] == [keys[0]]
    store.remove(keys[0])
    for method in (store.get, store.answers, store.remove, store.call):
        with pytest.raises(KeyError):
            method(keys[0])
    again = backend.open()  # another object on the same store sees the same
    assert [key for key, _ in again.list()] == keys[1:]


def test_record_refuses_a_second_answer_an_unknown_id_content_that_does_not_fit(store: Store) -> None:
    key = store.put(pending())
    store.record(key, Answer("elc-a-0", True, {"name": "Ada"}))
    with pytest.raises(ValueError, match="already answered"):
        store.record(key, Answer("elc-a-0", True, {"name": "Bob"}))
    with pytest.raises(ValueError, match="'elc-zzz'"):
        store.record(key, Answer("elc-zzz", True, {}))
    other = store.put(pending(2))
    with pytest.raises(ValueError, match="'name'") as caught:
        store.record(other, Answer("elc-a-2", True, {"name": "A"}))
    assert "elc-a-2" in str(caught.value)
    with pytest.raises(KeyError):
        store.record("nope", Answer("elc-a-0", True, {"name": "Ada"}))
    assert store.answers(key) == {"elc-a-0": Answer("elc-a-0", True, {"name": "Ada"})}
    assert store.answers(other) == {}


def test_two_answers_recorded_at_once_exactly_one_is_kept(backend: Backend) -> None:
    first, second = backend.open(), backend.open()
    keys = [first.put(pending(n, two=False)) for n in range(15)]
    for n, key in enumerate(keys):
        barrier = threading.Barrier(2)
        outcomes: list[str] = []

        def answer(
            store: Store,
            name: str,
            key: str = key,
            n: int = n,
            barrier: Any = barrier,
            outcomes: Any = outcomes,
        ) -> None:
            barrier.wait()
            try:
                store.record(key, Answer(f"elc-a-{n}", True, {"name": name}))
                outcomes.append("kept:" + name)
            except ValueError as err:
                outcomes.append("refused:" + str(err))

        threads = [
            threading.Thread(target=answer, args=(s, name)) for s, name in ((first, "one"), (second, "two"))
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        kept = [o for o in outcomes if o.startswith("kept:")]
        assert len(kept) == 1, outcomes
        assert any(
            "already answered" in o or "no longer waiting" in o for o in outcomes if o.startswith("refused:")
        )
        assert first.answers(key)[f"elc-a-{n}"].data == {"name": kept[0][5:]}
        assert first.call(key).status == "ready"


def test_a_pending_that_is_not_json_is_refused_before_anything_is_written(store: Store) -> None:
    bad = {"type": "object", "properties": {"n": {"type": "number", "maximum": 1e400}}}
    with pytest.raises(ValueError, match=r"maximum is inf.*cannot be parked"):
        Pending(
            "tools/call", "t", {}, None, ("k",), (Request("elc-1", "input", "n?", None, {"schema": bad}),)
        )
    with pytest.raises(ValueError, match="nan"):
        Pending("tools/call", "t", {"x": float("nan")}, None, ("k",), (Request("elc-1", "input", "n?"),))
    assert store.calls() == []


# --- claims -----------------------------------------------------------------------------------


def test_a_claim_takes_a_ready_call_once_and_finish_keeps_the_result(store: Store, backend: Backend) -> None:
    waiting = store.put(pending(0))
    ready = store.put(pending(1))
    answer_all(store, ready, 1)
    assert store.claim(lease=30, limit=5) != []
    other = backend.open()
    assert other.claim(lease=30, limit=5) == []  # claimed, and the waiting one is not ready
    call = store.call(ready)
    assert call.status == "resuming"
    assert call.attempts == 1
    assert call.lease_until is not None
    assert call.lease_until == pytest.approx(backend.clock.now + 30)
    assert store.call(waiting).status == "waiting"


def test_claim_gives_the_pending_answers_and_token_and_finish_records_done(store: Store) -> None:
    key = store.put(pending())
    answer_all(store, key)
    (claim,) = store.claim(lease=30)
    assert (claim.key, claim.pending, claim.attempt) == (key, pending(), 1)
    assert set(claim.answers) == {"elc-a-0", "elc-b-0"}
    with pytest.raises(LeaseLostError):
        store.finish(key, "not-the-token", {"content": []})
    store.renew(key, claim.token, 30)
    store.finish(key, claim.token, {"content": [{"type": "text", "text": "ok"}], "isError": False})
    call = store.call(key)
    assert call.status == "done"
    assert call.result == {"content": [{"type": "text", "text": "ok"}], "isError": False}
    with pytest.raises(LeaseLostError):  # a claim ends once
        store.finish(key, claim.token, {"content": []})
    with pytest.raises(ValueError, match=r"no longer waiting|already answered"):
        store.record(key, Answer("elc-a-0", True, {"name": "Bob"}))


def test_a_lease_that_runs_out_makes_the_call_claimable_and_the_old_claim_lost(
    store: Store, backend: Backend
) -> None:
    key = store.put(pending())
    answer_all(store, key)
    other = backend.open()
    (first,) = store.claim(lease=30)
    assert first.lease_until == pytest.approx(backend.clock.now + 30)
    backend.clock.advance(29)
    assert other.claim(lease=30) == []  # the lease still holds
    store.renew(key, first.token, 30)  # and is renewed: 30 s from now
    backend.clock.advance(29)
    assert other.claim(lease=30) == []
    backend.clock.advance(2)
    (second,) = other.claim(lease=30)  # ran out: taken over, without a sweep
    assert (second.key, second.attempt) == (key, 2)
    for end in (
        lambda: store.finish(key, first.token, {"content": []}),
        lambda: store.renew(key, first.token, 10),
        lambda: store.fail(key, first.token, "x"),
        lambda: store.release(key, first.token),
    ):
        with pytest.raises(LeaseLostError):
            end()
    call = store.call(key)
    assert (call.status, call.attempts, call.leases_lost) == ("resuming", 2, 1)
    store.finish(key, second.token, {"content": []})
    assert store.call(key).leases_lost == 1  # the record keeps that a lease was lost


def test_a_sweep_makes_a_call_whose_lease_ran_out_ready_and_tells_the_hook(backend: Backend) -> None:
    seen: list[Event] = []
    store = backend.open(on_event=seen.append)
    key = store.put(pending())
    answer_all(store, key)
    (claim,) = store.claim(lease=10)
    backend.clock.advance(9)
    assert store.sweep() == 0
    assert store.call(key).status == "resuming"
    backend.clock.advance(2)
    seen.clear()
    assert store.sweep() == 0  # it counts the calls expired; this one is ready again
    call = store.call(key)
    assert (call.status, call.leases_lost, call.lease_until) == ("ready", 1, None)
    assert [(e.kind, e.key, e.status, e.target) for e in seen] == [("ready", key, "ready", "deploy")]
    with pytest.raises(LeaseLostError):  # its resumer, back too late, records nothing
        store.finish(key, claim.token, {"content": []})
    (again,) = store.claim(lease=10)
    assert again.attempt == 2


def test_many_claimers_at_once_each_call_to_exactly_one(backend: Backend) -> None:
    setup = backend.open()
    keys = set()
    for n in range(60):
        key = setup.put(pending(n, two=False))
        setup.record(key, Answer(f"elc-a-{n}", True, {"name": "Ada"}))
        keys.add(key)
    claimed: list[list[str]] = [[] for _ in range(4)]
    stores = [backend.open() for _ in range(4)]
    barrier = threading.Barrier(4)

    def claimer(index: int) -> None:
        barrier.wait()
        while True:
            got = stores[index].claim(lease=60, limit=3)
            if not got:
                return
            claimed[index].extend(claim.key for claim in got)

    threads = [threading.Thread(target=claimer, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    every = [key for keys_of in claimed for key in keys_of]
    assert sorted(every) == sorted(keys)  # each once, none lost


def test_a_claim_by_key_takes_that_call_only_when_it_is_ready_or_its_lease_ran_out(
    store: Store, backend: Backend
) -> None:
    waiting = store.put(pending(0))
    key = store.put(pending(1))
    other = store.put(pending(2))
    answer_all(store, key, 1)
    answer_all(store, other, 2)
    assert store.claim(lease=30, key=waiting) == []  # still waiting for answers
    assert store.call(waiting).status == "waiting"
    assert store.claim(lease=30, key="no-such-key") == []
    (claim,) = store.claim(lease=5, key=key, limit=5)  # one call, whatever the limit
    assert store.claim(lease=30, key=key) == []  # resuming under a live lease
    assert (claim.key, claim.attempt, claim.pending) == (key, 1, pending(1))
    assert store.call(other).status == "ready"  # the other ready call is left alone
    assert store.call(key).status == "resuming"
    backend.clock.advance(6)
    (again,) = backend.open().claim(lease=30, key=key)  # the lease ran out: claimable
    assert (again.key, again.attempt) == (key, 2)
    with pytest.raises(LeaseLostError):
        store.finish(key, claim.token, {"content": []})
    store.finish(key, again.token, {"content": []})
    assert store.claim(lease=30, key=key) == []  # done
    assert store.call(key).status == "done"
    assert [c.key for c in store.claim(lease=30, key=other, server="elsewhere")] == []
    assert [c.key for c in store.claim(lease=30, key=other, server="srv")] == [other]


def test_many_claimers_of_one_key_at_once_exactly_one_wins(backend: Backend) -> None:
    setup = backend.open()
    keys = []
    for n in range(5):  # five rounds, each a race of six claimers on one ready call
        key = setup.put(pending(n, two=False))
        setup.record(key, Answer(f"elc-a-{n}", True, {"name": "Ada"}))
        keys.append(key)
    stores = [backend.open() for _ in range(6)]
    for key in keys:
        won: list[int] = []
        barrier = threading.Barrier(len(stores))

        def claimer(index: int, key: str = key, won: list[int] = won, barrier: Any = barrier) -> None:
            barrier.wait()
            if stores[index].claim(lease=60, key=key):
                won.append(index)

        threads = [threading.Thread(target=claimer, args=(i,)) for i in range(len(stores))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len(won) == 1, (key, won)
        assert setup.call(key).attempts == 1


def test_claims_by_server_name(store: Store) -> None:
    named = store.put(pending(0, server="alpha"))
    unnamed = store.put(pending(1, server=None))
    answer_all(store, named, 0)
    answer_all(store, unnamed, 1)
    assert store.claim(lease=30, server="beta") == []
    assert [c.key for c in store.claim(lease=30, server=None)] == [unnamed]
    assert [c.key for c in store.claim(lease=30, server="alpha")] == [named]


def test_finish_parked_points_at_the_new_call_which_follows_the_old(store: Store) -> None:
    key = store.put(pending())
    answer_all(store, key)
    (claim,) = store.claim(lease=30)
    new = store.finish_parked(key, claim.token, pending(7))
    old = store.call(key)
    assert (old.status, old.next, old.result) == ("done", new, None)
    fresh = store.call(new)
    assert (fresh.status, fresh.follows, fresh.pending) == ("waiting", key, pending(7))


def test_fail_keeps_the_error_retry_puts_it_back(store: Store) -> None:
    key = store.put(pending())
    answer_all(store, key)
    (claim,) = store.claim(lease=30)
    store.fail(key, claim.token, "Invalid or expired requestState", retry=True)
    assert (store.call(key).status, store.call(key).error) == ("ready", "Invalid or expired requestState")
    (claim,) = store.claim(lease=30)
    assert claim.attempt == 2
    store.fail(key, claim.token, "still refused")
    assert (store.call(key).status, store.call(key).error) == ("failed", "still refused")
    assert store.claim(lease=30) == []
    store.retry(key)  # a person decided
    (claim,) = store.claim(lease=30)
    assert claim.attempt == 3
    store.release(key, claim.token)
    assert store.call(key).status == "ready"
    with pytest.raises(ValueError, match="not failed"):
        store.retry(key)


def test_deadlines_expire_waiting_calls_and_retention_purges_finished_ones(backend: Backend) -> None:
    store = backend.open(retention=60)
    passed = store.put(pending(0, expires_at="2020-01-01T00:00:00.000Z"))
    later = store.put(pending(1, expires_at="2999-01-01T00:00:00.000Z"))
    host_deadline = store.put(pending(2), deadline=20)
    unreadable_deadline = store.put(pending(3, expires_at="not a date"))
    answered_in_time = store.put(pending(4, expires_at="2020-01-01T00:00:00.000Z"))
    answer_all(store, answered_in_time, 4)  # ready: it no longer waits for anyone
    done = store.put(pending(5))
    answer_all(store, done, 5)
    (claim,) = store.claim(lease=30, key=done)
    store.finish(done, claim.token, {"content": []})
    assert store.sweep() == 1  # the passed one; the host's deadline is 20 s away
    backend.clock.advance(21)
    assert store.sweep() == 1
    statuses = {call.key: call.status for call in store.calls()}
    assert statuses == {
        passed: "expired",
        later: "waiting",
        host_deadline: "expired",
        unreadable_deadline: "waiting",
        answered_in_time: "ready",
        done: "done",
    }
    assert store.call(passed).error == "a question expired before it was answered"
    with pytest.raises(ValueError, match="expired"):
        store.record(passed, Answer("elc-a-0", True, {"name": "Ada"}))
    store.expire(later, "the host gave up")
    assert store.call(later).error == "the host gave up"
    assert backend.query("SELECT count(*) FROM toolnexus_answer") == [(4,)]
    backend.clock.advance(50)  # passed and done finished 71 s ago; the other two 50 s ago
    store.sweep()
    assert {call.key for call in store.calls()} == {
        host_deadline,
        later,
        unreadable_deadline,
        answered_in_time,
    }
    assert backend.query("SELECT count(*) FROM toolnexus_answer") == [(2,)]  # done's went with it
    backend.clock.advance(11)
    store.sweep()
    assert {call.key for call in store.calls()} == {unreadable_deadline, answered_in_time}


@pytest.mark.parametrize(
    ("expires_at", "expired"),
    [
        ("2020-01-01T00:00:00Z", True),
        ("2020-01-01T00:00:00", True),  # no offset: read as UTC, as the contract writes it
        ("2020-01-01T02:00:00+02:00", True),
        ("2999-01-01T00:00:00.123456789Z", False),
        ("2020-02-30T00:00:00Z", False),  # not in the calendar: no deadline
        ("2020-01-01", False),  # a date alone: no deadline
        ("yesterday", False),
        ("２０２０-01-01T00:00:00Z", False),  # fullwidth digits are no digits
        ("2020-01-01T00:00:00Z" + " " * 100, False),  # too long to read
    ],
)
def test_one_reading_of_expires_at_for_the_sweep(backend: Backend, expires_at: str, expired: bool) -> None:
    store = backend.open()
    key = store.put(pending(0, expires_at=expires_at))
    assert store.sweep() == int(expired)
    assert store.call(key).status == ("expired" if expired else "waiting")


# --- the hook and waking ----------------------------------------------------------------------------


def test_the_hook_is_told_of_every_transition_and_its_failure_breaks_nothing(backend: Backend) -> None:
    seen: list[Event] = []
    store = backend.open(on_event=seen.append)

    def told() -> list[tuple[str, str, str | None, str | None, str | None]]:
        out: list[tuple[str, str, str | None, str | None, str | None]] = [
            (e.kind, e.key, e.status, e.server, e.target) for e in seen
        ]
        seen.clear()
        return out

    key = store.put(pending())
    assert told() == [("parked", key, "waiting", "srv", "deploy")]
    answer_all(store, key)
    assert told() == [("ready", key, "ready", "srv", "deploy")]  # the last answer only
    (claim,) = store.claim(lease=30)
    assert told() == [("claimed", key, "resuming", "srv", "deploy")]
    store.release(key, claim.token)
    assert told() == [("ready", key, "ready", "srv", "deploy")]
    (claim,) = store.claim(lease=30)
    store.fail(key, claim.token, "refused", retry=True)
    assert told()[1:] == [("ready", key, "ready", "srv", "deploy")]
    (claim,) = store.claim(lease=30)
    store.fail(key, claim.token, "refused")
    assert told()[1:] == [("finished", key, "failed", "srv", "deploy")]
    store.retry(key)
    assert told() == [("ready", key, "ready", "srv", "deploy")]
    (claim,) = store.claim(lease=30)
    new = store.finish_parked(key, claim.token, pending(1))
    assert told()[1:] == [
        ("finished", key, "done", "srv", "deploy"),
        ("parked", new, "waiting", "srv", "deploy"),
    ]
    answer_all(store, new, 1)
    (claim,) = store.claim(lease=30)
    store.finish(new, claim.token, {"content": []})
    assert told()[2:] == [("finished", new, "done", "srv", "deploy")]
    lapsing = store.put(pending(2))
    answer_all(store, lapsing, 2)
    store.claim(lease=5)
    backend.clock.advance(6)
    told()
    store.sweep()
    assert told() == [("ready", lapsing, "ready", "srv", "deploy")]  # a lease that ran out
    waiting = store.put(pending(3), deadline=5)
    backend.clock.advance(6)
    told()
    store.sweep()
    assert told() == [("finished", waiting, "expired", "srv", "deploy")]
    other = store.put(pending(4))
    store.expire(other, "given up")
    store.remove(other)
    assert told()[1:] == [
        ("finished", other, "expired", "srv", "deploy"),
        ("removed", other, None, "srv", "deploy"),
    ]

    def broken(event: Event) -> None:
        raise RuntimeError("the chat service is down")

    failing = backend.open(on_event=broken)
    again = failing.put(pending(5))  # logged, not raised
    assert failing.call(again).status == "waiting"


def test_each_watcher_sees_every_change_and_an_answer_wakes_one_in_another_store_object(
    backend: Backend,
) -> None:
    waiter, writer = backend.open(), backend.open()
    worker, inbox = waiter.watch(), waiter.watch()  # two consumers of one store object
    assert worker.wait(0) is False
    assert inbox.wait(0) is False
    key = writer.put(pending(0, two=False))
    assert worker.wait(10) is True  # every change wakes, not only a call becoming ready
    assert inbox.wait(10) is True  # and each watcher has its own mark: none is stolen
    assert worker.wait(0) is False  # nothing new since
    recorded: list[float] = []

    def answer() -> None:
        writer.record(key, Answer("elc-a-0", True, {"name": "Ada"}))
        recorded.append(time.monotonic())

    timer = threading.Timer(0.3, answer)
    timer.start()
    woke = worker.wait(30)
    woken_at = time.monotonic()
    timer.join()
    assert woke is True
    # The wake-up it promises: a poll of 50 ms (SQLite) or a NOTIFY (PostgreSQL), well under
    # a second after the commit, never the 30 s timeout.
    assert woken_at - recorded[0] < 1.0, woken_at - recorded[0]
    assert [c.key for c in waiter.claim(lease=10)] == [key]


def test_a_ready_only_watcher_wakes_when_a_call_may_have_become_claimable(backend: Backend) -> None:
    """A worker's watcher: PostgreSQL tells it only the changes that make a call ready (the last
    answer, a release, a retry); SQLite cannot tell, and wakes it on every commit."""
    waiter, writer = backend.open(), backend.open()
    ready, every = waiter.watch(ready_only=True), waiter.watch()
    key = writer.put(pending(0, two=False))
    assert every.wait(10) is True
    assert ready.wait(0.5 if backend.kind == "postgres" else 10) is (backend.kind == "sqlite")
    writer.record(key, Answer("elc-a-0", True, {"name": "Ada"}))
    assert ready.wait(10) is True
    (claim,) = writer.claim(lease=30)
    assert every.wait(10) is True
    if backend.kind == "postgres":
        assert ready.wait(0.5) is False  # a claim makes nothing claimable
    writer.release(key, claim.token)
    assert ready.wait(10) is True


def test_a_watcher_of_every_change_joining_a_workers_store_object_sees_every_change(
    backend: Backend,
) -> None:
    """On PostgreSQL a store object whose watchers want only ready changes listens on the ready
    channel alone; a watcher of every change joining it is listening when ``watch`` returns
    (it misses nothing that follows), and the ready-only watcher still sees only its own."""
    waiter, writer = backend.open(), backend.open()
    ready = waiter.watch(ready_only=True)
    first = writer.put(pending(0, two=False))
    if backend.kind == "postgres":
        assert ready.wait(0.5) is False  # listening for ready changes only
    every = waiter.watch()
    second = writer.put(pending(1, two=False))
    assert every.wait(10) is True
    if backend.kind == "postgres":
        assert ready.wait(0.5) is False
    writer.record(first, Answer("elc-a-0", True, {"name": "Ada"}))
    assert ready.wait(10) is True
    assert every.wait(10) is True
    writer.remove(second)
    assert every.wait(10) is True


@pytest.mark.anyio
async def test_a_watcher_waits_on_the_event_loop_without_a_thread_and_cancels(backend: Backend) -> None:
    import anyio

    waiter, writer = backend.open(), backend.open()
    watcher = waiter.watch()
    with anyio.move_on_after(0.2) as scope:
        await watcher.wait_async(30)
    assert scope.cancelled_caught  # cancelled cleanly
    assert await watcher.wait_async(0.05) is False
    async with anyio.create_task_group() as group:
        got: list[bool] = []

        async def wait() -> None:
            got.append(await watcher.wait_async(30))

        group.start_soon(wait)
        await anyio.sleep(0.1)
        await anyio.to_thread.run_sync(writer.put, pending(9))
    assert got == [True]


# --- what does not read -------------------------------------------------------------------------------


def _tamper(backend: Backend, key: str, column: str, value: str) -> None:
    backend.sql(
        f"UPDATE toolnexus_call SET {column} = ? WHERE key = ?",
        f"UPDATE toolnexus_call SET {column} = %s WHERE key = %s",
        (value, key),
    )


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('{"format": "toolnexus.pending", "version": 9', "not JSON"),
        ("[1, 2]", "JSON list"),
        ("[" * 100_000 + "]" * 100_000, "nested too deep|not JSON"),
        ('{"format": "toolnexus.pending", "version": 99}', "version 99"),
        ('{"format": "' + "x" * 1_000_000 + '"}', "format"),
    ],
    ids=["truncated", "a-list", "deep", "newer-version", "huge-value"],
)
def test_a_row_that_does_not_read_is_failed_with_the_reason_and_the_rest_work(
    store: Store, backend: Backend, text: str, reason: str
) -> None:
    bad, good = store.put(pending(0)), store.put(pending(1))
    answer_all(store, bad, 0)
    answer_all(store, good, 1)
    _tamper(backend, bad, "pending", text)
    calls = {call.key: call for call in store.calls()}
    assert calls[bad].status == "failed"
    assert calls[bad].pending is None
    error = calls[bad].error
    assert error is not None
    assert len(error) < 600  # never the bad value repeated whole
    assert re.search(reason, error), error
    assert calls[good].status == "ready"
    assert store.list() == [(good, pending(1))]
    claimed = store.claim(lease=30, limit=5)
    assert [claim.key for claim in claimed] == [good]  # the bad one marked failed, not returned
    assert store.call(bad).status == "failed"


def test_an_answer_row_that_does_not_read_fails_that_call_only(store: Store, backend: Backend) -> None:
    bad, good = store.put(pending(0)), store.put(pending(1))
    answer_all(store, bad, 0)
    answer_all(store, good, 1)
    backend.sql(
        "UPDATE toolnexus_answer SET answer = ? WHERE key = ?",
        "UPDATE toolnexus_answer SET answer = %s WHERE key = %s",
        ("not json", bad),
    )
    with pytest.raises(ValueError, match="not JSON"):
        store.answers(bad)
    listed = {call.key: call for call in store.calls()}  # reported as that call's problem
    assert (listed[bad].status, listed[good].status) == ("failed", "ready")
    error = listed[bad].error
    assert error is not None
    assert "not JSON" in error
    assert store.call(bad).status == "failed"
    assert [call.key for call in store.page_calls()[0]] == [good, bad]
    assert [claim.key for claim in store.claim(lease=30, limit=5)] == [good]
    failed: Call = store.call(bad)
    assert failed.status == "failed"
    assert failed.error is not None
    assert "not JSON" in failed.error


def test_a_store_of_a_newer_format_is_refused(backend: Backend) -> None:
    backend.open().close()
    backend.sql(
        "UPDATE toolnexus_meta SET value = '99' WHERE name = 'format'",
        "UPDATE toolnexus_meta SET value = '99' WHERE name = 'format'",
    )
    with pytest.raises(StoreError, match=f"format 99.*format {STORE_FORMAT}"):
        backend.open()


def test_read_only_writes_nothing(backend: Backend) -> None:
    writer = backend.open()
    key = writer.put(pending())
    reader = backend.open(read_only=True, create=False)
    assert reader.get(key) == pending()
    assert [c.status for c in reader.calls()] == ["waiting"]
    for write in (
        lambda: reader.put(pending(1)),
        lambda: reader.record(key, Answer("elc-a-0", True, {"name": "Ada"})),
        lambda: reader.claim(lease=5),
        lambda: reader.remove(key),
        reader.sweep,
    ):
        with pytest.raises(StoreError, match="read-only"):
            write()
    assert writer.answers(key) == {}


def test_checks_of_arguments(store: Store) -> None:
    for bad_lease in (0, -1, float("inf"), 10**9):
        with pytest.raises(ValueError, match="lease"):
            store.claim(lease=bad_lease)
    with pytest.raises(TypeError, match="lease"):
        store.claim(lease="5")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="limit"):
        store.claim(lease=5, limit=0)
    with pytest.raises(ValueError, match="status"):
        store.calls(status="gone")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        store.put("not a pending")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        store.get(3)  # type: ignore[arg-type]


def test_pages_of_calls_newest_first_by_keyset(store: Store, backend: Backend) -> None:
    keys = [store.put(pending(n, server="alpha" if n % 2 else "beta")) for n in range(5)]
    _tamper(backend, keys[2], "pending", "not json")
    first, cursor = store.page(limit=2)
    assert [row[0] for row in first] == [keys[4], keys[3]]
    assert cursor is not None
    second, cursor = store.page(limit=2, before=cursor)
    assert [row[0] for row in second] == [keys[2], keys[1]]
    assert isinstance(second[0][2], ValueError)  # the bad row, in its place
    assert second[1][2] == pending(1, server="alpha")
    third, cursor = store.page(limit=2, before=cursor)
    assert ([row[0] for row in third], cursor) == ([keys[0]], None)
    alpha, _ = store.page(server="alpha")
    assert [row[0] for row in alpha] == [keys[3], keys[1]]
    with pytest.raises(ValueError, match="cursor"):
        store.page(before="x; DROP TABLE")


def test_a_page_of_calls_is_each_call_as_call_gives_it(store: Store, backend: Backend) -> None:
    keys = [store.put(pending(n, server="alpha" if n % 2 else "beta")) for n in range(5)]
    answer_all(store, keys[1], 1)  # ready
    store.record(keys[3], Answer("elc-a-3", True, {"name": "Ada"}))  # one of two answered
    _tamper(backend, keys[2], "pending", "not json")
    (claim,) = store.claim(lease=10)
    store.finish(claim.key, claim.token, {"content": []})  # done, with its result
    seen: list[str] = []
    cursor = None
    while True:
        calls, next_cursor = store.page_calls(limit=2, before=cursor)
        rows, same_cursor = store.page(limit=2, before=cursor)
        assert next_cursor == same_cursor
        assert [call.key for call in calls] == [row[0] for row in rows]
        for call in calls:
            assert call == store.call(call.key)
        seen += [call.key for call in calls]
        if next_cursor is None:
            break
        cursor = next_cursor
    assert seen == keys[::-1]
    statuses = {call.key: call.status for call in store.calls()}
    assert [statuses[key] for key in keys] == ["waiting", "done", "failed", "waiting", "waiting"]
    assert store.call(keys[3]).answered == frozenset({"elc-a-3"})
    alpha, cursor = store.page_calls(server="alpha")
    assert ([call.key for call in alpha], cursor) == ([keys[3], keys[1]], None)
    assert store.page_calls(server="nobody") == ([], None)
    with pytest.raises(ValueError, match="cursor"):
        store.page_calls(before="1 OR 1=1")
    with pytest.raises(ValueError, match="limit"):
        store.page_calls(limit=0)


# --- tables that are not a store's, and earlier formats ------------------------------------------


@pytest.mark.parametrize("table", ["toolnexus_call", "toolnexus_answer", "toolnexus_meta"])
def test_a_same_named_table_that_is_not_a_stores_is_refused_untouched(backend: Backend, table: str) -> None:
    backend.sql(
        f"CREATE TABLE {table} (id INTEGER PRIMARY KEY, secret TEXT)",
        f"CREATE TABLE {table} (id integer PRIMARY KEY, secret text)",
    )
    backend.sql(
        f"INSERT INTO {table} (id, secret) VALUES (1, 'token-abc')",
        f"INSERT INTO {table} (id, secret) VALUES (1, 'token-abc')",
    )
    for options in ({}, {"read_only": True}, {"create": False}):
        with pytest.raises(StoreError, match=f"the table {table} is not a toolnexus store's") as refused:
            backend.open(**options)
        assert "\n" not in str(refused.value)
    assert backend.query(f"SELECT id, secret FROM {table}") == [(1, "token-abc")]
    names = {row[0] for row in backend.query(_TABLES_SQL[backend.kind])}
    assert names == {table}  # nothing made beside it


_TABLES_SQL = {
    "sqlite": "SELECT name FROM sqlite_master WHERE type = 'table'",
    "postgres": "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()",
}

# What the previous format (2) made, as its code wrote it, frozen here: SQLite named its tables
# apart from PostgreSQL's then.
_FORMAT_2 = {
    "sqlite": [
        "CREATE TABLE toolnexus_store (name TEXT PRIMARY KEY, value TEXT NOT NULL)",
        "CREATE TABLE toolnexus_pending (seq INTEGER PRIMARY KEY AUTOINCREMENT, key TEXT NOT NULL UNIQUE,"
        " created TEXT NOT NULL, pending TEXT NOT NULL, status TEXT NOT NULL DEFAULT 'waiting', server TEXT,"
        " asked INTEGER NOT NULL DEFAULT 0, expires REAL, updated REAL NOT NULL DEFAULT 0, token TEXT,"
        " lease_until REAL, attempts INTEGER NOT NULL DEFAULT 0, outcome TEXT, error TEXT, follows TEXT,"
        " next TEXT)",
        "CREATE INDEX toolnexus_pending_status ON toolnexus_pending (status, seq)",
        "CREATE TABLE toolnexus_answer (key TEXT NOT NULL, request_id TEXT NOT NULL, answer TEXT NOT NULL,"
        " PRIMARY KEY (key, request_id))",
        "INSERT INTO toolnexus_store (name, value) VALUES ('format', '2')",
    ],
    "postgres": [
        "CREATE TABLE toolnexus_meta (name text PRIMARY KEY, value text NOT NULL)",
        "CREATE TABLE toolnexus_call (seq bigserial UNIQUE, key text PRIMARY KEY, created text NOT NULL,"
        " pending text NOT NULL, status text NOT NULL, server text, asked integer NOT NULL, expires float8,"
        " updated float8 NOT NULL, token text, lease_until float8, attempts integer NOT NULL DEFAULT 0,"
        " outcome text, error text, follows text, next text)",
        "CREATE INDEX toolnexus_call_status ON toolnexus_call (status, seq)",
        "CREATE TABLE toolnexus_answer (key text NOT NULL REFERENCES toolnexus_call (key) ON DELETE CASCADE,"
        " request_id text NOT NULL, answer text NOT NULL, PRIMARY KEY (key, request_id))",
        "INSERT INTO toolnexus_meta (name, value) VALUES ('format', '2')",
    ],
}


def test_a_store_of_the_previous_format_is_upgraded_with_everything_in_it(backend: Backend) -> None:
    import json

    calls = "toolnexus_pending" if backend.kind == "sqlite" else "toolnexus_call"
    for statement in _FORMAT_2[backend.kind]:
        backend.sql(statement, statement)
    rows = [
        ("k-wait", pending(0), "waiting", None),
        ("k-ready", pending(1), "ready", None),
        ("k-done", pending(2), "done", '{"content":[],"isError":false}'),
    ]
    for key, made, status, outcome in rows:
        params = (key, json.dumps(made.to_dict()), status, made.server, len(made.requests), outcome)
        backend.sql(
            f"INSERT INTO {calls} (key, created, pending, status, server, asked, updated, outcome)"
            " VALUES (?, '2026-11-01T00:00:00.000Z', ?, ?, ?, ?, 1.0, ?)",
            f"INSERT INTO {calls} (key, created, pending, status, server, asked, updated, outcome)"
            " VALUES (%s, '2026-11-01T00:00:00.000Z', %s, %s, %s, %s, 1.0, %s)",
            params,
        )
    backend.sql(
        f"INSERT INTO {calls} (key, created, pending, status, server, asked, updated)"
        " VALUES ('k-bad', '2026-11-01T00:00:00.000Z', '{', 'waiting', 'srv', 1, 1.0)",
        f"INSERT INTO {calls} (key, created, pending, status, server, asked, updated)"
        " VALUES ('k-bad', '2026-11-01T00:00:00.000Z', '{', 'waiting', 'srv', 1, 1.0)",
    )
    for request_id, answer in (
        ("elc-a-1", {"id": "elc-a-1", "ok": True, "data": {"name": "Ada"}}),
        ("elc-b-1", {"id": "elc-b-1", "ok": True}),
    ):
        backend.sql(
            "INSERT INTO toolnexus_answer (key, request_id, answer) VALUES ('k-ready', ?, ?)",
            "INSERT INTO toolnexus_answer (key, request_id, answer) VALUES ('k-ready', %s, %s)",
            (request_id, json.dumps(answer)),
        )
    with pytest.raises(StoreError, match=r"format 2.*open it once for writing"):
        backend.open(read_only=True)  # read-only: refused, and not changed
    assert backend.query("SELECT count(*) FROM toolnexus_answer") == [(2,)]
    store = backend.open()
    found = {call.key: call for call in store.calls()}
    assert {key: call.status for key, call in found.items()} == {
        "k-wait": "waiting",
        "k-ready": "ready",
        "k-done": "done",
        "k-bad": "failed",
    }
    assert found["k-done"].result == {"content": [], "isError": False}
    assert store.answers("k-ready")["elc-a-1"] == Answer("elc-a-1", True, {"name": "Ada"})
    assert backend.query("SELECT key, method, target FROM toolnexus_call ORDER BY seq") == [
        ("k-wait", "tools/call", "deploy"),
        ("k-ready", "tools/call", "deploy"),
        ("k-done", "tools/call", "deploy"),
        ("k-bad", None, None),
    ]
    assert backend.query("SELECT value FROM toolnexus_meta WHERE name = 'format'") == [(str(STORE_FORMAT),)]
    names = {row[0] for row in backend.query(_TABLES_SQL[backend.kind])} - {"sqlite_sequence"}
    assert names == {
        "toolnexus_meta",
        "toolnexus_call",
        "toolnexus_answer",
        "toolnexus_history",
        "toolnexus_cursor",
    }
    (claim,) = store.claim(lease=30)
    assert (claim.key, set(claim.answers)) == ("k-ready", {"elc-a-1", "elc-b-1"})
    store.finish(claim.key, claim.token, {"content": []})
    key = store.put(pending(7))  # new calls go in beside the old
    assert [call.key for call in store.calls()][-1] == key
    reader = backend.open(read_only=True)
    assert len(reader.calls()) == 5


# --- parked tasks ----------------------------------------------------------------------------


def task_record(
    task_id: str = "t-1", *, ttl: float | None = None, now: float = 0.0, interval: int | None = 2000
) -> Pending:
    """A call the server made a task, as parked (no question yet)."""
    expires_at = utc_timestamp(now=now + ttl) if ttl is not None else None
    return Pending(
        "tools/call", "report", {"q": 3}, None, (), (), {}, "srv", ParkedTask(task_id, interval, expires_at)
    )


def task_asking(record: Pending, n: int, *answered: str) -> Pending:
    """``record`` asking one question (its key ``q<n>``), with ``answered`` keys answered before."""
    question = Request(f"elc-t-{n}", "input", f"Question {n}?", None, {"schema": SCHEMA})
    assert record.task is not None
    task = dataclasses.replace(record.task, answered=answered)
    return dataclasses.replace(record, input_keys=(f"q{n}",), requests=(question,), task=task)


def test_a_parked_task_is_working_polled_when_due_and_its_steps_end_claims(
    store: Store, backend: Backend
) -> None:
    events: list[Event] = []
    store.on_event = events.append
    record = task_record(now=backend.clock.now)
    key = store.put(record)
    call = store.call(key)
    assert (call.status, call.note) == ("working", None)
    assert call.poll_at == pytest.approx(backend.clock.now + 2)
    assert store.next_poll() == pytest.approx(2)
    assert store.claim(lease=30) == []  # not due yet
    backend.clock.advance(2)
    assert store.next_poll() == 0
    (claim,) = store.claim(lease=30)
    assert (claim.key, claim.pending, claim.answers) == (key, record, {})
    assert store.next_poll() is None  # claimed: nothing works unpolled
    store.task_working(key, claim.token, poll_in=5, note="step 1 of 3")
    call = store.call(key)
    assert (call.status, call.note) == ("working", "step 1 of 3")
    assert call.poll_at == pytest.approx(backend.clock.now + 5)
    with pytest.raises(LeaseLostError):  # that claim is over
        store.task_working(key, claim.token, poll_in=5, note=None)
    backend.clock.advance(5)
    (claim,) = store.claim(lease=30)
    asking = task_asking(record, 1)
    store.task_asks(key, claim.token, asking, note="needs you")
    call = store.call(key)
    assert (call.status, call.pending, call.note, call.poll_at) == ("waiting", asking, "needs you", None)
    assert store.claim(lease=30) == []
    store.record(key, Answer("elc-t-1", True, {"name": "Ada"}))
    assert store.call(key).status == "ready"
    (claim,) = store.claim(lease=30)
    assert set(claim.answers) == {"elc-t-1"}
    # The answer sent, the task asks again: the earlier answer stays, the new question waits.
    again = task_asking(record, 2, "q1")
    store.task_asks(key, claim.token, again, note=None)
    call = store.call(key)
    assert (call.status, call.answered) == ("waiting", frozenset({"elc-t-1"}))
    with pytest.raises(ValueError, match="elc-t-1"):
        store.record(key, Answer("elc-t-1", True, {"name": "Bo"}))  # an earlier round's: not asked now
    store.record(key, Answer("elc-t-2", True, {"name": "Bo"}))
    assert store.call(key).status == "ready"  # counted against this round's question alone
    (claim,) = store.claim(lease=30)
    done = dataclasses.replace(again, input_keys=(), requests=())
    store.task_working(key, claim.token, poll_in=0, note=None, pending=done)
    assert store.get(key) == done
    (claim,) = store.claim(lease=30)
    store.finish(key, claim.token, {"content": []})
    assert store.call(key).status == "done"
    assert [(e.kind, e.status) for e in events if e.kind in ("parked", "finished")] == [
        ("parked", "working"),
        ("parked", "waiting"),
        ("parked", "waiting"),
        ("finished", "done"),
    ]


def test_a_parked_task_ends_cancelled_or_expired_and_its_time_to_live_expires_it_in_a_sweep(
    store: Store, backend: Backend
) -> None:
    cancelled = store.put(task_record("t-c", now=backend.clock.now, interval=0))
    assert store.claim(lease=30, key=cancelled) == []  # 0 ms: polled after the floor, not at once
    backend.clock.advance(0.25)
    (claim,) = store.claim(lease=30, key=cancelled)
    store.task_ended(cancelled, claim.token, "cancelled", "the server cancelled the task")
    call = store.call(cancelled)
    assert (call.status, call.error) == ("cancelled", "the server cancelled the task")
    with pytest.raises(ValueError, match="cancelled or expired"):
        store.task_ended(cancelled, "x", "done", "no")  # type: ignore[arg-type]
    short = store.put(task_record("t-s", ttl=60, now=backend.clock.now))
    asking = store.put(task_asking(task_record("t-a", ttl=60, now=backend.clock.now), 1))
    long = store.put(task_record("t-l", ttl=3600, now=backend.clock.now))
    backend.clock.advance(61)
    assert store.sweep() == 2
    statuses = {key: (store.call(key).status, store.call(key).error) for key in (short, asking, long)}
    assert statuses == {
        short: ("expired", "the task's time to live ran out before it ended"),
        asking: ("expired", "a question expired before it was answered"),
        long: ("working", None),
    }
    backend.clock.advance(3600)
    store.expire(long, "the host gave up")  # a working task can be expired by hand too
    assert store.call(long).status == "expired"


def test_a_task_record_is_checked_and_its_note_cut(store: Store, backend: Backend) -> None:
    key = store.put(task_record(now=backend.clock.now, interval=10**12))
    assert store.call(key).poll_at == pytest.approx(backend.clock.now + 300)  # held under the ceiling
    backend.clock.advance(300)
    (claim,) = store.claim(lease=30)
    with pytest.raises(ValueError, match="not a parked task"):
        store.task_asks(key, claim.token, pending(), note=None)
    with pytest.raises(ValueError, match="no question"):
        store.task_asks(key, claim.token, task_record(), note=None)
    with pytest.raises(TypeError, match="note"):
        store.task_working(key, claim.token, poll_in=1, note=3)  # type: ignore[arg-type]
    store.task_working(key, claim.token, poll_in=1, note="x" * 10_000)
    assert store.call(key).note == "x" * 500


# --- history ---------------------------------------------------------------------------------


def test_each_call_keeps_its_history_who_and_how_never_an_answers_content(
    store: Store, backend: Backend
) -> None:
    def told(key: str) -> list[tuple[str, str | None, str | None, str | None, str | None]]:
        return [(e.kind, e.status, e.actor, e.via, e.detail) for e in store.history(key)]

    key = store.put(pending(0, two=False))
    store.record(key, Answer("elc-a-0", True, {"name": "Ada Secret"}), by="  alice\n smith ", via="inbox")
    (claim,) = store.claim(lease=30, by="worker-1")
    store.fail(key, claim.token, "the server is gone", retry=True)
    backend.clock.advance(1)
    (claim,) = store.claim(lease=30)  # nobody named
    store.release(key, claim.token)
    assert told(key) == [
        ("parked", "waiting", None, None, None),
        ("answer", "waiting", "alice smith", "inbox", "elc-a-0: accept"),
        ("ready", "ready", None, None, None),
        ("claimed", "resuming", "worker-1", "worker", None),
        ("ready", "ready", None, None, "the server is gone"),
        ("claimed", "resuming", None, "worker", None),
        ("ready", "ready", None, None, "given back unresumed"),
    ]
    assert [e.at for e in store.history(key)][-1] == pytest.approx(backend.clock.now)
    assert "Ada Secret" not in repr(store.history(key))
    live = store.put_live(pending(1, two=False), token="t" * 16, lease=10)
    store.opened(live, by="bo", via="link")
    store.opened(live, by="bo", via="link")
    store.opened(live, by="bo", via="inbox")
    store.record(live, Answer("elc-a-1", False, reason="declined"), by="bo", via="link")
    assert told(live) == [
        ("asked", "live", None, None, None),
        ("opened", "live", "bo", "link", None),
        ("opened", "live", "bo", "inbox", None),
        ("answer", "live", "bo", "link", "elc-a-1: decline"),
        ("answered", "answered", None, None, None),
    ]
    gone = store.put_live(pending(2, two=False), token="u" * 16, lease=10)
    backend.clock.advance(11)
    store.sweep()
    assert told(gone)[-1] == (
        "withdrawn",
        "withdrawn",
        None,
        None,
        "the process that asked it stopped (its lease ran out)",
    )
    with pytest.raises(TypeError, match="by must be a str"):
        store.record(key, Answer("elc-a-0", True, {"name": "x"}), by=3)  # type: ignore[arg-type]
    store.remove(key)
    with pytest.raises(KeyError):
        store.history(key)
    assert backend.query(f"SELECT count(*) FROM toolnexus_history WHERE key = '{key}'") == [(0,)]


def test_a_parked_tasks_history_keeps_each_status_message_once_and_its_end(
    store: Store, backend: Backend
) -> None:
    key = store.put(task_record(now=backend.clock.now, interval=250))
    for note in ("step 1", "step 1", "step 2"):
        backend.clock.advance(1)
        (claim,) = store.claim(lease=30)
        store.task_working(key, claim.token, poll_in=0.25, note=note)
    backend.clock.advance(1)
    (claim,) = store.claim(lease=30)
    store.task_asks(key, claim.token, task_asking(task_record(), 1), note="step 2")
    store.expire(key, "nobody answered", by="ops")
    told = [(e.kind, e.detail, e.actor) for e in store.history(key) if e.kind != "claimed"]
    assert told == [
        ("parked", None, None),
        ("working", "step 1", None),
        ("working", "step 2", None),
        ("parked", "1 question", None),
        ("finished", "nobody answered", "ops"),
    ]


def test_a_question_that_waits_long_enough_is_reminded_once_each_time(store: Store, backend: Backend) -> None:
    waiting = store.put(pending(0, two=False))
    answered = store.put(pending(1, two=False))
    store.record(answered, Answer("elc-a-1", True, {"name": "Ada"}))
    backend.clock.advance(59)
    assert store.remind(60) == 0
    backend.clock.advance(2)
    assert store.remind(60) == 1  # the waiting one; the answered one waits for no person
    assert store.remind(60) == 0  # reminded: not again before another minute
    backend.clock.advance(61)
    assert store.remind(60) == 1
    told = [(e.kind, e.detail) for e in store.history(waiting) if e.kind == "reminded"]
    assert told == [("reminded", "unanswered for 1 min")] * 2


def test_a_notification_targets_place_is_held_by_one_sender_and_paused_after_failures(
    store: Store, backend: Backend
) -> None:
    store.put(pending(0))
    start = store.take_target("hook", "a", 30)
    assert start is not None  # the history's end: what comes from now on
    assert store.sendable(start) == []
    assert store.take_target("hook", "b", 30) is None  # a holds it
    key = store.put(pending(1))
    (sent,) = store.sendable(start)
    assert (sent.key, sent.server, sent.target, sent.entry.kind) == (key, "srv", "deploy", "parked")
    store.target_sent("hook", "a", sent.seq)
    with pytest.raises(LeaseLostError):
        store.target_sent("hook", "b", sent.seq)
    assert store.target_failed("hook", "a", "HTTP 503") == 1.0
    assert store.take_target("hook", "a", 30) is None  # paused
    backend.clock.advance(1)
    assert store.take_target("hook", "b", 30) == sent.seq  # taken where it was
    assert store.target_failed("hook", "b", "HTTP 503", first=1, longest=3) == 2.0
    backend.clock.advance(2)
    assert store.take_target("hook", "b", 30) == sent.seq
    assert store.target_failed("hook", "b", "timeout", first=1, longest=3) == 3.0  # at most longest
    backend.clock.advance(3)
    assert store.take_target("hook", "a", 30) == sent.seq
    store.target_sent("hook", "a", sent.seq)  # a success forgets the failures
    store.release_target("hook", "a")
    assert store.take_target("hook", "b", 30) == sent.seq
    backend.clock.advance(31)
    assert store.take_target("hook", "c", 30) == sent.seq  # b's hold ran out
    assert len(store.instance) == 16


# --- PostgreSQL's own ------------------------------------------------------------------------


@pytest.mark.e2e
def test_postgresql_leases_run_on_the_databases_clock(postgres_url: str) -> None:
    """The one real-clock lease test: a lease of 1 s on PostgreSQL's own clock (the default)."""
    from toolnexus.durable import PostgresStore

    with PostgresStore(postgres_url) as store, PostgresStore(postgres_url) as other:
        key = store.put(pending())
        answer_all(store, key)
        (first,) = store.claim(lease=1)
        (now,) = other.calls()[0:1]
        assert now.lease_until is not None
        assert abs(now.lease_until - (time.time() + 1)) < 5  # the same machine's clock, roughly
        assert other.claim(lease=30) == []
        while time.time() < first.lease_until + 0.05:
            time.sleep(0.05)
        (second,) = other.claim(lease=30)
        assert second.attempt == 2


@pytest.mark.e2e
def test_postgresql_read_only_sessions_cannot_write_even_by_sql(postgres_url: str) -> None:
    from toolnexus.durable import PostgresStore

    with PostgresStore(postgres_url) as writer:
        key = writer.put(pending())
    with PostgresStore(postgres_url, read_only=True) as reader:
        assert reader.get(key) == pending()
        with reader._d.transaction(write=False) as tx:
            (setting,) = tx.run("SHOW default_transaction_read_only").fetchone()
        assert setting == "on"
        with pytest.raises(StoreError, match="read-only"), reader._d.transaction(write=True) as tx:
            tx.run("DELETE FROM toolnexus_call")
    with PostgresStore(postgres_url) as writer:
        assert [c.key for c in writer.calls()] == [key]


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"pool_size": 0}, ValueError, "pool_size must be from 1 to 100"),
        ({"pool_size": 1000}, ValueError, "pool_size must be from 1 to 100"),
        ({"pool_size": 2.5}, TypeError, "pool_size must be an int"),
        ({"connect_timeout": 1}, ValueError, "connect_timeout must be at least 2"),
        ({"connect_timeout": 2.5}, ValueError, "connect_timeout must be a whole number"),
        ({"connect_timeout": 0}, ValueError, "connect_timeout must be a positive"),
        ({"connect_timeout": 10**6}, ValueError, "connect_timeout must be at most 3600"),
        ({"connect_timeout": "5"}, TypeError, "connect_timeout must be a number"),
    ],
)
def test_postgresql_options_out_of_range_are_refused_not_clamped(
    options: dict[str, Any], error: type[Exception], message: str
) -> None:
    from toolnexus.durable import PostgresStore

    with pytest.raises(error, match=message):  # before any connection is tried
        PostgresStore("postgresql://nobody@127.0.0.1:1/none", **options)
