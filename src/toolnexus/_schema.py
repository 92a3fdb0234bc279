"""Checking a form's answers against the MCP ``requestedSchema``.

The MCP elicitation spec restricts ``requestedSchema`` to a flat object of primitive
properties: strings (``minLength``, ``maxLength``, ``format`` email, uri, date,
date-time), numbers and integers (``minimum``, ``maximum``), booleans, single-select
enums (``enum``, or ``oneOf`` of ``{const, title}``) and multi-select arrays (``items``
with ``enum`` or ``anyOf`` of ``{const, title}``, ``minItems``, ``maxItems``).

The checking itself is jsonschema's (installed with ``mcp``), imported on first use. This
module only picks the format checks and turns each error into a sentence that names the
field and never repeats the value the user typed.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import re
import warnings
from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jsonschema import FormatChecker
    from jsonschema.exceptions import ValidationError
    from jsonschema.protocols import Validator

__all__ = ["validate_content"]

_EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s.]+")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:\S*")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_DATE_TIME = re.compile(
    r"(\d{4}-\d{2}-\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?(?:[Zz]|[+-](\d{2}):(\d{2}))"
)


def _is_email(value: object) -> bool:
    return not isinstance(value, str) or _EMAIL.fullmatch(value) is not None


def _is_uri(value: object) -> bool:
    # RFC 3986: an absolute URI is a scheme, a colon and the rest, with no white space.
    return not isinstance(value, str) or _SCHEME.fullmatch(value) is not None


def _is_date(value: object) -> bool:
    if not isinstance(value, str):
        return True
    if _DATE.fullmatch(value) is None:
        return False
    try:
        _dt.date.fromisoformat(value)
    except ValueError:
        return False
    return True


def _is_date_time(value: object) -> bool:
    # RFC 3339 ``date-time``: a full date, a time and a zone offset (``Z`` or ``±hh:mm``).
    if not isinstance(value, str):
        return True
    match = _DATE_TIME.fullmatch(value)
    if match is None or not _is_date(match.group(1)):
        return False
    hour, minute, second = (int(match.group(i)) for i in (2, 3, 4))
    if match.group(6) is not None and not (int(match.group(6)) < 24 and int(match.group(7)) < 60):
        return False  # the zone offset's hours and minutes
    return hour < 24 and minute < 60 and second <= 60  # 60: a leap second


_FORMATS = {"email": _is_email, "uri": _is_uri, "date": _is_date, "date-time": _is_date_time}
FORMAT_WORDS = {
    "email": "an email address",
    "uri": "an absolute URI (such as https://example.com)",
    "date": "a date (YYYY-MM-DD)",
    "date-time": "a date and time (RFC 3339, such as 2026-01-31T09:30:00Z)",
}


@lru_cache(maxsize=1)
def _format_checker() -> FormatChecker:
    from jsonschema import FormatChecker

    checker = FormatChecker(formats=())
    for name, check in _FORMATS.items():
        checker.checks(name)(check)
    return checker


def _choices(options: object) -> list[Any]:
    """The allowed values of a single- or multi-select: ``enum`` or ``oneOf``/``anyOf`` consts."""
    if not isinstance(options, Mapping):
        return []
    if isinstance(options.get("enum"), list):
        return list(options["enum"])
    for key in ("oneOf", "anyOf"):
        branches = options.get(key)
        if isinstance(branches, list):
            return [b["const"] for b in branches if isinstance(b, Mapping) and "const" in b]
    return []


def _listing(values: list[Any]) -> str:
    return ", ".join(str(v) for v in values)


_TYPE_WORDS = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "array": "a list",
    "null": "empty",
    "object": "an object",
}


def _type_words(expected: object) -> str:
    if isinstance(expected, list):
        return " or ".join(_TYPE_WORDS.get(str(t), str(t)) for t in expected)
    return _TYPE_WORDS.get(str(expected), str(expected))


def _plural(n: object, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _describe(error: ValidationError, properties: Mapping[str, Any]) -> str:
    """One sentence about ``error`` that names the field but never quotes the user's value."""
    path = list(error.absolute_path)
    field = str(path[0]) if path else ""
    if not path:
        where = "the form"
    elif len(path) >= 2 and isinstance(path[1], int):
        where = f"{field!r} item {path[1] + 1}"
    elif len(path) >= 2:
        where = f"{field!r} (its part {str(path[1])!r})"
    else:
        where = repr(field)
    kind, limit = error.validator, error.validator_value
    if kind == "type":
        return f"{where} must be {_type_words(limit)}"
    if kind == "minLength":
        return f"{where} must be at least {_plural(limit, 'character')} long"
    if kind == "maxLength":
        return f"{where} must be at most {_plural(limit, 'character')} long"
    if kind == "format":
        return f"{where} must be {FORMAT_WORDS.get(str(limit), f'in the format {limit}')}"
    if kind == "minimum":
        return f"{where} must be at least {limit}"
    if kind == "maximum":
        return f"{where} must be at most {limit}"
    if kind == "exclusiveMinimum":
        return f"{where} must be greater than {limit}"
    if kind == "exclusiveMaximum":
        return f"{where} must be less than {limit}"
    if kind == "minItems":
        return f"{where} must have at least {_plural(limit, 'item')}"
    if kind == "maxItems":
        return f"{where} must have at most {_plural(limit, 'item')}"
    if kind == "additionalProperties":
        return f"{where} has a field the requested schema does not allow"
    if kind == "uniqueItems":
        return f"{where} must not repeat an item"
    if kind in ("enum", "oneOf", "anyOf", "const"):
        prop = properties.get(field)
        options = prop.get("items") if len(path) >= 2 and isinstance(prop, Mapping) else prop
        allowed = _choices(options) or (limit if kind == "enum" and isinstance(limit, list) else [])
        if allowed:
            return f"{where} must be one of: {_listing(allowed)}"
        return f"{where} is not one of the allowed values"
    return f"{where} does not fit the requested schema ({kind})"


