"""The form model's bounds: what a schema may make it produce, and the keywords it refuses
rather than ignore (issue 20). Through the Python API; tests/test_form_attacks.py sends the
same shapes through a real server."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from support import cpu
from support.fuzzing import examples
from toolnexus import ToolnexusError
from toolnexus.errors import FormError
from toolnexus.forms import (
    MAX_CHOICES,
    MAX_COUNT,
    MAX_FORM_CHOICES,
    MAX_TEXT,
    Choice,
    Field,
    Form,
    read_form,
    sensitive_fields,
    validate_content,
)


def form_of(prop: dict[str, Any], **top: Any) -> dict[str, Any]:
    return {"type": "object", "properties": {"f": prop}, **top}


def one(prop: dict[str, Any], **top: Any) -> Field:
    return read_form(form_of(prop, **top)).field("f")


def refused(schema: Any) -> str:
    with pytest.raises(FormError) as caught:
        read_form(schema)
    return str(caught.value)


def test_a_form_error_is_a_toolnexus_error_and_a_value_error() -> None:
    assert issubclass(FormError, ToolnexusError)
    assert issubclass(FormError, ValueError)
    with pytest.raises(FormError, match="two fields have the same name"):
        Form((Field("a", "string"), Field("a", "integer")))


# --- amplification through $ref: counted once per use ---------------------------------------


def ref_schema(uses: int, target: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {f"p{i}": {"$ref": "#/$defs/t"} for i in range(uses)},
        "$defs": {"t": target},
    }


def test_a_thousand_refs_to_a_thousand_choices_are_refused() -> None:
    schema = ref_schema(1000, {"type": "string", "enum": [f"c{i}" for i in range(1000)]})
    assert "choices in all" in refused(schema)
    assert validate_content(schema, {})[0].startswith("the requested schema is outside")
    assert sensitive_fields(schema) == []


def test_a_thousand_refs_to_one_long_description_are_refused() -> None:
    schema = ref_schema(1000, {"type": "string", "description": "password " * 120_000})
    assert "characters of text in all" in refused(schema)
    assert sensitive_fields(schema) == []  # not one scan of the 1 GB it would have made


def test_the_choice_budget_is_exact_and_counts_every_use() -> None:
    target = {"type": "string", "enum": [f"c{i}" for i in range(MAX_CHOICES)]}
    uses = MAX_FORM_CHOICES // MAX_CHOICES
    form = read_form(ref_schema(uses, target))
    assert sum(len(f.choices) for f in form.fields) == MAX_FORM_CHOICES
    assert "choices in all" in refused(ref_schema(uses + 1, target))
    # A multi-select's default list counts with its choices.
    values = [f"c{i}" for i in range(999)]
    multi = {"type": "array", "items": {"enum": values}, "default": values}
    assert read_form({"properties": {f"m{i}": multi for i in range(5)}})  # 5 x 1,998
    assert "choices in all" in refused({"properties": {f"m{i}": multi for i in range(6)}})


def test_the_text_budget_is_exact() -> None:
    # One field named "f" (1 character) with a description filling the rest.
    assert one({"type": "string", "description": "x" * (MAX_TEXT - 1)}).description
    assert "characters of text" in refused(form_of({"type": "string", "description": "x" * MAX_TEXT}))
    # Choices' values and titles, names, titles, patterns and defaults all count.
    text = "y" * (MAX_TEXT // 2 + 1)
    assert "characters of text" in refused(form_of({"enum": [text]}))
    assert "characters of text" in refused(form_of({"type": "string", "pattern": text, "title": text}))
    assert "characters of text" in refused(form_of({"type": "string", "default": text, "title": text}))
    assert "characters of text" in refused({"properties": {text: {"type": "string", "title": text}}})


def test_reading_time_grows_with_what_is_sent_not_with_uses() -> None:
    # 2,000 uses of a 1,000-choice target: refused after about ten, so the work done is
    # about ten reads of the target whatever the number of uses.
    target = {"type": "string", "enum": [f"c{i}" for i in range(1000)]}
    # The CPU this thread spent (not the clock, which a loaded machine stretches, nor the
    # interpreter's collections; support/cpu.py): a bound on the work, a hundred times what
    # it is, far below what a read per use would cost.
    started = cpu.thread_time()
    refused(ref_schema(1000, target))
    assert cpu.thread_time() - started < 1.0  # about 10 ms; 1,000 reads took seconds


# --- keywords that change what is valid: refused, never ignored -----------------------------


@pytest.mark.parametrize(
    "keyword",
    [
        "allOf",
        "anyOf",
        "oneOf",
        "$ref",
        "not",
        "if",
        "then",
        "else",
        "dependentSchemas",
        "dependentRequired",
        "dependencies",
        "patternProperties",
        "propertyNames",
        "unevaluatedProperties",
        "minProperties",
        "maxProperties",
        "enum",
        "const",
        "$dynamicRef",
        "$recursiveRef",
    ],
)
def test_a_top_level_keyword_that_narrows_the_answer_is_refused(keyword: str) -> None:
    schema = form_of({"type": "string"})
    schema[keyword] = [{"properties": {"f": {"pattern": "^(a+)+$"}}}]
    assert f"the schema: the keyword {keyword!r} is outside" in refused(schema)


@pytest.mark.parametrize("extra", [True, False, {}, {"type": "string", "pattern": "^(a+)+$"}])
def test_additional_properties_is_read_whatever_it_holds(extra: object) -> None:
    # No answer the form model accepts has a key outside 'properties', so the schema for
    # such keys can never apply: reading it as "no other keys" is exact.
    form = read_form(form_of({"type": "string"}, additionalProperties=extra))
    assert form.problems({"f": "x", "g": "y"}) == ["'g' is not a field of the requested schema"]


def test_additional_properties_of_another_type_is_refused() -> None:
    assert "'additionalProperties' must be" in refused(form_of({"type": "string"}, additionalProperties="x"))


@pytest.mark.parametrize(
    "annotation",
    [
        {"$schema": "https://json-schema.org/draft/2020-12/schema"},
        {"$comment": "c"},
        {"examples": [{"f": "x"}]},
        {"deprecated": True},
        {"readOnly": False},
        {"x-vendor": {"not": {}}},
        {"$defs": {"unused": {"not": {}}}},
        {"title": "T", "description": "D"},
        {"format": "anything"},
    ],
)
def test_annotation_keywords_stay_accepted(annotation: dict[str, Any]) -> None:
    read_form(form_of({"type": "string", **annotation}, **annotation))


def test_annotations_only_the_top_may_carry() -> None:
    # $id at the top names the schema (its $refs resolve against it, as here); below, it
    # would start another schema whose "#/$defs/..." is not the top's: refused, above.
    read_form(form_of({"type": "string"}, **{"$id": "urn:x", "default": {"f": "x"}}))


@pytest.mark.parametrize(
    ("prop", "words"),
    [
        ({"type": "string", "$id": "https://elsewhere.example/"}, "'$id' is outside"),
        ({"type": "integer", "multipleOf": 3}, "'multipleOf' is outside"),
        ({"type": "string", "extends": {}}, "'extends' is outside"),
        ({"type": "string", "disallow": "string"}, "'disallow' is outside"),
        ({"type": "array", "items": {"enum": ["a"]}, "contains": {}}, "'contains' is outside"),
        ({"type": "array", "items": {"enum": ["a"]}, "enum": [["a"]]}, "an array's own"),
        ({"type": "array", "items": {"enum": ["a"], "allOf": [{"enum": ["a"]}]}}, "'allOf' is not read"),
        ({"type": "array", "items": {"enum": ["a"], "not": {}}}, "'not' is outside"),
        ({"oneOf": [{"const": "a", "minLength": 2}]}, "a choice of 'oneOf' holds 'minLength'"),
        ({"oneOf": [{"const": "a", "type": "integer"}]}, "a choice of 'oneOf' holds 'type'"),
        ({"anyOf": [{"type": "string"}, {"type": "null", "not": {}}]}, "'anyOf'"),
        ({"anyOf": [{"type": "string"}, {"type": "null", "enum": [None]}]}, "'anyOf'"),
    ],
)
def test_a_field_keyword_that_narrows_the_answer_is_refused(prop: dict[str, Any], words: str) -> None:
    assert words in refused(form_of(prop))


def test_a_choice_branch_may_say_its_type() -> None:
    field = one({"oneOf": [{"const": "a", "type": "string", "title": "A"}, {"const": 2, "type": "integer"}]})
    assert field.choices == (Choice("a", "A"), Choice(2, "2"))


@pytest.mark.parametrize(
    ("prop", "values"),
    [
        ({"type": "string", "enum": ["a", "bb", "ccc"], "minLength": 2}, ["bb", "ccc"]),
        ({"type": "string", "enum": ["a", "bb", "ccc"], "maxLength": 2}, ["a", "bb"]),
        ({"type": "string", "enum": ["a@b.example", "nope"], "format": "email"}, ["a@b.example"]),
        ({"type": "integer", "enum": [1, 2, 3], "maximum": 2}, [1, 2]),
        ({"type": "integer", "enum": [1, 2, 3], "exclusiveMinimum": 1}, [2, 3]),
        ({"type": "number", "enum": [1, 2.5, "x", True]}, [1, 2.5]),
        ({"type": "integer", "enum": [1, 2.5, 3.0]}, [1, 3.0]),
        ({"type": "string", "enum": ["a", 1, False]}, ["a"]),
        ({"type": "boolean", "enum": [True, "true"]}, [True]),
        (
            {"type": "string", "oneOf": [{"const": "a"}, {"const": "bbb"}], "maxLength": 2},
            ["a"],
        ),
        ({"type": "array", "items": {"enum": ["a", "bb"], "minLength": 2}}, ["bb"]),
    ],
)
def test_a_choice_ruled_out_by_its_own_constraints_is_not_offered(
    prop: dict[str, Any], values: list[Any]
) -> None:
    field = one(prop)
    assert [c.value for c in field.choices] == values
    for value in values:
        answer = [value] if field.type == "choices" else value
        assert field.problems(answer) == []


def test_a_select_whose_constraints_rule_out_every_choice_is_refused() -> None:
    assert "no choice that its own constraints allow" in refused(form_of({"type": "string", "enum": [1, 2]}))
    assert "no choice that its own constraints allow" in refused(
        form_of({"enum": ["a"], "type": "string", "minLength": 5})
    )


def test_a_pattern_is_never_lost_where_the_model_reads() -> None:
    evil = "^(a+)+$"
    assert one({"type": "string", "enum": ["a"], "pattern": evil}).pattern == evil
    assert one({"type": "array", "items": {"enum": ["a"], "pattern": evil}}).pattern == evil
    assert one({"$ref": "#/$defs/t"}, **{"$defs": {"t": {"type": "string", "pattern": evil}}}).pattern == evil
    assert one({"allOf": [{"type": "string", "pattern": evil}]}).pattern == evil
    assert one({"anyOf": [{"type": "string", "pattern": evil}, {"type": "null"}]}).pattern == evil
    # Where it cannot be kept (beside a different one, at the top), the form is refused.
    assert "is set both beside '$ref'" in refused(
        form_of(
            {"$ref": "#/$defs/t", "pattern": "x"}, **{"$defs": {"t": {"type": "string", "pattern": evil}}}
        )
    )
    assert "'allOf' is outside" in refused(
        {"properties": {"a": {"type": "string"}}, "allOf": [{"properties": {"a": {"pattern": evil}}}]}
    )


def test_a_condition_set_inside_and_beside_a_ref_must_agree() -> None:
    defs = {"$defs": {"t": {"type": "string", "maxLength": 3, "title": "Inner"}}}
    assert "'maxLength' is set both beside '$ref'" in refused(
        form_of({"$ref": "#/$defs/t", "maxLength": 5}, **defs)
    )
    assert "'maxLength' is set both beside 'anyOf'" in refused(
        form_of({"anyOf": [{"type": "string", "maxLength": 3}, {"type": "null"}], "maxLength": 5})
    )
    same = one({"$ref": "#/$defs/t", "maxLength": 3, "title": "Outer"}, **defs)
    assert (same.max_length, same.title) == (3, "Outer")  # annotations beside it are laid over


@pytest.mark.parametrize("keyword", ["minLength", "maxLength"])
@pytest.mark.parametrize("value", [10**400, MAX_COUNT + 1, 2.0**60, -1, 1.5, True, "3"])
def test_a_length_outside_the_exact_integers_is_refused(keyword: str, value: object) -> None:
    assert f"'{keyword}' must be a whole number from 0 to" in refused(
        form_of({"type": "string", keyword: value})
    )


@pytest.mark.parametrize("keyword", ["minItems", "maxItems"])
def test_an_item_count_outside_the_exact_integers_is_refused(keyword: str) -> None:
    prop = {"type": "array", "items": {"enum": ["a"]}, keyword: 10**400}
    assert f"'{keyword}' must be a whole number" in refused(form_of(prop))


def test_the_largest_exact_count_is_read() -> None:
    assert one({"type": "string", "maxLength": MAX_COUNT}).max_length == MAX_COUNT
    assert one({"type": "string", "maxLength": 3.0}).max_length == 3


@pytest.mark.parametrize("key", [1, None, ("a",), 2.5])
def test_a_property_key_that_is_not_text_is_a_form_error(key: Any) -> None:
    assert "'properties' has a key that is" in refused({"properties": {key: {"type": "string"}}})


# --- the quick check and the worded one always agree ---------------------------------------

VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-5, max_value=5),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(["", "a", "bb", "a@b.example", "2026-01-31", "http://x", "ccc dd"]),
    st.lists(st.sampled_from(["a", "bb", "ccc", "x", 1]), max_size=4),
)
PROPS = st.sampled_from(
    [
        {"type": "string"},
        {"type": "string", "minLength": 1, "maxLength": 2},
        {"type": "string", "format": "email"},
        {"type": "string", "format": "date"},
        {"type": ["string", "null"]},
        {"type": "integer", "minimum": 0, "maximum": 3},
        {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 3},
        {"type": "boolean"},
        {"enum": ["a", "bb", 1, True]},
        {"type": "array", "items": {"enum": ["a", "bb", "ccc"]}, "minItems": 1, "maxItems": 2},
        {"type": "array", "items": {"enum": ["a", "bb", "ccc"]}, "uniqueItems": True},
    ]
)


@settings(max_examples=examples(400), deadline=None)
@given(PROPS, VALUES)
def test_the_quick_check_agrees_with_the_problems(prop: dict[str, Any], value: Any) -> None:
    form = read_form(form_of(prop))
    field = form.field("f")
    problems = list(field._problems(value))
    assert field.problems(value) == problems
    assert form.problems({"f": value}) == problems
    assert (form.with_defaults({}) == {}) or field.has_default
