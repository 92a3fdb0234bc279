"""Helpers for testing a resolver: real requests, scripted and replayed answers, a real server.

- [`form_request`][toolnexus.testing.form_request] and [`url_request`][toolnexus.testing.url_request]
  make the [`Request`][toolnexus.Request] a server's question becomes, through the real mapping.
- [`ScriptedResolver`][toolnexus.testing.ScriptedResolver] answers from a script, one step per
  request, and fails the test when a request is not the one the script expects.
- [`ReplayResolver`][toolnexus.testing.ReplayResolver] answers from a traffic log recorded with
  [`log_traffic(..., values=True)`][toolnexus.log_traffic] or ``toolnexus call --log FILE --log-values``.
- [`elicit_through_server`][toolnexus.testing.elicit_through_server] has a real in-process
  ``MCPServer`` ask a question in a given protocol era and returns the ``ElicitResult`` the
  server received; the pytest fixture ``elicit_server`` (this package's pytest plugin) hands it
  to a test.
- ``toolnexus.testing.strategies``: Hypothesis strategies for forms, requests and answers.

Importing this module needs neither pytest nor Hypothesis, and loads nothing of the SDK's
server or client until a helper that needs them is called.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Mapping
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from .._answering import form_of
from .._mapping import elicitation_to_request
from .._rules import Asked, Rule, describe_request, read_rule
from .._util import is_async_callable
from .._wire import Answer, Request
from ..errors import FormError, ServerQuestionError

if TYPE_CHECKING:
    from mcp_types import ElicitResult
    from pydantic import BaseModel

    from .._callback import WaitFor

__all__ = [
    "ERAS",
    "ReplayResolver",
    "ScriptedResolver",
    "elicit_through_server",
    "form_request",
    "url_request",
]

Era = Literal["2025-11-25", "2026-07-28"]
ERAS: tuple[Era, ...] = ("2025-11-25", "2026-07-28")
"""The protocol eras [`elicit_through_server`][toolnexus.testing.elicit_through_server] speaks:
``"2025-11-25"`` (the initialize handshake; the server sends ``elicitation/create`` mid-call)
and ``"2026-07-28"`` (the question rides an ``InputRequiredResult`` and the call is retried)."""


_STEP_KEYS = ("prompt", "fields", "kind", "url_host", "action", "values")
_STEP_ACTIONS = ("accept", "decline", "cancel")


def _requested_schema(schema_or_model: Mapping[str, Any] | type[BaseModel]) -> dict[str, Any]:
    """The ``requestedSchema`` for a JSON schema (copied) or a pydantic model.

    A model's schema is made by the SDK's own ``render_elicitation_schema``, the function
    its ``MCPServer`` calls for ``ctx.elicit(message, Model)`` and ``Elicit(message, Model)``,
    so a test sees exactly what such a server sends. It raises ``TypeError`` for a model the
    SDK would refuse (a nested model, a bare list).
    """
    if isinstance(schema_or_model, type):
        from pydantic import BaseModel

        if not issubclass(schema_or_model, BaseModel):
            raise TypeError(f"schema must be a mapping or a pydantic model class, not {schema_or_model!r}")
        from mcp.server.elicitation import render_elicitation_schema

        return render_elicitation_schema(schema_or_model)
    if not isinstance(schema_or_model, Mapping):
        raise TypeError(
            f"schema must be a mapping or a pydantic model class, not {type(schema_or_model).__name__}"
        )
    return json.loads(json.dumps(schema_or_model))  # type: ignore[no-any-return]


def form_request(
    schema_or_model: Mapping[str, Any] | type[BaseModel],
    message: str = "",
    *,
    era: Era | None = None,
) -> Request:
    """The [`Request`][toolnexus.Request] a form question becomes, made by the real mapping.

    ```python
    from pydantic import BaseModel
    from toolnexus.testing import form_request

    class Deploy(BaseModel):
        '''Where to deploy.'''

        region: str
        replicas: int = 2

    request = form_request(Deploy, "Where to?")
    assert request.kind == "input" and request.prompt == "Where to?"
    assert request.data["schema"]["properties"]["replicas"]["default"] == 2
    assert request.data["schema"]["description"] == "Where to deploy."
    # What a client receives under 2026-07-28, whose wire schema keeps no top-level title:
    assert "description" not in form_request(Deploy, era="2026-07-28").data["schema"]
    ```

    Args:
        schema_or_model: the ``requestedSchema`` as a mapping (copied; any shape, so a test
            can try what a careless server sends), or a pydantic model class, rendered as the
            SDK's ``MCPServer`` renders it for ``ctx.elicit``/``Elicit(...)``.
        message: the question's text (the request's ``prompt``).
        era: ``None`` (the default) or ``"2025-11-25"``: the schema as rendered, which is
            what a client receives up to 2025-11-25. ``"2026-07-28"``: the schema as that
            protocol's wire shape carries it inside an ``InputRequiredResult`` (the SDK's
            server drops every top-level key but ``type``, ``properties``, ``required`` and
            ``$schema``), shaped by the SDK's own ``serialize_server_result``.
    """
    if not isinstance(message, str):
        raise TypeError(f"form_request: message must be a str, not {type(message).__name__}")
    if era is not None and era not in ERAS:
        raise ValueError(f"form_request: era must be one of {', '.join(ERAS)} or None, not {era!r}")
    schema = _requested_schema(schema_or_model)
    if era == "2026-07-28":
        schema = _as_sent_in_2026(schema, message)
    return elicitation_to_request({"mode": "form", "message": message, "requestedSchema": schema})


def _as_sent_in_2026(schema: dict[str, Any], message: str) -> dict[str, Any]:
    """The schema as a 2026-07-28 server sends it: an ``InputRequiredResult`` of
    ``tools/call`` through the SDK's wire serializer for that version."""
    from mcp_types import ElicitRequest, ElicitRequestFormParams, InputRequiredResult
    from mcp_types.methods import serialize_server_result

    params = ElicitRequestFormParams(message=message, requested_schema=schema)
    result = InputRequiredResult(input_requests={"q": ElicitRequest(params=params)})
    wire = serialize_server_result(
        "tools/call", "2026-07-28", result.model_dump(by_alias=True, mode="json", exclude_none=True)
    )
    return wire["inputRequests"]["q"]["params"]["requestedSchema"]  # type: ignore[no-any-return]


