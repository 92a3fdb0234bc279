"""The parked call, [`Pending`][toolnexus.durable.Pending], and the mapping of a host's answers
onto the ``inputResponses`` that resume it. Pure: no I/O, no event loop.

Imports only ``mcp_types`` (and pydantic) from the SDK's stack.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal, TypeAlias

from mcp_types import ElicitResult, InputRequest
from pydantic import TypeAdapter, ValidationError

from ._answering import AnswerLike, as_answer, result_for
from ._time import read_expires_at
from ._util import type_name as _type_name
from ._wire import Answer, Request, check_fields

__all__ = [
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "AnswerLike",
    "Answers",
    "Method",
    "ParkedTask",
    "Pending",
    "elicit_results",
    "input_request",
    "json_problem",
]

FORMAT_VERSION: Final = 2
"""The version of [`Pending.to_dict`][toolnexus.durable.Pending.to_dict]'s format, its
``"version"`` key: 2 for a parked task (its ``"task"`` key), 1 for every other call, so that
an older toolnexus reads what it can and refuses a task by its version.
[`Pending.from_dict`][toolnexus.durable.Pending.from_dict] reads both."""

FORMAT_NAME: Final = "toolnexus.pending"
"""The ``"format"`` key of every [`Pending.to_dict`][toolnexus.durable.Pending.to_dict]."""

Method: TypeAlias = Literal["tools/call", "prompts/get", "resources/read"]
"""The MCP methods a server may answer with ``InputRequiredResult``."""

Answers: TypeAlias = Mapping[str, AnswerLike] | Iterable[AnswerLike]
"""What [`resume`][toolnexus.durable.resume] takes: request id to
[`Answer`][toolnexus.Answer] (or its wire mapping), or the answers themselves, each by its
``id``."""

_METHODS: Final = ("tools/call", "prompts/get", "resources/read")
_TOP_KEYS: Final = frozenset(
    (
        "format",
        "version",
        "method",
        "target",
        "arguments",
        "requestState",
        "server",
        "requests",
        "otherInputs",
        "task",
    )
)
_REQUIRED_KEYS: Final = ("format", "version", "method", "target", "requests")
_OTHER_INPUT_METHODS: Final = ("roots/list", "sampling/createMessage")
_TASK_KEYS: Final = frozenset(("id", "pollIntervalMs", "expiresAt", "answered"))
_TASK_ID_LIMIT: Final = 1024  # characters of a task id
MAX_TASK_QUESTIONS: Final = 1000
"""Questions one parked task may ask in all; past them the worker cancels it (a server that
asks for ever must not grow its record for ever)."""

_MESSAGE_LIMIT: Final = 300  # characters of a refusal's message: a bad value is never repeated whole
_JSON_DEPTH: Final = 200  # nesting a pending's JSON may reach

_input_request_adapter: TypeAdapter[InputRequest] | None = None


def input_request(wire: Mapping[str, Any]) -> InputRequest:
    """The SDK's model of an input request given as its wire mapping (pydantic validates it)."""
    global _input_request_adapter
    if _input_request_adapter is None:
        _input_request_adapter = TypeAdapter(InputRequest)
    return _input_request_adapter.validate_python(wire)


def _short(value: object, limit: int = 60) -> str:
    """``repr(value)``, cut to ``limit`` characters: a message never repeats a huge value."""
    if isinstance(value, (str, bytes)):
        return repr(value) if len(value) <= limit else repr(value[:limit]) + "..."
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 200:
        text = "a huge int"
    elif isinstance(value, (int, float, bool, type(None))):
        text = repr(value)
    else:
        text = f"a {_type_name(value)}"
    return text if len(text) <= limit else text[:limit] + "..."


def _bounded(message: str) -> str:
    return message if len(message) <= _MESSAGE_LIMIT else message[:_MESSAGE_LIMIT] + "... (cut)"


