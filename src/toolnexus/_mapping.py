"""Layer 2: the pure mapping between MCP elicitation and §10, a port of the JS reference.

``elicitation_to_request`` and ``answer_to_elicit_result`` behave exactly as the JS
functions ``elicitationToRequest`` and ``answerToElicitResult`` of toolnexus (js/src/mcp.ts),
JavaScript truthiness included. No I/O, no event loop; the only state is the id sequence.
This module imports only ``mcp_types`` from the SDK.
"""

from __future__ import annotations

import itertools
import sys
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, TypeAlias

from mcp_types import ElicitRequestFormParams, ElicitRequestURLParams, ElicitResult
from pydantic_core import ValidationError

from ._wire import Answer, Request, as_answer

__all__ = [
    "ElicitationParams",
    "answer_to_elicit_result",
    "elicitation_to_request",
    "new_request_id",
]

ElicitationParams: TypeAlias = ElicitRequestFormParams | ElicitRequestURLParams | Mapping[str, Any]
"""What ``elicitation_to_request`` takes: the SDK's params model of either mode, or the
``elicitation/create`` params as a wire mapping with camelCase keys."""

# --- ids -------------------------------------------------------------------------------

_BASE36 = "0123456789abcdefghijklmnopqrstuvwxyz"


def _base36(n: int) -> str:
    """``n.toString(36)`` as JavaScript writes it for a non-negative integer."""
    if n == 0:
        return "0"
    digits = []
    while n:
        n, r = divmod(n, 36)
        digits.append(_BASE36[r])
    return "".join(reversed(digits))


def _locked_counter() -> Callable[[], int]:
    lock = threading.Lock()
    counter = itertools.count(1)

    def next_locked() -> int:
        with lock:
            return next(counter)

    return next_locked


# ``next()`` on an ``itertools.count`` is one C call that holds the GIL, so it cannot hand
# out a number twice; a free-threaded build (no GIL) gets a lock around it instead.
_gil_enabled: Callable[[], bool] = getattr(sys, "_is_gil_enabled", lambda: True)
_next_seq: Callable[[], int] = itertools.count(1).__next__ if _gil_enabled() else _locked_counter()

# Two base-36 digits for each of 0 .. 36**2 - 1: the last two of the time, which change from
# one question to the next (questions are milliseconds apart), are looked up; the ones
# before them change every 1.296 s and are kept, with their number, as one tuple, so that a
# thread never pairs one time with another's digits.
_PAIRS = tuple(a + b for a in _BASE36 for b in _BASE36)
_high: tuple[int, str] = (-1, "")


