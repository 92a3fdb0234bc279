"""What every store of parked calls shares: the lifecycle's values (``Status``, ``Call``,
``Claim``, ``Event``), the [`Store`][toolnexus.durable.Store] interface, the errors, and the
reading of what a store row holds (hostile until read).

The lifecycle itself is written once, in ``_engine``, over a small dialect per database
(``_sqlite``, ``_postgres``):

- ``waiting``: a question is unanswered. ``record`` adds answers; the last one makes it
- ``ready``: every question answered. ``claim`` takes it, atomically, for one resumer:
- ``resuming``: claimed under a lease (a token and a deadline). The resumer renews the lease
  while it works and ends the claim with one of ``finish`` (``done``, the result kept as
  JSON), ``finish_parked`` (``done``, pointing at the new call the server's next question
  parked, which records the key it follows), ``fail`` (``failed``, the error kept; or back
  to ``ready`` for a retry) or ``release`` (back to ``ready``: nothing was sent). A lease
  that runs out makes the call ``ready`` again (``sweep``), or claimable at once.
- ``done``, ``failed``, ``expired`` (a question's ``expiresAt`` passed while it waited, or the
  host's ``expire``): finished; kept for the store's retention, then purged by ``sweep``.

A *parked task* (a call the server made a task, MCP 2026-07-28's tasks extension; its
record's ``task`` names it) is polled by whichever worker claims it:

- ``working``: the server works; claimable once its ``poll_at`` comes. The worker that
  claims it asks the server (``tasks/get``) and ends the claim with ``task_working`` (still
  at work: ``working`` again, polled later, its status message kept in ``note``),
  ``task_asks`` (the task asks: the record now holds its questions, ``waiting``; answered,
  it is ``ready``, and the claim that takes it sends the answers), ``finish``, ``fail``, or
  ``task_ended`` (``cancelled`` by the server, or ``expired``: its time to live ran out,
  which ``sweep`` also finds).

A *live* question (``put_live``: a call held open in the process that asked, which waits for
the answer given elsewhere) has a shorter life of its own:

- ``live``: its holder renews a lease while it waits (``renew_held``); ``record`` keeps the
  answer and makes it
- ``answered``: the holder takes the answer (``held`` tells it); or
- ``withdrawn``: the call ended unanswered (``withdraw``: the holder was cancelled, its
  time ran out, or another answerer was first), or the holder's lease ran out (``sweep``:
  the process died). A withdrawn question can no longer be answered.
"""

from __future__ import annotations

import builtins
import json
import logging
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal, Protocol, TypeAlias, get_args

from ._answering import as_answer, result_for
from ._pending import Pending
from ._time import check_seconds, read_expires_at, utc_timestamp
from ._wire import Answer

if TYPE_CHECKING:
    from ._watch import Watcher

__all__ = [
    "ANY_SERVER",
    "DEFAULT_RETENTION",
    "FINISHED",
    "OPEN",
    "STATUSES",
    "STORE_FORMAT",
    "TASK_POLL",
    "Call",
    "Claim",
    "Event",
    "EventHook",
    "EventKind",
    "HistoryEntry",
    "HistoryKind",
    "Status",
    "Store",
    "check_answer",
    "check_key",
    "check_lease",
    "check_limit",
    "check_server",
    "decode_answer",
    "decode_json_object",
    "decode_pending",
    "dumps",
    "earliest_expiry",
    "encode_pending",
    "fire",
    "new_key",
    "outcome_json",
    "task_poll_delay",
]

logger = logging.getLogger(__name__)

STORE_FORMAT: Final = 6
"""The version of the stores' schema. A store of a newer version is refused when opened; one
of an older version is upgraded in place (an ordered list of migrations per database) the
first time it is opened for writing, and refused read-only until then."""

