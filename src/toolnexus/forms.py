"""The form model: one safe reading of the ``requestedSchema`` an MCP server sends.

A form-mode elicitation carries a JSON Schema that the server wrote, and a server may be
hostile. [`read_form`][toolnexus.forms.read_form] reads it once into typed
[`Field`][toolnexus.forms.Field]s, and everything else in toolnexus (checking answers,
filling in defaults, the terminal's questions, spotting secrets) works on that reading
rather than on the raw schema. A host that draws its own UI can do the same::

    form = read_form(request.data["schema"])
    for field in form.fields:
        ...  # field.type, field.title, field.choices, field.default, field.minimum, ...
    problems = form.problems(answers)  # [] when the answers fit

What is read is the restricted schema of the MCP elicitation spec (2025-11-25 and
2026-07-28): a flat object of strings, numbers, integers, booleans, single-selects
(``enum``, ``oneOf`` of ``const``/``title``, the legacy ``enumNames``) and multi-selects
(``items.enum``, ``items.anyOf`` of ``const``/``title``), with ``default`` on every type and
``required``; and the shapes real servers send: a nullable field (``anyOf: [T, {type:
null}]`` or ``type: [T, "null"]``), a local ``$ref`` into the schema's own ``$defs`` or
``definitions`` (resolved once, never recursively), a one-branch ``allOf``, annotation
keywords (``$schema``, ``examples``, ``additionalProperties``, ...), which are ignored.

What is refused, with a [`FormError`][toolnexus.forms.FormError] naming the property and
the keyword: anything else, such as a nested object, a remote or recursive ``$ref``,
composition outside the shapes above, a keyword whose check is not in the subset
(``multipleOf``, ``patternProperties``, ``not``, ``if``, ...), a value of the wrong JSON
type, more than [`MAX_FIELDS`][toolnexus.forms.MAX_FIELDS] fields or more than
[`MAX_CHOICES`][toolnexus.forms.MAX_CHOICES] choices in one field.

Reading never compiles a regular expression of the server's (``pattern`` is kept as text
in [`Field.pattern`][toolnexus.forms.Field.pattern] for a UI to show, and the server
checks it on receipt), never runs a general-purpose JSON Schema evaluator, and never
recurses: it visits each part of the schema at most once, at a fixed depth, so its time
is linear in the size of the schema. Checking an answer is linear in the size of the
answer and the form. Nothing is cached between forms.

Standard library only: importing it costs nothing.
"""

from __future__ import annotations

import copy
import datetime as _dt
import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal, TypeAlias

from ._errors import ToolnexusError
from ._sensitive import looks_secret
from ._util import escape_text

__all__ = [
    "FORMATS",
    "MAX_CHOICES",
    "MAX_FIELDS",
    "Choice",
    "Field",
    "FieldType",
    "Form",
    "FormError",
    "read_form",
    "sensitive_fields",
    "validate_content",
]

MAX_FIELDS = 1000
"""The most fields a form may have; a schema with more is refused. Real forms have a few."""

MAX_CHOICES = 1000
"""The most choices a single- or multi-select may offer; a field with more is refused."""

FieldType: TypeAlias = Literal["string", "number", "integer", "boolean", "choice", "choices"]
"""What a field asks for: text, a number, a whole number, yes or no, one choice
(single-select) or several choices (multi-select)."""

FORMATS: dict[str, str] = {
    "email": "an email address",
    "uri": "an absolute URI (such as https://example.com)",
    "date": "a date (YYYY-MM-DD)",
    "date-time": "a date and time (RFC 3339, such as 2026-01-31T09:30:00Z)",
}
"""The string formats of the subset, each with the words a message uses for it."""

Scalar: TypeAlias = str | int | float | bool


class FormError(ToolnexusError, ValueError):
    """A schema that is not a form of the MCP elicitation subset. The message names the
    property and the keyword (escaped: it is safe to show or log), never a value."""


@dataclass(frozen=True, slots=True)
class Choice:
    """One choice of a single- or multi-select."""

    value: Scalar
    """What is sent when it is chosen (a string in the spec's subset)."""
    title: str
    """What the user is shown: the schema's ``title`` or ``enumNames`` entry, or the value
    itself written as text when the schema gives none."""


