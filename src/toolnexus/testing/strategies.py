"""Hypothesis strategies for forms, requests and answers (needs ``hypothesis``).

```python
from hypothesis import given
from toolnexus.forms import read_form
from toolnexus.testing.strategies import answers_for, forms

def with_answers(schema):
    return answers_for(schema).map(lambda content: (schema, content))

@given(forms().flatmap(with_answers))
def test_answers_fit(case):
    schema, content = case
    assert read_form(schema).problems(content) == []

test_answers_fit()
```

- [`forms`][toolnexus.testing.strategies.forms]: ``requestedSchema``s of the MCP elicitation
  subset, every field kind, with and without titles, descriptions, defaults and constraints.
- [`requests`][toolnexus.testing.strategies.requests]: form and URL
  [`Request`][toolnexus.Request]s, made by the real mapping.
- [`answers_for`][toolnexus.testing.strategies.answers_for]: content that fits a form, or
  content the form model rejects together with the name of the field it breaks.

Every form is read, and every answer judged, by [`toolnexus.forms`][toolnexus.forms.read_form]:
what these strategies call valid is what the bridge lets through.
"""

from __future__ import annotations

import datetime as _dt
import math
import string
from collections.abc import Mapping
from typing import Any

from hypothesis import strategies as st

from .._wire import Request
from ..forms import Field, Form, read_form
from . import form_request, url_request

__all__ = ["answers_for", "forms", "requests"]

# A fixed alphabet, wide enough to matter (accents, CJK, an emoji, a zero-width space, a
# bidi override, an escape, a line break): st.text() without one builds Hypothesis's Unicode
# table on first use, which takes seconds and trips its too_slow health check.
_CHARS = string.ascii_letters + string.digits + string.punctuation + " éßΩ中😀\u200b\u202e\x1b\n\t"
_NAME = st.text(alphabet=string.ascii_letters + "_", min_size=1, max_size=12)
_TEXT = st.text(alphabet=_CHARS, max_size=30)
_WORD = st.text(alphabet=string.ascii_lowercase + string.digits, min_size=1, max_size=10)


@st.composite
def _string_schema(draw: st.DrawFn) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    fmt = draw(st.sampled_from([None, None, "email", "uri", "date", "date-time"]))
    if fmt is not None:
        schema["format"] = fmt
        return schema
    low = draw(st.none() | st.integers(0, 5))
    high = draw(st.none() | st.integers(low or 0, 20))
    if low is not None:
        schema["minLength"] = low
    if high is not None:
        schema["maxLength"] = high
    return schema


@st.composite
def _number_schema(draw: st.DrawFn, kind: str) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": kind}
    low = draw(st.none() | st.integers(-1000, 1000))
    high = draw(st.none() | st.integers(low if low is not None else -1000, 2000))
    if low is not None:
        schema["minimum"] = low
    if high is not None:
        schema["maximum"] = high
    return schema


@st.composite
def _choice_schema(draw: st.DrawFn, multi: bool) -> dict[str, Any]:
    values = draw(st.lists(_WORD, min_size=1, max_size=5, unique=True))
    titled = draw(st.booleans())
    if multi:
        items: dict[str, Any] = (
            {"anyOf": [{"const": v, "title": v.upper()} for v in values]}
            if titled
            else {"type": "string", "enum": values}
        )
        schema: dict[str, Any] = {"type": "array", "items": items}
        low = draw(st.none() | st.integers(0, len(values)))
        high = draw(st.none() | st.integers(low or 0, len(values)))
        if low is not None:
            schema["minItems"] = low
        if high is not None:
            schema["maxItems"] = high
        return schema
    if titled:
        return {"type": "string", "oneOf": [{"const": v, "title": v.upper()} for v in values]}
    return {"type": "string", "enum": values}


_FIELD_SCHEMAS = st.one_of(
    _string_schema(),
    _number_schema("number"),
    _number_schema("integer"),
    st.just({"type": "boolean"}),
    _choice_schema(multi=False),
    _choice_schema(multi=True),
)


