"""Layer 3: the wiring of the bridge into the MCP SDK's client.

``elicitation_callback(wait_for)`` is what a host passes as ``mcp.Client(...,
elicitation_callback=...)`` (or to ``ClientSession``). It is the one place that knows
about event loops, worker threads, timeouts, validation and failure containment; the
mapping itself stays the pure JS port in ``_mapping``.

The SDK's client modules are imported for type checking only, and anyio on the first
elicitation, so importing this module costs nothing beyond ``mcp_types``.
"""

from __future__ import annotations

import contextlib
import inspect
import itertools
import logging
import math
import threading
from collections import deque
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, TypedDict

from mcp_types import ElicitResult

from ._answering import AnswerLike, as_answer, form_of, result_for
from ._mapping import answer_to_elicit_result, elicitation_to_request
from ._time import check_seconds, utc_timestamp
from ._util import is_async_callable, type_name
from ._wire import Answer, Request
from .errors import AnswerProblemError, FormError
from .forms import Form

if TYPE_CHECKING:
    from mcp.client.session import ClientRequestContext, ElicitationFnT
    from mcp_types import ElicitRequestParams, ErrorData

__all__ = [
    "MAX_ABANDONED_THREADS",
    "RESOLVER_THREADS",
    "CallbackOptions",
    "OnResult",
    "ResultReason",
    "WaitFor",
    "elicitation_callback",
    "set_resolver_threads",
]

logger = logging.getLogger(__name__)

WaitFor: TypeAlias = Callable[[Request], Awaitable[AnswerLike]] | Callable[[Request], AnswerLike]
"""A host resolver: takes a §10 [`Request`][toolnexus.Request], returns (or awaits to) an
[`Answer`][toolnexus.Answer] or its wire mapping. A plain function runs in a worker thread."""


ResultReason: TypeAlias = Literal["validation", "timeout", "error", "defaults", "overloaded"] | None
"""Why the result a server got is not the resolver's answer mapped as it is: ``None`` when it
is; ``"validation"`` (accepted content did not fit the form, or the form cannot be
answered), ``"timeout"``, ``"error"`` (the resolver raised, or its answer could not be read
or sent), ``"defaults"`` (the schema's defaults were laid into an accepted answer),
``"overloaded"`` (too many abandoned resolver threads still run)."""

OnResult: TypeAlias = Callable[[Request, ElicitResult, ResultReason], object]
"""An observer of [`elicitation_callback`][toolnexus.mcp.elicitation_callback]: called with
the [`Request`][toolnexus.Request], the ``ElicitResult`` the server gets, and the
[`ResultReason`][toolnexus.mcp.ResultReason], on the event loop, after the resolver is done."""


class CallbackOptions(TypedDict, total=False):
    """The options of [`elicitation_callback`][toolnexus.mcp.elicitation_callback], by keyword:
    the one definition that [`toolnexus.fastmcp.elicitation_handler`][toolnexus.fastmcp.elicitation_handler]
    takes too."""

    timeout: float | None
    validate: bool
    apply_defaults: bool
    on_result: OnResult | None


MAX_ABANDONED_THREADS = 16
"""How many resolver threads, abandoned after their timeout and still running, the process
tolerates (every [`elicitation_callback`][toolnexus.mcp.elicitation_callback] together, the
``-32042`` path's included); past it, a new question for a plain resolver is cancelled at
once (and a warning says why) until some of them return."""

RESOLVER_THREADS = 32
"""The default size of the pool of threads that runs plain (sync) resolvers, for the whole
process; change it with [`set_resolver_threads`][toolnexus.mcp.set_resolver_threads]."""

_IDLE_SECONDS = 5.0  # a pool thread with nothing to do for this long ends


class _Job:
    """One call of a plain resolver, queued for the pool; ``state`` is guarded by the pool's lock."""

    __slots__ = ("box", "done", "fn", "request", "state", "token")

    def __init__(self, fn: Callable[[Request], Any], request: Request, done: Any, token: Any) -> None:
        self.fn = fn
        self.request = request
        self.done = done
        self.token = token
        self.box: list[tuple[bool, Any]] = []
        self.state = "queued"  # queued, running, done, dropped (never run), abandoned (run, unawaited)