@dataclass(frozen=True, slots=True)
class Field:
    """One field of a form, as [`read_form`][toolnexus.forms.read_form] read it.

    Constraints the schema does not set are ``None``. Every text in it (``name``,
    ``title``, ``description``, the choices' titles) is the server's, unescaped: escape it
    before it reaches a terminal.
    """

    name: str
    """The property's name: the key of its answer."""
    type: FieldType
    """What the field asks for."""
    required: bool = False
    """Whether the schema lists the field in ``required``."""
    title: str | None = None
    """The schema's ``title``; ``None`` when it has none (see [`label`][toolnexus.forms.Field.label])."""
    description: str | None = None
    """The schema's ``description``."""
    default: Any = None
    """The schema's ``default``; ``None`` when it has none. A default of JSON ``null`` is
    also ``None``: [`has_default`][toolnexus.forms.Field.has_default] tells them apart."""
    has_default: bool = False
    """Whether the schema gives a ``default`` (``null`` included, on a nullable field)."""
    nullable: bool = False
    """Whether ``null`` is an answer (``anyOf: [T, {type: null}]``, ``type: [T, "null"]``)."""
    choices: tuple[Choice, ...] = ()
    """The choices of a ``"choice"`` or ``"choices"`` field, in the schema's order."""
    min_length: int | None = None
    """``minLength`` of a string, in characters (code points)."""
    max_length: int | None = None
    """``maxLength`` of a string."""
    format: str | None = None
    """``format`` of a string, one of [`FORMATS`][toolnexus.forms.FORMATS]; another
    format (``uuid``, ...) is an annotation and is not kept."""
    pattern: str | None = None
    """``pattern`` of a string, as text, for a UI to show. Never compiled or checked here:
    it is the server's regular expression, and the server checks it on receipt."""
    minimum: int | float | None = None
    """The least number allowed (see [`exclusive_minimum`][toolnexus.forms.Field.exclusive_minimum])."""
    maximum: int | float | None = None
    """The greatest number allowed."""
    exclusive_minimum: bool = False
    """Whether ``minimum`` itself is excluded (``exclusiveMinimum``)."""
    exclusive_maximum: bool = False
    """Whether ``maximum`` itself is excluded (``exclusiveMaximum``)."""
    min_items: int | None = None
    """``minItems`` of a multi-select."""
    max_items: int | None = None
    """``maxItems`` of a multi-select."""
    unique_items: bool = False
    """``uniqueItems`` of a multi-select: a choice may not be picked twice."""
    _keys: Mapping[tuple[str, Scalar], Choice] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        # The choices by value, so that checking an answer is linear, however many there are.
        if self.choices:
            keys = {_choice_key(c.value): c for c in self.choices}
            object.__setattr__(self, "_keys", MappingProxyType(keys))

    @property
    def label(self) -> str:
        """The title, or the name when there is none."""
        return self.title if self.title else self.name

    def choice(self, value: object) -> Choice | None:
        """The choice whose value is ``value`` (``"1"`` is not ``1``, ``True`` is not ``1``),
        or ``None``."""
        key = _choice_key(value)
        return None if key is None else self._keys.get(key)

    def problems(self, value: object) -> list[str]:
        """What is wrong with ``value`` as this field's answer; ``[]`` when it fits.

        Each problem names the field and never repeats the value. ``None`` fits only a
        nullable field. Whether a required field was answered at all is the form's
        question: see [`Form.problems`][toolnexus.forms.Form.problems].
        """
        return list(self._problems(value))

    def _problems(self, value: object) -> Iterator[str]:
        where = _quote(self.name)
        if value is None:
            if not self.nullable:
                yield f"{where} must be {_TYPE_WORDS[self.type]}"
            return
        kind = self.type
        if kind == "string":
            if not isinstance(value, str):
                yield f"{where} must be {_TYPE_WORDS[kind]}"
                return
            length = len(value)
            if self.min_length is not None and length < self.min_length:
                yield f"{where} must be at least {_plural(self.min_length, 'character')} long"
            if self.max_length is not None and length > self.max_length:
                yield f"{where} must be at most {_plural(self.max_length, 'character')} long"
            if self.format is not None and not _FORMAT_CHECKS[self.format](value):
                yield f"{where} must be {FORMATS[self.format]}"
        elif kind in ("number", "integer"):
            problem = _number_problem(value, integer=kind == "integer")
            if problem is not None:
                yield f"{where} {problem}"
                return
            yield from self._range_problems(where, value)  # type: ignore[arg-type]
        elif kind == "boolean":
            if not isinstance(value, bool):
                yield f"{where} must be {_TYPE_WORDS[kind]}"
        elif kind == "choice":
            if self.choice(value) is None:
                yield f"{where} must be one of: {self._listing()}"
        else:  # "choices"
            yield from self._choices_problems(where, value)

    def _range_problems(self, where: str, value: int | float) -> Iterator[str]:
        low, high = self.minimum, self.maximum
        if low is not None:
            if self.exclusive_minimum and not value > low:
                yield f"{where} must be greater than {_number(low)}"
            elif value < low:
                yield f"{where} must be at least {_number(low)}"
        if high is not None:
            if self.exclusive_maximum and not value < high:
                yield f"{where} must be less than {_number(high)}"
            elif value > high:
                yield f"{where} must be at most {_number(high)}"

    def _choices_problems(self, where: str, value: object) -> Iterator[str]:
        if not isinstance(value, list):
            yield f"{where} must be {_TYPE_WORDS['choices']}"
            return
        if self.min_items is not None and len(value) < self.min_items:
            yield f"{where} must have at least {_plural(self.min_items, 'item')}"
        if self.max_items is not None and len(value) > self.max_items:
            yield f"{where} must have at most {_plural(self.max_items, 'item')}"
        seen: set[tuple[str, Scalar]] = set()
        repeated = False
        for number, item in enumerate(value, start=1):
            key = _choice_key(item) if isinstance(item, str) else None
            if key is None or key not in self._keys:
                yield f"{where} item {number} must be one of: {self._listing()}"
            elif key in seen:
                repeated = True
            else:
                seen.add(key)
        if repeated and self.unique_items:
            yield f"{where} must not repeat an item"

    def _listing(self, limit: int = 12) -> str:
        shown = [escape_text(_text(c.value))[:60] for c in self.choices[:limit]]
        more = len(self.choices) - limit
        return ", ".join(shown) + (f" (and {more} more)" if more > 0 else "")