def url_request(url: str, message: str = "") -> Request:
    """The [`Request`][toolnexus.Request] a URL-mode question becomes, made by the real mapping.

    Args:
        url: the URL the server asks the user to visit.
        message: the question's text (the request's ``prompt``).
    """
    if not isinstance(url, str):
        raise TypeError(f"url_request: url must be a str, not {type(url).__name__}")
    if not isinstance(message, str):
        raise TypeError(f"url_request: message must be a str, not {type(message).__name__}")
    return elicitation_to_request(
        {"mode": "url", "message": message, "url": url, "elicitationId": "toolnexus-testing"}
    )


class _Recorder:
    """What the scripted and the replaying resolver share: the requests seen, in order,
    the first failure, thread safety (the bridge runs a plain resolver in worker threads)."""

    _name = "resolver"

    def __init__(self, strict: bool) -> None:
        if not isinstance(strict, bool):
            raise TypeError(f"{self._name}: strict must be a bool, not {type(strict).__name__}")
        self.strict = strict
        self.requests: list[Request] = []
        """Every request this resolver was given, in order."""
        self.failures: list[AssertionError] = []
        """The mismatches seen (with ``strict=True``, each was also raised)."""
        self._lock = threading.Lock()

    def _answer(self, number: int, request: Request) -> Answer:  # pragma: no cover - abstract
        raise NotImplementedError

    def __call__(self, request: Request) -> Answer:
        """Answer ``request`` (as a plain resolver). With ``strict=True`` a request the
        resolver did not expect raises ``AssertionError``; otherwise it gets cancel."""
        if not isinstance(request, Request):
            raise TypeError(f"{self._name} expects a Request, not {type(request).__name__}")
        with self._lock:
            self.requests.append(request)
            try:
                return self._answer(len(self.requests), request)
            except AssertionError as failure:
                self.failures.append(failure)
                if self.strict:
                    raise
                return Answer.cancel(request)

    async def acall(self, request: Request) -> Answer:
        """The same as calling it, as an ``async def`` resolver: ``elicitation_callback(resolver.acall)``."""
        return self(request)

    def _check_failures(self) -> None:
        if self.failures:
            first = self.failures[0]
            raise AssertionError(
                f"{self._name} failed while answering (inside a client the bridge sent cancel):\n{first}"
            ) from first


