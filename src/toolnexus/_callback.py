"""Layer 3: the wiring of the bridge into the MCP SDK's client.

``elicitation_callback(wait_for)`` is what a host passes as ``mcp.Client(...,
elicitation_callback=...)`` (or to ``ClientSession``). It is the one place that knows
about event loops, worker threads, timeouts, validation and failure containment; the
mapping itself stays the pure JS port in ``_mapping``.

The SDK's client modules are imported for type checking only, and anyio on the first
elicitation, so importing this module costs nothing beyond ``mcp_types``.
"""

from __future__ import annotations

import inspect
import logging
import math
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeAlias

from mcp_types import ElicitResult

from ._mapping import _set_expires, answer_to_elicit_result, elicitation_to_request
from ._util import is_async_callable, utc_timestamp
from ._wire import Answer, Request

if TYPE_CHECKING:
    from mcp.client.session import ClientRequestContext, ElicitationFnT
    from mcp_types import ElicitRequestParams, ErrorData

__all__ = ["WaitFor", "elicitation_callback"]

logger = logging.getLogger("toolnexus")

AnswerLike: TypeAlias = Answer | Mapping[str, Any]
WaitFor: TypeAlias = Callable[[Request], Awaitable[AnswerLike]] | Callable[[Request], AnswerLike]
"""A host resolver: takes a §10 [`Request`][toolnexus.Request], returns (or awaits to) an
[`Answer`][toolnexus.Answer] or its wire mapping. A plain function runs in a worker thread."""


def _check_timeout(timeout: object) -> float | None:
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
        raise TypeError(
            f"elicitation_callback: timeout must be a number of seconds or None, not {type(timeout).__name__}"
        )
    if not (timeout > 0 and math.isfinite(timeout)):
        raise ValueError(
            f"elicitation_callback: timeout must be a positive, finite number of seconds, not {timeout!r}"
        )
    try:
        utc_timestamp(timeout)  # the expiresAt it gives must be a date a calendar has
    except OverflowError:
        raise ValueError(
            f"elicitation_callback: timeout {timeout!r} s ends after the year 9999; use None for no deadline"
        ) from None
    return float(timeout)


def elicitation_callback(
    wait_for: WaitFor,
    *,
    timeout: float | None = None,
    validate: bool = True,
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
            function runs in a worker thread, so a blocking resolver (``input()``, a dialog)
            never stalls the loop or other sessions. It returns an [`Answer`][toolnexus.Answer] or its
            wire mapping.
        timeout: seconds the resolver may take. The request it gets then carries
            ``expiresAt``; when the time is up the resolver is cancelled (a worker thread
            is abandoned: its late answer is dropped) and the server gets ``cancel``, the
            §10 ``"expired"`` case. ``None``: wait as long as it takes.
        validate: check accepted form content against the ``requestedSchema`` with
            [`validate_content`][toolnexus.mcp.validate_content]. Content that does not fit is never sent as
            ``accept``: the server gets ``cancel`` and a warning on the ``toolnexus``
            logger names the fields (never their values).

    What the server sees when something goes wrong: ``cancel``, always. A resolver that
    raises, returns something that is not an answer, or answers with data an
    ``ElicitResult`` cannot carry is logged on the ``toolnexus`` logger (with the
    traceback where there is one); no exception text reaches the server, whereas the SDK
    on its own would send the exception's message. In URL mode an ``accept`` carries no
    ``content``, as the spec says.

    Raises ``TypeError``/``ValueError`` for a ``wait_for`` that is not callable, a
    ``timeout`` that is not a positive number of seconds, or a ``validate`` that is not a
    bool.
    """
    if not callable(wait_for):
        raise TypeError(f"elicitation_callback: wait_for must be callable, not {type(wait_for).__name__}")
    seconds = _check_timeout(timeout)
    if not isinstance(validate, bool):
        raise TypeError(f"elicitation_callback: validate must be a bool, not {type(validate).__name__}")
    is_async = is_async_callable(wait_for)

    async def resolve(request: Request) -> object:
        import anyio.to_thread

        if is_async:
            return await wait_for(request)  # type: ignore[misc]
        result = await anyio.to_thread.run_sync(wait_for, request, abandon_on_cancel=True)
        if inspect.isawaitable(result):  # a plain function that hands back a coroutine
            result = await result
        return result

    async def on_elicitation(
        context: ClientRequestContext, params: ElicitRequestParams
    ) -> ElicitResult | ErrorData:
        import anyio

        try:
            request = elicitation_to_request(params)
        except (TypeError, ValueError) as err:  # not from the SDK, which validates params
            logger.error("elicitation params the bridge cannot map (%s); cancel sent", err)
            return ElicitResult(action="cancel")
        if seconds is not None:
            _set_expires(request, utc_timestamp(seconds))
        try:
            if seconds is None:  # no deadline: no cancel scope to pay for
                result = await resolve(request)
            else:
                with anyio.move_on_after(seconds) as deadline:
                    result = await resolve(request)
        except Exception:
            logger.exception("elicitation %s: the resolver raised; cancel sent", request.id)
            return ElicitResult(action="cancel")
        # cancel_called: also when the resolver shielded itself and answered late
        if seconds is not None and deadline.cancel_called:
            logger.warning(
                "elicitation %s: the resolver did not answer within %g s; cancel sent", request.id, seconds
            )
            return answer_to_elicit_result(Answer(request.id, False, None, "expired"))
        return _to_result(request, result, validate)

    return on_elicitation


def _to_result(request: Request, result: object, validate: bool) -> ElicitResult:
    """Turn what the resolver gave into the result for the server, containing every failure."""
    if isinstance(result, Mapping):
        try:
            result = Answer.from_dict(result)
        except (TypeError, ValueError) as err:
            # The message names the field and the type, never a value.
            logger.error(
                "elicitation %s: the resolver returned a malformed answer (%s); cancel sent", request.id, err
            )
            return ElicitResult(action="cancel")
    elif not isinstance(result, Answer):
        logger.error(
            "elicitation %s: the resolver returned %s, not an Answer; cancel sent",
            request.id,
            type(result).__name__,
        )
        return ElicitResult(action="cancel")
    if result.ok and request.kind == "authorization":
        return ElicitResult(action="accept")  # URL mode: no content, whatever data holds
    try:
        elicit_result = answer_to_elicit_result(result)
    except ValueError as err:
        logger.error("elicitation %s: %s; cancel sent", request.id, err)
        return ElicitResult(action="cancel")
    if elicit_result.action != "accept":
        return elicit_result
    if validate and request.data is not None:
        problems = _schema_problems(request.data.get("schema"), elicit_result.content or {})
        if problems:
            logger.warning(
                "elicitation %s: the answer does not fit the requested schema (%s); cancel sent",
                request.id,
                "; ".join(problems),
            )
            return ElicitResult(action="cancel")
    return elicit_result


def _schema_problems(schema: object, content: Mapping[str, Any]) -> list[str]:
    """What is wrong with ``content``; a schema that cannot be applied is a problem too."""
    from ._schema import validate_content

    if not isinstance(schema, Mapping):
        return [f"the requested schema is a {type(schema).__name__}, not an object"]
    try:
        return validate_content(schema, content)
    except ValueError as err:  # our own words: they name no value
        return [str(err)]
    except Exception as err:  # whatever else the server's schema makes jsonschema do
        return [f"the requested schema cannot be applied ({type(err).__name__})"]
