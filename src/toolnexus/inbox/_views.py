"""What the inbox's pages show, and the reading of what a person posts: pure, no I/O.

Every text that came from a server (names, prompts, titles, choices, URLs, arguments,
results) goes through [`escape_text`][toolnexus._util.escape_text] here, so control, bidi
and zero-width characters are visible as escapes; the templates' autoescaping then makes it
HTML. A template never sees a server's text that did not pass through this module.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from .._answering import form_of as read_form_of
from .._hints import count_hint, takes
from .._time import read_expires_at, span, utc_timestamp
from .._util import escape_text
from .._wire import Answer, Request
from ..durable import Call, HistoryEntry, Pending
from ..errors import FormError, UrlError
from ..forms import FORMATS, Field, Form, sensitive_fields
from ..urls import browser_host, read_url, url_warnings

__all__ = [
    "FieldView",
    "Posted",
    "QuestionView",
    "Row",
    "call_status",
    "deadline_of",
    "field_views",
    "read_post",
    "row_of",
]

FOLD_AT: Final = 120
"""Characters of an argument shown before the rest is folded away."""
_WHAT: Final = {"tools/call": "tool", "prompts/get": "prompt", "resources/read": "resource"}
_INPUT_TYPES: Final = {"email": "email", "uri": "url", "date": "date", "date-time": "datetime-local"}
RADIO_AT_MOST: Final = 5
"""A single choice of at most this many choices is a radio group; more, a select."""


def shown(text: object, *, lines: bool = False) -> str:
    """A server's text as a page shows it: control, bidi and zero-width characters visible."""
    return escape_text(text if isinstance(text, str) else str(text), lines=lines)


# --- time ------------------------------------------------------------------------------------


def parse_time(text: object) -> _dt.datetime | None:
    """An RFC 3339 time (``2026-11-29T19:40:00.123Z``), or ``None`` when it does not read."""
    if not isinstance(text, str) or len(text) > 40:
        return None
    try:
        moment = _dt.datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith(("Z", "z")) else text)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=_dt.timezone.utc)


def deadline_of(request: Request) -> _dt.datetime | None:
    """When ``request``'s ``expiresAt`` passes, read as every part of toolnexus reads it
    ([`read_expires_at`][toolnexus._time.read_expires_at]): ``None`` for no deadline, and for
    one that does not read."""
    seconds = read_expires_at(request.expiresAt)
    return None if seconds is None else _dt.datetime.fromtimestamp(seconds, _dt.timezone.utc)


def expired(request: Request, now: _dt.datetime) -> bool:
    """Whether ``request``'s ``expiresAt`` has passed (one that does not read never has, as
    the store's sweep and ``toolnexus answer`` read it)."""
    moment = deadline_of(request)
    return moment is not None and moment <= now


# --- the list --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Prompt:
    kind: str
    text: str
    answered: bool


@dataclass(frozen=True)
class Row:
    """One parked call as the list shows it."""

    key: str
    status: str
    server: str
    what: str
    target: str
    arguments: str
    folded: str | None
    prompts: tuple[Prompt, ...]
    age: str
    left: str
    problem: str | None = None
    live: bool = False
    """A live question: a server is waiting now, the call held open until it is answered."""


def call_status(pending: Pending, answered: Collection[str], now: _dt.datetime) -> str:
    """A waiting call's status as its questions tell it: ``ready`` when every question is
    answered, ``expired`` when an unanswered one is past its ``expiresAt``, else ``waiting``."""
    left = [r for r in pending.requests if r.id not in answered]
    if not left:
        return "ready"
    if any(expired(r, now) for r in left):
        return "expired"
    return "waiting"


def _arguments(pending: Pending) -> tuple[str, str | None]:
    if not pending.arguments:
        return "", None
    text = shown(json.dumps(pending.arguments, ensure_ascii=False, default=str, sort_keys=False))
    if len(text) <= FOLD_AT:
        return text, None
    return text[:FOLD_AT] + "…", shown(
        json.dumps(pending.arguments, ensure_ascii=False, default=str, indent=2), lines=True
    )