class ScriptedResolver(_Recorder):
    """A resolver that answers from a script: one step per request, in order.

    ```python
    from toolnexus.testing import ScriptedResolver, form_request

    script = ScriptedResolver([
        {"prompt": "Deploy", "fields": ["region", "replicas"], "action": "accept",
         "values": {"region": "eu-west-1", "replicas": 3}},
        {"action": "decline"},
    ])
    properties = {"region": {"type": "string"}, "replicas": {"type": "integer"}}
    schema = {"type": "object", "properties": properties}
    answer = script(form_request(schema, "Deploy where?"))
    assert answer.ok and answer.data == {"region": "eu-west-1", "replicas": 3}
    assert script(form_request(schema, "Again?")).reason == "declined"
    script.assert_done()
    ```

    A step is a mapping with the keys of a [`Policy`][toolnexus.policy.Policy] rule that make
    sense in a test. What it matches, every key optional: ``prompt`` (a substring of the
    prompt), ``fields`` (the form's field names, in any order, all of them), ``kind``
    (``"input"`` or ``"authorization"``), ``url_host`` (the URL's exact host). What it answers:
    ``action``, ``"accept"`` (with ``values``, the form's content, sent as given),
    ``"decline"`` or ``"cancel"``.

    A request that does not match the next step (or comes when no step is left) raises an
    ``AssertionError`` that shows what was asked and what the step expected; with
    ``strict=False`` it gets cancel instead, and the step waits for the next request. Inside
    a real client the bridge turns a resolver's exception into cancel, so also call
    [`assert_done`][toolnexus.testing.ScriptedResolver.assert_done] at the end of the test: it
    raises the first mismatch again, then fails when steps are left over. (The
    ``elicit_server`` fixture re-raises it for you.)

    It is a plain callable (the bridge runs it in a worker thread) and has an ``async`` twin,
    ``acall``; both are safe to call from several threads at once.

    Raises ``TypeError``/``ValueError`` naming the step and the key for a step that cannot
    be right (an unknown key, an unknown action, values with a decline).
    """

    _name = "ScriptedResolver"

    def __init__(self, steps: Iterable[Mapping[str, Any]], strict: bool = True) -> None:
        super().__init__(strict)
        if isinstance(steps, (str, bytes, Mapping)) or not isinstance(steps, Iterable):
            raise TypeError(f"ScriptedResolver: steps must be a list of mappings, not {type(steps).__name__}")
        self.steps: tuple[Rule, ...] = tuple(
            read_rule(index, step, what="step", keys=_STEP_KEYS, actions=_STEP_ACTIONS, regex=False)
            for index, step in enumerate(steps)
        )
        self._next = 0

    def _answer(self, number: int, request: Request) -> Answer:
        if self._next >= len(self.steps):
            raise AssertionError(
                f"ScriptedResolver: request {number} was not expected: all {len(self.steps)} steps are used\n"
                f"  asked:    {describe_request(request)}"
            )
        step = self.steps[self._next]
        asked = Asked(request)
        why = step.mismatch(asked)
        if why is not None:
            raise AssertionError(
                f"ScriptedResolver: request {number} does not match step {step.index}: {why}\n"
                f"  asked:    {describe_request(asked)}\n"
                f"  expected: {step.describe()}"
            )
        self._next += 1
        return step.answer(request)

    @property
    def remaining(self) -> tuple[Rule, ...]:
        """The steps not used yet."""
        return self.steps[self._next :]

    def assert_done(self) -> None:
        """Fail (``AssertionError``) when a request did not match, or steps are left over."""
        self._check_failures()
        left = self.remaining
        if left:
            lines = "\n".join(f"  step {step.index}: {step.describe()}" for step in left)
            raise AssertionError(
                f"ScriptedResolver: {len(left)} of {len(self.steps)} steps left unused "
                f"after {len(self.requests)} requests:\n{lines}"
            )


def _shape(request: Request) -> tuple[Any, ...]:
    """What a recorded request and a new one must share: kind, prompt, and the form's
    fields (name, type, whether required) or the URL's host."""
    if request.kind == "authorization":
        return (request.kind, request.prompt, Asked(request).host)
    try:
        form = form_of(request)
    except FormError:
        form = None
    if form is None:  # no form, or one the form model refuses: its schema compared as it is
        schema = request.data.get("schema") if request.data else None
        return (request.kind, request.prompt, json.dumps(schema, sort_keys=True, default=repr))
    return (request.kind, request.prompt, tuple((f.name, f.type, f.required) for f in form.fields))