def _refuse(value: object) -> object:
    raise TypeError(f"not JSON: {type(value).__name__}")


def _schema_key(schema: dict[str, Any]) -> str | None:
    """The schema as canonical JSON text, or None when it holds what JSON cannot write."""
    try:
        return json.dumps(schema, sort_keys=True, separators=(",", ":"), default=_refuse)
    except (TypeError, ValueError):
        return None


class SchemaProblemError(ValueError):
    """The requested schema cannot be used to check content."""


def _skip(validator: Any, value: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    return iter(())


def _additional_properties(
    validator: Any, allowed: Any, instance: Any, schema: Any
) -> Iterator[ValidationError]:
    """``additionalProperties`` judged by ``properties`` alone (``patternProperties`` are not
    evaluated: see ``_validator_class``)."""
    from jsonschema.exceptions import ValidationError

    if not isinstance(instance, dict):
        return
    known = schema.get("properties", {})
    extras = [key for key in instance if key not in known]
    if isinstance(allowed, dict):
        for extra in extras:
            yield from validator.descend(instance[extra], allowed, path=extra)
    elif allowed is False and extras:
        yield ValidationError("additional properties", validator="additionalProperties")


@lru_cache(maxsize=8)
def _validator_class(base: type[Validator]) -> type[Validator]:
    """``base`` without the keywords that run regular expressions the server wrote
    (``pattern``, ``patternProperties``): they are outside the spec's restricted schema, and
    a crafted expression could hold the event loop for as long as the server likes."""
    from jsonschema import validators

    overrides = {"pattern": _skip, "patternProperties": _skip, "additionalProperties": _additional_properties}
    return validators.extend(base, overrides)  # type: ignore[no-untyped-call,no-any-return]


def _check(schema: dict[str, Any]) -> Validator:
    """Check ``schema`` against its metaschema and compile it. Nothing is ever fetched: a
    ``$ref`` resolves only inside the schema itself."""
    from jsonschema import validators
    from jsonschema.exceptions import SchemaError
    from referencing import Registry

    try:
        with warnings.catch_warnings():
            # An unknown $schema: jsonschema falls back to its latest draft, with a warning
            # that says it will refuse in a later release. Take the fallback, quietly.
            warnings.simplefilter("ignore", DeprecationWarning)
            base = validators.validator_for(schema)
        base.check_schema(schema)
    except SchemaError as err:
        where = "/".join(str(p) for p in err.absolute_path) or "(top level)"
        raise SchemaProblemError(f"validate_content: schema is not a valid JSON Schema at {where}") from None
    except Exception as err:  # a $schema that is not a string, ...
        raise SchemaProblemError(
            f"validate_content: schema is not a valid JSON Schema ({type(err).__name__})"
        ) from None
    cls = _validator_class(base)
    return cls(schema, format_checker=_format_checker(), registry=Registry())


@lru_cache(maxsize=256)
def _check_cached(key: str) -> Validator:
    return _check(json.loads(key))


def _checked_validator(schema: dict[str, Any]) -> Validator:
    """The schema checked against its metaschema and compiled once: checking costs far more
    than validating a form's answers, and a server asks the same form again and again."""
    key = _schema_key(schema)
    return _check(schema) if key is None else _check_cached(key)


# --- the common case without jsonschema --------------------------------------------------
# A valid answer to a well-formed restricted schema is by far the common case, and going
# through jsonschema costs tens of microseconds even with the schema checked once. The
# check below answers True only when it is certain that the full path would find no
# problem and accept the schema; in any doubt (a keyword or a type it does not know, a
# value that does not fit) it answers False and the full path runs, so the problems
# reported, and the errors raised, are the full path's.

_ANNOTATIONS = frozenset(("title", "description", "default"))
_KEYWORDS = {
    "string": _ANNOTATIONS | {"type", "minLength", "maxLength", "format", "enum", "oneOf", "anyOf"},
    "number": _ANNOTATIONS | {"type", "minimum", "maximum"},
    "integer": _ANNOTATIONS | {"type", "minimum", "maximum"},
    "boolean": _ANNOTATIONS | {"type"},
    "array": _ANNOTATIONS | {"type", "items", "minItems", "maxItems"},
}
_TOP_KEYWORDS = frozenset(("type", "properties", "required", "title", "description"))
_ITEM_KEYWORDS = frozenset(("type", "enum", "anyOf", "title", "description"))
_CONST_KEYWORDS = frozenset(("const", "title", "description"))


def _texts_ok(schema: dict[str, Any]) -> bool:
    title, description = schema.get("title", ""), schema.get("description", "")
    return type(title) is str and type(description) is str


def _count(value: object) -> bool:
    return type(value) is int and value >= 0


def _bound(value: object) -> bool:
    return (type(value) is int or type(value) is float) and math.isfinite(value)


def _fast_choices(schema: dict[str, Any]) -> list[Any] | None:
    """The allowed values of a well-formed ``enum`` / ``oneOf`` / ``anyOf`` of consts; ``[]``
    when there is no choice; ``None`` when the choice is malformed or ambiguous."""
    enum, one_of, any_of = schema.get("enum"), schema.get("oneOf"), schema.get("anyOf")
    given = (enum is not None) + (one_of is not None) + (any_of is not None)
    if given == 0:
        return []
    if given > 1:
        return None
    if enum is not None:
        return enum if type(enum) is list and enum else None
    branches = one_of if one_of is not None else any_of
    if type(branches) is not list or not branches:
        return None
    consts = []
    for branch in branches:
        if type(branch) is not dict or "const" not in branch or not branch.keys() <= _CONST_KEYWORDS:
            return None
        if not _texts_ok(branch):
            return None
        consts.append(branch["const"])
    if one_of is not None and len(set(map(repr, consts))) != len(consts):
        return None  # oneOf with a repeated const: let the full path judge
    return consts


def _chosen(choices: list[Any], value: object) -> bool:
    # A str value equals only a str choice, and str equality is jsonschema's too.
    return not choices or (type(value) is str and value in choices)


def _property_fits(schema: object, value: object, present: bool) -> bool:
    if type(schema) is not dict:
        return False
    kind = schema.get("type")
    allowed = _KEYWORDS.get(kind) if type(kind) is str else None
    if allowed is None or not schema.keys() <= allowed or not _texts_ok(schema):
        return False
    if kind == "string":
        low, high, fmt = schema.get("minLength", 0), schema.get("maxLength", 0), schema.get("format")
        choices = _fast_choices(schema)
        if not (_count(low) and _count(high)) or choices is None:
            return False
        if fmt is not None and (type(fmt) is not str or fmt not in _FORMATS):
            return False
        if not present:
            return True
        if type(value) is not str or len(value) < low or ("maxLength" in schema and len(value) > high):
            return False
        return (fmt is None or _FORMATS[fmt](value)) and _chosen(choices, value)
    if kind in ("number", "integer"):
        low, high = schema.get("minimum", 0), schema.get("maximum", 0)
        if not (_bound(low) and _bound(high)):
            return False
        if not present:
            return True
        if not (type(value) is int or (kind == "number" and type(value) is float and math.isfinite(value))):
            return False
        return not ("minimum" in schema and value < low) and not ("maximum" in schema and value > high)
    if kind == "boolean":
        return not present or type(value) is bool
    # array: a multi-select
    low, high, items = schema.get("minItems", 0), schema.get("maxItems", 0), schema.get("items")
    if not (_count(low) and _count(high)) or type(items) is not dict:
        return False
    if not items.keys() <= _ITEM_KEYWORDS or not _texts_ok(items) or items.get("type", "string") != "string":
        return False
    choices = _fast_choices(items)
    if choices is None or "oneOf" in items:
        return False
    if not present:
        return True
    if type(value) is not list or len(value) < low or ("maxItems" in schema and len(value) > high):
        return False
    return all(type(item) is str and _chosen(choices, item) for item in value)


def _fits(schema: Mapping[str, Any], content: Mapping[str, Any]) -> bool:
    """True only when the full check would surely accept ``schema`` and find no problem."""
    if type(schema) is not dict or type(content) is not dict or not schema.keys() <= _TOP_KEYWORDS:
        return False
    if schema.get("type", "object") != "object" or not _texts_ok(schema):
        return False
    required = schema.get("required", [])
    if type(required) is not list:
        return False
    for name in required:
        if type(name) is not str or name not in content:
            return False
    if len(set(required)) != len(required):
        return False
    properties = schema.get("properties")
    if type(properties) is not dict:
        return False
    for key in content:
        if key not in properties:
            return False
    missing = object()
    for key, prop in properties.items():
        if type(key) is not str:
            return False
        value = content.get(key, missing)
        if not _property_fits(prop, value, value is not missing):
            return False
    return True


def validate_content(schema: Mapping[str, Any], content: Mapping[str, Any]) -> list[str]:
    """Check a form's answers against the ``requestedSchema`` of an MCP elicitation.

    Returns one readable problem per entry, or an empty list when ``content`` fits. Each
    problem names the field (``'age' must be at least 18``) and never repeats the value
    that was given, so the list is safe to show, log or send. Checked: ``required``;
    ``type``; ``minLength``/``maxLength``; ``format`` email, uri, date and date-time;
    ``minimum``/``maximum``; ``enum`` and ``oneOf``/``anyOf`` of ``const``;
    ``minItems``/``maxItems`` and the items of a multi-select; and any other JSON Schema
    keyword the schema uses but ``pattern`` and ``patternProperties``, whose regular
    expressions are the server's (outside the restricted schema, and one crafted expression
    can run for as long as the server likes). When the schema lists its ``properties``, a
    field that is not among them is a problem too: the server did not ask for it. Numbers
    must be finite. Nothing is fetched: a ``$ref`` resolves only inside the schema.

    Raises ``TypeError`` when ``schema`` or ``content`` is not a mapping, ``ValueError``
    when ``schema`` is not a valid JSON Schema or cannot be applied (a ``$ref`` that points
    outside it, say).
    """
    if not isinstance(schema, Mapping):
        raise TypeError(f"validate_content: schema must be a mapping, not {type(schema).__name__}")
    if not isinstance(content, Mapping):
        raise TypeError(f"validate_content: content must be a mapping, not {type(content).__name__}")
    if _fits(schema, content):
        return []
    return _problems(schema, content)


def _problems(schema: Mapping[str, Any], content: Mapping[str, Any]) -> list[str]:
    """The full path of ``validate_content``: jsonschema, and our words for its errors."""
    schema = dict(schema)
    validator = _checked_validator(schema)
    problems: list[str] = []
    required = schema.get("required")
    if isinstance(required, list):
        problems.extend(f"{name!r} is required" for name in required if name not in content)
    properties = schema.get("properties")
    listed = isinstance(properties, Mapping)
    if isinstance(properties, Mapping):
        problems.extend(
            f"{key!r} is not a field of the requested schema" for key in content if key not in properties
        )
    else:
        properties = {}
    problems.extend(
        f"{key!r} must be a finite number"
        for key, value in content.items()
        if isinstance(value, float) and not math.isfinite(value)
    )
    try:
        errors = sorted(validator.iter_errors(dict(content)), key=lambda e: [str(p) for p in e.absolute_path])
    except Exception as err:  # an unresolvable $ref (never fetched), a malformed keyword, ...
        raise SchemaProblemError(
            f"validate_content: the schema cannot be applied ({type(err).__name__}); "
            "references outside the schema are never fetched"
        ) from None
    for error in errors:
        if not error.absolute_path and (
            error.validator == "required" or (error.validator == "additionalProperties" and listed)
        ):
            continue  # said above, in our own words
        problem = _describe(error, properties)
        if problem not in problems:
            problems.append(problem)
    return problems