def json_problem(value: object) -> str | None:
    """Where ``value`` is not plain JSON, or ``None`` when it is: a float JSON cannot carry (NaN,
    infinity, ``1e400``), a non-str key, a type JSON has no form for, nesting deeper than
    200. Iterative, so a deep value cannot exhaust the stack."""
    stack: list[tuple[object, str, int]] = [(value, "", 0)]
    while stack:
        item, where, depth = stack.pop()
        if depth > _JSON_DEPTH:
            return f"{where or 'the value'} is nested deeper than {_JSON_DEPTH}"
        if item is None or isinstance(item, (str, bool, int)):
            continue
        if isinstance(item, float):
            if not math.isfinite(item):
                return f"{where or 'the value'} is {item!r}, which JSON cannot carry"
            continue
        if isinstance(item, dict):
            for key, sub in item.items():
                if not isinstance(key, str):
                    return f"{where or 'the value'} has a key of type {_type_name(key)}, not str"
                stack.append((sub, f"{where}.{key[:40]}" if where else key[:40], depth + 1))
            continue
        if isinstance(item, (list, tuple)):
            for index, sub in enumerate(item):
                stack.append((sub, f"{where}[{index}]", depth + 1))
            continue
        return f"{where or 'the value'} is a {_type_name(item)}, which JSON cannot carry"
    return None


# --- Pending -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ParkedTask:
    """The task a parked call became (the tasks extension, MCP 2026-07-28): what a worker
    needs to poll it, in any process, until it ends.

    Construction checks every field and raises ``TypeError``/``ValueError`` naming the one
    that is wrong.
    """

    id: str
    """The server's ``taskId``."""
    poll_interval_ms: int | None = None
    """The server's ``pollIntervalMs`` as it last said it, or ``None``."""
    expires_at: str | None = None
    """When the task's time to live (``ttlMs``, counted from its creation) runs out, RFC 3339
    UTC, on the clock of the process that parked it; ``None`` when the server keeps it for
    ever. The store marks the call ``expired`` then."""
    answered: tuple[str, ...] = ()
    """The keys of the task's questions already answered (sent with ``tasks/update``): never
    asked, nor answered, twice."""

    def __post_init__(self) -> None:
        if not isinstance(self.id, str):
            raise TypeError(f"ParkedTask.id must be a str, not {_type_name(self.id)}")
        if not self.id or len(self.id) > _TASK_ID_LIMIT:
            raise ValueError(f"ParkedTask.id must be 1 to {_TASK_ID_LIMIT} characters, not {len(self.id)}")
        interval = self.poll_interval_ms
        if interval is not None and (isinstance(interval, bool) or not isinstance(interval, int)):
            raise TypeError(f"ParkedTask.poll_interval_ms must be an int or None, not {_type_name(interval)}")
        if self.expires_at is not None:
            if not isinstance(self.expires_at, str):
                raise TypeError(
                    f"ParkedTask.expires_at must be a str or None, not {_type_name(self.expires_at)}"
                )
            if read_expires_at(self.expires_at) is None:
                raise ValueError(
                    f"ParkedTask.expires_at is not an RFC 3339 date and time: {_short(self.expires_at)}"
                )
        if not isinstance(self.answered, tuple):
            raise TypeError(f"ParkedTask.answered must be a tuple, not {_type_name(self.answered)}")
        for index, key in enumerate(self.answered):
            if not isinstance(key, str):
                raise TypeError(f"ParkedTask.answered[{index}] must be a str, not {_type_name(key)}")
        if len(self.answered) > MAX_TASK_QUESTIONS:
            raise ValueError(f"ParkedTask.answered holds more than {MAX_TASK_QUESTIONS} keys")
        _no_repeats("ParkedTask.answered", self.answered)

    def to_dict(self) -> dict[str, Any]:
        """Its JSON form: ``{"id", "pollIntervalMs"?, "expiresAt"?, "answered"?}``."""
        out: dict[str, Any] = {"id": self.id}
        if self.poll_interval_ms is not None:
            out["pollIntervalMs"] = self.poll_interval_ms
        if self.expires_at is not None:
            out["expiresAt"] = self.expires_at
        if self.answered:
            out["answered"] = list(self.answered)
        return out

    @classmethod
    def from_dict(cls, mapping: object) -> ParkedTask:
        """Read back what [`to_dict`][toolnexus.durable.ParkedTask.to_dict] gave;
        ``ValueError`` naming the field otherwise."""
        if not isinstance(mapping, Mapping):
            raise ValueError(f"Pending.task must be an object, not {_type_name(mapping)}")
        check_fields("Pending.task", mapping, _TASK_KEYS, ("id",))
        answered = mapping.get("answered", [])
        if not isinstance(answered, list):
            raise ValueError(f"Pending.task.answered must be a list, not {_type_name(answered)}")
        try:
            return cls(
                mapping["id"], mapping.get("pollIntervalMs"), mapping.get("expiresAt"), tuple(answered)
            )
        except (TypeError, ValueError) as err:
            message = str(err).replace("ParkedTask.poll_interval_ms", "Pending.task.pollIntervalMs")
            message = message.replace("ParkedTask.expires_at", "Pending.task.expiresAt")
            raise ValueError(message.replace("ParkedTask.", "Pending.task.")) from None