def _left(pending: Pending, answered: Collection[str], now: _dt.datetime) -> str:
    deadlines = [d for r in pending.requests if r.id not in answered and (d := deadline_of(r)) is not None]
    if not deadlines:
        return ""
    soonest = min(deadlines)
    return "expired" if soonest <= now else span((soonest - now).total_seconds()) + " left"


def row_of(
    key: str,
    created: str,
    pending: Pending | ValueError,
    answered: Collection[str],
    now: _dt.datetime,
    status: str,
    live: bool = False,
) -> Row:
    """The list's row for one call."""
    parked = parse_time(created)
    age = span((now - parked).total_seconds()) if parked is not None else ""
    if isinstance(pending, ValueError):
        return Row(key, "failed", "", "", "", "", None, (), age, "", shown(str(pending)))
    arguments, folded = _arguments(pending)
    prompts = tuple(
        Prompt(r.kind, shown(r.prompt, lines=True) if r.prompt else "(no prompt)", r.id in answered)
        for r in pending.requests
    )
    return Row(
        key=key,
        status=status,
        server=shown(pending.server) if pending.server else "(unnamed server)",
        what=_WHAT.get(pending.method, pending.method),
        target=shown(pending.target),
        arguments=arguments,
        folded=folded,
        prompts=prompts,
        age=age,
        left=_left(pending, answered, now) if status in ("waiting", "live") else "",
        live=live,
    )


def next_step(call: Call) -> str:
    """What happens next, said once an answer is recorded."""
    if call.status == "answered":
        return "Your answer is recorded, and the server that asked, waiting all along, has it now."
    if call.status == "waiting":
        left = sum(1 for r in (call.pending.requests if call.pending else ()) if r.id not in call.answered)
        return (
            f"Your answer is recorded. {left} more question{'s' if left != 1 else ''} of this call "
            "wait for an answer; the call goes on once every one is answered."
        )
    if call.status == "ready":
        return (
            "Your answer is recorded, and every question of this call is answered: it is ready to resume. "
            "A worker (toolnexus worker) resumes it, or whoever parked it runs toolnexus resume; "
            "this page shows the server's result once it has run."
        )
    return f"Your answer is recorded. The call is {call.status} now."


@dataclass(frozen=True)
class OutcomeView:
    """What came of a call once it left ``waiting``, as its page shows it."""

    status: str
    summary: str
    texts: tuple[str, ...] = ()
    is_error: bool = False
    next_key: str | None = None


_RESULT_PARTS: Final = ("content", "messages", "contents")


def _result_texts(result: Mapping[str, Any]) -> tuple[tuple[str, ...], bool]:
    """The texts of a kept result (a tool's content, a prompt's messages, a resource's
    contents), each escaped; what is not text is shown as JSON."""
    texts: list[str] = []
    for part in _RESULT_PARTS:
        items = result.get(part)
        if not isinstance(items, list):
            continue
        for item in items[:100]:
            inner = item.get("content") if isinstance(item, dict) and part == "messages" else item
            if isinstance(inner, dict) and isinstance(inner.get("text"), str):
                texts.append(shown(inner["text"], lines=True))
            else:
                texts.append(shown(json.dumps(inner, ensure_ascii=False, default=str, indent=2), lines=True))
    if not texts:
        texts.append(shown(json.dumps(result, ensure_ascii=False, default=str, indent=2), lines=True))
    return tuple(texts), result.get("isError") is True


def outcome_of(call: Call) -> OutcomeView | None:
    """The call's outcome, or ``None`` while it waits for answers."""
    status = call.status
    if status in ("waiting", "live"):
        return None
    if status == "ready":
        return OutcomeView(status, "Every question is answered: the call waits for a worker to resume it.")
    if status == "resuming":
        return OutcomeView(status, "A worker is resuming the call now.")
    if status == "working":
        said = f" It says: {shown(call.note)}" if call.note else ""
        return OutcomeView(status, f"The server is working on the task; a worker polls it.{said}")
    if status == "cancelled":
        return OutcomeView(
            status, "The task was cancelled" + (f": {shown(call.error)}" if call.error else ".")
        )
    if status == "done":
        if call.next is not None:
            return OutcomeView(
                status, "The server asked more questions: they wait as another call.", next_key=call.next
            )
        if call.result is None:
            return OutcomeView(status, "The server answered the call.")
        texts, is_error = _result_texts(call.result)
        summary = "The tool reported an error:" if is_error else "The server's result:"
        return OutcomeView(status, summary, texts, is_error)
    if status == "failed":
        return OutcomeView(status, "Resuming the call failed:", (shown(call.error or "no reason given"),))
    if status == "answered":
        return OutcomeView(status, "The question is answered: the server that asked it has the answer.")
    if status == "withdrawn":
        why = f": {shown(call.error)}" if call.error else ""
        return OutcomeView(status, f"The question was withdrawn{why}. It can no longer be answered.")
    return OutcomeView(status, "The call expired" + (f": {shown(call.error)}" if call.error else "."))