@dataclass(frozen=True, slots=True)
class Form:
    """A form: its fields in the schema's order, read by [`read_form`][toolnexus.forms.read_form]."""

    fields: tuple[Field, ...] = ()
    """The fields, in the order of the schema's ``properties``."""
    title: str | None = None
    """The schema's own ``title``."""
    description: str | None = None
    """The schema's own ``description``."""
    _by_name: dict[str, Field] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        names = {f.name: f for f in self.fields}
        if len(names) != len(self.fields):
            raise ValueError("Form: two fields have the same name")
        object.__setattr__(self, "_by_name", names)

    @property
    def names(self) -> tuple[str, ...]:
        """The fields' names, in order."""
        return tuple(f.name for f in self.fields)

    def field(self, name: str) -> Field:
        """The field called ``name``; ``KeyError`` when there is none."""
        return self._by_name[name]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self._by_name

    def problems(self, content: Mapping[str, Any]) -> list[str]:
        """What is wrong with ``content`` as the answer to this form; ``[]`` when it fits.

        One readable sentence per problem: a required field left out, a key that is not a
        field, and each field's own problems (see [`Field.problems`][toolnexus.forms.Field.problems]).
        Each names the field (escaped) and never repeats the value, so the list is safe to
        show, log or send. A number too large for a 64-bit float, or not finite, is a
        problem, not an exception.

        Raises ``TypeError`` when ``content`` is not a mapping.
        """
        if not isinstance(content, Mapping):
            raise TypeError(f"Form.problems: content must be a mapping, not {type(content).__name__}")
        problems = [
            f"{_quote(str(key))} is not a field of the requested schema"
            for key in content
            if not isinstance(key, str) or key not in self._by_name
        ]
        for f in self.fields:
            if f.name in content:
                problems.extend(f._problems(content[f.name]))
            elif f.required:
                problems.append(f"{_quote(f.name)} is required")
        return problems

    def with_defaults(self, content: Mapping[str, Any]) -> dict[str, Any]:
        """``content`` with the schema's default filled in for every field it leaves out,
        as the spec's SEP-1034 has a client do when the user accepts a form.

        A default that does not fit its own field (of the wrong type, out of range) is not
        filled in: it would turn an answer that fits into one that does not. The result is
        a new ``dict``; ``content`` is not changed.

        Raises ``TypeError`` when ``content`` is not a mapping.
        """
        if not isinstance(content, Mapping):
            raise TypeError(f"Form.with_defaults: content must be a mapping, not {type(content).__name__}")
        filled = dict(content)
        for f in self.fields:
            if f.has_default and f.name not in filled and not f.problems(f.default):
                filled[f.name] = copy.copy(f.default)  # a list default is not shared
        return filled


# --- reading ------------------------------------------------------------------------------

# Keywords whose check is outside the subset, or that make the form something other than a
# flat object of fields: a schema that uses one is refused rather than half-checked.
_REFUSED = frozenset(
    {
        "not",
        "if",
        "then",
        "else",
        "dependentSchemas",
        "dependentRequired",
        "dependencies",
        "prefixItems",
        "additionalItems",
        "contains",
        "minContains",
        "maxContains",
        "unevaluatedItems",
        "unevaluatedProperties",
        "patternProperties",
        "propertyNames",
        "minProperties",
        "maxProperties",
        "multipleOf",
        "$dynamicRef",
        "$recursiveRef",
    }
)
_NULL_TYPE = "null"
_PLAIN = frozenset(("$ref", "allOf", "anyOf", "oneOf"))
_TYPE_WORDS: dict[str, str] = {
    "string": "a string",
    "number": "a number",
    "integer": "an integer",
    "boolean": "true or false",
    "choice": "one of the choices",
    "choices": "a list of choices",
}
_FLOAT_MAX = 1.7976931348623157e308


