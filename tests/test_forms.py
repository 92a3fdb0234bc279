"""The form model: what read_form reads, what it refuses, and how answers are checked and filled."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from support.fuzzing import examples
from toolnexus.errors import FormError
from toolnexus.forms import MAX_CHOICES, MAX_FIELDS, Choice, Field, Form, read_form


def one(prop: dict[str, Any], *, required: bool = False, **top: Any) -> Field:
    schema: dict[str, Any] = {"type": "object", "properties": {"f": prop}, **top}
    if required:
        schema["required"] = ["f"]
    fields = read_form(schema).fields
    assert len(fields) == 1
    return fields[0]


# --- what is read ---------------------------------------------------------------------------


def test_the_whole_subset_is_read_in_property_order() -> None:
    schema = {
        "type": "object",
        "title": "Deploy",
        "description": "Where and how",
        "properties": {
            "name": {"type": "string", "title": "Name", "minLength": 1, "maxLength": 9, "default": "a"},
            "mail": {"type": "string", "format": "email"},
            "ratio": {"type": "number", "minimum": 0.5, "maximum": 2, "default": 1.5},
            "count": {"type": "integer", "minimum": 1, "default": 3},
            "ok": {"type": "boolean", "default": True},
            "env": {"type": "string", "enum": ["dev", "prod"], "default": "dev"},
            "size": {
                "type": "string",
                "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}],
            },
            "legacy": {"type": "string", "enum": ["a", "b"], "enumNames": ["Ay", "Bee"]},
            "tags": {
                "type": "array",
                "items": {"type": "string", "enum": ["x", "y"]},
                "minItems": 1,
                "maxItems": 2,
            },
            "picks": {
                "type": "array",
                "items": {"anyOf": [{"const": "p", "title": "Pea"}]},
                "default": ["p"],
            },
        },
        "required": ["name", "env"],
    }
    form = read_form(schema)
    assert form.names == ("name", "mail", "ratio", "count", "ok", "env", "size", "legacy", "tags", "picks")
    assert (form.title, form.description) == ("Deploy", "Where and how")
    types = [f.type for f in form.fields]
    assert types == [
        "string",
        "string",
        "number",
        "integer",
        "boolean",
        "choice",
        "choice",
        "choice",
        "choices",
        "choices",
    ]
    assert [f.name for f in form.fields if f.required] == ["name", "env"]
    name = form.field("name")
    assert (name.title, name.label, name.min_length, name.max_length, name.default, name.has_default) == (
        "Name",
        "Name",
        1,
        9,
        "a",
        True,
    )
    assert form.field("mail").format == "email"
    assert (form.field("ratio").minimum, form.field("ratio").maximum) == (0.5, 2)
    assert form.field("env").choices == (Choice("dev", "dev"), Choice("prod", "prod"))
    assert form.field("size").choices == (Choice("s", "Small"), Choice("l", "Large"))
    assert form.field("legacy").choices == (Choice("a", "Ay"), Choice("b", "Bee"))
    assert (form.field("tags").min_items, form.field("tags").max_items) == (1, 2)
    assert form.field("picks").choices == (Choice("p", "Pea"),)
    assert form.field("mail").label == "mail"
    assert not form.field("mail").has_default
    assert form.field("mail").default is None


@pytest.mark.parametrize(
    "prop",
    [
        {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None, "title": "Nick"},
        {"anyOf": [{"type": "null"}, {"type": "string"}], "title": "Nick"},
        {"type": ["string", "null"], "title": "Nick"},
        {"oneOf": [{"type": "string"}, {"type": "null"}], "title": "Nick"},
    ],
)
def test_a_nullable_field_is_an_optional_field_of_its_type(prop: dict[str, Any]) -> None:
    field = one(prop)
    assert (field.type, field.nullable, field.title, field.required) == ("string", True, "Nick", False)
    assert field.problems(None) == []
    assert field.problems("x") == []
    assert field.problems(5) == ["'f' must be a string"]


def test_a_null_default_is_told_apart_from_no_default() -> None:
    nullable = one({"type": ["integer", "null"], "default": None})
    assert (nullable.default, nullable.has_default) == (None, True)
    plain = one({"type": "integer", "default": None})  # "x: int = None" in a server's model
    assert (plain.default, plain.has_default) == (None, False)


def test_a_local_ref_is_resolved_once_with_its_siblings_laid_over() -> None:
    schema = {
        "type": "object",
        "properties": {
            "color": {"$ref": "#/$defs/Color", "default": "red", "description": "Pick one"},
            "maybe": {"anyOf": [{"$ref": "#/definitions/Size"}, {"type": "null"}], "default": None},
            "wrapped": {"allOf": [{"$ref": "#/$defs/Color"}], "title": "Wrapped"},
            "many": {"type": "array", "items": {"$ref": "#/$defs/Color"}},
        },
        "$defs": {"Color": {"type": "string", "enum": ["red", "blue"], "title": "Color"}},
        "definitions": {"Size": {"type": "integer", "maximum": 3}},
    }
    form = read_form(schema)
    color = form.field("color")
    assert (color.type, color.default, color.description, color.title) == (
        "choice",
        "red",
        "Pick one",
        "Color",
    )
    maybe = form.field("maybe")
    assert (maybe.type, maybe.maximum, maybe.nullable) == ("integer", 3, True)
    assert (form.field("wrapped").type, form.field("wrapped").title) == ("choice", "Wrapped")
    assert form.field("many").choices == (Choice("red", "red"), Choice("blue", "blue"))


def test_annotation_keywords_are_ignored() -> None:
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "urn:x",
        "$comment": "c",
        "type": "object",
        "additionalProperties": False,
        "examples": [{"a": "b"}],
        "x-vendor": {"deep": [1, 2, 3]},
        "properties": {"a": {"type": "string", "examples": ["z"], "deprecated": True, "format": "uuid"}},
    }
    field = read_form(schema).field("a")
    assert (field.type, field.format) == ("string", None)  # an unknown format is an annotation


def test_pattern_is_kept_as_text_and_never_checked() -> None:
    field = one({"type": "string", "pattern": "^(a+)+$"})
    assert field.pattern == "^(a+)+$"
    assert field.problems("a" * 64 + "!") == []


def test_integer_choices_keep_their_type() -> None:
    field = one({"type": "integer", "enum": [1, 2]})
    assert field.type == "choice"
    assert field.choice(1) == Choice(1, "1")
    assert field.problems(1) == []
    assert field.problems("1") == ["'f' must be one of: 1, 2"]
    assert field.problems(True) == ["'f' must be one of: 1, 2"]


def test_no_properties_is_a_form_without_fields() -> None:
    assert read_form({"type": "object"}) == Form()
    assert read_form({}).fields == ()


# --- what is refused ------------------------------------------------------------------------

REFUSED: list[tuple[str, Any, str]] = [
    ("not an object", [], "must be a JSON object"),
    ("not type object", {"type": "array"}, "'type' must be"),
    ("properties not an object", {"properties": []}, "'properties' must be an object"),
    ("required not a list", {"properties": {}, "required": "a"}, "'required' must be an array"),
    ("required names nothing", {"properties": {}, "required": ["a"]}, "'a', which is not one of"),
    ("a property not an object", {"properties": {"a": 3}}, "property 'a' must be a schema object"),
    ("nested object", {"properties": {"a": {"type": "object"}}}, "property 'a': a nested object"),
    ("no type", {"properties": {"a": {"title": "A"}}}, "property 'a' has no 'type'"),
    ("unknown type", {"properties": {"a": {"type": "file"}}}, "property 'a': 'type' 'file'"),
    ("several types", {"properties": {"a": {"type": ["string", "integer"]}}}, "lists several types"),
    ("remote ref", {"properties": {"a": {"$ref": "https://x/s.json"}}}, "never fetched"),
    ("ref to nothing", {"properties": {"a": {"$ref": "#/$defs/b"}}}, "points to nothing"),
    (
        "ref to a ref",
        {"properties": {"a": {"$ref": "#/$defs/b"}}, "$defs": {"b": {"$ref": "#/$defs/b"}}},
        "another '$ref'",
    ),
    ("allOf of two", {"properties": {"a": {"allOf": [{}, {}]}}}, "'allOf'"),
    (
        "anyOf of types",
        {"properties": {"a": {"anyOf": [{"type": "string"}, {"type": "integer"}]}}},
        "'anyOf'",
    ),
    ("free-text list", {"properties": {"a": {"type": "array", "items": {"type": "string"}}}}, "free text"),
    ("list of numbers", {"properties": {"a": {"type": "array", "items": {"type": "integer"}}}}, "strings"),
    ("multipleOf", {"properties": {"a": {"type": "integer", "multipleOf": 2}}}, "'multipleOf' is outside"),
    ("patternProperties", {"patternProperties": {"^(a+)+$": {}}}, "'patternProperties' is outside"),
    ("unevaluatedProperties", {"unevaluatedProperties": False}, "'unevaluatedProperties' is outside"),
    ("a title not text", {"properties": {"a": {"type": "string", "title": 5}}}, "'title' must be a string"),
    ("a negative length", {"properties": {"a": {"type": "string", "minLength": -1}}}, "'minLength'"),
    ("a huge bound", {"properties": {"a": {"type": "integer", "minimum": 10**400}}}, "'minimum'"),
    ("a default of the wrong type", {"properties": {"a": {"type": "integer", "default": "3"}}}, "'default'"),
    ("repeated choices", {"properties": {"a": {"enum": ["x", "x"]}}}, "the same choice twice"),
    ("no choices", {"properties": {"a": {"enum": []}}}, "offers no choice"),
    ("an object as choice", {"properties": {"a": {"enum": [{"x": 1}]}}}, "a choice must be"),
    ("enumNames too short", {"properties": {"a": {"enum": ["x", "y"], "enumNames": ["X"]}}}, "'enumNames'"),
]


@pytest.mark.parametrize(("case", "schema", "words"), REFUSED, ids=[case for case, _, _ in REFUSED])
def test_a_schema_outside_the_subset_is_a_form_error_naming_where(case: str, schema: Any, words: str) -> None:
    with pytest.raises(FormError) as caught:
        read_form(schema)
    assert words in str(caught.value)
    assert isinstance(caught.value, ValueError)


def test_more_fields_or_choices_than_the_limits_are_refused() -> None:
    many = {"properties": {f"p{i}": {"type": "string"} for i in range(MAX_FIELDS + 1)}}
    with pytest.raises(FormError, match="properties; at most"):
        read_form(many)
    choices = {"properties": {"a": {"enum": [str(i) for i in range(MAX_CHOICES + 1)]}}}
    with pytest.raises(FormError, match="choices; at most"):
        read_form(choices)


def test_names_in_a_form_error_are_escaped() -> None:
    with pytest.raises(FormError) as caught:
        read_form({"properties": {"\x1b]0;owned\x07\u202e": 3}})
    message = str(caught.value)
    assert "\x1b" not in message
    assert "\x07" not in message
    assert "\u202e" not in message
    assert "\\x1b]0;owned\\x07\\u202e" in message


# --- checking answers -----------------------------------------------------------------------


def test_problems_name_every_field_and_never_the_value() -> None:
    form = read_form(
        {
            "properties": {
                "name": {"type": "string", "minLength": 3},
                "age": {"type": "integer", "minimum": 18, "exclusiveMaximum": 130},
                "tags": {"type": "array", "items": {"enum": ["a", "b"]}, "maxItems": 1, "uniqueItems": True},
                "ok": {"type": "boolean"},
            },
            "required": ["name", "ok"],
        }
    )
    problems = form.problems({"name": "zq", "age": 130, "tags": ["a", "a", "zq-tag"], "extra-zq": 1})
    assert problems == [
        "'extra-zq' is not a field of the requested schema",
        "'name' must be at least 3 characters long",
        "'age' must be less than 130",
        "'tags' must have at most 1 item",
        "'tags' item 3 must be one of: a, b",
        "'tags' must not repeat an item",
        "'ok' is required",
    ]
    assert not [p for p in problems[1:] if "zq" in p]


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        (10**400, "'n' must be a number a 64-bit float can hold"),
        (-(10**400), "'n' must be a number a 64-bit float can hold"),
        (math.nan, "'n' must be a finite number"),
        (math.inf, "'n' must be a finite number"),
        (True, "'n' must be a number"),
        ("1", "'n' must be a number"),
    ],
)
def test_numbers_that_do_not_fit_a_float_are_problems_not_exceptions(value: Any, problem: str) -> None:
    form = read_form({"properties": {"n": {"type": "number", "maximum": 5}}})
    assert form.problems({"n": value}) == [problem]


def test_a_choice_listed_in_a_problem_is_escaped() -> None:
    form = read_form({"properties": {"c": {"enum": ["\x1b[2J\x1b]0;title\x07", "ok"]}}})
    [problem] = form.problems({"c": "no"})
    assert "\x1b" not in problem
    assert "\x07" not in problem
    assert problem == "'c' must be one of: \\x1b[2J\\x1b]0;title\\x07, ok"


def test_content_must_be_a_mapping() -> None:
    with pytest.raises(TypeError, match="content must be a mapping"):
        read_form({}).problems([])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="content must be a mapping"):
        read_form({}).with_defaults("x")  # type: ignore[arg-type]


def test_formats_are_checked_in_linear_time_on_long_text() -> None:
    form = read_form({"properties": {"m": {"type": "string", "format": "email"}}})
    assert form.problems({"m": "a@" + "b." * 50_000 + " "}) == ["'m' must be an email address"]
    assert form.problems({"m": "ada@example.com"}) == []


# --- defaults -------------------------------------------------------------------------------


def test_with_defaults_fills_only_what_is_left_out_and_fits() -> None:
    form = read_form(
        {
            "properties": {
                "a": {"type": "string", "default": "x"},
                "b": {"type": "integer", "default": 7, "maximum": 5},  # the server's own default does not fit
                "c": {"type": "array", "items": {"enum": ["p", "q"]}, "default": ["p"]},
                "d": {"type": ["boolean", "null"], "default": None},
                "e": {"type": "boolean"},
            }
        }
    )
    content = {"a": "given"}
    filled = form.with_defaults(content)
    assert filled == {"a": "given", "c": ["p"], "d": None}
    assert content == {"a": "given"}
    filled["c"].append("q")
    assert form.field("c").default == ["p"]  # the default is not shared


# --- every schema a server can send: a Form or a FormError ------------------------------------

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=30,
)
KEYWORDS = st.sampled_from(
    [
        "type",
        "properties",
        "required",
        "enum",
        "oneOf",
        "anyOf",
        "allOf",
        "$ref",
        "$defs",
        "items",
        "const",
        "default",
        "minimum",
        "maxLength",
        "enumNames",
        "title",
        "format",
        "null",
        "string",
        "array",
        "integer",
    ]
)
SCHEMA_LIKE = st.recursive(
    st.none() | st.booleans() | st.integers() | KEYWORDS | st.just("#/$defs/a"),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYWORDS, inner, max_size=4),
    max_leaves=40,
)


@pytest.mark.timeout(600)  # 300 examples: room for a loaded machine (pytest-timeout stops at 120 s)
def test_any_json_gives_a_form_or_a_form_error() -> None:
    read = 0

    @settings(max_examples=examples(300), deadline=None)
    @given(st.one_of(JSON, SCHEMA_LIKE, st.dictionaries(st.just("properties"), SCHEMA_LIKE)))
    def check(schema: Any) -> None:
        nonlocal read
        try:
            form = read_form(schema)
        except FormError:
            return
        assert isinstance(form, Form)
        content = form.with_defaults({})
        problems = form.problems(content)
        assert all(isinstance(p, str) for p in problems)
        json.dumps(content)  # what would be sent is JSON
        read += 1

    check()
    assert read > 0, "no example gave a form: the test checked the errors alone"