@dataclass(frozen=True)
class HistoryLine:
    """One entry of a call's history, as the call's page lists it."""

    at: str
    """When, RFC 3339 UTC."""
    text: str
    """What, in words (the server's and the store's text made visible, as everywhere)."""


def history_line(entry: HistoryEntry) -> HistoryLine:
    return HistoryLine(utc_timestamp(now=entry.at), shown(entry.describe()))


# --- a question ------------------------------------------------------------------------------


@dataclass
class Option:
    index: int
    title: str
    selected: bool


@dataclass
class FieldView:
    """One field of a question as the page draws it, with the browser's own control."""

    index: int
    name: str
    label: str
    control: str
    """``input``, ``checkbox``, ``select``, ``radio`` or ``checkboxes``."""
    input_type: str = "text"
    required: bool = False
    description: str | None = None
    value: str = ""
    checked: bool = False
    options: list[Option] = field(default_factory=list)
    attrs: dict[str, str] = field(default_factory=dict)
    """Constraints the browser checks itself: minlength, maxlength, min, max, step."""
    notes: list[str] = field(default_factory=list)
    """What the browser cannot check, in words: the pattern, a format, a multi-select's bounds."""
    secret: bool = False
    problems: list[str] = field(default_factory=list)


@dataclass
class QuestionView:
    """One question of a call: its form, or its URL, or a yes/no."""

    request_id: str
    kind: str
    prompt: str
    answer: str | None = None
    """How it was answered (``accepted``, ``declined``, ...), ``None`` while it waits."""
    expired: bool = False
    closed: bool = False
    """The call takes no more answers (a live question withdrawn, or answered): no form."""
    fields: list[FieldView] = field(default_factory=list)
    form_problem: str | None = None
    """Why the form cannot be answered here (a schema outside the subset)."""
    secret_names: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    """Problems that belong to no one field."""
    url: str | None = None
    href: str | None = None
    """The address the "open" link goes to: the server's URL as given, only when it is
    http(s) and plain (a browser reads it as it reads: ``toolnexus.urls.UrlReading.plain``)."""
    unlinked: str | None = None
    """Why there is no "open" link."""
    host: str | None = None
    form_title: str | None = None
    form_description: str | None = None
    any_required: bool = False
    openable: bool = False
    warnings: list[str] = field(default_factory=list)
    deadline: str | None = None


def answer_word(answer: Answer) -> str:
    if answer.ok:
        return "accepted"
    return {"declined": "declined", "cancelled": "cancelled", "expired": "expired"}.get(
        answer.reason or "", "cancelled"
    )


def form_of(request: Request) -> tuple[Form | None, str | None]:
    """The question's form (read by the answering core's ``form_of``) and why it cannot be
    answered here (``None`` when it can). A request that carries no data is a form with no
    fields."""
    try:
        form = read_form_of(request)
    except FormError as err:
        return None, shown(str(err))
    return (form if form is not None else Form()), None