class _Pool:
    """The bounded pool of daemon threads that runs plain resolvers, one per process.

    At most ``size`` threads run (they start when questions wait and end after
    ``_IDLE_SECONDS`` with nothing to do); further questions wait their turn, in order. A
    question cancelled while it waits (a timeout) is dropped without running; one cancelled
    while it runs is abandoned, counted against ``MAX_ABANDONED_THREADS`` until it returns.
    Daemon threads, unlike anyio's: an abandoned one never keeps the interpreter from
    exiting.
    """

    def __init__(self, size: int) -> None:
        self.lock = threading.Condition(threading.Lock())
        self.size = size
        self.jobs: deque[_Job] = deque()
        self.threads = 0
        self.idle = 0
        self.abandoned = 0
        self.names = itertools.count(1)

    def overloaded(self) -> bool:
        with self.lock:
            return self.abandoned >= MAX_ABANDONED_THREADS

    def submit(self, job: _Job) -> None:
        with self.lock:
            self.jobs.append(job)
            if len(self.jobs) > self.idle and self.threads < self.size:
                self.threads += 1
                name = f"toolnexus-resolver-{next(self.names)}"
                threading.Thread(target=self._work, name=name, daemon=True).start()
            else:
                self.lock.notify()

    def _next(self) -> _Job | None:
        """The next job to run, or ``None`` when this thread should end (idle, or the pool shrank)."""
        with self.lock:
            while True:
                if self.threads > self.size:
                    self.threads -= 1
                    return None
                while self.jobs:
                    job = self.jobs.popleft()
                    if job.state == "queued":
                        job.state = "running"
                        return job
                self.idle += 1
                woken = self.lock.wait(timeout=_IDLE_SECONDS)
                self.idle -= 1
                if not woken and not self.jobs:
                    self.threads -= 1
                    return None

    def _work(self) -> None:
        import anyio.from_thread

        while True:
            job = self._next()
            if job is None:
                return
            try:
                outcome: tuple[bool, Any] = (True, job.fn(job.request))
            except BaseException as err:  # handed to the awaiting task, which contains it
                outcome = (False, err)
            with self.lock:
                job.box.append(outcome)
                if job.state == "abandoned":
                    self.abandoned -= 1
                    continue
                job.state = "done"
            with contextlib.suppress(Exception):  # the event loop is gone: nobody waits any more
                anyio.from_thread.run_sync(job.done.set, token=job.token)

    async def run(self, fn: Callable[[Request], Any], request: Request) -> object:
        """``fn(request)`` on a pool thread, awaited without blocking the event loop."""
        import anyio
        import anyio.lowlevel

        job = _Job(fn, request, anyio.Event(), anyio.lowlevel.current_token())
        self.submit(job)
        try:
            await job.done.wait()
        except BaseException:
            with self.lock:
                if job.state == "queued":
                    job.state = "dropped"
                elif job.state == "running":
                    job.state = "abandoned"
                    self.abandoned += 1
            raise
        ok, value = job.box[0]
        if ok:
            return value
        raise value


_POOL = _Pool(RESOLVER_THREADS)


def set_resolver_threads(size: int) -> int:
    """Set how many threads may run plain resolvers at once, for the whole process; returns
    the size it had. Questions past it wait their turn. The default is
    [`RESOLVER_THREADS`][toolnexus.mcp.RESOLVER_THREADS]; a smaller size takes effect as
    running resolvers return. ``TypeError``/``ValueError`` for anything but a positive int."""
    if isinstance(size, bool) or not isinstance(size, int):
        raise TypeError(f"set_resolver_threads: size must be an int, not {type_name(size)}")
    if size < 1:
        raise ValueError(f"set_resolver_threads: size must be at least 1, not {size}")
    with _POOL.lock:
        before, _POOL.size = _POOL.size, size
        _POOL.lock.notify_all()
    return before


def _stray_cancellation(err: BaseException) -> bool:
    """A cancellation exception that is not the enclosing task's own (a resolver awaiting a
    future someone else cancelled, say): contained as cancel."""
    import anyio

    if not isinstance(err, anyio.get_cancelled_exc_class()):
        return False
    if anyio.current_effective_deadline() == -math.inf:
        return False  # an enclosing anyio cancel scope is cancelled
    import asyncio

    try:
        task = asyncio.current_task()
    except RuntimeError:  # not asyncio
        return False
    if task is None:
        return False
    cancelling = getattr(task, "cancelling", None)
    # Python 3.11+ counts the cancellations requested of the task; 3.10 cannot tell, and the
    # SDK cancels through anyio's scopes, which the deadline above sees.
    return cancelling is None or cancelling() == 0


