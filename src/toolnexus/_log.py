"""A traffic log for any §10 resolver: [`log_traffic`][toolnexus.log_traffic].

Each question and its answer are written in their §10 wire form, one JSON object per line,
so the log can be read back with ``json.loads`` line by line (or ``jq``). What the user gave
is masked unless the caller asks for it.

Standard library and ``toolnexus._wire`` only: importing it costs nothing.
"""

from __future__ import annotations

import json
import logging
import time
import unicodedata
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias, TypeVar, cast, overload

from ._time import utc_timestamp
from ._util import UNSAFE_CATEGORIES, is_async_callable
from ._wire import Answer, Request

if TYPE_CHECKING:
    from mcp_types import ElicitResult

    from ._callback import ResultReason

__all__ = ["MASK", "TRAFFIC_LOGGER", "LoggedResolver", "answer_wire", "log_traffic"]

MASK = "***"
"""What a masked answer value is written as."""

TRAFFIC_LOGGER = "toolnexus.traffic"
"""The name of the logger [`log_traffic`][toolnexus.log_traffic] writes to when given none."""

_R = TypeVar("_R")
_R_co = TypeVar("_R_co", covariant=True)

Sink: TypeAlias = logging.Logger | Callable[[str], object]
"""Where [`log_traffic`][toolnexus.log_traffic] writes: a logger, or a callable taking one line."""


def _masked(data: object) -> object:
    if isinstance(data, Mapping):
        return {str(key): MASK for key in data}
    return MASK


_PLAIN_KEYS = frozenset(("id", "ok", "reason"))


def answer_wire(answer: object, values: bool) -> dict[str, Any] | None:
    """The answer as a wire object, its data masked unless ``values``; ``None`` if it is none.

    A mapping is logged as given, but for its ``data`` and any key that is not a wire field
    of an Answer: a malformed answer may carry the user's values under another name.
    """
    if isinstance(answer, Answer):
        wire = answer.to_dict()
    elif isinstance(answer, Mapping):
        wire = {str(key): value for key, value in answer.items()}
    else:
        return None
    if not values:
        for key, value in wire.items():
            if key not in _PLAIN_KEYS and value is not None:
                wire[key] = _masked(value)
    return wire


def _escaped(line: str) -> str:
    """A JSON line with every character that could rewrite a terminal or a log viewer
    (C0 and C1 controls, DEL, bidi and other format characters, line separators) written as
    a JSON ``\\u`` escape: the line reads back as the same JSON, and shows as what it is."""
    if line.isprintable():
        return line
    return "".join(
        json.dumps(ch)[1:-1] if unicodedata.category(ch) in UNSAFE_CATEGORIES else ch for ch in line
    )


class _Writer:
    """Writes one JSON object per line to a logger or a callable."""

    def __init__(self, sink: Sink | None) -> None:
        self._sink: Sink = logging.getLogger(TRAFFIC_LOGGER) if sink is None else sink

    def __call__(self, record: dict[str, Any]) -> None:
        line = _escaped(json.dumps(record, ensure_ascii=False, default=repr, separators=(",", ":")))
        sink = self._sink
        if isinstance(sink, logging.Logger):
            sink.info("%s", line)
        else:
            sink(line)

    def request(self, request: Request) -> float:
        self({"time": utc_timestamp(), "event": "request", "request": request.to_dict()})
        return time.perf_counter()

    def answer(self, request: Request, started: float, answer: object, values: bool) -> None:
        record: dict[str, Any] = {
            "time": utc_timestamp(),
            "event": "answer",
            "id": request.id,
            "seconds": round(time.perf_counter() - started, 6),
        }
        wire = answer_wire(answer, values)
        if wire is None:
            record["answer"] = None
            record["returned"] = type(answer).__name__
        else:
            record["answer"] = wire
        self(record)

    def error(self, request: Request, started: float, error: BaseException) -> None:
        # The exception's type only: its text may hold paths, tokens or what the user typed.
        self(
            {
                "time": utc_timestamp(),
                "event": "error",
                "id": request.id,
                "seconds": round(time.perf_counter() - started, 6),
                "error": type(error).__name__,
            }
        )


class LoggedResolver(Protocol[_R_co]):
    """What [`log_traffic`][toolnexus.log_traffic] returns: the resolver, logged, and the
    observer that logs what the server got."""

    def __call__(self, request: Request) -> _R_co:
        """Ask the wrapped resolver, logging the Request and its Answer (or error)."""
        ...

    def sent(self, request: Request, result: ElicitResult, outcome: ResultReason) -> None:
        """The [`OnResult`][toolnexus.mcp.OnResult] observer for
        [`elicitation_callback`][toolnexus.mcp.elicitation_callback]: logs the result the
        server got when it is not the answer as given."""
        ...