def question_view(
    request: Request,
    answer: Answer | None,
    now: _dt.datetime,
    posted: Posted | None = None,
) -> QuestionView:
    view = QuestionView(
        request_id=request.id,
        kind=request.kind,
        prompt=shown(request.prompt, lines=True),
        answer=answer_word(answer) if answer is not None else None,
        expired=answer is None and expired(request, now),
    )
    if request.expiresAt is not None:
        moment = deadline_of(request)
        if moment is None:
            view.deadline = "its deadline does not read: none applies"
        elif moment > now:
            view.deadline = f"{span((moment - now).total_seconds())} left"
    if request.kind == "authorization":
        url = request.url or ""
        view.url = shown(url)
        view.host = shown(browser_host(url)) if url else ""
        view.warnings = [shown(w) for w in url_warnings(url)] if url else ["the server gave no URL"]
        try:
            reading = read_url(url) if url else None
        except UrlError:
            reading = None
        view.openable = reading is not None and reading.scheme in ("http", "https") and bool(reading.host)
        if reading is None or not view.openable:
            view.unlinked = "This address is not offered as a link: only http and https addresses are."
        elif not reading.plain:
            view.unlinked = (
                "This address is not offered as a link: a browser would read it otherwise than it "
                "reads here (see the warnings above)."
            )
        else:
            view.href = url
        return view
    if request.kind != "input":
        return view
    form, problem = form_of(request)
    if form is None:
        view.form_problem = problem
        return view
    secrets = sensitive_fields(form)
    view.secret_names = [shown(name) for name in secrets]
    view.fields = field_views(form, set(secrets), posted)
    view.any_required = any(f.required for f in form.fields)
    view.form_title = shown(form.title) if form.title else None
    view.form_description = shown(form.description, lines=True) if form.description else None
    if posted is not None:
        view.problems = posted.general
    return view


def _number_text(value: object) -> str:
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return str(value)