def read_form(schema: object) -> Form:
    """Read a form-mode elicitation's ``requestedSchema`` into a [`Form`][toolnexus.forms.Form].

    ```python
    from toolnexus.forms import read_form

    form = read_form({
        "type": "object",
        "properties": {
            "env": {"type": "string", "oneOf": [{"const": "prod", "title": "Production"}]},
            "replicas": {"type": "integer", "minimum": 1, "default": 2},
        },
        "required": ["env"],
    })
    assert [(f.name, f.type, f.required) for f in form.fields] == [
        ("env", "choice", True), ("replicas", "integer", False)]
    assert form.field("env").choices[0].title == "Production"
    assert form.with_defaults({"env": "prod"}) == {"env": "prod", "replicas": 2}
    assert form.problems({"replicas": 0}) == [
        "'env' is required", "'replicas' must be at least 1"]
    ```

    Every value a server can send gives a ``Form`` or raises
    [`FormError`][toolnexus.forms.FormError] (a ``ValueError``), in time linear in the size
    of the schema: see the module's description for what is read and what is refused.
    """
    if not isinstance(schema, Mapping):
        raise FormError(f"the schema must be a JSON object, not {_json_type(schema)}")
    _refuse_keywords(schema, "the schema")
    kind = schema.get("type", "object")
    if kind != "object":
        raise FormError(f"the schema's 'type' must be \"object\", not {_json_type(kind, show=True)}")
    properties = schema.get("properties", {})
    if not isinstance(properties, Mapping):
        raise FormError(f"the schema's 'properties' must be an object, not {_json_type(properties)}")
    if len(properties) > MAX_FIELDS:
        raise FormError(f"the schema has {len(properties)} properties; at most {MAX_FIELDS} are read")
    required = _required(schema.get("required", []), properties)
    defs = _Defs(schema)
    fields = tuple(
        _read_field(str(name), prop, str(name) in required, defs) for name, prop in properties.items()
    )
    title = _text_of(schema, "title", "the schema")
    description = _text_of(schema, "description", "the schema")
    return Form(fields, title, description)


def _required(required: object, properties: Mapping[str, Any]) -> frozenset[str]:
    if not isinstance(required, list):
        raise FormError(f"the schema's 'required' must be an array, not {_json_type(required)}")
    if len(required) > MAX_FIELDS:
        raise FormError(f"the schema's 'required' lists {len(required)} names; at most {MAX_FIELDS} are read")
    names = set()
    for name in required:
        if not isinstance(name, str):
            raise FormError(f"the schema's 'required' holds {_json_type(name)}, not a property name")
        if name not in properties:
            raise FormError(
                f"the schema's 'required' names {_quote(name)}, which is not one of its properties"
            )
        names.add(name)
    return frozenset(names)


class _Defs:
    """The schema's own ``$defs``/``definitions``, for a local ``$ref``."""

    def __init__(self, schema: Mapping[str, Any]) -> None:
        self._schema = schema

    def resolve(self, ref: object, where: str) -> Mapping[str, Any]:
        if not isinstance(ref, str):
            raise FormError(f"{where}: '$ref' must be a string, not {_json_type(ref)}")
        for section in ("$defs", "definitions"):
            prefix = f"#/{section}/"
            if ref.startswith(prefix):
                name = ref[len(prefix) :]
                if "/" in name:
                    break
                name = name.replace("~1", "/").replace("~0", "~")
                defs = self._schema.get(section)
                target = defs.get(name) if isinstance(defs, Mapping) else None
                if not isinstance(target, Mapping):
                    raise FormError(f"{where}: '$ref' points to nothing in the schema's {section}")
                return target
        raise FormError(
            f"{where}: '$ref' may only point into the schema's own $defs or definitions; "
            "references elsewhere are never fetched"
        )


def _merge(outer: Mapping[str, Any], inner: Mapping[str, Any], drop: str) -> dict[str, Any]:
    """``inner`` with ``outer``'s keywords laid over it, ``outer[drop]`` left out."""
    merged = dict(inner)
    merged.update((k, v) for k, v in outer.items() if k != drop)
    return merged