def new_request_id() -> str:
    """A fresh request id, ``elc-<ms since the epoch in base 36>-<sequence from 1>``.

    Exactly as the JS reference writes ``elc-${Date.now().toString(36)}-${++seq}``. The
    sequence is per process and safe to use from many threads at once, so ids are unique
    within a process and their sequence numbers increase.
    """
    global _high
    seq = _next_seq()
    high, low = divmod(time.time_ns() // 1_000_000, 1296)
    if not high:  # before 1970-01-01T00:00:01.296Z: no leading zero
        return f"elc-{_base36(low)}-{seq}"
    kept = _high
    if kept[0] != high:
        kept = _high = (high, f"elc-{_base36(high)}")
    return f"{kept[1]}{_PAIRS[low]}-{seq}"


# --- elicitation -> Request ------------------------------------------------------------


def _js_truthy(value: object) -> bool:
    """JavaScript's truthiness: only ``undefined``/``null``, ``false``, ``0``, ``NaN`` and
    ``""`` are falsy; an empty object or array is truthy (unlike Python)."""
    cls = type(value)
    if cls is dict:  # the common case (a schema), answered first
        return True
    if cls is str:
        return value != ""
    if value is None or value is False:
        return False
    if isinstance(value, (int, float)):
        return value == value and value != 0  # NaN != NaN
    if isinstance(value, str):
        return value != ""
    return True


def _request(
    kind: str, prompt: str, url: str | None, data: dict[str, Any] | None, expires_at: str | None
) -> Request:
    return Request(new_request_id(), kind, prompt, url, data, expires_at)


def _message(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    raise TypeError(f"elicitation params field 'message' must be a str, not {type(value).__name__}")


def elicitation_to_request(params: ElicitationParams, *, expires_at: str | None = None) -> Request:
    """Map the params of an MCP ``elicitation/create`` request onto a §10 [`Request`][toolnexus.Request].

    - URL mode (``mode == "url"``): ``kind="authorization"``, ``url`` carried over when it
      is non-empty, no ``data``.
    - Anything else (form mode): ``kind="input"``, ``data={"schema": requestedSchema}``
      when the schema is present (an empty ``{}`` counts, as in JavaScript), no ``url``.
    - ``message`` becomes ``prompt`` (``""`` when absent); ``id`` is
      [`new_request_id`][toolnexus.mcp.new_request_id]; ``expiresAt`` is ``expires_at``
      (an RFC 3339 timestamp, ``None`` for no deadline: the JS reference sets none).

    The schema is carried by reference, unmodified. ``params`` is the SDK's
    ``ElicitRequestFormParams`` or ``ElicitRequestURLParams``, or the wire mapping
    (camelCase keys). Anything else raises ``TypeError``; so does a wire mapping whose
    ``mode``, ``message`` or (URL mode) ``url`` is not a string.
    """
    cls = type(params)
    if cls is ElicitRequestFormParams:
        schema = params.requested_schema  # type: ignore[union-attr]
        data = {"schema": schema} if _js_truthy(schema) else None
        return _request("input", params.message, None, data, expires_at)  # type: ignore[union-attr]
    if cls is ElicitRequestURLParams:
        url = params.url  # type: ignore[union-attr]
        return _request("authorization", params.message, url or None, None, expires_at)  # type: ignore[union-attr]
    # A plain dict is checked before the model classes: their metaclass makes isinstance slow.
    if cls is not dict:
        if isinstance(params, (ElicitRequestFormParams, ElicitRequestURLParams)):
            return elicitation_to_request(
                params.model_dump(by_alias=True, exclude_none=True), expires_at=expires_at
            )
        if not isinstance(params, Mapping):
            raise TypeError(
                "elicitation_to_request expects ElicitRequestFormParams, ElicitRequestURLParams "
                f"or a mapping of the elicitation/create params, not {cls.__name__}"
            )
    wire: Mapping[str, Any] = params  # type: ignore[assignment]  # a mapping by now
    mode = wire.get("mode")
    if mode is not None and not isinstance(mode, str):
        raise TypeError(f"elicitation params field 'mode' must be a str, not {type(mode).__name__}")
    message = wire.get("message")
    prompt = message if type(message) is str else _message(message)
    if mode == "url":
        url = wire.get("url")
        if not _js_truthy(url):
            return _request("authorization", prompt, None, None, expires_at)
        if not isinstance(url, str):
            raise TypeError(f"elicitation params field 'url' must be a str, not {type(url).__name__}")
        return _request("authorization", prompt, url, None, expires_at)
    schema = wire.get("requestedSchema")
    return _request("input", prompt, None, {"schema": schema} if _js_truthy(schema) else None, expires_at)


# --- Answer -> ElicitResult ------------------------------------------------------------


def _content_error(err: ValidationError) -> ValueError:
    keys = []
    for detail in err.errors(include_url=False, include_input=False):
        loc = detail.get("loc", ())
        if len(loc) >= 2 and loc[0] == "content" and loc[1] not in keys:
            keys.append(loc[1])
    if not keys:  # pragma: no cover - ElicitResult only fails on content
        return ValueError("Answer.data cannot be carried by an MCP ElicitResult")
    shown = ", ".join(repr(k) for k in keys)
    return ValueError(
        f"Answer.data {'key' if len(keys) == 1 else 'keys'} {shown}: an MCP ElicitResult carries only "
        "str, int, float, bool, None or a list of str as a value"
    )


# The model's own validator, called with the wire object: the same full validation as
# ``ElicitResult(...)`` (and the same ValidationError), without the Python-level
# ``BaseModel.__init__`` around it. The validator only reads its input, and each result
# gets a fresh ``__dict__``, so the two constant inputs below are safe to share (a
# read-only mapping proxy would take pydantic's slower generic-mapping path).
_validate_result: Callable[[dict[str, Any]], ElicitResult] = (
    ElicitResult.__pydantic_validator__.validate_python
)
_DECLINE: dict[str, Any] = {"action": "decline"}
_CANCEL: dict[str, Any] = {"action": "cancel"}


def answer_to_elicit_result(answer: Answer | Mapping[str, Any]) -> ElicitResult:
    """Map a §10 [`Answer`][toolnexus.Answer] back onto the MCP ``ElicitResult`` the server expects.

    - ``ok=True``: ``accept`` with ``content`` = ``answer.data``, or ``{}`` when it is ``None``.
    - ``ok=False, reason="declined"``: ``decline``.
    - ``ok=False`` with any other reason, or none: ``cancel``.

    Only ``ok``, ``data`` and ``reason`` are read. ``answer`` is an [`Answer`][toolnexus.Answer]
    or its wire mapping, checked as [`Answer.from_dict`][toolnexus.Answer.from_dict] does.
    Data that an ``ElicitResult`` cannot carry (a nested object, a list of numbers, ...)
    raises ``ValueError`` naming the offending key.
    """
    if type(answer) is not Answer:
        answer = as_answer(answer, "answer_to_elicit_result: answer")
    if answer.ok:
        data = answer.data
        try:
            return _validate_result({"action": "accept", "content": {} if data is None else data})
        except ValidationError as err:
            raise _content_error(err) from None
    return _validate_result(_DECLINE if answer.reason == "declined" else _CANCEL)