def _input_value(spec: Field, value: object) -> str:
    """A value (a default) as the text its control holds."""
    if value is None or isinstance(value, bool):
        return ""
    if spec.type in ("number", "integer"):
        return _number_text(value)
    if not isinstance(value, str):
        return ""
    if spec.format == "date-time":
        moment = parse_time(value)
        if moment is None:
            return ""
        return moment.astimezone(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
    return value


def field_views(form: Form, secrets: set[str], posted: Posted | None = None) -> list[FieldView]:
    """The controls of ``form``; with ``posted``, holding what was typed (secrets excepted)
    and each field's problems."""
    views = []
    for index, spec in enumerate(form.fields):
        secret = spec.name in secrets
        typed = posted.typed.get(index) if posted is not None else None
        default = spec.default if spec.has_default else None
        view = FieldView(
            index=index,
            name=shown(spec.name),
            label=shown(spec.label),
            control="input",
            required=spec.required,
            description=shown(spec.description, lines=True) if spec.description else None,
            secret=secret,
            problems=list(posted.problems.get(index, [])) if posted is not None else [],
        )
        kind = spec.type
        if kind == "string":
            view.input_type = "password" if secret else _INPUT_TYPES.get(spec.format or "", "text")
            if spec.min_length is not None:
                view.attrs["minlength"] = str(spec.min_length)
            if spec.max_length is not None:
                view.attrs["maxlength"] = str(spec.max_length)
            if spec.format == "date-time":  # the browser's control takes no time zone: UTC
                view.notes.append("a date and time in UTC" + takes(spec).removeprefix(FORMATS["date-time"]))
                view.attrs["step"] = "1"
            elif spec.format is not None or spec.min_length is not None or spec.max_length is not None:
                view.notes.append(takes(spec))  # the terminal's words: "text, length from 2 to 40"
            if spec.pattern is not None:
                view.notes.append(f"the server expects it to match the pattern {shown(spec.pattern)}")
            if secret:
                view.value = ""
            elif typed is not None:
                view.value = str(typed)
            else:
                view.value = _input_value(spec, default)
        elif kind in ("number", "integer"):
            view.input_type = "number"
            view.attrs["step"] = "1" if kind == "integer" else "any"
            if spec.minimum is not None and math.isfinite(spec.minimum):
                view.attrs["min"] = _number_text(spec.minimum)
            if spec.maximum is not None and math.isfinite(spec.maximum):
                view.attrs["max"] = _number_text(spec.maximum)
            view.notes.append(takes(spec))  # the terminal's words: "a whole number from 1 to 10"
            view.value = str(typed) if typed is not None and not secret else _input_value(spec, default)
        elif kind == "boolean":
            view.control = "checkbox"
            view.checked = bool(typed) if typed is not None else default is True
        elif kind == "choice":
            view.control = "radio" if len(spec.choices) <= RADIO_AT_MOST else "select"
            chosen = typed if typed is not None else _choice_index(spec, default)
            view.options = [Option(i, shown(c.title), chosen == i) for i, c in enumerate(spec.choices)]
        else:  # choices
            view.control = "checkboxes"
            if typed is not None:
                picked = set(typed) if isinstance(typed, list) else set()
            else:
                values = default if isinstance(default, list) else []
                picked = {i for v in values if (i := _choice_index(spec, v)) is not None}
            view.options = [Option(i, shown(c.title), i in picked) for i, c in enumerate(spec.choices)]
            if spec.min_items is not None or spec.max_items is not None:
                view.notes.append(count_hint(spec))  # the terminal's words: "choose from 1 to 2"
        views.append(view)
    return views


def _choice_index(spec: Field, value: object) -> int | None:
    choice = spec.choice(value)
    return None if choice is None else spec.choices.index(choice)


# --- reading a post --------------------------------------------------------------------------


@dataclass
class Posted:
    """A question's form as posted: the content to record, what was typed (to show again),
    and the problems by field index."""

    content: dict[str, Any] = field(default_factory=dict)
    typed: dict[int, Any] = field(default_factory=dict)
    problems: dict[int, list[str]] = field(default_factory=dict)
    general: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems and not self.general


def _datetime_value(text: str) -> str | None:
    """``datetime-local``'s ``2026-12-01T09:30`` (seconds optional), read as UTC, as RFC 3339."""
    try:
        moment = _dt.datetime.fromisoformat(text)
    except ValueError:
        return None
    if moment.tzinfo is not None:
        return None
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _index(text: str, count: int) -> int | None:
    """A posted choice's index, below ``count``: ASCII digits only (``"²".isdigit()`` is true,
    and ``int()`` refuses it; ``int("١")`` is 1), else ``None``."""
    if text.isascii() and text.isdigit() and int(text) < count:
        return int(text)
    return None


def read_post(form: Form, values: Mapping[str, list[str]]) -> Posted:
    """The content a person posted for ``form`` (``values``: each control's name, ``f0``,
    ``f1``..., to its values), checked with the form model.

    An empty text or number is an unanswered field; an unticked checkbox is ``false``.
    """
    posted = Posted()
    for index, spec in enumerate(form.fields):
        got = values.get(f"f{index}", [])
        text = got[0] if got else ""
        value: Any
        problem: str | None = None
        if spec.type == "boolean":
            value = bool(got)
            posted.typed[index] = value
        elif spec.type == "choices":
            indexes = [_index(v, len(spec.choices)) for v in got]
            picked = [i for i in indexes if i is not None]
            posted.typed[index] = picked
            if len(picked) != len(got):
                problem = "one of the choices is not one this question offers"
            value = [spec.choices[i].value for i in picked]
            if not value and not spec.required:
                value = None
        elif spec.type == "choice":
            if text == "":
                value = None
            elif (chosen := _index(text, len(spec.choices))) is not None:
                posted.typed[index] = chosen
                value = spec.choices[chosen].value
            else:
                value, problem = None, "the choice is not one this question offers"
        elif spec.type in ("number", "integer"):
            posted.typed[index] = text
            value = None
            if text.strip() and not (text.isascii() and "_" not in text):
                # int() and float() read other scripts' digits (``٣``, ``１``) and ``1_000``:
                # a browser's number field sends ASCII digits only
                problem = f"must be {'an integer' if spec.type == 'integer' else 'a number'}"
            elif text.strip():
                try:
                    value = int(text) if spec.type == "integer" else float(text)
                except ValueError:
                    try:
                        value = float(text)
                    except ValueError:
                        problem = f"must be {'an integer' if spec.type == 'integer' else 'a number'}"
                    else:
                        if spec.type == "integer" and value.is_integer() and abs(value) < 2**53:
                            value = int(value)
                if isinstance(value, float) and value.is_integer() and spec.type == "number":
                    value = int(value) if abs(value) < 2**53 else value
        else:  # string
            posted.typed[index] = text
            value = text if text != "" else None
            if value is not None and spec.format == "date-time":
                value = _datetime_value(text) or text
        if problem is not None:
            posted.problems[index] = [problem]
            continue
        if value is None:
            if spec.required:
                posted.problems[index] = ["this field is required"]
            continue
        found = spec.problems(value)
        if found:
            posted.problems[index] = found
        else:
            posted.content[spec.name] = value
    return posted
