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
import logging
import math
import threading
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from mcp_types import ElicitResult

from ._answering import AnswerLike, AnswerProblemError, as_answer, form_of, result_for
from ._mapping import answer_to_elicit_result, elicitation_to_request
from ._util import check_seconds, is_async_callable, type_name, utc_timestamp
from ._wire import Answer, Request
from .forms import Form, FormError

if TYPE_CHECKING:
    from mcp.client.session import ClientRequestContext, ElicitationFnT
    from mcp_types import ElicitRequestParams, ErrorData

__all__ = [
    "MAX_ABANDONED_THREADS",
    "OnResult",
    "Outcome",
    "WaitFor",
    "elicitation_callback",
]

logger = logging.getLogger(__name__)

WaitFor: TypeAlias = Callable[[Request], Awaitable[AnswerLike]] | Callable[[Request], AnswerLike]
"""A host resolver: takes a §10 [`Request`][toolnexus.Request], returns (or awaits to) an
[`Answer`][toolnexus.Answer] or its wire mapping. A plain function runs in a worker thread."""


Outcome: TypeAlias = Literal["validation", "timeout", "error", "defaults", "overloaded"] | None
"""Why the result a server got is not the resolver's answer mapped as it is: ``None`` when it
is; ``"validation"`` (accepted content did not fit the form, or the form cannot be
answered), ``"timeout"``, ``"error"`` (the resolver raised, or its answer could not be read
or sent), ``"defaults"`` (the schema's defaults were laid into an accepted answer),
``"overloaded"`` (too many abandoned resolver threads still run)."""

OnResult: TypeAlias = Callable[[Request, ElicitResult, Outcome], object]
"""An observer of [`elicitation_callback`][toolnexus.mcp.elicitation_callback]: called with
the [`Request`][toolnexus.Request], the ``ElicitResult`` the server gets, and the
[`Outcome`][toolnexus.mcp.Outcome], on the event loop, after the resolver is done."""

MAX_ABANDONED_THREADS = 16
"""How many threads of a plain resolver, abandoned after their timeout and still running, one
[`elicitation_callback`][toolnexus.mcp.elicitation_callback] tolerates; past it, a new
question is cancelled at once (and a warning says why) until some of them return."""


class _Threads:
    """The abandoned, still running resolver threads of one callback."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.abandoned = 0

    def full(self) -> bool:
        with self.lock:
            return self.abandoned >= MAX_ABANDONED_THREADS


async def _in_daemon_thread(fn: Callable[[Request], Any], request: Request, threads: _Threads) -> object:
    """``fn(request)`` in a new daemon thread, awaited without blocking the event loop.

    A daemon, unlike anyio's worker threads: one abandoned when its caller is cancelled (a
    timeout) never keeps the interpreter from exiting. Any anyio backend.
    """
    import anyio
    import anyio.from_thread
    import anyio.lowlevel

    done = anyio.Event()
    token = anyio.lowlevel.current_token()
    box: list[tuple[bool, Any]] = []
    abandoned = [False]

    def target() -> None:
        try:
            outcome: tuple[bool, Any] = (True, fn(request))
        except BaseException as err:  # handed to the awaiting task, which contains it
            outcome = (False, err)
        with threads.lock:
            box.append(outcome)
            if abandoned[0]:
                threads.abandoned -= 1
                return
        with contextlib.suppress(Exception):  # the event loop is gone: nobody waits any more
            anyio.from_thread.run_sync(done.set, token=token)

    thread = threading.Thread(target=target, name=f"toolnexus-resolver-{request.id}", daemon=True)
    thread.start()
    try:
        await done.wait()
    except BaseException:
        with threads.lock:
            if not box:
                abandoned[0] = True
                threads.abandoned += 1
        raise
    ok, value = box[0]
    if ok:
        return value
    raise value


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
            function runs in a (daemon) thread, so a blocking resolver (``input()``, a dialog)
            never stalls the loop or other sessions. It returns an [`Answer`][toolnexus.Answer] or its
            wire mapping.
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
            given ([`Outcome`][toolnexus.mcp.Outcome]). [`log_traffic`][toolnexus.log_traffic]
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

    A plain resolver runs in a daemon thread of its own, so one abandoned by the timeout
    never delays the interpreter's exit. While [`MAX_ABANDONED_THREADS`][toolnexus.mcp.MAX_ABANDONED_THREADS]
    of them still run, a new question for it is cancelled at once, with a warning.

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
    threads = _Threads()
    cancel = ElicitResult(action="cancel")

    async def resolve(request: Request) -> object:
        if is_async:
            return await wait_for(request)  # type: ignore[misc]
        result = await _in_daemon_thread(wait_for, request, threads)
        if inspect.isawaitable(result):  # a plain function that hands back a coroutine
            result = await result
        return result

    async def answer(params: ElicitRequestParams, box: list[Request]) -> tuple[ElicitResult, Outcome]:
        import anyio

        try:
            expires_at = None if seconds is None else utc_timestamp(seconds)
            request = elicitation_to_request(params, expires_at=expires_at)
        except (TypeError, ValueError) as err:  # not from the SDK, which validates params
            logger.error("elicitation params the bridge cannot map (%s); cancel sent", err)
            return cancel, "error"
        box.append(request)
        form: Form | None = None
        if validate or apply_defaults:
            try:
                form = form_of(request)
            except FormError as err:
                if validate:  # no answer could fit: do not make a person try
                    logger.warning("elicitation %s: %s; cancel sent without asking", request.id, err)
                    return cancel, "validation"
        if not is_async and threads.full():
            logger.warning(
                "elicitation %s: %d resolver threads abandoned after their timeout are still running; "
                "cancel sent without asking",
                request.id,
                MAX_ABANDONED_THREADS,
            )
            return cancel, "overloaded"
        try:
            if seconds is None:  # no deadline: no cancel scope to pay for
                returned = await resolve(request)
            else:
                with anyio.move_on_after(seconds) as deadline:
                    returned = await resolve(request)
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
            given = as_answer(returned, f"the answer to {request.id}")
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
