"""validate_content answers the common case (a fitting answer to a well-formed restricted
schema) without jsonschema. That shortcut may only say "fits" when the full jsonschema path
agrees; on any doubt it defers. Differential property tests hold it to that."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolnexus._schema import _fits, _problems
from toolnexus.mcp import validate_content

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 20),
    st.floats(allow_nan=True, allow_infinity=True, width=32),
    st.sampled_from(
        ["", "a", "abc", "x1", "ada@example.com", "https://x.y", "2024-02-29", "2026-01-31T09:30:00Z", "1"]
    ),
)
texts = st.one_of(st.text(max_size=3), st.integers(0, 3), st.none())
const_branch = st.fixed_dictionaries(
    {"const": scalars}, optional={"title": texts, "description": texts, "junk": st.just(1)}
)
choices: st.SearchStrategy[dict[str, Any]] = st.one_of(
    st.just({}),
    st.fixed_dictionaries({"enum": st.one_of(st.lists(scalars, max_size=4), scalars)}),
    st.fixed_dictionaries({"oneOf": st.one_of(st.lists(const_branch, max_size=3), scalars)}),
    st.fixed_dictionaries({"anyOf": st.one_of(st.lists(const_branch, max_size=3), scalars)}),
)
counts = st.one_of(st.integers(-1, 5), st.floats(0, 5, width=32), st.booleans(), st.just("2"))
bounds = st.one_of(st.integers(-3, 12), st.floats(allow_nan=True, width=32), st.booleans(), st.just("1"))
kinds = st.sampled_from(["string", "number", "integer", "boolean", "array", "object", "null", ["string"]])
formats = st.sampled_from(["email", "uri", "date", "date-time", "ipv4", 3, ["email"]])
KEYWORDS: list[tuple[str, st.SearchStrategy[Any]]] = [
    ("title", texts),
    ("description", texts),
    ("default", scalars),
    ("minLength", counts),
    ("maxLength", counts),
    ("format", formats),
    ("minimum", bounds),
    ("maximum", bounds),
    ("minItems", counts),
    ("maxItems", counts),
    ("uniqueItems", st.booleans()),
]


@st.composite
def properties(draw: st.DrawFn) -> dict[str, Any]:
    prop: dict[str, Any] = {}
    if draw(st.integers(0, 8)) != 0:
        prop["type"] = draw(kinds)
    for key, strategy in KEYWORDS:
        if draw(st.integers(0, 4)) == 0:
            prop[key] = draw(strategy)
    prop.update(draw(choices))
    if draw(st.integers(0, 2)) == 0:
        items: dict[str, Any] = {}
        if draw(st.booleans()):
            items["type"] = draw(st.sampled_from(["string", "number", 1]))
        items.update(draw(choices))
        prop["items"] = draw(st.one_of(st.just(items), scalars))
    return prop


names = st.sampled_from(["a", "b", "c"])


@st.composite
def schemas_and_contents(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any]]:
    schema: dict[str, Any] = {}
    if draw(st.integers(0, 5)) != 0:
        schema["type"] = draw(st.sampled_from(["object", "object", "array", 1]))
    if draw(st.integers(0, 5)) != 0:
        schema["properties"] = draw(st.dictionaries(names, st.one_of(properties(), scalars), max_size=3))
    if draw(st.booleans()):
        required = st.lists(st.one_of(names, st.integers(0, 1)), max_size=3)
        schema["required"] = draw(st.one_of(required, scalars))
    for key, strategy in [
        ("title", texts),
        ("$schema", st.just("https://json-schema.org/draft/2020-12/schema")),
        ("additionalProperties", st.booleans()),
    ]:
        if draw(st.integers(0, 5)) == 0:
            schema[key] = draw(strategy)
    values = st.one_of(scalars, st.lists(scalars, max_size=3))
    content = draw(st.dictionaries(st.one_of(names, st.just("zz")), values, max_size=3))
    return schema, content


def full_path(schema: dict[str, Any], content: dict[str, Any]) -> list[str] | str:
    try:
        return _problems(schema, content)
    except ValueError:
        return "invalid schema"


@settings(max_examples=3000, deadline=None, suppress_health_check=list(HealthCheck))
@given(schemas_and_contents())
def test_the_shortcut_says_fits_only_when_jsonschema_agrees(
    case: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    schema, content = case
    if _fits(schema, content):
        assert full_path(schema, content) == []


DEPLOY = {
    "type": "object",
    "properties": {
        "environment": {"type": "string", "enum": ["staging", "production"], "title": "Environment"},
        "replicas": {"type": "integer", "minimum": 1, "maximum": 10, "title": "Replicas"},
        "notify": {"type": "boolean", "default": True},
        "note": {"type": "string", "default": "routine", "maxLength": 4},
        "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}, "maxItems": 2},
        "email": {"type": "string", "format": "email"},
    },
    "required": ["environment", "replicas"],
}


@settings(max_examples=500, deadline=None)
@given(
    st.integers(-1, 11),
    st.sampled_from(["staging", "production", "x"]),
    st.booleans(),
    st.text(max_size=6),
    st.lists(st.sampled_from(["a", "b", "c"]), max_size=3),
    st.sampled_from(["ada@example.com", "ada", "@x.y"]),
)
def test_on_realistic_forms_the_shortcut_and_jsonschema_agree_both_ways(
    replicas: int, env: str, notify: bool, note: str, tags: list[str], email: str
) -> None:
    content = {"environment": env, "replicas": replicas, "notify": notify}
    content |= {"note": note, "tags": tags, "email": email}
    full = full_path(DEPLOY, content)
    assert _fits(DEPLOY, content) == (full == [])  # the shortcut covers the whole common case
    assert validate_content(DEPLOY, content) == full


def test_an_unhashable_format_is_left_to_the_full_path() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string", "format": ["email"]}}}
    assert not _fits(schema, {"a": "x"})
    assert full_path(schema, {"a": "x"}) == "invalid schema"