Status: TypeAlias = Literal[
    "live",
    "waiting",
    "ready",
    "resuming",
    "working",
    "done",
    "failed",
    "expired",
    "cancelled",
    "answered",
    "withdrawn",
]
STATUSES: Final[tuple[Status, ...]] = get_args(Status)
"""Every status a call goes through: a live question's (``live``, then ``answered`` or
``withdrawn``), a parked call's (``waiting`` to ``done``, ``failed`` or ``expired``) and a
parked task's (``working`` between its questions; it may also end ``cancelled``)."""
FINISHED: Final[tuple[Status, ...]] = ("done", "failed", "expired", "cancelled", "answered", "withdrawn")
"""The statuses a call ends in: kept for the store's retention, then purged."""
OPEN: Final[tuple[Status, ...]] = ("live", "waiting")
"""The statuses in which a call's questions can be answered."""

DEFAULT_RETENTION: Final = 7 * 24 * 3600.0
"""Seconds a finished call is kept by default (a week)."""

TASK_POLL: Final = (0.25, 300.0)
"""The shortest and longest wait between two polls of a parked task, in seconds: a server's
``pollIntervalMs`` is held between them (it may say 0, or a year); 1 s when it names none."""


def task_poll_delay(poll_interval_ms: int | None) -> float:
    """Seconds to wait before polling a parked task, for the server's ``pollIntervalMs``."""
    wanted = poll_interval_ms / 1000 if poll_interval_ms is not None else 1.0
    return min(max(wanted, TASK_POLL[0]), TASK_POLL[1])


class _AnyServer:
    def __repr__(self) -> str:
        return "ANY_SERVER"


ANY_SERVER: Final = _AnyServer()
"""For ``claim(server=...)``: calls parked from any server (the default)."""


@dataclass(frozen=True, slots=True)
class Call:
    """One parked call as a store holds it: its status and what came of it."""

    key: str
    """The key it is kept under."""
    status: Status
    """Where it is in the lifecycle; ``failed`` also for a record (or an answer) that does
    not read."""
    pending: Pending | None
    """The parked call; ``None`` when its record does not read (``error`` says why)."""
    server: str | None
    """The name of the server it was parked from, as recorded."""
    created: str
    """When it was parked (RFC 3339 UTC)."""
    updated: float
    """When its status last changed (seconds since the epoch, on the store's clock)."""
    answered: frozenset[str]
    """The ids of its answered questions."""
    attempts: int = 0
    """How often it has been claimed."""
    lease_until: float | None = None
    """While ``resuming``: when the resumer's lease runs out (seconds since the epoch)."""
    error: str | None = None
    """Why it ``failed`` (or ``expired``), or why its record does not read."""
    result: dict[str, Any] | None = None
    """When ``done``: the server's result, as JSON (``model_dump(mode="json", by_alias=True)``)."""
    follows: str | None = None
    """The key of the call this one continues (the server asked again about it)."""
    next: str | None = None
    """When ``done`` because the server asked again: the key of the new parked call."""
    live: bool = False
    """A live question: the call that asked it is held open in the process that asked, which
    takes the answer itself (``status`` ``live``, then ``answered`` or ``withdrawn``)."""
    leases_lost: int = 0
    """How often a resumer's lease ran out before it recorded an outcome (the call was then
    made ready, or claimed, again): a resumer killed, or cut off from the store for longer
    than its lease."""
    note: str | None = None
    """A parked task's status message, as the server last said it (its text as sent: escape
    it before a terminal or a page shows it); ``None`` for other calls."""
    poll_at: float | None = None
    """A ``working`` task's next poll (seconds since the epoch, on the store's clock)."""


@dataclass(frozen=True, slots=True)
class Claim:
    """A ready call claimed by one resumer: what it needs to resume and to report the outcome."""

    key: str
    pending: Pending
    answers: dict[str, Answer]
    token: str
    """The claim's lease token: ``finish``, ``fail``, ``release`` and ``renew`` need it."""
    attempt: int
    """1 for the first claim of this call, 2 for the next (a retry, or a dead resumer's lease taken over)."""
    lease_until: float
    """When the lease runs out unless renewed (seconds since the epoch, on the store's clock)."""