def _unwrap(prop: Mapping[str, Any], where: str, defs: _Defs) -> tuple[Mapping[str, Any], bool]:
    """The property with a ``$ref``, a one-branch ``allOf`` and a nullable union taken
    apart: the plain schema underneath, and whether ``null`` is allowed. At most one
    ``$ref`` is followed, and the result is never unwrapped again: nothing recurses."""
    if _PLAIN.isdisjoint(prop) and not isinstance(prop.get("type"), list):
        return prop, False  # the common case: nothing to take apart
    refs = 0

    def deref(node: Mapping[str, Any]) -> Mapping[str, Any]:
        nonlocal refs
        if "$ref" in node:
            refs += 1
            if refs > 1:
                raise FormError(f"{where}: a '$ref' that leads to another '$ref' is not followed")
            target = defs.resolve(node["$ref"], where)
            if "$ref" in target or "allOf" in target:
                raise FormError(f"{where}: a '$ref' that leads to another '$ref' is not followed")
            return _merge(node, target, "$ref")
        return node

    node = deref(prop)
    all_of = node.get("allOf")
    if all_of is not None:
        if not (isinstance(all_of, list) and len(all_of) == 1 and isinstance(all_of[0], Mapping)):
            raise FormError(f"{where}: 'allOf' is read only as one schema wrapped in a list")
        node = _merge(node, deref(all_of[0]), "allOf")
        if "allOf" in all_of[0]:
            raise FormError(f"{where}: 'allOf' inside 'allOf' is not read")
    nullable = False
    for union in ("anyOf", "oneOf"):
        branches = node.get(union)
        if not isinstance(branches, list) or len(branches) != 2:
            continue
        nulls = [b for b in branches if _is_null_schema(b)]
        if len(nulls) != 1:
            continue
        other = branches[1] if nulls[0] is branches[0] else branches[0]
        if not isinstance(other, Mapping):
            raise FormError(f"{where}: '{union}' holds {_json_type(other)}, not a schema")
        inner = deref(other)
        for key in ("anyOf", "oneOf", "allOf", "$ref"):
            if key in inner and not (key in ("anyOf", "oneOf") and _is_const_list(inner[key])):
                raise FormError(f"{where}: '{union}' with null is read only around a plain schema")
        node = _merge(node, inner, union)
        nullable = True
        break
    kind = node.get("type")
    if isinstance(kind, list):
        types = [t for t in kind if t != _NULL_TYPE]
        if len(types) == 1 and len(kind) == 2:
            node = {**node, "type": types[0]}
            nullable = True
        elif kind == [_NULL_TYPE]:
            raise FormError(f"{where}: a field that can only be null asks for nothing")
        else:
            raise FormError(f"{where}: 'type' lists several types; only one, or one and \"null\", is read")
    return node, nullable


def _is_null_schema(node: object) -> bool:
    return isinstance(node, Mapping) and node.get("type") == _NULL_TYPE and "enum" not in node


def _is_const_list(branches: object) -> bool:
    return isinstance(branches, list) and all(isinstance(b, Mapping) and "const" in b for b in branches)


def _read_field(name: str, prop: object, required: bool, defs: _Defs) -> Field:
    where = f"property {_quote(name)}"
    if not isinstance(prop, Mapping):
        raise FormError(f"{where} must be a schema object, not {_json_type(prop)}")
    node, nullable = _unwrap(prop, where, defs)
    _refuse_keywords(node, where)
    if "properties" in node or node.get("type") == "object":
        raise FormError(f"{where}: a nested object ('properties') is not a field of a form")
    kind = node.get("type")
    facts: dict[str, Any]
    if kind == "array":
        field_type: FieldType = "choices"
        facts = _read_multi(node, where, defs)
    elif (choices := _read_choices(node, where, multi=False)) is not None:
        if kind is not None and kind not in ("string", "number", "integer", "boolean"):
            raise FormError(f"{where}: 'type' {_json_type(kind, show=True)} does not fit a choice")
        field_type, facts = "choice", {"choices": choices}
    elif kind == "string":
        fmt, pattern = node.get("format"), node.get("pattern")
        if pattern is not None and not isinstance(pattern, str):
            raise FormError(f"{where}: 'pattern' must be a string, not {_json_type(pattern)}")
        field_type = "string"
        facts = {
            "min_length": _count(node, "minLength", where),
            "max_length": _count(node, "maxLength", where),
            "format": fmt if isinstance(fmt, str) and fmt in FORMATS else None,
            "pattern": pattern,
        }
    elif kind == "number" or kind == "integer":
        field_type, facts = kind, _read_bounds(node, where)
    elif kind == "boolean":
        field_type, facts = "boolean", {}
    elif kind is None:
        raise FormError(f"{where} has no 'type' and no choices: it does not say what it asks for")
    else:
        raise FormError(f"{where}: 'type' {_json_type(kind, show=True)} is not a field of a form")
    default, has_default = _default(node, where, field_type, nullable)
    return Field(
        name,
        field_type,
        required,
        title=_text_of(node, "title", where),
        description=_text_of(node, "description", where),
        default=default,
        has_default=has_default,
        nullable=nullable,
        **facts,
    )