class ReplayResolver(_Recorder):
    """A resolver that gives the answers of a recorded session back, in order.

    Made with [`from_log`][toolnexus.testing.ReplayResolver.from_log] from a traffic log
    written with [`log_traffic(..., values=True)`][toolnexus.log_traffic] or ``toolnexus call
    --log FILE --log-values``. Each request is matched to the next recorded one by kind,
    prompt and form shape (the fields' names, types and whether they are required; for a URL,
    its host) and gets the recorded answer under its own id. A request that does not match
    raises an ``AssertionError`` showing both sides (cancel with ``strict=False``);
    [`assert_done`][toolnexus.testing.ReplayResolver.assert_done] fails when recorded
    requests are left.

    A recorded resolver that raised, or returned something that is not an answer, is
    replayed as cancel, which is what the server got.

    Args:
        recording: ``(request, answer)`` pairs, in the order they were asked.
        strict: raise on a mismatch (``True``) or answer cancel.
    """

    _name = "ReplayResolver"

    def __init__(self, recording: Iterable[tuple[Request, Answer]], strict: bool = True) -> None:
        super().__init__(strict)
        self.recording: tuple[tuple[Request, Answer], ...] = tuple(recording)
        for index, pair in enumerate(self.recording):
            if not (
                isinstance(pair, tuple)
                and len(pair) == 2
                and isinstance(pair[0], Request)
                and isinstance(pair[1], Answer)
            ):
                raise TypeError(f"ReplayResolver: recording[{index}] must be a (Request, Answer) pair")
        self._next = 0

    @classmethod
    def from_log(cls, path: str | PathLike[str], strict: bool = True) -> ReplayResolver:
        """Read a traffic log (JSON lines) written with the answers' values.

        Raises ``ValueError`` naming the line for a line that is not a log event, and for a
        log written with masked values (``"***"``), which holds no answers to give.
        """
        return cls(_read_log(Path(path)), strict)

    def _answer(self, number: int, request: Request) -> Answer:
        if self._next >= len(self.recording):
            raise AssertionError(
                f"ReplayResolver: request {number} was not expected: all {len(self.recording)} recorded "
                f"requests are used\n  asked:    {describe_request(request)}"
            )
        recorded, answer = self.recording[self._next]
        if _shape(recorded) != _shape(request):
            raise AssertionError(
                f"ReplayResolver: request {number} does not match recorded request {self._next + 1}\n"
                f"  asked:    {describe_request(request)}\n"
                f"  recorded: {describe_request(recorded)}"
            )
        self._next += 1
        data = None if answer.data is None else json.loads(json.dumps(answer.data))
        return Answer(request.id, answer.ok, data, answer.reason)

    def assert_done(self) -> None:
        """Fail (``AssertionError``) when a request did not match, or recorded requests are left."""
        self._check_failures()
        left = self.recording[self._next :]
        if left:
            lines = "\n".join(f"  {describe_request(request)}" for request, _ in left)
            raise AssertionError(
                f"ReplayResolver: {len(left)} of {len(self.recording)} recorded requests left unused "
                f"after {len(self.requests)} requests:\n{lines}"
            )


_MASK = "***"


def _masked(answer: Mapping[str, Any]) -> bool:
    data = answer.get("data")
    if data == _MASK:
        return True
    return isinstance(data, Mapping) and bool(data) and all(value == _MASK for value in data.values())