EventKind: TypeAlias = Literal[
    "asked", "parked", "ready", "claimed", "finished", "answered", "withdrawn", "removed"
]


@dataclass(frozen=True, slots=True)
class Event:
    """What a notification hook is told: a call changed status.

    One for every transition, through any method of the store object the hook is given to:
    ``asked`` (``put_live``: a live question), ``parked`` (``put``, the new call of
    ``finish_parked``, a parked task's new questions: ``task_asks``), ``ready`` (the last
    answer recorded, ``release``, ``retry``, ``fail(retry=True)``, a lease that ran out when
    ``sweep`` finds it), ``claimed`` (``claim``), ``finished`` (``finish``,
    ``finish_parked``, ``fail``, ``expire``, ``task_ended``, a deadline that ``sweep`` finds
    passed), ``answered`` (a live question's answer recorded),
    ``withdrawn`` (``withdraw``, or a live question whose holder's lease ran out) and
    ``removed`` (``remove``).
    """

    kind: EventKind
    key: str
    status: Status | None
    """The call's status after the change (``None`` once removed)."""
    server: str | None
    target: str | None
    """The tool's or prompt's name, or the resource's URI."""
    error: str | None = None


EventHook: TypeAlias = Callable[[Event], None]

HistoryKind: TypeAlias = EventKind | Literal["answer", "opened", "working", "reminded", "notified"]
"""What a call's history tells: each [`Event`][toolnexus.durable.Event]'s kind, and
``answer`` (one answer recorded: its request and action, by whom), ``opened`` (a person
opened it), ``working`` (a parked task's status message changed), ``reminded`` (it waited
long enough for a reminder), ``notified`` (a notification about it went to a target)."""


_SAID: Final = {
    "parked": "parked, waiting for answers",
    "asked": "asked live",
    "answer": "answered",
    "opened": "opened",
    "ready": "ready to resume",
    "claimed": "claimed",
    "withdrawn": "withdrawn",
    "removed": "removed",
    "working": "the task says",
    "reminded": "reminded",
    "notified": "notified",
}


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    """One entry of a call's history ([`history`][toolnexus.durable.SqliteStore.history]).
    Never an answer's content: an answer is its request's id and its action."""

    at: float
    """When (seconds since the epoch, on the store's clock)."""
    kind: str
    """What happened: a [`HistoryKind`][toolnexus.durable.HistoryKind]."""
    status: str | None
    """The call's status after it (``None`` when it was removed)."""
    actor: str | None = None
    """Who: the person who answered or opened it, the worker that claimed it; ``None`` when
    nobody was named."""
    via: str | None = None
    """Through what: ``"inbox"``, ``"terminal"``, ``"link"``, ``"worker"``, ..."""
    detail: str | None = None
    """The rest: an answer's request id and action, why it failed or expired, a task's
    status message, the key of the call that followed."""

    def describe(self) -> str:
        """The entry in words, one line: ``answered elc-1: accept, by alice via inbox``,
        ``finished: failed: the server is gone``, ``claimed by host:1234 via worker``. The
        words are the store's and the server's as kept: escape them before showing them."""
        said = f"finished: {self.status}" if self.kind == "finished" else _SAID.get(self.kind, self.kind)
        if self.detail:
            said += f" {self.detail}" if self.kind == "answer" else f": {self.detail}"
        if self.actor is not None:
            said += f", by {self.actor}"
        if self.via is not None:
            said += f" via {self.via}"
        return said

    def to_dict(self) -> dict[str, Any]:
        """Its JSON form: ``at`` as RFC 3339 UTC, absent fields left out."""
        out: dict[str, Any] = {"at": utc_timestamp(now=self.at), "kind": self.kind}
        for name in ("status", "actor", "via", "detail"):
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        return out