def _read_bounds(node: Mapping[str, Any], where: str) -> dict[str, Any]:
    """A number's bounds: ``minimum``/``maximum`` and either form of ``exclusive*``."""
    low, high = _bound(node, "minimum", where), _bound(node, "maximum", where)
    exclusive_low = exclusive_high = False
    for key in ("exclusiveMinimum", "exclusiveMaximum"):
        value = node.get(key)
        if value is None or value is False:
            continue
        if value is True:  # draft 4: a flag on minimum/maximum
            if key == "exclusiveMinimum":
                exclusive_low = True
            else:
                exclusive_high = True
            continue
        bound = _bound(node, key, where)
        assert bound is not None
        if key == "exclusiveMinimum":
            if low is None or bound >= low:
                low, exclusive_low = bound, True
        elif high is None or bound <= high:
            high, exclusive_high = bound, True
    return {
        "minimum": low,
        "maximum": high,
        "exclusive_minimum": exclusive_low and low is not None,
        "exclusive_maximum": exclusive_high and high is not None,
    }


def _read_multi(node: Mapping[str, Any], where: str, defs: _Defs) -> dict[str, Any]:
    items = node.get("items")
    if not isinstance(items, Mapping):
        raise FormError(f"{where}: an array's 'items' must be a schema object, not {_json_type(items)}")
    if "$ref" in items:
        items = _merge(items, defs.resolve(items["$ref"], where), "$ref")
        if "$ref" in items:
            raise FormError(f"{where}: a '$ref' that leads to another '$ref' is not followed")
    _refuse_keywords(items, f"{where} 'items'")
    if items.get("type", "string") != "string":
        raise FormError(f"{where}: a multi-select's 'items' must be strings")
    choices = _read_choices(items, f"{where} 'items'", multi=True)
    if choices is None:
        raise FormError(f"{where}: a list of free text is not in the subset; 'items' must offer choices")
    unique = node.get("uniqueItems", False)
    if not isinstance(unique, bool):
        raise FormError(f"{where}: 'uniqueItems' must be true or false, not {_json_type(unique)}")
    return {
        "choices": choices,
        "min_items": _count(node, "minItems", where),
        "max_items": _count(node, "maxItems", where),
        "unique_items": unique,
    }


def _read_choices(node: Mapping[str, Any], where: str, *, multi: bool) -> tuple[Choice, ...] | None:
    """The choices of ``enum`` (with ``enumNames``), ``oneOf``/``anyOf`` of ``const`` or a
    lone ``const``; ``None`` when the node offers none."""
    given = [key for key in ("enum", "oneOf", "anyOf", "const") if key in node]
    if not given:
        if "enumNames" in node:
            raise FormError(f"{where}: 'enumNames' without 'enum'")
        return None
    if len(given) > 1:
        raise FormError(f"{where}: {' and '.join(repr(k) for k in given)} together are not read")
    key = given[0]
    if key == "const":
        entries: list[tuple[object, object]] = [(node["const"], None)]
    elif key == "enum":
        entries = _enum_entries(node, where)
    else:
        branches = node[key]
        if not isinstance(branches, list):
            raise FormError(f"{where}: '{key}' must be an array, not {_json_type(branches)}")
        if len(branches) > MAX_CHOICES:
            raise FormError(
                f"{where}: '{key}' offers {len(branches)} choices; at most {MAX_CHOICES} are read"
            )
        entries = []
        for branch in branches:
            if not isinstance(branch, Mapping) or "const" not in branch:
                raise FormError(f"{where}: '{key}' is read only as a list of {{const, title}} choices")
            title = branch.get("title")
            if title is not None and not isinstance(title, str):
                raise FormError(f"{where}: a choice's 'title' must be a string, not {_json_type(title)}")
            entries.append((branch["const"], title))
    if not entries:
        raise FormError(f"{where}: '{key}' offers no choice")
    choices: list[Choice] = []
    seen: set[tuple[str, Scalar]] = set()
    for value, title in entries:
        if multi and not isinstance(value, str):
            raise FormError(f"{where}: a multi-select's choices must be strings, not {_json_type(value)}")
        scalar_key = _choice_key(value)
        if scalar_key is None:
            raise FormError(
                f"{where}: a choice must be a string, a number or a boolean, not {_json_type(value)}"
            )
        if scalar_key in seen:
            raise FormError(f"{where}: '{key}' offers the same choice twice")
        seen.add(scalar_key)
        choices.append(Choice(value, title if isinstance(title, str) else _text(value)))  # type: ignore[arg-type]
    return tuple(choices)


def _enum_entries(node: Mapping[str, Any], where: str) -> list[tuple[object, object]]:
    values = node["enum"]
    if not isinstance(values, list):
        raise FormError(f"{where}: 'enum' must be an array, not {_json_type(values)}")
    if len(values) > MAX_CHOICES:
        raise FormError(f"{where}: 'enum' offers {len(values)} choices; at most {MAX_CHOICES} are read")
    names = node.get("enumNames")
    if names is None:
        titles: list[object] = [None] * len(values)
    elif isinstance(names, list) and len(names) == len(values) and all(isinstance(n, str) for n in names):
        titles = list(names)
    else:
        raise FormError(f"{where}: 'enumNames' must be an array of strings, one for each 'enum' value")
    return [(value, title) for value, title in zip(values, titles, strict=True) if value is not None]