@dataclass(frozen=True, slots=True)
class Pending:
    """A call parked because the server asked for input: everything needed to resume it.

    Made by [`call_tool`][toolnexus.durable.call_tool_or_park] (and its siblings) and
    [`resume`][toolnexus.durable.resume]; stored with [`to_dict`][toolnexus.durable.Pending.to_dict]
    and read back with [`from_dict`][toolnexus.durable.Pending.from_dict]. Construction
    checks every field and raises ``TypeError``/``ValueError`` naming the one that is wrong.
    """

    method: Method
    """The MCP method that was parked: ``"tools/call"``, ``"prompts/get"`` or ``"resources/read"``."""
    target: str
    """What it was called on: the tool's or the prompt's name, or the resource's URI."""
    arguments: dict[str, Any] | None
    """The tool's or the prompt's arguments as sent; ``None`` for none (always for a resource)."""
    request_state: str | None
    """The server's ``requestState``, exactly as received, echoed byte for byte on resume."""
    input_keys: tuple[str, ...]
    """The server's key (its name in ``inputRequests``) of each of the
    [`requests`][toolnexus.durable.Pending.requests], in the same order."""
    requests: tuple[Request, ...]
    """The questions for a human: one §10 [`Request`][toolnexus.Request] per elicitation,
    made by [`elicitation_to_request`][toolnexus.mcp.elicitation_to_request] (ids ``elc-...``)."""
    other_inputs: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)
    """Input requests of other kinds in the same round (``roots/list``,
    ``sampling/createMessage``), by key, as wire mappings. [`resume`][toolnexus.durable.resume]
    answers them through the client's own callbacks, as the SDK would."""
    server: str | None = None
    """The name the server gave itself, for display; ``None`` when it gave none."""
    task: ParkedTask | None = None
    """When the call became a task (the tasks extension): the task, polled by a worker.
    Its ``requests`` are then the task's questions of the moment, and may be none (the
    server works)."""

    def __post_init__(self) -> None:
        if self.method not in _METHODS:
            raise ValueError(f"Pending.method must be one of {', '.join(_METHODS)}, not {self.method!r}")
        if not isinstance(self.target, str):
            raise TypeError(f"Pending.target must be a str, not {_type_name(self.target)}")
        if self.arguments is not None:
            if not isinstance(self.arguments, dict):
                raise TypeError(f"Pending.arguments must be a dict or None, not {_type_name(self.arguments)}")
            if self.method == "resources/read":
                raise ValueError("Pending.arguments must be None for resources/read")
            for key in self.arguments:
                if not isinstance(key, str):
                    raise TypeError(f"Pending.arguments keys must be str, not {_type_name(key)}")
        if self.request_state is not None and not isinstance(self.request_state, str):
            raise TypeError(
                f"Pending.request_state must be a str or None, not {_type_name(self.request_state)}"
            )
        if not isinstance(self.input_keys, tuple):
            raise TypeError(f"Pending.input_keys must be a tuple, not {_type_name(self.input_keys)}")
        if not isinstance(self.requests, tuple):
            raise TypeError(f"Pending.requests must be a tuple, not {_type_name(self.requests)}")
        if self.task is not None:
            if not isinstance(self.task, ParkedTask):
                raise TypeError(f"Pending.task must be a ParkedTask or None, not {_type_name(self.task)}")
            if self.method != "tools/call":
                raise ValueError(f"Pending.task: only a tools/call becomes a task, not {self.method}")
            if self.request_state is not None:
                raise ValueError("Pending.task: a task's call has no request_state")
            overlap = set(self.input_keys) & set(self.task.answered)
            if overlap:
                raise ValueError(f"Pending.input_keys: {min(overlap)!r} is already answered in Pending.task")
        elif not self.requests:
            raise ValueError("Pending.requests must hold at least one Request")
        if len(self.input_keys) != len(self.requests):
            raise ValueError(
                f"Pending.input_keys has {len(self.input_keys)} keys for {len(self.requests)} requests"
            )
        for index, key in enumerate(self.input_keys):
            if not isinstance(key, str):
                raise TypeError(f"Pending.input_keys[{index}] must be a str, not {_type_name(key)}")
        for index, request in enumerate(self.requests):
            if not isinstance(request, Request):
                raise TypeError(f"Pending.requests[{index}] must be a Request, not {_type_name(request)}")
        _no_repeats("Pending.input_keys", self.input_keys)
        _no_repeats("Pending.requests ids", [request.id for request in self.requests])
        if not isinstance(self.other_inputs, dict):
            raise TypeError(f"Pending.other_inputs must be a dict, not {_type_name(self.other_inputs)}")
        for key, wire in self.other_inputs.items():
            if not isinstance(key, str):
                raise TypeError(f"Pending.other_inputs keys must be str, not {_type_name(key)}")
            if not isinstance(wire, dict):
                raise TypeError(f"Pending.other_inputs[{key!r}] must be a dict, not {_type_name(wire)}")
            if wire.get("method") not in _OTHER_INPUT_METHODS:
                raise ValueError(
                    f"Pending.other_inputs[{key!r}].method must be one of {', '.join(_OTHER_INPUT_METHODS)}"
                )
            if key in self.input_keys:
                raise ValueError(f"Pending.other_inputs[{key!r}]: the key is also one of Pending.input_keys")
        if self.server is not None and not isinstance(self.server, str):
            raise TypeError(f"Pending.server must be a str or None, not {_type_name(self.server)}")
        # to_dict must always be JSON: a call whose form holds NaN or infinity (or 1e400,
        # which Python reads as infinity) cannot be parked, and is refused here, before any
        # store writes anything.
        for name, value in (("arguments", self.arguments), ("other_inputs", self.other_inputs)):
            problem = json_problem(value)
            if problem is not None:
                raise ValueError(f"Pending.{name}: {problem}; the call cannot be parked")
        for index, request in enumerate(self.requests):
            problem = json_problem(request.to_dict())
            if problem is not None:
                raise ValueError(f"Pending.requests[{index}]: {problem}; the call cannot be parked")

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe mapping, with the format's name and version; absent optional fields left out.

        ```json
        {"format": "toolnexus.pending", "version": 1, "method": "tools/call",
         "target": "deploy", "arguments": {...}, "requestState": "...", "server": "...",
         "requests": [{"key": "<input key>", "request": {<§10 Request>}}],
         "otherInputs": {"<input key>": {"method": "roots/list", ...}}}
        ```

        A parked task is version 2, with ``"task": {"id": "...", "pollIntervalMs": 5000,
        "expiresAt": "...", "answered": ["<input key>", ...]}``.
        """
        out: dict[str, Any] = {
            "format": FORMAT_NAME,
            "version": FORMAT_VERSION if self.task is not None else 1,
            "method": self.method,
            "target": self.target,
        }
        if self.arguments is not None:
            out["arguments"] = self.arguments
        if self.request_state is not None:
            out["requestState"] = self.request_state
        if self.server is not None:
            out["server"] = self.server
        out["requests"] = [
            {"key": key, "request": request.to_dict()}
            for key, request in zip(self.input_keys, self.requests, strict=True)
        ]
        if self.other_inputs:
            out["otherInputs"] = self.other_inputs
        if self.task is not None:
            out["task"] = self.task.to_dict()
        return out

    @classmethod
    def from_dict(cls, mapping: Mapping[str, Any]) -> Pending:
        """Read back what [`to_dict`][toolnexus.durable.Pending.to_dict] gave.

        Anything else (another format or version, a missing or unknown key, a field of the
        wrong type, an input request that is not one) raises ``ValueError`` naming the field.
        """
        try:
            return cls._from_dict(mapping)
        except ValueError as err:  # never a huge bad value repeated whole
            raise ValueError(_bounded(str(err))) from None

    @classmethod
    def _from_dict(cls, mapping: Mapping[str, Any]) -> Pending:
        if not isinstance(mapping, Mapping):  # a ValueError here, like every other refusal
            raise ValueError(f"Pending.from_dict expects a mapping, not {_type_name(mapping)}")
        # The format and version first: a record of a newer version may have other keys.
        if "format" in mapping and mapping["format"] != FORMAT_NAME:
            raise ValueError(f"Pending.format must be {FORMAT_NAME!r}, not {_short(mapping['format'])}")
        version = mapping.get("version", 1)
        if type(version) is not int or version not in (1, FORMAT_VERSION):
            raise ValueError(
                f"Pending.version {_short(version)} is not one this toolnexus reads (1, {FORMAT_VERSION})"
            )
        check_fields(
            "Pending",
            mapping,
            _TOP_KEYS if version == FORMAT_VERSION else _TOP_KEYS - {"task"},
            _REQUIRED_KEYS,
        )
        task = ParkedTask.from_dict(mapping["task"]) if "task" in mapping else None
        raw_requests = mapping["requests"]
        if not isinstance(raw_requests, list):
            raise ValueError(f"Pending.requests must be a list, not {_type_name(raw_requests)}")
        keys: list[str] = []
        requests: list[Request] = []
        for index, item in enumerate(raw_requests):
            where = f"Pending.requests[{index}]"
            if not isinstance(item, Mapping) or set(item) != {"key", "request"}:
                raise ValueError(f"{where} must be an object with exactly the keys 'key' and 'request'")
            keys.append(item["key"])
            try:
                requests.append(Request.from_dict(item["request"]))
            except (TypeError, ValueError) as err:
                raise ValueError(f"{where}.request: {err}") from None
        other_inputs = mapping.get("otherInputs", {})
        if not isinstance(other_inputs, Mapping):
            raise ValueError(f"Pending.otherInputs must be an object, not {_type_name(other_inputs)}")
        for key, wire in other_inputs.items():
            if not isinstance(wire, Mapping) or wire.get("method") not in _OTHER_INPUT_METHODS:
                raise ValueError(
                    f"Pending.otherInputs[{_short(key)}] must be a roots/list"
                    " or sampling/createMessage request"
                )
            try:
                input_request(wire)
            except ValidationError:
                raise ValueError(
                    f"Pending.otherInputs[{_short(key)}] is not a valid {wire['method']} request"
                ) from None
        try:
            return cls(
                mapping["method"],
                mapping["target"],
                mapping.get("arguments"),
                mapping.get("requestState"),
                tuple(keys),
                tuple(requests),
                {key: dict(wire) for key, wire in other_inputs.items()},
                mapping.get("server"),
                task,
            )
        except (TypeError, ValueError) as err:
            message = str(err)
            for attr, wire_key in (("request_state", "requestState"), ("other_inputs", "otherInputs")):
                message = message.replace(f"Pending.{attr}", f"Pending.{wire_key}")
            message = message.replace("Pending.input_keys", "Pending.requests keys")
            raise ValueError(message) from None


def _no_repeats(what: str, values: Iterable[str]) -> None:
    seen: set[str] = set()
    repeated: list[str] = []
    for value in values:
        if value in seen:
            repeated.append(value)
        seen.add(value)
    if repeated:
        raise ValueError(f"{what} repeat: {', '.join(repr(value) for value in dict.fromkeys(repeated))}")


def _answers_by_id(pending: Pending, answers: Answers) -> dict[str, Answer]:
    """Each of ``pending``'s request ids with its answer, or ``ValueError`` naming the ids
    that have none and the ids ``pending`` does not hold."""
    given: dict[str, Answer] = {}
    if isinstance(answers, Mapping):
        for key, value in answers.items():
            if not isinstance(key, str):
                raise TypeError(f"resume: answers keys must be request ids (str), not {_type_name(key)}")
            given[key] = as_answer(value, f"resume: answers[{key!r}]")
    elif isinstance(answers, (str, bytes)) or not isinstance(answers, Iterable):
        raise TypeError(
            f"resume: answers must map request ids to answers, or be an iterable of answers, "
            f"not {_type_name(answers)}"
        )
    else:
        for index, value in enumerate(answers):
            answer = as_answer(value, f"resume: answers[{index}]")
            if answer.id in given:
                raise ValueError(f"resume: two answers for {answer.id!r}")
            given[answer.id] = answer
    ids = [request.id for request in pending.requests]
    missing = [request_id for request_id in ids if request_id not in given]
    unknown = [request_id for request_id in given if request_id not in ids]
    problems = []
    if missing:
        problems.append(f"no answer for {', '.join(missing)}")
    if unknown:
        problems.append(f"answers for ids the pending does not hold: {', '.join(repr(u) for u in unknown)}")
    if problems:
        raise ValueError(f"resume: {'; '.join(problems)}")
    return given


def elicit_results(pending: Pending, answers: Answers) -> dict[str, ElicitResult]:
    """The ``inputResponses`` for ``pending``'s elicitations, keyed as the server keyed them.

    Each answer is mapped as [`elicitation_callback`][toolnexus.mcp.elicitation_callback]
    maps it (defaults laid in, accepted content validated); content that does not fit
    raises ``ValueError`` naming the request and the fields. Nothing is sent.
    """
    given = _answers_by_id(pending, answers)
    return {
        key: result_for(request, given[request.id])
        for key, request in zip(pending.input_keys, pending.requests, strict=True)
    }