def elicitation_callback(
    wait_for: WaitFor,
    *,
    timeout: float | None = None,
    validate: bool = True,
    apply_defaults: bool = True,
    on_result: OnResult | None = None,
) -> ElicitationFnT:
    """Make the SDK's ``elicitation_callback`` from a host's one §10 resolver.

    ```python
    Client(server, elicitation_callback=elicitation_callback(wait_for))
    ```

    Each ``elicitation/create`` the server sends (as a request in the middle of a
    ``tools/call`` up to protocol 2025-11-25, or embedded in an ``InputRequiredResult``
    from 2026-07-28 on; the SDK routes both here) is mapped with
    [`elicitation_to_request`][toolnexus.mcp.elicitation_to_request], given to ``wait_for``,
    and its answer mapped back with [`answer_to_elicit_result`][toolnexus.mcp.answer_to_elicit_result].

    Args:
        wait_for: the resolver. An ``async def`` is awaited on the event loop; a plain
            function runs on a thread of the process's bounded resolver pool, so a blocking
            resolver (``input()``, a dialog) never stalls the loop or other sessions. It
            returns an [`Answer`][toolnexus.Answer] or its wire mapping.
        timeout: seconds the resolver may take. The request it gets then carries
            ``expiresAt``; when the time is up the resolver is cancelled (a worker thread
            is abandoned: its late answer is dropped) and the server gets ``cancel``, the
            §10 ``"expired"`` case. ``None``: wait as long as it takes.
        validate: check accepted form content against the ``requestedSchema`` with
            [`validate_content`][toolnexus.forms.validate_content]. Content that does not fit is never sent as
            ``accept``: the server gets ``cancel`` and a warning on the ``toolnexus``
            logger names the fields (never their values). A form whose schema is outside
            the elicitation subset (see [`read_form`][toolnexus.forms.read_form]) can never
            be answered so: it is cancelled at once, without asking the resolver.
        apply_defaults: an accepted form answer gets the schema's ``default`` for each
            field it leaves out, before validation, as the spec (SEP-1034) has a client do:
            a resolver that answers ``{}`` to a form of defaults sends the defaults.
            ``False`` sends the answer as it is.

        on_result: an observer, [`OnResult`][toolnexus.mcp.OnResult]: told, for every
            question, the ``ElicitResult`` the server gets and why it is not the answer as
            given ([`ResultReason`][toolnexus.mcp.ResultReason]). [`log_traffic`][toolnexus.log_traffic]
            offers one: ``on_result=logged.sent``. An observer that raises is logged and
            ignored.

    What the server sees when something goes wrong: ``cancel``, always. A resolver that
    raises (a ``CancelledError`` that is not this call's own cancellation included, such
    as a cancelled UI future it awaited), returns something that is not an answer, or an
    answer whose reading raises (a lazy mapping), or answers with data an ``ElicitResult``
    cannot carry is logged on the ``toolnexus`` logger (with the traceback where the
    resolver raised); no exception text reaches the server, whereas the SDK on its own
    would send the exception's message. Everything between the params and the result is
    inside that containment. In URL mode an ``accept`` carries no ``content``, as the
    spec says.

    A plain resolver runs on the process's pool of daemon threads, at most
    [`RESOLVER_THREADS`][toolnexus.mcp.RESOLVER_THREADS] (32) at once whatever the number of
    questions, callbacks and sessions ([`set_resolver_threads`][toolnexus.mcp.set_resolver_threads]
    changes it); further questions wait their turn, their ``timeout`` running while they
    wait. A thread abandoned by the timeout never delays the interpreter's exit. While
    [`MAX_ABANDONED_THREADS`][toolnexus.mcp.MAX_ABANDONED_THREADS] abandoned threads still
    run in the process, a new question for a plain resolver is cancelled at once, with a
    warning.

    Raises ``TypeError``/``ValueError`` for a ``wait_for`` that is not callable, a
    ``timeout`` that is not a positive number of seconds, a ``validate`` or
    ``apply_defaults`` that is not a bool, or an ``on_result`` that is not callable.
    """
    if not callable(wait_for):
        raise TypeError(f"elicitation_callback: wait_for must be callable, not {type_name(wait_for)}")
    seconds = check_seconds(timeout, caller="elicitation_callback", name="timeout")
    if not isinstance(validate, bool):
        raise TypeError(f"elicitation_callback: validate must be a bool, not {type_name(validate)}")
    if not isinstance(apply_defaults, bool):
        kind = type_name(apply_defaults)
        raise TypeError(f"elicitation_callback: apply_defaults must be a bool, not {kind}")
    if on_result is not None and not callable(on_result):
        raise TypeError(
            f"elicitation_callback: on_result must be callable or None, not {type_name(on_result)}"
        )
    is_async = is_async_callable(wait_for)
    cancel = ElicitResult(action="cancel")

    check_or_fill = validate or apply_defaults

    async def resolve(request: Request) -> object:
        """A plain resolver's answer, from its pool thread."""
        result = await _POOL.run(wait_for, request)
        if inspect.isawaitable(result):  # a plain function that hands back a coroutine
            result = await result
        return result

    ask = wait_for if is_async else resolve

    async def answer(params: ElicitRequestParams, box: list[Request]) -> tuple[ElicitResult, ResultReason]:
        try:
            if seconds is None:
                request = elicitation_to_request(params)
            else:
                request = elicitation_to_request(params, expires_at=utc_timestamp(seconds))
        except (TypeError, ValueError) as err:  # not from the SDK, which validates params
            logger.error("elicitation params the bridge cannot map (%s); cancel sent", err)
            return cancel, "error"
        box.append(request)
        form: Form | None = None
        if check_or_fill:
            try:
                form = form_of(request)
            except FormError as err:
                if validate:  # no answer could fit: do not make a person try
                    logger.warning("elicitation %s: %s; cancel sent without asking", request.id, err)
                    return cancel, "validation"
        if not is_async and _POOL.overloaded():
            logger.warning(
                "elicitation %s: %d resolver threads abandoned after their timeout are still running; "
                "cancel sent without asking",
                request.id,
                MAX_ABANDONED_THREADS,
            )
            return cancel, "overloaded"
        try:
            if seconds is None:  # no deadline: no cancel scope to pay for
                returned = await ask(request)  # type: ignore[misc]
            else:
                import anyio

                with anyio.move_on_after(seconds) as deadline:
                    returned = await ask(request)  # type: ignore[misc]
        except Exception:
            logger.exception("elicitation %s: the resolver raised; cancel sent", request.id)
            return cancel, "error"
        # cancel_called: also when the resolver shielded itself and answered late
        if seconds is not None and deadline.cancel_called:
            logger.warning(
                "elicitation %s: the resolver did not answer within %g s; cancel sent", request.id, seconds
            )
            return answer_to_elicit_result(Answer.expire(request)), "timeout"
        try:
            given = (
                returned if type(returned) is Answer else as_answer(returned, f"the answer to {request.id}")
            )
            sent = result_for(request, given, form=form, validate=validate, apply_defaults=apply_defaults)
        except AnswerProblemError as err:
            logger.warning(
                "elicitation %s: the answer does not fit the requested schema (%s); cancel sent",
                request.id,
                "; ".join(err.problems),
            )
            return cancel, "validation"
        except (TypeError, ValueError) as err:  # our own words: they name a field or a type, no value
            logger.error(
                "elicitation %s: the resolver's answer cannot be sent (%s); cancel sent", request.id, err
            )
            return cancel, "error"
        answered = len(given.data) if given.data else 0
        if sent.action == "accept" and sent.content and answered != len(sent.content):
            return sent, "defaults"
        return sent, None

    async def on_elicitation(
        context: ClientRequestContext, params: ElicitRequestParams
    ) -> ElicitResult | ErrorData:
        # Everything between the params and the result is contained: no exception, and no
        # exception's text, reaches the SDK (which would send it to the server).
        box: list[Request] = []
        try:
            result, outcome = await answer(params, box)
        except Exception as err:  # reading a lazy mapping the resolver returned, ...: never its text
            where = f"elicitation {box[0].id}" if box else "an elicitation"
            logger.error("%s: answering it raised %s; cancel sent", where, type_name(err))
            result, outcome = cancel, "error"
        except BaseException as err:
            if not _stray_cancellation(err):
                raise  # this call's own cancellation (the client closing, a host's timeout)
            where = f"elicitation {box[0].id}" if box else "an elicitation"
            logger.warning(
                "%s: the resolver raised a cancellation that was not this call's; cancel sent", where
            )
            result, outcome = cancel, "error"
        if on_result is not None and box:
            try:
                on_result(box[0], result, outcome)
            except Exception as err:
                logger.error("elicitation %s: on_result raised %s; ignored", box[0].id, type_name(err))
        return result

    return on_elicitation