def _default(node: Mapping[str, Any], where: str, kind: FieldType, nullable: bool) -> tuple[Any, bool]:
    """The schema's ``default`` and whether there is one, checked to be of the field's JSON type."""
    if "default" not in node:
        return None, False
    default = node["default"]
    if default is None:
        return None, nullable  # on a field that is not nullable, "= None" in a model: no default
    if not _default_fits(kind, default):
        raise FormError(f"{where}: 'default' must be {_TYPE_WORDS[kind]}, not {_json_type(default)}")
    return (list(default) if kind == "choices" else default), True


def _default_fits(kind: FieldType, value: object) -> bool:
    """Whether ``value`` is of the JSON type a default of a ``kind`` field must have."""
    if kind == "string":
        return isinstance(value, str)
    if kind in ("number", "integer"):
        return _number_problem(value, integer=kind == "integer") is None
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "choice":
        return _choice_key(value) is not None
    return isinstance(value, list) and len(value) <= MAX_CHOICES and all(isinstance(i, str) for i in value)


def _refuse_keywords(node: Mapping[str, Any], where: str) -> None:
    if _REFUSED.isdisjoint(node):
        return
    for key in node:
        if key in _REFUSED:
            raise FormError(f"{where}: the keyword {_quote(str(key))} is outside the elicitation subset")


def _text_of(node: Mapping[str, Any], key: str, where: str) -> str | None:
    value = node.get(key)
    if value is None or isinstance(value, str):
        return value
    raise FormError(f"{where}: '{key}' must be a string, not {_json_type(value)}")


def _count(node: Mapping[str, Any], key: str, where: str) -> int | None:
    value = node.get(key)
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise FormError(f"{where}: '{key}' must be a whole number of zero or more")
    return value


def _bound(node: Mapping[str, Any], key: str, where: str) -> int | float | None:
    value = node.get(key)
    if value is None:
        return None
    if _number_problem(value, integer=False) is not None:
        raise FormError(f"{where}: '{key}' must be a finite number a 64-bit float can hold")
    return value  # type: ignore[no-any-return]


# --- values --------------------------------------------------------------------------------


def _number_problem(value: object, *, integer: bool) -> str | None:
    """Why ``value`` is not a JSON number (a whole one with ``integer``), or ``None``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"must be {_TYPE_WORDS['integer' if integer else 'number']}"
    if isinstance(value, float):
        if not math.isfinite(value):
            return "must be a finite number"
        if integer and not value.is_integer():
            return f"must be {_TYPE_WORDS['integer']}"
    elif not -_FLOAT_MAX <= value <= _FLOAT_MAX:  # exact: Python compares int and float exactly
        return "must be a number a 64-bit float can hold"
    return None


def _choice_key(value: object) -> tuple[str, Scalar] | None:
    """``value`` as a set key that keeps ``True``, ``1`` and ``"1"`` apart; ``None`` for
    what cannot be a choice."""
    if isinstance(value, bool):
        return ("b", value)
    if isinstance(value, str):
        return ("s", value)
    if isinstance(value, (int, float)) and _number_problem(value, integer=False) is None:
        return ("n", value)
    return None


def _text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _number(value: int | float) -> str:
    return _text(value)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _quote(name: str, limit: int = 80) -> str:
    """A name as it appears in a message: quoted, escaped (``repr`` writes every
    control, format and separator character as an escape), and cut when long."""
    return repr(name if len(name) <= limit else name[:limit] + "…")


def _json_type(value: object, *, show: bool = False) -> str:
    """The JSON type of ``value`` in words, for a message; with ``show``, a short string is
    quoted (escaped) instead. Never more of the server's text than that."""
    if show and isinstance(value, str) and len(value) <= 40:
        return _quote(value)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (list, tuple)):
        return "an array"
    if isinstance(value, Mapping):
        return "an object"
    return f"a {type(value).__name__}"


# --- formats: fixed checks of ours, each linear in the length of the text ----------------

_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:\S*")
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_DATE_TIME = re.compile(
    r"([0-9]{4}-[0-9]{2}-[0-9]{2})[Tt ]([0-9]{2}):([0-9]{2}):([0-9]{2})(\.[0-9]+)?"
    r"(?:[Zz]|[+-]([0-9]{2}):([0-9]{2}))"
)