def _sent_logger(write: _Writer, values: bool) -> Callable[[Request, ElicitResult, ResultReason], None]:
    def sent(request: Request, result: ElicitResult, outcome: ResultReason) -> None:
        if outcome is None:  # the server got the answer as given: the answer line says it
            return
        wire: dict[str, Any] = {"action": result.action}
        if result.content is not None:
            wire["content"] = result.content if values else _masked(result.content)
        write({"time": utc_timestamp(), "event": "sent", "id": request.id, "result": wire, "reason": outcome})

    return sent


@overload
def log_traffic(
    wait_for: Callable[[Request], Awaitable[_R]],
    logger: Sink | None = None,
    *,
    values: bool = False,
) -> LoggedResolver[Awaitable[_R]]: ...


@overload
def log_traffic(
    wait_for: Callable[[Request], _R],
    logger: Sink | None = None,
    *,
    values: bool = False,
) -> LoggedResolver[_R]: ...


def log_traffic(
    wait_for: Callable[[Request], Any],
    logger: Sink | None = None,
    *,
    values: bool = False,
) -> LoggedResolver[Any]:
    """Wrap a resolver so that every Request and its Answer are logged as JSON lines, and
    what the server got when it differs.

    The wrapper has the same shape as ``wait_for``: an ``async def`` resolver gives an
    ``async`` wrapper, a plain one a plain wrapper, so it fits wherever the resolver did
    (for instance ``elicitation_callback(log_traffic(wait_for))``). What the resolver
    returns, or raises, passes through unchanged.

    What the server got is known to the callback, not to the resolver: hand the wrapper's
    ``sent`` to it as its observer, and the log also says when the server got something
    else than the answer (the callback turned it into ``cancel``, or laid defaults in):

    ```python
    logged = log_traffic(wait_for, write)
    Client(server, elicitation_callback=elicitation_callback(logged, on_result=logged.sent))
    ```

    Each event is one JSON object on one line:

    - ``{"time", "event": "request", "request": <Request.to_dict()>}`` when asked;
    - ``{"time", "event": "answer", "id", "seconds", "answer": <Answer.to_dict()>}`` when
      answered, ``seconds`` being how long the answer took (``answer`` is ``null`` and
      ``returned`` names the type when the resolver returned something that is not an
      answer);
    - ``{"time", "event": "error", "id", "seconds", "error": <exception type>}`` when the
      resolver raised. The exception's message is not logged;
    - ``{"time", "event": "sent", "id", "result": {"action", "content"?}, "reason"}``
      (through ``sent``) when the server got something else than the answer: ``reason``
      is the [`ResultReason`][toolnexus.mcp.ResultReason] (``"validation"``, ``"timeout"``,
      ``"error"``, ``"defaults"``, ``"overloaded"``). ``content`` is masked like answers.

    ``time`` is RFC 3339 UTC. ``id`` is the request's id.

    Args:
        wait_for: the resolver to wrap, ``(Request) -> Answer`` (or its wire mapping),
            plain or ``async``.
        logger: where the lines go: a ``logging.Logger`` (each line is one ``INFO``
            record whose message is the JSON), or any callable taking the line as a
            ``str``. Default: the ``toolnexus.traffic`` logger.
        values: write the answer's ``data`` as given. By default each value is written as
            ``"***"`` (the keys stay, so the log shows which fields were answered).
    """
    if not callable(wait_for):
        raise TypeError(f"log_traffic: wait_for must be callable, not {type(wait_for).__name__}")
    if logger is not None and not isinstance(logger, logging.Logger) and not callable(logger):
        raise TypeError(
            f"log_traffic: logger must be a logging.Logger, a callable or None, not {type(logger).__name__}"
        )
    if not isinstance(values, bool):
        raise TypeError(f"log_traffic: values must be a bool, not {type(values).__name__}")
    write = _Writer(logger)
    logged: Callable[[Request], Any]
    if is_async_callable(wait_for):

        async def logged_async(request: Request) -> Any:
            started = write.request(request)
            try:
                answer = await wait_for(request)
            except BaseException as err:
                write.error(request, started, err)
                raise
            write.answer(request, started, answer, values)
            return answer

        logged = logged_async
    else:

        def logged_sync(request: Request) -> Any:
            started = write.request(request)
            try:
                answer = wait_for(request)
            except BaseException as err:
                write.error(request, started, err)
                raise
            write.answer(request, started, answer, values)
            return answer

        logged = logged_sync
    # A function (so that inspect sees an async one as such) carrying its observer.
    setattr(logged, "sent", _sent_logger(write, values))  # noqa: B010
    return cast("LoggedResolver[Any]", logged)