@st.composite
def _property(draw: st.DrawFn, name: str) -> dict[str, Any]:
    schema: dict[str, Any] = draw(_FIELD_SCHEMAS)
    if draw(st.booleans()):
        schema["title"] = draw(_TEXT)
    if draw(st.booleans()):
        schema["description"] = draw(_TEXT)
    if draw(st.booleans()):
        field = read_form({"type": "object", "properties": {name: schema}}).fields[0]
        schema["default"] = draw(_value(field))
    return schema


@st.composite
def _form(draw: st.DrawFn, min_fields: int, max_fields: int) -> dict[str, Any]:
    names = draw(st.lists(_NAME, min_size=min_fields, max_size=max_fields, unique=True))
    properties = {name: draw(_property(name)) for name in names}
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    required = [name for name in names if draw(st.booleans())]
    explicit: bool = draw(st.booleans())  # "required": [] written out, or left out
    if required or explicit:
        schema["required"] = required
    if draw(st.booleans()):
        schema["title"] = draw(_TEXT)
    return schema


def forms(*, min_fields: int = 0, max_fields: int = 5) -> st.SearchStrategy[dict[str, Any]]:
    """``requestedSchema``s of the MCP elicitation subset, as a server sends them.

    Every field kind (text, with a format or length bounds; number and integer, with
    bounds; boolean; single-select as ``enum`` or titled ``oneOf``; multi-select as
    ``items.enum`` or titled ``items.anyOf``, with item bounds), each with or without a
    title, a description and a default (one that fits), required or not. Each one is a
    form [`read_form`][toolnexus.forms.read_form] reads, and each has an answer that fits.
    """
    if not (0 <= min_fields <= max_fields):
        raise ValueError(f"forms: need 0 <= min_fields <= max_fields, not {min_fields}, {max_fields}")
    return _form(min_fields, max_fields)


def requests(*, kinds: tuple[str, ...] = ("input", "authorization")) -> st.SearchStrategy[Request]:
    """Form requests (a schema from [`forms`][toolnexus.testing.strategies.forms]) and URL
    requests (``https`` URLs on a few hosts), made by the real mapping, with any prompt."""
    choices: list[st.SearchStrategy[Request]] = []
    if "input" in kinds:
        choices.append(st.builds(form_request, forms(), _TEXT))
    if "authorization" in kinds:
        hosts = st.sampled_from(
            ["auth.example.com", "example.org", "xn--bcher-kva.example", "127.0.0.1:8080"]
        )
        urls = st.builds(lambda host, path: f"https://{host}/{path}", hosts, _WORD)
        choices.append(st.builds(url_request, urls, _TEXT))
    if not choices:
        raise ValueError(f"requests: kinds must name input or authorization, not {kinds!r}")
    return st.one_of(choices)


# --- answers --------------------------------------------------------------------------------


def _text_value(field: Field) -> st.SearchStrategy[Any]:
    if field.format == "email":
        return st.builds(lambda user, host: f"{user}@{host}.example", _WORD, _WORD)
    if field.format == "uri":
        return st.builds(lambda path: f"https://example.com/{path}", _WORD)
    if field.format == "date":
        return st.dates().map(_dt.date.isoformat)
    if field.format == "date-time":
        return st.datetimes(timezones=st.just(_dt.timezone.utc)).map(
            lambda at: at.replace(microsecond=0).isoformat().replace("+00:00", "Z")
        )
    low = field.min_length or 0
    high = field.max_length if field.max_length is not None else low + 20
    return st.text(alphabet=_CHARS, min_size=low, max_size=high)


def _number_value(field: Field) -> st.SearchStrategy[Any]:
    low, high = field.minimum, field.maximum
    if field.type == "integer":
        return st.integers(
            None if low is None else int(low) + (1 if field.exclusive_minimum else 0),
            None if high is None else int(high) - (1 if field.exclusive_maximum else 0),
        )
    floats = st.floats(
        low,
        high,
        allow_nan=False,
        allow_infinity=False,
        exclude_min=field.exclusive_minimum and low is not None,
        exclude_max=field.exclusive_maximum and high is not None,
    )
    first = None if low is None else math.ceil(low)
    last = None if high is None else math.floor(high)
    if first is not None and last is not None and first > last:
        return floats
    return floats | st.integers(first, last).filter(lambda n: not field.problems(n))