def _is_email(value: str) -> bool:
    """A name, one ``@`` and a domain with a dot, no white space anywhere."""
    local, at, domain = value.partition("@")
    if not (at and local and "@" not in domain) or any(ch.isspace() for ch in value):
        return False
    head, dot, tail = domain.rpartition(".")
    return bool(dot and head and tail)


def _is_uri(value: str) -> bool:
    # RFC 3986: an absolute URI is a scheme, a colon and the rest, with no white space.
    return _SCHEME.fullmatch(value) is not None


def _is_date(value: str) -> bool:
    if _DATE.fullmatch(value) is None:
        return False
    try:
        _dt.date.fromisoformat(value)
    except ValueError:
        return False
    return True


def _is_date_time(value: str) -> bool:
    # RFC 3339 ``date-time``: a full date, a time and a zone offset (``Z`` or ``±hh:mm``).
    match = _DATE_TIME.fullmatch(value)
    if match is None or not _is_date(match.group(1)):
        return False
    hour, minute, second = (int(match.group(i)) for i in (2, 3, 4))
    if match.group(6) is not None and not (int(match.group(6)) < 24 and int(match.group(7)) < 60):
        return False  # the zone offset's hours and minutes
    return hour < 24 and minute < 60 and second <= 60  # 60: a leap second


_FORMAT_CHECKS = {"email": _is_email, "uri": _is_uri, "date": _is_date, "date-time": _is_date_time}


# --- answers and secrets -------------------------------------------------------------------


def validate_content(schema: Mapping[str, Any], content: Mapping[str, Any]) -> list[str]:
    """Check a form's answers against the ``requestedSchema`` of an MCP elicitation.

    Returns one readable problem per entry, or an empty list when ``content`` fits: the
    schema is read with [`read_form`][toolnexus.forms.read_form] and the answers checked with
    [`Form.problems`][toolnexus.forms.Form.problems]. Each problem names the field
    (``'age' must be at least 18``) and never repeats the value that was given, so the list
    is safe to show, log or send. A schema outside the elicitation subset gives one
    problem that says so (no answer fits a form that cannot be read).

    Checked: ``required``; the type; ``minLength``/``maxLength``; ``format`` email, uri,
    date and date-time; ``minimum``/``maximum`` (and ``exclusiveMinimum``/
    ``exclusiveMaximum``); the choices of a single- or multi-select; ``minItems``/
    ``maxItems`` (and ``uniqueItems``); keys that are not fields. Numbers must be finite
    and fit a 64-bit float. Not checked: ``pattern``, whose regular expression is the
    server's: it is never compiled here, and the server checks it on receipt. Nothing is
    fetched, and no general-purpose JSON Schema evaluator runs.

    Raises ``TypeError`` when ``schema`` or ``content`` is not a mapping.
    """
    if not isinstance(schema, Mapping):
        raise TypeError(f"validate_content: schema must be a mapping, not {type(schema).__name__}")
    if not isinstance(content, Mapping):
        raise TypeError(f"validate_content: content must be a mapping, not {type(content).__name__}")
    try:
        form = read_form(schema)
    except FormError as err:
        return [f"the requested schema is outside the elicitation subset: {err}"]
    return form.problems(content)


def sensitive_fields(form: Form | Mapping[str, Any] | None) -> list[str]:
    """The names of the fields of a form that look like they ask for a secret.

    ``form`` is a [`Form`][toolnexus.forms.Form], or a ``requestedSchema``, which is read
    with [`read_form`][toolnexus.forms.read_form]. A field counts when its name, title or
    description names a password, passphrase, passcode, passkey, secret, token,
    credentials, API key, private, secret, access, signing or SSH key, PIN, one-time
    password (OTP, TOTP), MFA or 2FA code, card number (``cc_number``, ``card no``),
    CVV/CVC or security code, IBAN, account or routing number, or social security number
    (SSN), in any spelling (``apiKey``, ``API_KEY``, ``"Your API key"``). Words are matched
    whole, so ``max_tokens``, ``account`` or ``spinner`` do not count; and a text that
    tells the user not to give one (``"do not give us your PIN"``, ``"never share your
    password"``, ``"no password needed"``) does not count for what it rules out.

    Returns the names in the form's order; an empty list when nothing looks secret, or
    when ``form`` is not a form that [`read_form`][toolnexus.forms.read_form] can read
    (such a form cannot be answered through toolnexus at all). This is a heuristic for a
    warning, not a guarantee: a server can always disguise what it asks for. Its time is
    linear in the text the form holds, which [`read_form`][toolnexus.forms.read_form]
    bounds.
    """
    if not isinstance(form, Form):
        if not isinstance(form, Mapping):
            return []
        try:
            form = read_form(form)
        except FormError:
            return []
    found: list[str] = []
    for spec in form.fields:
        if looks_secret(spec.name) or looks_secret(spec.title or "") or looks_secret(spec.description or ""):
            found.append(spec.name)
    return found
