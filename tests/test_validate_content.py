"""validate_content: the spec's restricted requestedSchema subset, one problem per misfit.

Every problem must name the field it is about and must never repeat the value that was given:
a resolver may show the list to the user, and the bridge logs it.
"""

from __future__ import annotations

from typing import Any

import pytest

from toolnexus.forms import validate_content

FIELD = "the_field"
"""Every case puts its property under this name, which the problems must mention."""

STRING = {"type": "string", "minLength": 3, "maxLength": 8}
EMAIL = {"type": "string", "format": "email"}
URI = {"type": "string", "format": "uri"}
DATE = {"type": "string", "format": "date"}
DATE_TIME = {"type": "string", "format": "date-time"}
NUMBER = {"type": "number", "minimum": 0.5, "maximum": 9.5}
INTEGER = {"type": "integer", "minimum": 1, "maximum": 12}
BOOLEAN = {"type": "boolean"}
ENUM = {"type": "string", "enum": ["red", "green"]}
ONE_OF = {"type": "string", "oneOf": [{"const": "sm", "title": "Small"}, {"const": "lg", "title": "Large"}]}
ANY_OF = {"type": "string", "anyOf": [{"const": "sm", "title": "Small"}, {"const": "lg", "title": "Large"}]}
MULTI_ENUM = {
    "type": "array",
    "items": {"type": "string", "enum": ["a1", "b2", "c3"]},
    "minItems": 1,
    "maxItems": 2,
}
MULTI_ANY_OF = {
    "type": "array",
    "items": {"anyOf": [{"const": "x1", "title": "X"}, {"const": "y2", "title": "Y"}]},
    "maxItems": 2,
}

VALID: list[tuple[str, dict[str, Any], Any]] = [
    ("string at minLength", STRING, "abc"),
    ("string at maxLength", STRING, "abcdefgh"),
    ("email", EMAIL, "ada@example.com"),
    ("uri", URI, "https://example.com/path?q=1"),
    ("date", DATE, "2024-02-29"),
    ("date-time in UTC", DATE_TIME, "2026-01-31T09:30:00Z"),
    ("date-time with fraction and offset", DATE_TIME, "2026-01-31T09:30:00.25+02:00"),
    ("number at minimum", NUMBER, 0.5),
    ("number at maximum", NUMBER, 9.5),
    ("integer-valued number", NUMBER, 3),
    ("integer at minimum", INTEGER, 1),
    ("integer at maximum", INTEGER, 12),
    ("boolean true", BOOLEAN, True),
    ("boolean false", BOOLEAN, False),
    ("enum", ENUM, "green"),
    ("oneOf const", ONE_OF, "lg"),
    ("anyOf const", ANY_OF, "sm"),
    ("multi-select enum", MULTI_ENUM, ["a1", "c3"]),
    ("multi-select anyOf", MULTI_ANY_OF, ["y2"]),
]

INVALID: list[tuple[str, dict[str, Any], Any]] = [
    ("string below minLength", STRING, "zq"),
    ("string above maxLength", STRING, "zqzqzqzqzq"),
    ("string given a number", STRING, 4242),
    ("email without @", EMAIL, "zq-at-example.com"),
    ("email without domain", EMAIL, "zqzq@"),
    ("email with a space", EMAIL, "zq zq@example.com"),
    ("uri without scheme", URI, "zq.example.com/path"),
    ("uri that is prose", URI, "zq not a link"),
    ("date not in the calendar", DATE, "2026-02-30"),
    ("date in another order", DATE, "30/01/2026"),
    ("date-time without a zone", DATE_TIME, "2025-07-04T18:15:00"),
    ("date-time that is prose", DATE_TIME, "zq-yesterday"),
    ("number below minimum", NUMBER, 0.25),
    ("number above maximum", NUMBER, 77.75),
    ("number given a string", NUMBER, "seven-zq"),
    ("integer below minimum", INTEGER, -40),
    ("integer above maximum", INTEGER, 4242),
    ("integer given a fraction", INTEGER, 6.75),
    ("integer given a boolean", INTEGER, True),
    ("boolean given a string", BOOLEAN, "yes-zq"),
    ("boolean given a number", BOOLEAN, 4242),
    ("enum outside the choices", ENUM, "purple-zq"),
    ("oneOf outside the consts", ONE_OF, "xl-zq"),
    ("anyOf outside the consts", ANY_OF, "xl-zq"),
    ("multi-select below minItems", MULTI_ENUM, []),
    ("multi-select above maxItems", MULTI_ENUM, ["a1", "b2", "c3"]),
    ("multi-select item outside the enum", MULTI_ENUM, ["a1", "zq-item"]),
    ("multi-select given a string", MULTI_ENUM, "a1-zq"),
    ("multi-select anyOf item outside the consts", MULTI_ANY_OF, ["zq-item"]),
    ("multi-select anyOf above maxItems", MULTI_ANY_OF, ["x1", "y2", "x1"]),
]