def _value(field: Field) -> st.SearchStrategy[Any]:
    """Values that fit ``field``."""
    if field.type == "string":
        strategy = _text_value(field)
    elif field.type in ("number", "integer"):
        strategy = _number_value(field)
    elif field.type == "boolean":
        strategy = st.booleans()
    elif field.type == "choice":
        strategy = st.sampled_from([choice.value for choice in field.choices])
    else:
        values = [choice.value for choice in field.choices]
        strategy = st.lists(
            st.sampled_from(values),
            min_size=field.min_items or 0,
            max_size=field.max_items if field.max_items is not None else len(values),
            unique=True,
        )
    return (st.none() | strategy) if field.nullable else strategy


def _wrong(field: Field) -> st.SearchStrategy[Any]:
    """Values ``field`` rejects: of the wrong type, or out of its bounds."""
    wrong_type: dict[str, st.SearchStrategy[Any]] = {
        "string": st.integers() | st.booleans(),
        "number": _TEXT | st.booleans(),
        "integer": st.sampled_from([0.5, -1.25]) | _TEXT | st.booleans(),
        "boolean": st.sampled_from(["true", "yes", 1, 0]),
        "choice": st.integers() | _WORD.map(lambda word: word + "-not-a-choice"),
        "choices": _WORD.map(lambda word: [word + "-not-a-choice"]) | st.just("not a list"),
    }
    options = [wrong_type[field.type]]
    if field.max_length is not None:
        options.append(st.text(alphabet=_CHARS, min_size=field.max_length + 1, max_size=field.max_length + 5))
    if field.min_length:
        options.append(st.text(alphabet=_CHARS, max_size=field.min_length - 1))
    if field.minimum is not None and field.type in ("number", "integer"):
        options.append(st.integers(max_value=int(field.minimum) - 1))
    if field.maximum is not None and field.type in ("number", "integer"):
        options.append(st.integers(min_value=int(field.maximum) + 1))
    if field.format is not None:
        options.append(st.just("not valid text for its format"))
    return st.one_of(options).filter(lambda value: bool(field.problems(value)))


@st.composite
def _answer(draw: st.DrawFn, form: Form, valid: bool) -> Any:
    content: dict[str, Any] = {}
    for field in form.fields:
        if field.required or draw(st.booleans()):
            content[field.name] = draw(_value(field))
    if valid:
        return content
    ways = ["extra"] + [f"value:{f.name}" for f in form.fields]
    ways += [f"omit:{f.name}" for f in form.fields if f.required]
    way = draw(st.sampled_from(ways))
    if way == "extra":
        name = draw(_NAME.filter(lambda name: name not in form))
        content[name] = draw(_TEXT)
        return content, name
    what, name = way.split(":", 1)
    if what == "omit":
        del content[name]
    else:
        content[name] = draw(_wrong(form.field(name)))
    return content, name


def answers_for(form: Form | Mapping[str, Any], valid: bool = True) -> st.SearchStrategy[Any]:
    """Content for ``form`` (a [`Form`][toolnexus.forms.Form] or a ``requestedSchema``).

    With ``valid=True``: a ``dict`` that fits the form (every required field, some of the
    others), which [`Form.problems`][toolnexus.forms.Form.problems] accepts. With
    ``valid=False``: a pair ``(content, name)``, content that the form model rejects
    because of the field ``name`` alone: its value is of the wrong type or out of bounds,
    it is required and left out, or it is a key the form does not have.

    A field's ``pattern`` is not honoured (toolnexus never runs a server's regular
    expression; the server checks it).
    """
    if not isinstance(form, Form):
        form = read_form(form)
    if not isinstance(valid, bool):
        raise TypeError(f"answers_for: valid must be a bool, not {type(valid).__name__}")
    return _answer(form, valid)