def _read_log(path: Path) -> list[tuple[Request, Answer]]:
    requests: dict[str, tuple[int, Request]] = {}
    answers: dict[str, Answer] = {}
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            where = f"{path}:{number}"
            try:
                event = json.loads(line)
            except RecursionError:
                raise ValueError(f"{where}: nested too deeply to be a traffic log event") from None
            except json.JSONDecodeError:
                raise ValueError(f"{where}: not a JSON line of a traffic log") from None
            if not isinstance(event, dict) or event.get("event") not in ("request", "answer", "error"):
                raise ValueError(f"{where}: not a traffic log event (no 'event' of request, answer, error)")
            try:
                if event["event"] == "request":
                    request = Request.from_dict(event["request"])
                    requests[request.id] = (number, request)
                    continue
                key = event["id"]
                wire = event.get("answer")
                if event["event"] == "answer" and isinstance(wire, Mapping):
                    if _masked(wire):
                        raise ValueError(
                            f"{where}: this log was written with masked values ('***'), so it holds no "
                            "answers to replay; record with log_traffic(..., values=True) or "
                            "toolnexus call --log FILE --log-values"
                        )
                    recorded = Answer.from_dict(wire)
                    answers[key] = Answer(key, recorded.ok, recorded.data, recorded.reason)
                else:  # the resolver raised or returned no answer: the server got cancel
                    answers[key] = Answer.cancel(key)
            except (KeyError, TypeError) as err:
                raise ValueError(f"{where}: a malformed {event['event']} event ({err})") from None
    ordered = sorted(requests.values(), key=lambda item: item[0])
    return [(request, answers[request.id]) for _, request in ordered if request.id in answers]


async def elicit_through_server(
    resolver: WaitFor,
    *,
    schema: Mapping[str, Any] | type[BaseModel] | None = None,
    url: str | None = None,
    message: str = "",
    era: Era = "2026-07-28",
    **options: Any,
) -> ElicitResult:
    """Have a real in-process ``MCPServer`` ask one question; return the ``ElicitResult`` it received.

    ```python
    import anyio
    from toolnexus import Answer
    from toolnexus.testing import elicit_through_server

    def agree(request):
        return Answer(request.id, True, {"ok": True})

    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}}
    result = anyio.run(
        lambda: elicit_through_server(agree, schema=schema, era="2025-11-25")
    )
    assert result.action == "accept" and result.content == {"ok": True}
    ```

    The server is the SDK's ``MCPServer``; its one tool asks ``schema`` (form mode) or ``url``
    (URL mode). In ``"2025-11-25"`` the client connects with the initialize handshake and the
    server sends ``elicitation/create`` mid-call; in ``"2026-07-28"`` the tool returns an
    ``InputRequiredResult``, the SDK's client answers it and retries. The resolver is wired
    in with [`elicitation_callback`][toolnexus.mcp.elicitation_callback], as a host does.

    An ``AssertionError`` the resolver raised (a [`ScriptedResolver`][toolnexus.testing.ScriptedResolver]
    that met the wrong request) is raised here once the call is over, although the
    server got cancel.

    Args:
        resolver: the resolver under test, plain or ``async``.
        schema: the form's ``requestedSchema``, or a pydantic model the SDK renders.
        url: the URL to ask the user to visit (instead of ``schema``).
        message: the question's text.
        era: ``"2025-11-25"`` or ``"2026-07-28"``.
        **options: passed to [`elicitation_callback`][toolnexus.mcp.elicitation_callback]
            (``timeout``, ``validate``).
    """
    from ._server import run_elicitation

    if (schema is None) == (url is None):
        raise TypeError("elicit_through_server: give exactly one of schema and url")
    if era not in ERAS:
        raise ValueError(f"elicit_through_server: era must be one of {', '.join(ERAS)}, not {era!r}")
    if not isinstance(message, str):
        raise TypeError(f"elicit_through_server: message must be a str, not {type(message).__name__}")
    if url is not None and not isinstance(url, str):
        raise TypeError(f"elicit_through_server: url must be a str, not {type(url).__name__}")
    rendered = None if schema is None else _requested_schema(schema)
    caught: list[AssertionError] = []
    wrapped = _catching(resolver, caught)
    result = await run_elicitation(wrapped, rendered, url, message, era, options)
    if caught:
        raise caught[0]
    if isinstance(result, str):
        raise ServerQuestionError(result)
    return result


def _catching(resolver: WaitFor, caught: list[AssertionError]) -> WaitFor:
    """The resolver, with its ``AssertionError`` kept aside for the test and cancel sent,
    as the bridge would, without the bridge's log of a resolver that raised."""
    if not callable(resolver):
        raise TypeError(f"resolver must be callable, not {type(resolver).__name__}")
    if is_async_callable(resolver):

        async def catching_async(request: Request) -> Any:
            try:
                return await resolver(request)  # type: ignore[misc]
            except AssertionError as failure:
                caught.append(failure)
                return Answer.cancel(request)

        return catching_async

    def catching(request: Request) -> Any:
        try:
            return resolver(request)
        except AssertionError as failure:
            caught.append(failure)
            return Answer.cancel(request)

    return catching