def _schema(prop: dict[str, Any], *, required: bool = True) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": {FIELD: prop}}
    if required:
        schema["required"] = [FIELD]
    return schema


def _texts(value: Any) -> list[str]:
    """The ways a value could be spelled in a message: itself, and each item of a list."""
    if isinstance(value, list):
        return [text for item in value for text in _texts(item)] + [repr(value)]
    return [str(value), repr(value)]


@pytest.mark.parametrize(("case", "prop", "value"), VALID, ids=[case for case, _, _ in VALID])
def test_content_that_fits_has_no_problems(case: str, prop: dict[str, Any], value: Any) -> None:
    assert validate_content(_schema(prop), {FIELD: value}) == []


@pytest.mark.parametrize(("case", "prop", "value"), INVALID, ids=[case for case, _, _ in INVALID])
def test_each_problem_names_the_field_and_never_the_value(
    case: str, prop: dict[str, Any], value: Any
) -> None:
    problems = validate_content(_schema(prop), {FIELD: value})

    assert problems, f"{case}: not reported"
    assert all(isinstance(problem, str) for problem in problems)
    for problem in problems:
        assert FIELD in problem
        if prop.get("type") != "array" or value == [] or isinstance(value, str):
            assert not [text for text in _texts(value) if text in problem], (
                f"{case}: {problem!r} repeats the value"
            )
        else:  # a multi-select: its valid items may be listed as choices, the bad ones never
            assert "zq" not in problem, f"{case}: {problem!r} repeats the value"


def test_a_missing_required_field_is_named() -> None:
    schema = {
        "type": "object",
        "properties": {"name": {"type": "string"}, "nickname": {"type": "string"}},
        "required": ["name"],
    }
    problems = validate_content(schema, {"nickname": "zq-nick"})

    assert len(problems) == 1
    assert "name" in problems[0]
    assert "zq-nick" not in problems[0]


def test_an_optional_field_may_be_left_out() -> None:
    assert validate_content(_schema(STRING, required=False), {}) == []


def test_every_field_that_does_not_fit_is_reported() -> None:
    schema = {
        "type": "object",
        "properties": {"email": EMAIL, "years": INTEGER, "color": ENUM, "consent": BOOLEAN, "note": STRING},
        "required": ["email", "years", "color", "consent"],
    }
    content = {"email": "zq-mail", "years": 4242, "color": "zq-color", "note": "fine"}
    problems = validate_content(schema, content)

    for field in ("email", "years", "color", "consent"):
        assert [p for p in problems if field in p], f"{field} not reported"
    assert not [p for p in problems if "note" in p]
    for value in ("zq-mail", "4242", "zq-color"):
        assert not [p for p in problems if value in p]


def test_the_bridge_schema_from_a_real_server_model() -> None:
    """The schema the SDK renders for the test server's model, checked end to end."""
    from mcp.server.elicitation import render_elicitation_schema

    from servers.elicit_server import Profile

    schema = render_elicitation_schema(Profile)
    assert validate_content(schema, {"name": "Ada", "age": 36, "email": "ada@example.com"}) == []
    problems = validate_content(schema, {"name": "Ada", "age": 36, "email": "zq-not-an-address"})
    assert len(problems) == 1
    assert "email" in problems[0]
    assert "zq-not-an-address" not in problems[0]