def fire(hook: EventHook | None, event: Event) -> None:
    """Call a notification hook; its failure is logged, never raised into the store's caller."""
    if hook is None:
        return
    try:
        hook(event)
    except Exception:  # a host's hook must not break the store or a worker
        logger.exception("the store's notification hook failed on %s %s", event.kind, event.key)


class Store(Protocol):
    """What a store of parked calls does; [`SqliteStore`][toolnexus.durable.SqliteStore] and
    [`PostgresStore`][toolnexus.durable.PostgresStore] are the two toolnexus ships, one
    lifecycle engine over two databases, checked by one contract test suite."""

    on_event: EventHook | None

    @property
    def where(self) -> str:
        """The store as a message names it: a file's path, or the database's host, port and
        name (never a password)."""

    def put(self, pending: Pending, *, follows: str | None = None, deadline: float | None = None) -> str:
        """Keep ``pending`` (``waiting``); return the new key it is kept under."""

    def put_live(self, pending: Pending, *, token: str, lease: float, deadline: float | None = None) -> str:
        """Keep a live question (``live``), held by the holder ``token`` names for ``lease``
        seconds unless renewed; return its key."""

    def renew_held(self, token: str, lease: float) -> int:
        """Extend the lease of every live question ``token`` holds; how many it holds."""

    def held(self, token: str) -> dict[str, Status]:
        """The status of every question ``token`` holds, by key."""

    def withdraw(self, key: str, token: str, reason: str) -> Status:
        """End a live question unanswered (``withdrawn``, with ``reason``); its status after:
        ``withdrawn``, or ``answered`` when its answer came first."""

    def get(self, key: str) -> Pending:
        """The pending kept under ``key``; ``KeyError`` when there is none."""

    def list(self) -> builtins.list[tuple[str, Pending]]:
        """Every call whose record reads, with its key, oldest first."""

    def calls(self, *, status: Status | None = None) -> builtins.list[Call]:
        """Every call (or those of one status), oldest first; a record that does not read is
        a ``failed`` call whose ``error`` says why."""

    def call(self, key: str) -> Call:
        """The call kept under ``key``; ``KeyError`` when there is none."""

    def record(
        self, key: str, answer: Answer | Mapping[str, Any], *, by: str | None = None, via: str | None = None
    ) -> None:
        """Keep ``answer`` (and, in the call's history, who gave it, ``by``, through what,
        ``via``); the last one makes the call ``ready``. ``ValueError`` for a second answer
        (exactly one of two racing answers is kept), an unknown id, content that does not
        fit, or a call no longer waiting."""

    def history(self, key: str) -> builtins.list[HistoryEntry]:
        """What happened to the call under ``key``, oldest first; ``KeyError`` when none."""

    def opened(self, key: str, *, by: str | None, via: str | None = None) -> None:
        """Keep in the call's history that ``by`` opened it (once per person and way)."""

    @property
    def instance(self) -> str:
        """The store's own random name (event ids are made of it)."""

    @property
    def link_key(self) -> str:
        """The key the store signs its answer links with."""

    def remind(self, after: float) -> int:
        """Note a reminder in the history of each question that waited ``after`` seconds."""

    def notified(self, key: str, *, target: str, what: str) -> None:
        """Note in the call's history that a notification about it went to ``target``."""

    def take_target(self, target: str, holder: str, lease: float) -> int | None:
        """Take the sending to a notification ``target``: its place in the history, or ``None``."""

    def sendable(self, after: int, *, limit: int = 50) -> builtins.list[Any]:
        """The history's entries after a place, with their calls' names (``Sendable``s)."""

    def target_sent(self, target: str, holder: str, seq: int, *, lease: float = 60.0) -> None:
        """``target`` was sent everything up to ``seq``."""

    def target_failed(
        self, target: str, holder: str, error: str, *, first: float = 1.0, longest: float = 300.0
    ) -> float:
        """Sending to ``target`` failed: nobody sends to it for a pause that doubles with each
        failure in a row; the pause."""

    def release_target(self, target: str, holder: str) -> None:
        """Let go of the sending to ``target``."""

    def answers(self, key: str) -> dict[str, Answer]:
        """The answers recorded for ``key``: request id to ``Answer``."""

    def remove(self, key: str) -> None:
        """Forget the call under ``key`` and its answers; ``KeyError`` when there is none."""

    def claim(
        self,
        *,
        lease: float,
        server: object = ANY_SERVER,
        limit: int = 1,
        key: str | None = None,
        by: str | None = None,
    ) -> builtins.list[Claim]:
        """Claim up to ``limit`` ready calls (or ones whose lease ran out) for ``lease`` seconds;
        with ``key``, that one call only (an empty list when it is not claimable); ``by``
        (the claimer's name) kept in each call's history."""

    def renew(self, key: str, token: str, lease: float) -> float:
        """Extend a claim's lease; ``LeaseLostError`` when it is no longer this claim's."""

    def finish(self, key: str, token: str, result: Mapping[str, Any]) -> None:
        """End a claim: ``done``, with the server's result (JSON)."""

    def finish_parked(self, key: str, token: str, pending: Pending) -> str:
        """End a claim: ``done``, the server asked again; park ``pending`` and return its key."""

    def fail(self, key: str, token: str, error: str, *, retry: bool = False) -> None:
        """End a claim: ``failed`` with ``error`` (``ready`` again with ``retry``)."""

    def release(self, key: str, token: str) -> None:
        """End a claim without an outcome: ``ready`` again."""

    def task_working(
        self, key: str, token: str, *, poll_in: float, note: str | None, pending: Pending | None = None
    ) -> None:
        """End a claim on a parked task that still works: ``working``, polled again in
        ``poll_in`` seconds; ``pending`` (when given) replaces its record."""

    def task_asks(self, key: str, token: str, pending: Pending, *, note: str | None) -> None:
        """End a claim on a parked task that asks: its record becomes ``pending`` (the
        task's questions of the moment), ``waiting`` for their answers."""

    def task_ended(self, key: str, token: str, status: Literal["cancelled", "expired"], reason: str) -> None:
        """End a claim on a parked task that ended without a result."""

    def next_poll(self, *, server: object = ANY_SERVER) -> float | None:
        """Seconds until the earliest ``working`` task is due a poll (0 when one is due now),
        or ``None`` when none works."""

    def retry(self, key: str, *, by: str | None = None) -> None:
        """Put a ``failed`` call back to ``ready`` (a person, ``by``, decided to try it again)."""

    def expire(self, key: str, reason: str = "the host's deadline passed", *, by: str | None = None) -> None:
        """Mark a call that is not finished or being resumed ``expired``."""

    def sweep(self) -> int:
        """Expire waiting calls (and working tasks) whose deadline passed, make ready again the calls whose
        resumer's lease ran out, purge finished calls past the retention. The number of calls
        expired."""

    def watch(self, *, ready_only: bool = False) -> Watcher:
        """A watcher of its own for one consumer: its ``wait`` (or ``wait_async``) returns
        when the store may hold something new since that watcher last looked."""

    def close(self) -> None:
        """Release the store's connections."""


