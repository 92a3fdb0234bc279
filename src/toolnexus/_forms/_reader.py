"""The reader: [`read_form`][toolnexus.forms.read_form], the one reading of the
``requestedSchema`` a server sends, and the limits on what it reads.

It visits each part of the schema at most once, at a fixed depth, and never recurses, so
its time is linear in the size of the schema; what it gives is bounded by the limits below.
It makes each field with the model's ``made_field`` and the form with its ``made_form``,
as the constructors of [`Field`][toolnexus.forms.Field] and [`Form`][toolnexus.forms.Form]
do; a select's choices are checked against the
select's own constraints by the model's rules (``within_limits``, ``of_type``).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, TypeAlias

from ..errors import FormError
from ._formats import FORMATS
from ._json import FLOAT_MAX, TYPE_WORDS, Scalar, choice_key, json_type, number_problem, quote
from ._json import text as value_text
from ._model import Field, FieldType, Form, made_field, made_form, of_type, within_limits

MAX_FIELDS = 1000
"""The most fields a form may have; a schema with more is refused. Real forms have a few."""

MAX_CHOICES = 1000
"""The most choices a single- or multi-select may offer; a field with more is refused."""

MAX_FORM_CHOICES = 10_000
"""The most choices a whole form may offer, counted over all its fields (with the items of
multi-select defaults), a ``$defs`` entry counted once for each ``$ref`` to it; a schema
that would give more is refused."""

MAX_TEXT = 200_000
"""The most characters of text a form may hold: its fields' names, titles, descriptions,
patterns and text defaults, its choices' values and titles, and its own title and
description, a ``$defs`` entry counted once for each ``$ref`` to it. A schema that would
give more is refused, so that nothing that reads a form (checking answers, spotting
secrets, showing it) has more text to go through than this."""

MAX_COUNT = 2**53 - 1
"""The largest ``minLength``, ``maxLength``, ``minItems`` or ``maxItems`` read: the largest
integer JSON numbers hold exactly everywhere (JavaScript's ``Number.MAX_SAFE_INTEGER``)."""

# Keywords whose check is outside the subset, or that make a field something other than a
# flat field: a schema that uses one, anywhere the form model reads, is refused rather than
# half-checked. ``$id`` below the top is refused too: it would change what a ``$ref`` beside
# or under it points at.
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
        "extends",  # draft 3
        "disallow",  # draft 3
        "divisibleBy",  # draft 3
    }
)
# At the top, the object itself: composition and a reference would add conditions on the
# whole answer that the fields do not carry; ``enum``/``const`` would pin the whole answer.
_TOP_REFUSED = _REFUSED | {"allOf", "anyOf", "oneOf", "$ref", "enum", "const"}
_FIELD_REFUSED = _REFUSED | {"$id"}
# Keywords that take a field apart (a reference, a wrapper, a nullable union, choices).
_WRAPPERS = frozenset(("$ref", "allOf", "anyOf", "oneOf"))
_CHOICE_KEYS = frozenset(("enum", "oneOf", "anyOf", "const", "enumNames"))
# A select's own constraints on its values: a choice that does not meet them is not offered.
_VALUE_LIMITS = frozenset(
    ("minLength", "maxLength", "format", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")
)
# What the form model reads as a condition on the answer: where a ``$ref``, ``allOf`` or a
# nullable union meets the keywords beside it, such a keyword set on both sides must say
# the same (both apply); any other keyword beside it (``title``, ``default``, ...) is laid
# over the one inside.
_ASSERTED = frozenset(
    (
        "type",
        "enum",
        "const",
        "oneOf",
        "anyOf",
        "items",
        "minLength",
        "maxLength",
        "pattern",
        "format",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "minItems",
        "maxItems",
        "uniqueItems",
    )
)
# A choice branch (``oneOf``/``anyOf`` of ``{const, title}``) holds nothing that narrows it.
_BRANCH_REFUSED = (
    _FIELD_REFUSED | _WRAPPERS | _VALUE_LIMITS | {"type", "enum", "pattern", "items", "properties"}
)
_NULL_TYPE = "null"
_EMPTY: Mapping[str, Any] = MappingProxyType({})
_MISSING: Any = object()
_ITEMS = " 'items'"
_ONLY_TEXT = {str}


# Choices as a reading keeps them: their values, their titles, and the characters of text
# they hold (see ``_Choices``).
_ReadChoices: TypeAlias = tuple[tuple[Scalar, ...], tuple[str, ...], int]


class _Reading:
    """One reading of a schema: the schema (for its ``$defs``), how many more choices the
    form may offer, and the choices already read, by the list they came from, so that a
    ``$defs`` entry used many times is read once (each use still counts)."""

    __slots__ = ("room", "root", "shared")
    root: Mapping[str, Any]
    room: int
    shared: dict[tuple[object, ...], tuple[object, object, _ReadChoices]]
    # (written by read_form, which alone makes one: no __init__ to call for each form)


def _too_many_choices() -> FormError:
    return FormError(
        f"the schema offers more than {MAX_FORM_CHOICES:,} choices in all (a '$ref' counts "
        f"each time it is used); at most {MAX_FORM_CHOICES:,} are read"
    )


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
    [`FormError`][toolnexus.errors.FormError] (a ``ValueError``), in time linear in the size
    of the schema, and what it gives is bounded: at most [`MAX_FIELDS`][toolnexus.forms.MAX_FIELDS]
    fields, [`MAX_FORM_CHOICES`][toolnexus.forms.MAX_FORM_CHOICES] choices and
    [`MAX_TEXT`][toolnexus.forms.MAX_TEXT] characters of text, however many ``$ref``s share
    a definition. See the module's description for what is read and what is refused.
    """
    if schema.__class__ is not dict and not isinstance(schema, Mapping):
        raise FormError(f"the schema must be a JSON object, not {json_type(schema)}")
    if not _TOP_REFUSED.isdisjoint(schema):
        _refuse(schema, _TOP_REFUSED, "the schema")
    kind = schema.get("type", "object")
    if kind != "object":
        raise FormError(f"the schema's 'type' must be \"object\", not {json_type(kind, show=True)}")
    properties = schema.get("properties", _EMPTY)
    if properties.__class__ is not dict and not isinstance(properties, Mapping):
        raise FormError(f"the schema's 'properties' must be an object, not {json_type(properties)}")
    if len(properties) > MAX_FIELDS:
        raise FormError(f"the schema has {len(properties)} properties; at most {MAX_FIELDS} are read")
    required = schema.get("required")
    if required is None and "required" not in schema:
        names: frozenset[str] = frozenset()
    elif required.__class__ is list and len(required) <= MAX_FIELDS:
        for one in required:
            if one.__class__ is not str or one not in properties:
                names = _required(required, properties)
                break
        else:
            names = frozenset(required)  # the common case: names of properties
    else:
        names = _required(required, properties)
    extra = schema.get("additionalProperties")
    if not (extra is None or extra is True or extra is False or isinstance(extra, Mapping)):
        raise FormError(
            f"the schema's 'additionalProperties' must be a boolean or a schema, not {json_type(extra)}"
        )
    title = schema.get("title")
    if title is not None and title.__class__ is not str:
        title = _text_of(schema, "title", "the schema")
    description = schema.get("description")
    if description is not None and description.__class__ is not str:
        description = _text_of(schema, "description", "the schema")
    text = (len(title) if title else 0) + (len(description) if description else 0)
    reading = _Reading()
    reading.root = schema
    reading.room = MAX_FORM_CHOICES
    reading.shared = {}
    fields = []
    by_name: dict[str, Field] = {}
    for name, prop in properties.items():
        if name.__class__ is not str and not isinstance(name, str):
            raise FormError(f"the schema's 'properties' has a key that is {json_type(name)}, not a name")
        # (_read_field counts the choices the field offers against reading.room)
        field, size = _read_field(name, prop, name in names, reading)
        fields.append(field)
        by_name[name] = field
        # What the field holds, counted as produced: a $ref's target once for each use.
        text += size
        if text > MAX_TEXT:
            raise FormError(
                f"the schema holds more than {MAX_TEXT:,} characters of text in all (a '$ref' counts "
                f"each time it is used); at most {MAX_TEXT:,} are read"
            )
    return made_form(tuple(fields), title, description, by_name)


def _required(required: object, properties: Mapping[str, Any]) -> frozenset[str]:
    if not isinstance(required, list):
        raise FormError(f"the schema's 'required' must be an array, not {json_type(required)}")
    if len(required) > MAX_FIELDS:
        raise FormError(f"the schema's 'required' lists {len(required)} names; at most {MAX_FIELDS} are read")
    names = frozenset(required) if set(map(type, required)) <= _ONLY_TEXT else None
    if names is not None and properties.keys() >= names:
        return names  # the common case: names of properties
    for name in required:
        if not isinstance(name, str):
            raise FormError(f"the schema's 'required' holds {json_type(name)}, not a property name")
        if name not in properties:
            raise FormError(
                f"the schema's 'required' names {quote(name)}, which is not one of its properties"
            )
    return frozenset(required)


def _where(name: str, part: str = "") -> str:
    """Where a problem is, for a message: written only when there is one."""
    return f"property {quote(name)}{part}"


def _refuse(node: Mapping[str, Any], refused: frozenset[str], where: str) -> None:
    for key in node:
        if key in refused:
            raise FormError(f"{where}: the keyword {quote(str(key))} is outside the elicitation subset")


def _resolve(root: Mapping[str, Any], ref: object, where: str) -> Mapping[str, Any]:
    """The target of a local ``$ref`` into the schema's own ``$defs``/``definitions``."""
    if not isinstance(ref, str):
        raise FormError(f"{where}: '$ref' must be a string, not {json_type(ref)}")
    for section in ("$defs", "definitions"):
        prefix = f"#/{section}/"
        if ref.startswith(prefix):
            name = ref[len(prefix) :]
            if "/" in name:
                break
            name = name.replace("~1", "/").replace("~0", "~")
            defs = root.get(section)
            target = defs.get(name) if (defs.__class__ is dict or isinstance(defs, Mapping)) else None
            if target.__class__ is not dict and not isinstance(target, Mapping):
                raise FormError(f"{where}: '$ref' points to nothing in the schema's {section}")
            return target
    raise FormError(
        f"{where}: '$ref' may only point into the schema's own $defs or definitions; "
        "references elsewhere are never fetched"
    )


_SCALARS = (str, int, float, bool)


def _merge(
    outer: Mapping[str, Any], inner: Mapping[str, Any], drop: str, name: str, part: str = ""
) -> dict[str, Any]:
    """``inner`` with ``outer``'s keywords laid over it, ``outer[drop]`` left out. Both
    apply, so a condition set on both sides must be the same on both (a plain value: two
    lists or schemas are not compared, and not taken)."""
    merged = dict(inner)
    for key, value in outer.items():
        if key == drop:
            continue
        if key in _ASSERTED and key in merged:
            other = merged[key]
            if not (value.__class__ in _SCALARS and other.__class__ is value.__class__ and other == value):
                raise FormError(
                    f"{_where(name, part)}: {quote(str(key))} is set both beside {quote(drop)} and in what "
                    "it holds, differently; "
                    "only one of them is read"
                )
        merged[key] = value
    return merged


def _deref(node: Mapping[str, Any], name: str, root: Mapping[str, Any]) -> dict[str, Any]:
    """``node`` with its ``$ref`` followed once: the target, ``node``'s keywords laid over it."""
    target = _resolve(root, node["$ref"], _where(name))
    if "$ref" in target or "allOf" in target:
        raise FormError(f"{_where(name)}: a '$ref' that leads to another '$ref' is not followed")
    return _merge(node, target, "$ref", name)


def _unwrap(
    prop: Mapping[str, Any], name: str, root: Mapping[str, Any]
) -> tuple[Mapping[str, Any], bool, bool]:
    """The property with a ``$ref``, a one-branch ``allOf`` and a nullable union taken
    apart: the plain schema underneath, whether ``null`` is allowed, and whether a ``$ref``
    was followed. At most one ``$ref`` is followed, and the result is never unwrapped
    again: nothing recurses."""
    followed = "$ref" in prop
    node = _deref(prop, name, root) if followed else prop
    all_of = node.get("allOf")
    if all_of is not None:
        if not (
            isinstance(all_of, list)
            and len(all_of) == 1
            and (all_of[0].__class__ is dict or isinstance(all_of[0], Mapping))
        ):
            raise FormError(f"{_where(name)}: 'allOf' is read only as one schema wrapped in a list")
        branch = all_of[0]
        if "allOf" in branch:
            raise FormError(f"{_where(name)}: 'allOf' inside 'allOf' is not read")
        if "$ref" in branch:
            if followed:
                raise FormError(f"{_where(name)}: a '$ref' that leads to another '$ref' is not followed")
            branch, followed = _deref(branch, name, root), True
        node = _merge(node, branch, "allOf", name)
    nullable = False
    for union in ("anyOf", "oneOf"):
        branches = node.get(union)
        if branches.__class__ is not list or len(branches) != 2:
            continue
        first, second = branches
        if _is_null_schema(first):
            if _is_null_schema(second):
                continue
            other = second
        elif _is_null_schema(second):
            other = first
        else:
            continue
        if other.__class__ is not dict and not isinstance(other, Mapping):
            raise FormError(f"{_where(name)}: '{union}' holds {json_type(other)}, not a schema")
        if "$ref" in other:
            if followed:
                raise FormError(f"{_where(name)}: a '$ref' that leads to another '$ref' is not followed")
            other, followed = _deref(other, name, root), True
        for key in ("anyOf", "oneOf", "allOf", "$ref"):
            if key in other and not (key in ("anyOf", "oneOf") and _is_const_list(other[key])):
                raise FormError(f"{_where(name)}: '{union}' with null is read only around a plain schema")
        node = _merge(node, other, union, name)
        nullable = True
        break
    kind = node.get("type")
    if isinstance(kind, list):
        types = [t for t in kind if t != _NULL_TYPE]
        if len(types) == 1 and len(kind) == 2:
            node = {**node, "type": types[0]}
            nullable = True
        elif kind == [_NULL_TYPE]:
            raise FormError(f"{_where(name)}: a field that can only be null asks for nothing")
        else:
            raise FormError(
                f"{_where(name)}: 'type' lists several types; only one, or one and \"null\", is read"
            )
    return node, nullable, followed


# Keywords that could narrow the null branch of a nullable union; a branch with one is not
# read as "or null".
_NULL_REFUSED = _FIELD_REFUSED | _WRAPPERS | {"enum", "const"}
# Items with none of these are read without refusing anything.
_ITEMS_SKIP = _FIELD_REFUSED | {"allOf"}
# A field with none of these is read without taking anything apart, refusing or choosing.
_PLAIN_SKIP = _FIELD_REFUSED | _WRAPPERS | _CHOICE_KEYS | {"properties"}


def _is_null_schema(node: object) -> bool:
    return (
        (node.__class__ is dict or isinstance(node, Mapping))
        and node.get("type") == _NULL_TYPE
        and _NULL_REFUSED.isdisjoint(node)
    )


def _null_union_possible(node: Mapping[str, Any]) -> bool:
    """Whether ``node``'s ``anyOf`` or ``oneOf`` may be a nullable union: not when each
    holds two objects with a ``const`` (a choice is never the null branch), as a
    single-select of two choices does."""
    for union in ("anyOf", "oneOf"):
        branches = node.get(union)
        if branches.__class__ is list and len(branches) == 2:
            first, second = branches
            if not (first.__class__ is dict and "const" in first):
                return True
            if not (second.__class__ is dict and "const" in second):
                return True
    return False


def _is_const_list(branches: object) -> bool:
    return isinstance(branches, list) and all(
        (b.__class__ is dict or isinstance(b, Mapping)) and "const" in b for b in branches
    )


# A single-select with none of these, whose ``oneOf`` ``_read_titled`` reads, is read
# without taking anything apart or refusing anything (what the long way would do with it).
_TITLED_SKIP = _FIELD_REFUSED | {"$ref", "allOf", "anyOf", "enum", "const", "properties"}


def _read_field(name: str, prop: object, required: bool, reading: _Reading) -> tuple[Field, int]:
    """The field ``name``, and the characters of text it holds (see ``MAX_TEXT``)."""
    if prop.__class__ is not dict and not isinstance(prop, Mapping):
        raise FormError(f"{_where(name)} must be a schema object, not {json_type(prop)}")
    kind: Any = prop.get("type")
    nullable = shared = False
    read: _ReadChoices | None = None
    if kind.__class__ is str and _PLAIN_SKIP.isdisjoint(prop):
        # The common case, in one look: nothing to take apart, to refuse or to choose from.
        node = prop
        choosing = False
        if kind == "object":
            raise FormError(f"{_where(name)}: a nested object ('properties') is not a field of a form")
    elif (
        "oneOf" in prop
        and _TITLED_SKIP.isdisjoint(prop)
        and reading.room >= MAX_CHOICES
        and (read := _read_titled(prop, "oneOf")) is not None
    ):
        # The common single-select, its choices read in one pass: nothing to take apart
        # (a choice is never the null branch of a union) or to refuse.
        node = prop
        choosing = True
    else:
        if isinstance(kind, list) or "$ref" in prop or "allOf" in prop or _null_union_possible(prop):
            node, nullable, shared = _unwrap(prop, name, reading.root)
            kind = node.get("type")
        else:
            node = prop  # nothing to take apart
        if not _FIELD_REFUSED.isdisjoint(node):
            _refuse(node, _FIELD_REFUSED, _where(name))
        if "properties" in node or kind == "object":
            raise FormError(f"{_where(name)}: a nested object ('properties') is not a field of a form")
        choosing = not _CHOICE_KEYS.isdisjoint(node)
    size = len(name)
    title = node.get("title")
    if title is not None:
        if title.__class__ is not str and not isinstance(title, str):
            raise FormError(f"{_where(name)}: 'title' must be a string, not {json_type(title)}")
        size += len(title)
    description = node.get("description")
    if description is not None:
        if description.__class__ is not str and not isinstance(description, str):
            raise FormError(f"{_where(name)}: 'description' must be a string, not {json_type(description)}")
        size += len(description)
    # The field's attributes, as Field's constructor takes them, those that are not the
    # defaults: made by made_field once they are read.
    given: dict[str, Any] = {"name": name}
    if required:
        given["required"] = True
    if title is not None:
        given["title"] = title
    if description is not None:
        given["description"] = description
    if nullable:
        given["nullable"] = True
    if kind == "string" and not choosing:
        given["type"] = "string"
        pattern = node.get("pattern")
        if pattern is not None:
            if pattern.__class__ is not str and not isinstance(pattern, str):
                raise FormError(f"{_where(name)}: 'pattern' must be a string, not {json_type(pattern)}")
            size += len(pattern)
            given["pattern"] = pattern
        fmt = node.get("format")
        if fmt is not None and fmt.__class__ is str and fmt in FORMATS:
            given["format"] = fmt  # another format is an annotation
        if "minLength" in node:
            _put_count(given, node, "minLength", "min_length", name)
        if "maxLength" in node:
            _put_count(given, node, "maxLength", "max_length", name)
        if "default" in node:
            default = _default(node, name, "string", nullable, given)
            if default is not None:
                size += len(default)
        return made_field(given), size
    if kind == "array":
        if choosing:
            raise FormError(
                f"{_where(name)}: an array's own 'enum', 'const', 'oneOf' or 'anyOf' is not read; "
                "its choices go in 'items'"
            )
        given["type"] = "choices"
        count, read_size, (choice_values, titles) = _read_multi(node, name, reading, shared, given)
        if "default" in node:
            default = _default(node, name, "choices", nullable, given)
            if default is not None:
                read_size += sum(map(len, default))
                count += len(default)
        reading.room -= count
        if reading.room < 0:
            raise _too_many_choices()
        return made_field(given, choice_values, titles), size + read_size
    if choosing:
        if kind is not None and kind not in ("string", "number", "integer", "boolean"):
            raise FormError(f"{_where(name)}: 'type' {json_type(kind, show=True)} does not fit a choice")
        given["type"] = "choice"
        if read is None:
            if not shared and reading.room >= MAX_CHOICES:  # room for any list: as _read_choices does
                read = _read_choices_anew(node, name, "", False)
            else:
                read = _read_choices(node, name, "", reading, shared, False)
        pattern = node.get("pattern")
        if pattern is not None:
            if pattern.__class__ is not str and not isinstance(pattern, str):
                raise FormError(f"{_where(name)}: 'pattern' must be a string, not {json_type(pattern)}")
            size += len(pattern)
            given["pattern"] = pattern
        choice_values, titles, read_size = read
        if "default" in node:
            default = _default(node, name, "choice", nullable, given)
            if default.__class__ is str:
                size += len(default)
        reading.room -= len(choice_values)
        if reading.room < 0:
            raise _too_many_choices()
        return made_field(given, choice_values, titles), size + read_size
    if kind == "number" or kind == "integer":
        given["type"] = kind
        low, high = node.get("minimum"), node.get("maximum")
        if not (  # the common case, whole-number bounds, taken as they are
            (low is None or (low.__class__ is int and -FLOAT_MAX <= low <= FLOAT_MAX))
            and (high is None or (high.__class__ is int and -FLOAT_MAX <= high <= FLOAT_MAX))
            and "exclusiveMinimum" not in node
            and "exclusiveMaximum" not in node
        ):
            low, high, exclusive_low, exclusive_high = _read_bounds(node, name)
            if exclusive_low:
                given["exclusive_minimum"] = True
            if exclusive_high:
                given["exclusive_maximum"] = True
        if low is not None:
            given["minimum"] = low
        if high is not None:
            given["maximum"] = high
        if "default" in node:
            _default(node, name, kind, nullable, given)
        return made_field(given), size
    if kind == "boolean":
        given["type"] = "boolean"
        if "default" in node:
            _default(node, name, "boolean", nullable, given)
        return made_field(given), size
    if kind is None:
        raise FormError(f"{_where(name)} has no 'type' and no choices: it does not say what it asks for")
    raise FormError(f"{_where(name)}: 'type' {json_type(kind, show=True)} is not a field of a form")


def _read_bounds(
    node: Mapping[str, Any], name: str, part: str = ""
) -> tuple[int | float | None, int | float | None, bool, bool]:
    """A number's bounds: ``minimum``/``maximum`` and either form of ``exclusive*``."""
    low, high = _bound(node, "minimum", name, part), _bound(node, "maximum", name, part)
    if "exclusiveMinimum" not in node and "exclusiveMaximum" not in node:
        return low, high, False, False
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
        bound = _bound(node, key, name, part)
        assert bound is not None
        if key == "exclusiveMinimum":
            if low is None or bound >= low:
                low, exclusive_low = bound, True
        elif high is None or bound <= high:
            high, exclusive_high = bound, True
    return low, high, exclusive_low and low is not None, exclusive_high and high is not None


def _read_multi(
    node: Mapping[str, Any], name: str, reading: _Reading, shared: bool, given: dict[str, Any]
) -> tuple[int, int, tuple[tuple[Scalar, ...], tuple[str, ...]]]:
    """A multi-select's ``pattern`` and counts, written into the field's attributes
    ``given``; the number of choices, the characters of text they and the pattern hold, and
    the choices' values and titles."""
    items = node.get("items")
    if items.__class__ is not dict and not isinstance(items, Mapping):
        raise FormError(f"{_where(name)}: an array's 'items' must be a schema object, not {json_type(items)}")
    if "$ref" in items:
        items = _merge(items, _resolve(reading.root, items["$ref"], _where(name)), "$ref", name, _ITEMS)
        shared = True
        if "$ref" in items:
            raise FormError(f"{_where(name)}: a '$ref' that leads to another '$ref' is not followed")
    if not _ITEMS_SKIP.isdisjoint(items):
        if not _FIELD_REFUSED.isdisjoint(items):
            _refuse(items, _FIELD_REFUSED, _where(name, _ITEMS))
        if "allOf" in items:
            raise FormError(f"{_where(name, _ITEMS)}: 'allOf' is not read in 'items'")
    if items.get("type", "string") != "string":
        raise FormError(f"{_where(name)}: a multi-select's 'items' must be strings")
    if _CHOICE_KEYS.isdisjoint(items):
        raise FormError(
            f"{_where(name)}: a list of free text is not in the subset; 'items' must offer choices"
        )
    if not shared and reading.room >= MAX_CHOICES:  # room for any list: as _read_choices does
        choice_values, titles, size = _read_choices_anew(items, name, _ITEMS, True)
    else:
        choice_values, titles, size = _read_choices(items, name, _ITEMS, reading, shared, True)
    pattern = items.get("pattern")
    if pattern is not None:
        if not isinstance(pattern, str):
            raise FormError(f"{_where(name, _ITEMS)}: 'pattern' must be a string, not {json_type(pattern)}")
        given["pattern"] = pattern
        size += len(pattern)
    unique = node.get("uniqueItems", False)
    if unique is not False:
        if unique is not True:
            raise FormError(f"{_where(name)}: 'uniqueItems' must be true or false, not {json_type(unique)}")
        given["unique_items"] = True
    if "minItems" in node:
        _put_count(given, node, "minItems", "min_items", name)
    if "maxItems" in node:
        _put_count(given, node, "maxItems", "max_items", name)
    return len(choice_values), size, (choice_values, titles)


def _read_choices(
    node: Mapping[str, Any], name: str, part: str, reading: _Reading, shared: bool, multi: bool
) -> _ReadChoices:
    """The choices of ``enum`` (with ``enumNames``), ``oneOf``/``anyOf`` of ``const`` or a
    lone ``const``, less those the node's own ``type``, lengths, ``format`` or bounds rule
    out; and the characters of text they hold (values and titles).

    A list of choices is read once per form: another use of the same list (the same
    ``$defs`` entry through another ``$ref``: ``shared``), read the same way, shares that
    reading. A list longer than what the form may still offer is refused before it is read."""
    if not shared and reading.room >= MAX_CHOICES:
        return _read_choices_anew(node, name, part, multi)  # the common case: room for any list
    listed = node.get("enum")
    if listed is None:
        listed = node.get("oneOf")
        if listed is None:
            listed = node.get("anyOf")
    if listed.__class__ is not list or len(listed) > MAX_CHOICES:
        return _read_choices_anew(node, name, part, multi)  # one choice, or an error
    if len(listed) > reading.room:
        raise _too_many_choices()
    kind = node.get("type")
    if (
        not shared
        or ("enum" in node) + ("oneOf" in node) + ("anyOf" in node) + ("const" in node) != 1
        or not (kind is None or kind.__class__ is str)
        or not _VALUE_LIMITS.isdisjoint(node)
    ):
        return _read_choices_anew(node, name, part, multi)
    names = node.get("enumNames")
    key = (id(listed), id(names), kind, multi)
    found = reading.shared.get(key)
    if found is not None and found[0] is listed and found[1] is names:
        return found[2]
    read = _read_choices_anew(node, name, part, multi)
    reading.shared[key] = (listed, names, read)  # the lists kept: their ids stay theirs
    return read


def _read_choices_anew(node: Mapping[str, Any], name: str, part: str, multi: bool) -> _ReadChoices:
    if "enum" in node and "oneOf" not in node and "anyOf" not in node and "const" not in node:
        key = "enum"
        values = node["enum"]
        if (
            values.__class__ is list
            and 0 < len(values) <= MAX_CHOICES
            and node.get("type", "string") == "string"
            and "enumNames" not in node
            and _VALUE_LIMITS.isdisjoint(node)
        ):
            for value in values:  # (a loop: quicker than a set of their types, short or long)
                if value.__class__ is not str:
                    break  # a number, null, a str of a subclass...: read the long way
            else:
                if len(set(values)) == len(values):
                    # The common case, a plain list of distinct strings: each is its own title.
                    listed = tuple(values)
                    return listed, listed, 2 * sum(map(len, values))
    elif "oneOf" in node and "enum" not in node and "anyOf" not in node and "const" not in node:
        key = "oneOf"
        read = _read_titled(node, "oneOf")
        if read is not None:
            return read
    else:
        given = [key for key in ("enum", "oneOf", "anyOf", "const") if key in node]
        if not given:
            raise FormError(f"{_where(name, part)}: 'enumNames' without 'enum'")
        if len(given) > 1:
            raise FormError(
                f"{_where(name, part)}: {' and '.join(repr(k) for k in given)} together are not read"
            )
        key = given[0]
    if key == "const":
        entries: list[tuple[object, object]] = [(node["const"], None)]
    elif key == "enum":
        entries = _enum_entries(node, name, part)
    else:
        branches = node[key]
        if not isinstance(branches, list):
            raise FormError(f"{_where(name, part)}: '{key}' must be an array, not {json_type(branches)}")
        if len(branches) > MAX_CHOICES:
            raise FormError(
                f"{_where(name, part)}: '{key}' offers {len(branches)} choices; "
                f"at most {MAX_CHOICES} are read"
            )
        entries = []
        for branch in branches:
            if (branch.__class__ is not dict and not isinstance(branch, Mapping)) or "const" not in branch:
                raise FormError(
                    f"{_where(name, part)}: '{key}' is read only as a list of {{const, title}} choices"
                )
            if not _BRANCH_REFUSED.isdisjoint(branch):
                _refuse_in_branch(branch, key, _where(name, part))
            title = branch.get("title")
            if title is not None and not isinstance(title, str):
                raise FormError(
                    f"{_where(name, part)}: a choice's 'title' must be a string, not {json_type(title)}"
                )
            entries.append((branch["const"], title))
    if not entries:
        raise FormError(f"{_where(name, part)}: '{key}' offers no choice")
    kind = node.get("type")
    limits = None if _VALUE_LIMITS.isdisjoint(node) else _limits(node, name, part)
    choices: list[Scalar] = []
    titles: list[str] = []
    seen: set[object] = set()
    size = 0
    for value, title in entries:
        if isinstance(value, str):
            if value in seen:
                raise FormError(f"{_where(name, part)}: '{key}' offers the same choice twice")
            seen.add(value)
            if kind is not None and not of_type(kind, value):
                continue  # of another type than the field's: never a valid answer
            if limits is None or within_limits(limits, value):
                text = value if value.__class__ is str else str(value)
                choices.append(value)
                if isinstance(title, str):
                    size += len(title) + len(text)
                    titles.append(title)
                else:
                    size += len(text) + len(text)
                    titles.append(text)
            continue
        if multi:
            raise FormError(
                f"{_where(name, part)}: a multi-select's choices must be strings, not {json_type(value)}"
            )
        scalar_key = choice_key(value)
        if scalar_key is None:
            raise FormError(
                f"{_where(name, part)}: a choice must be a string, a number or a boolean, "
                f"not {json_type(value)}"
            )
        if scalar_key in seen:
            raise FormError(f"{_where(name, part)}: '{key}' offers the same choice twice")
        seen.add(scalar_key)
        if kind is not None and not of_type(kind, value):
            continue  # of another type than the field's: never a valid answer
        if limits is None or within_limits(limits, value):
            text = title if isinstance(title, str) else value_text(value)
            size += len(text)
            choices.append(value)  # type: ignore[arg-type]
            titles.append(text)
    if not choices:
        raise FormError(f"{_where(name, part)}: '{key}' offers no choice that its own constraints allow")
    return tuple(choices), tuple(titles), size


def _read_titled(node: Mapping[str, Any], key: str) -> _ReadChoices | None:
    """The common case of ``oneOf``/``anyOf`` choices, read the way ``_read_choices_anew``
    reads them: distinct strings, each in an object of ``const`` and a string ``title`` (or
    none), on a field of no ``type`` or ``"string"`` and no limit on its values. ``None``
    when they are not that: then they are read, or refused, the long way."""
    branches = node[key]
    if branches.__class__ is not list or not 0 < len(branches) <= MAX_CHOICES:
        return None
    kind = node.get("type")
    if not (kind is None or kind == "string") or not _VALUE_LIMITS.isdisjoint(node):
        return None
    choices: list[str] = []
    titles: list[str] = []
    size = 0
    for branch in branches:
        if branch.__class__ is not dict or not _BRANCH_REFUSED.isdisjoint(branch):
            return None
        value = branch.get("const", _MISSING)
        title = branch.get("title")
        if value.__class__ is not str:
            return None
        if title is None:
            title = value
        elif title.__class__ is not str:
            return None
        size += len(title) + len(value)
        choices.append(value)
        titles.append(title)
    if len(set(choices)) != len(choices):
        return None  # the same choice twice: refused the long way
    return tuple(choices), tuple(titles), size


def _refuse_in_branch(branch: Mapping[str, Any], key: str, where: str) -> None:
    for word in branch:
        if word in _BRANCH_REFUSED and not (word == "type" and of_type(branch["type"], branch["const"])):
            raise FormError(
                f"{where}: a choice of '{key}' holds {quote(str(word))}; a choice is read only as "
                "{const, title}"
            )


def _limits(node: Mapping[str, Any], name: str, part: str) -> Field:
    """What a select's choice must fit, as a field of those limits: a string's lengths and
    ``format`` or a number's bounds (given beside the choices, they apply to the value
    chosen). ``within_limits`` checks a choice by the rules of a field's answer."""
    min_length, max_length = _count(node, "minLength", name, part), _count(node, "maxLength", name, part)
    fmt = node.get("format")
    low, high, exclusive_low, exclusive_high = _read_bounds(node, name, part)
    return Field(
        name,
        "string",
        min_length=min_length,
        max_length=max_length,
        format=fmt if isinstance(fmt, str) and fmt in FORMATS else None,
        minimum=low,
        maximum=high,
        exclusive_minimum=exclusive_low,
        exclusive_maximum=exclusive_high,
    )


def _enum_entries(node: Mapping[str, Any], name: str, part: str) -> list[tuple[object, object]]:
    values = node["enum"]
    if not isinstance(values, list):
        raise FormError(f"{_where(name, part)}: 'enum' must be an array, not {json_type(values)}")
    if len(values) > MAX_CHOICES:
        raise FormError(
            f"{_where(name, part)}: 'enum' offers {len(values)} choices; at most {MAX_CHOICES} are read"
        )
    names = node.get("enumNames")
    if names is None:
        return [(value, None) for value in values if value is not None]
    if isinstance(names, list) and len(names) == len(values) and all(isinstance(n, str) for n in names):
        return [(value, title) for value, title in zip(values, names, strict=True) if value is not None]
    raise FormError(
        f"{_where(name, part)}: 'enumNames' must be an array of strings, one for each 'enum' value"
    )


def _default(
    node: Mapping[str, Any], name: str, kind: FieldType, nullable: bool, given: dict[str, Any]
) -> Any:
    """The schema's ``default``, checked to be of the field's JSON type, written into the
    field's attributes ``given`` with ``has_default``; ``None`` when it is ``null``."""
    default = node["default"]
    if default is None:
        if nullable:  # (on a field that is not nullable, "= None" in a model: no default)
            given["has_default"] = True
        return None
    if not _default_fits(kind, default):
        raise FormError(f"{_where(name)}: 'default' must be {TYPE_WORDS[kind]}, not {json_type(default)}")
    if kind == "choices":
        default = list(default)
    given["default"] = default
    given["has_default"] = True
    return default


def _default_fits(kind: FieldType, value: object) -> bool:
    """Whether ``value`` is of the JSON type a default of a ``kind`` field must have."""
    if kind == "choice":
        return choice_key(value) is not None
    if kind == "choices":
        return (
            isinstance(value, list) and len(value) <= MAX_CHOICES and all(isinstance(i, str) for i in value)
        )
    return of_type(kind, value)


def _text_of(node: Mapping[str, Any], key: str, where: str) -> str | None:
    value = node.get(key)
    if value is None or isinstance(value, str):
        return value
    raise FormError(f"{where}: '{key}' must be a string, not {json_type(value)}")


def _put_count(given: dict[str, Any], node: Mapping[str, Any], key: str, attribute: str, name: str) -> None:
    """A field's ``minLength``, ``maxLength``, ``minItems`` or ``maxItems``, read with
    ``_count`` and written among its attributes when it is set (not ``null``)."""
    count = node.get(key)
    if not (count.__class__ is int and 0 <= count <= MAX_COUNT):  # (the common case, taken as it is)
        count = _count(node, key, name)
    if count is not None:
        given[attribute] = count


def _count(node: Mapping[str, Any], key: str, name: str, part: str = "") -> int | None:
    value = node.get(key)
    if value is None:
        return None
    if value.__class__ is int and 0 <= value <= MAX_COUNT:
        return value
    if isinstance(value, float) and value.is_integer() and 0 <= value <= MAX_COUNT:
        return int(value)
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_COUNT:
        return int(value)
    raise FormError(f"{_where(name, part)}: '{key}' must be a whole number from 0 to {MAX_COUNT}")


def _bound(node: Mapping[str, Any], key: str, name: str, part: str = "") -> int | float | None:
    value = node.get(key)
    if value is None:
        return None
    if value.__class__ is int and -FLOAT_MAX <= value <= FLOAT_MAX:
        return value  # the common case
    if number_problem(value, integer=False) is not None:
        raise FormError(f"{_where(name, part)}: '{key}' must be a finite number a 64-bit float can hold")
    return value  # type: ignore[no-any-return]
