"""The form model is built one way, and each rule on an answer is written once (issue 31).

- The reader makes its values through the model (``made_field``, ``made_form``, the
  constructors), never by ``object.__new__`` or by writing an object's ``__dict__``.
- A field read from a schema is the field its public constructor makes from the same
  attributes: equal, with the same verdict and problems on every answer.
- The quick check (``Field._fits``) and the worded one (``Field._problems``) run the same
  tests: for every rule, a value that breaks it alone is refused by both, with its words.
"""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path
from typing import Any

import pytest

import toolnexus.forms
from toolnexus.errors import FormError
from toolnexus.forms import Choice, Field, Form, read_form

FORMS = Path(toolnexus.forms.__file__).resolve().parent / "_forms"


def test_the_reader_makes_no_value_behind_the_models_back() -> None:
    tree = ast.parse((FORMS / "_reader.py").read_text(encoding="utf-8"))
    found = [
        f"line {node.lineno}: {node.attr}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and node.attr in ("__new__", "__dict__", "__setattr__")
    ]
    assert found == []


SCHEMA: dict[str, Any] = {
    "type": "object",
    "title": "All of it",
    "properties": {
        "name": {"type": "string", "title": "Name", "minLength": 1, "maxLength": 9, "default": "a"},
        "mail": {"type": ["string", "null"], "format": "email", "pattern": "^.+$"},
        "ratio": {"type": "number", "exclusiveMinimum": 0, "maximum": 2, "default": 1.5},
        "count": {"type": "integer", "minimum": 1, "exclusiveMaximum": 10},
        "ok": {"type": "boolean", "default": True, "description": "Yes?"},
        "env": {"type": "string", "enum": ["dev", "prod"], "default": "dev"},
        "size": {"oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}]},
        "num": {"enum": [1, 2.5, True, "x"], "minimum": 2},
        "tags": {
            "type": "array",
            "items": {"enum": [f"t{i}" for i in range(12)]},
            "minItems": 1,
            "maxItems": 3,
            "uniqueItems": True,
            "default": ["t1"],
        },
    },
    "required": ["name", "env"],
}
ANSWERS: list[Any] = [
    None,
    True,
    0,
    1,
    2,
    2.5,
    10,
    -1e400,
    "",
    "a",
    "x",
    "dev",
    "s",
    "a@b.example",
    "far too long text",
    [],
    ["t1"],
    ["t1", "t1"],
    ["t1", "nope", 3],
    ["t1", "t2", "t3", "t4"],
]


def _rebuilt(field: Field) -> Field:
    return Field(**{f.name: getattr(field, f.name) for f in dataclasses.fields(Field)})


@pytest.mark.parametrize("name", list(SCHEMA["properties"]))
def test_a_read_field_is_the_field_its_constructor_makes(name: str) -> None:
    read = read_form(SCHEMA).field(name)
    made = _rebuilt(read)
    assert made == read
    assert repr(made) == repr(read)
    for value in ANSWERS:
        assert (made.problems(value), made._fits(value)) == (read.problems(value), read._fits(value))


def test_a_read_form_is_the_form_its_constructor_makes() -> None:
    read = read_form(SCHEMA)
    made = Form(tuple(_rebuilt(f) for f in read.fields), read.title, read.description)
    assert made == read
    assert [made.field(name) for name in made.names] == list(read.fields)
    answer = {"name": "", "env": "nope", "tags": ["t1", "t1"], "other": 1}
    assert made.problems(answer) == read.problems(answer)
    assert made.with_defaults({}) == read.with_defaults({})


def test_a_form_refuses_two_fields_of_one_name_either_way() -> None:
    with pytest.raises(FormError, match="two fields have the same name"):
        Form((Field("a", "string"), Field("a", "boolean")))


# Each rule, and a value that breaks it alone, with the words it says.
BROKEN: list[tuple[Field, Any, list[str]]] = [
    (Field("f", "string"), None, ["'f' must be a string"]),
    (Field("f", "string"), 1, ["'f' must be a string"]),
    (Field("f", "string", min_length=2), "a", ["'f' must be at least 2 characters long"]),
    (Field("f", "string", max_length=1), "ab", ["'f' must be at most 1 character long"]),
    (Field("f", "string", format="date"), "2026-02-30", ["'f' must be a date (YYYY-MM-DD)"]),
    (Field("f", "number"), "1", ["'f' must be a number"]),
    (Field("f", "number"), float("nan"), ["'f' must be a finite number"]),
    (Field("f", "integer"), 1.5, ["'f' must be an integer"]),
    (Field("f", "integer"), 10**400, ["'f' must be a number a 64-bit float can hold"]),
    (Field("f", "number", minimum=1), 0, ["'f' must be at least 1"]),
    (Field("f", "number", minimum=1, exclusive_minimum=True), 1, ["'f' must be greater than 1"]),
    (Field("f", "number", maximum=1.0), 2, ["'f' must be at most 1"]),
    (Field("f", "number", maximum=1, exclusive_maximum=True), 1, ["'f' must be less than 1"]),
    (Field("f", "boolean"), 0, ["'f' must be true or false"]),
    (Field("f", "choice", choices=(Choice("a", "A"),)), "b", ["'f' must be one of: a"]),
    (Field("f", "choice", choices=(Choice(1, "One"),)), True, ["'f' must be one of: 1"]),
    (Field("f", "choices", choices=(Choice("a", "A"),)), "a", ["'f' must be a list of choices"]),
    (Field("f", "choices", choices=(Choice("a", "A"),), min_items=1), [], ["'f' must have at least 1 item"]),
    (
        Field("f", "choices", choices=(Choice("a", "A"),), max_items=1),
        ["a", "a"],
        ["'f' must have at most 1 item"],
    ),
    (Field("f", "choices", choices=(Choice("a", "A"),)), ["a", "b"], ["'f' item 2 must be one of: a"]),
    (
        Field("f", "choices", choices=(Choice("a", "A"),), unique_items=True),
        ["a", "a"],
        ["'f' must not repeat an item"],
    ),
]


@pytest.mark.parametrize(("field", "value", "words"), BROKEN)
def test_each_rule_refuses_in_both_checks_with_its_words(field: Field, value: Any, words: list[str]) -> None:
    assert not field._fits(value)
    assert field.problems(value) == words
    assert Form((field,)).problems({"f": value}) == words