# --- checks of arguments ---------------------------------------------------------------------


def check_lease(lease: object, name: str = "lease") -> float:
    """A lease in seconds: a positive, finite number, at most a day."""
    checked = check_seconds(lease, caller="", name=name, none=False, most=86400)
    assert checked is not None
    return checked


def check_key(key: object) -> str:
    if not isinstance(key, str):
        raise TypeError(f"key must be a str, not {type(key).__name__}")
    return key


def check_server(server: object) -> None:
    """``claim``'s ``server``: a name, ``None`` (an unnamed server) or ``ANY_SERVER``."""
    if server is not ANY_SERVER and server is not None and not isinstance(server, str):
        raise TypeError(f"server must be a str, None or ANY_SERVER, not {type(server).__name__}")


def check_limit(limit: object) -> int:
    if isinstance(limit, bool) or not isinstance(limit, int):
        raise TypeError(f"limit must be an int, not {type(limit).__name__}")
    if not 1 <= limit <= 10_000:
        raise ValueError(f"limit must be from 1 to 10000, not {limit!r}")
    return limit


def check_answer(pending: Pending, key: str, answer: Answer | Mapping[str, Any], caller: str) -> Answer:
    """``answer`` as an ``Answer`` that fits a request of ``pending`` (defaults laid in, content
    validated, as ``resume`` will); ``ValueError`` naming the fields otherwise."""
    answer = as_answer(answer, f"{caller}: answer")
    request = next((r for r in pending.requests if r.id == answer.id), None)
    if request is None:
        held = ", ".join(r.id for r in pending.requests)
        raise ValueError(f"{caller}: {key} holds no request {answer.id[:80]!r} (it holds {held})")
    result_for(request, answer)  # raises ValueError naming the fields
    return answer


# --- what a row holds ---------------------------------------------------------------------------


def new_key() -> str:
    """A fresh key: 16 random hex digits."""
    return secrets.token_hex(8)


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def encode_pending(pending: Pending) -> str:
    """``pending`` as the JSON text a store keeps (a ``Pending`` is JSON by construction)."""
    if not isinstance(pending, Pending):
        raise TypeError(f"pending must be a Pending, not {type(pending).__name__}")
    return dumps(pending.to_dict())


def outcome_json(result: Mapping[str, Any]) -> str:
    """A result mapping as the JSON a store keeps; ``ValueError`` when it is not JSON."""
    try:
        return dumps(dict(result))
    except (TypeError, ValueError) as err:
        raise ValueError(f"the result is not JSON: {err}") from None


def decode_json_object(text: object, what: str) -> dict[str, Any]:
    """A JSON object read from a store row, or ``ValueError`` saying what is wrong (never the text)."""
    if not isinstance(text, str):
        raise ValueError(f"{what} is not text")
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise ValueError(f"{what} is not JSON ({err.msg} at {err.pos})") from None
    except RecursionError:
        raise ValueError(f"{what} is nested too deep to read") from None
    if not isinstance(value, dict):
        raise ValueError(f"{what} is a JSON {type(value).__name__}, not an object")
    return value


def decode_pending(key: str, text: object) -> Pending:
    """The pending of a store row; ``ValueError`` naming the key and the reason."""
    try:
        return Pending.from_dict(decode_json_object(text, "the record"))
    except (TypeError, ValueError) as err:
        raise ValueError(f"the pending under {key}: {err}") from None


def decode_answer(key: str, request_id: object, text: object) -> Answer:
    """An answer of a store row; ``ValueError`` naming the key, the request and the reason."""
    try:
        answer = Answer.from_dict(decode_json_object(text, "the record"))
    except (TypeError, ValueError) as err:
        raise ValueError(f"the answer to {str(request_id)[:80]!r} of {key}: {str(err)[:200]}") from None
    if answer.id != request_id:
        raise ValueError(f"the answer to {str(request_id)[:80]!r} of {key} is kept under another id")
    return answer


def earliest_expiry(pending: Pending, deadline: float | None = None, *, now: float) -> float | None:
    """The earliest ``expiresAt`` of ``pending``'s requests (or the host's ``deadline``, in
    seconds from ``now``, when earlier), as seconds since the epoch; ``None`` for no
    deadline; a parked task's time to live counts too. An ``expiresAt`` is read as
    [`read_expires_at`][toolnexus._time.read_expires_at] reads it everywhere (one that does not
    read sets none)."""
    moments = [now + deadline] if deadline is not None else []
    if pending.task is not None:
        moment = read_expires_at(pending.task.expires_at)
        if moment is not None:
            moments.append(moment)
    for request in pending.requests:
        moment = read_expires_at(request.expiresAt)
        if moment is not None:
            moments.append(moment)
    return min(moments) if moments else None
