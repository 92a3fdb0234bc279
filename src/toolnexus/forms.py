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

What is refused, with a [`FormError`][toolnexus.errors.FormError] naming the property and
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

import datetime as _dt
import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, ClassVar, Literal, TypeAlias

from ._sensitive import looks_secret
from ._util import escape_text
from .errors import FormError

__all__ = [
    "FORMATS",
    "MAX_CHOICES",
    "MAX_COUNT",
    "MAX_FIELDS",
    "MAX_FORM_CHOICES",
    "MAX_TEXT",
    "Choice",
    "Field",
    "FieldType",
    "Form",
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


@dataclass(frozen=True, init=False)
class Choice:
    """One choice of a single- or multi-select."""

    value: Scalar
    """What is sent when it is chosen (a string in the spec's subset)."""
    title: str
    """What the user is shown: the schema's ``title`` or ``enumNames`` entry, or the value
    itself written as text when the schema gives none."""

    def __init__(self, value: Scalar, title: str) -> None:
        # The one way a Choice is made; frozen, its attributes written here once.
        values = self.__dict__
        values["value"] = value
        values["title"] = title


class _ChoiceValues:
    """What ``Field._values`` is on the class: the values of the field's ``choices``, made
    from them for a field that its constructor made ([`read_form`][toolnexus.forms.read_form]
    writes them), and kept beside the attributes as the choice index is."""

    __slots__ = ()

    def __get__(self, field: Field, owner: object = None) -> tuple[Scalar, ...]:
        values = tuple(choice.value for choice in field.choices)
        field.__dict__["_values"] = values
        return values


@dataclass(frozen=True, init=False)
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
    """The choices of a ``"choice"`` or ``"choices"`` field, in the schema's order. A value
    the schema's own constraints rule out (a ``type``, ``minLength``, ``format``, ``maximum``
    ... beside the choices that it does not fit) is not offered."""
    min_length: int | None = None
    """``minLength`` of a string, in characters (code points)."""
    max_length: int | None = None
    """``maxLength`` of a string."""
    format: str | None = None
    """``format`` of a string, one of [`FORMATS`][toolnexus.forms.FORMATS]; another
    format (``uuid``, ...) is an annotation and is not kept."""
    pattern: str | None = None
    """``pattern`` of a string, or of a select's choices (of ``items`` for a multi-select),
    as text, for a UI to show. Never compiled or checked here: it is the server's regular
    expression, and the server checks it on receipt."""
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
    _values = _ChoiceValues()  # (not annotated: not a dataclass field)

    def __init__(
        self,
        name: str,
        type: FieldType,
        required: bool = False,
        title: str | None = None,
        description: str | None = None,
        default: Any = None,
        has_default: bool = False,
        nullable: bool = False,
        choices: tuple[Choice, ...] = (),
        min_length: int | None = None,
        max_length: int | None = None,
        format: str | None = None,
        pattern: str | None = None,
        minimum: int | float | None = None,
        maximum: int | float | None = None,
        exclusive_minimum: bool = False,
        exclusive_maximum: bool = False,
        min_items: int | None = None,
        max_items: int | None = None,
        unique_items: bool = False,
    ) -> None:
        # The one way a Field is made. It is frozen: its attributes are written here, once,
        # and only those that differ from the class's defaults (a form has many fields and
        # each sets few of its twenty attributes; reading them is the same either way).
        values = self.__dict__
        values["name"] = name
        values["type"] = type
        if required is not False:
            values["required"] = required
        if title is not None:
            values["title"] = title
        if description is not None:
            values["description"] = description
        if default is not None:
            values["default"] = default
        if has_default is not False:
            values["has_default"] = has_default
        if nullable is not False:
            values["nullable"] = nullable
        if choices != ():
            values["choices"] = choices
        if min_length is not None:
            values["min_length"] = min_length
        if max_length is not None:
            values["max_length"] = max_length
        if format is not None:
            values["format"] = format
        if pattern is not None:
            values["pattern"] = pattern
        if minimum is not None:
            values["minimum"] = minimum
        if maximum is not None:
            values["maximum"] = maximum
        if exclusive_minimum is not False:
            values["exclusive_minimum"] = exclusive_minimum
        if exclusive_maximum is not False:
            values["exclusive_maximum"] = exclusive_maximum
        if min_items is not None:
            values["min_items"] = min_items
        if max_items is not None:
            values["max_items"] = max_items
        if unique_items is not False:
            values["unique_items"] = unique_items

    def _index(self) -> dict[tuple[str, Scalar] | None, Choice]:
        """The choices by value, so that checking an answer is linear, however many there
        are: made when the first answer is checked (reading a form does not need it), and
        kept beside the attributes (it is not one: it only repeats ``choices``)."""
        keys: dict[tuple[str, Scalar] | None, Choice] | None = self.__dict__.get("_keys")
        if keys is None:
            keys = {}
            for choice in self.choices:
                value = choice.value
                keys[("s", value) if value.__class__ is str else _choice_key(value)] = choice
            self.__dict__["_keys"] = keys
        return keys

    @property
    def label(self) -> str:
        """The title, or the name when there is none."""
        return self.title if self.title else self.name

    def choice(self, value: object) -> Choice | None:
        """The choice whose value is ``value`` (``"1"`` is not ``1``, ``True`` is not ``1``),
        or ``None``."""
        key = _choice_key(value)
        return None if key is None else self._index().get(key)

    def problems(self, value: object) -> list[str]:
        """What is wrong with ``value`` as this field's answer; ``[]`` when it fits.

        Each problem names the field and never repeats the value. ``None`` fits only a
        nullable field. Whether a required field was answered at all is the form's
        question: see [`Form.problems`][toolnexus.forms.Form.problems].
        """
        if self._fits(value):
            return []
        return list(self._problems(value))

    def _fits(self, value: object) -> bool:
        """Whether ``value`` fits: the quick answer to ``not self.problems(value)``, with no
        message written. ``_problems`` gives the same verdict, with the reasons."""
        kind = self.type
        if value is None:
            return self.nullable
        if kind == "string":
            if value.__class__ is not str and not isinstance(value, str):
                return False
            shortest, longest = self.min_length, self.max_length
            if shortest is not None or longest is not None:
                length = len(value)
                if shortest is not None and length < shortest:
                    return False
                if longest is not None and length > longest:
                    return False
            fmt = self.format
            return fmt is None or _FORMAT_CHECKS[fmt](value)
        if kind == "choice":
            if value.__class__ is str:
                values = self._values
                if len(values) <= _SCAN:
                    return value in values  # (a number or a boolean never equals a str)
            key = _choice_key(value)
            return key is not None and key in self._index()
        if kind == "integer" or kind == "number":
            if not (value.__class__ is int and -_FLOAT_MAX <= value <= _FLOAT_MAX) and (
                _number_problem(value, integer=kind == "integer") is not None
            ):
                return False
            low, high = self.minimum, self.maximum
            if low is not None:
                if self.exclusive_minimum:
                    if not value > low:  # type: ignore[operator]
                        return False
                elif value < low:  # type: ignore[operator]
                    return False
            if high is not None:
                if self.exclusive_maximum:
                    if not value < high:  # type: ignore[operator]
                        return False
                elif value > high:  # type: ignore[operator]
                    return False
            return True
        if kind == "boolean":
            return isinstance(value, bool)
        # "choices"
        if not isinstance(value, list):
            return False
        if self.min_items is not None and len(value) < self.min_items:
            return False
        if self.max_items is not None and len(value) > self.max_items:
            return False
        values = self._values
        if len(values) <= _SCAN:
            for item in value:
                if item.__class__ is not str or item not in values:
                    return False
            return not self.unique_items or len(set(value)) == len(value)
        keys = self._index()
        if self.unique_items:
            seen: set[str] = set()
            for item in value:
                if item.__class__ is not str and not isinstance(item, str):
                    return False
                if ("s", item) not in keys or item in seen:
                    return False
                seen.add(item)
            return True
        for item in value:
            if item.__class__ is not str and not isinstance(item, str):
                return False
            if ("s", item) not in keys:
                return False
        return True

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
            if key is None or key not in self._index():
                yield f"{where} item {number} must be one of: {self._listing()}"
            elif key in seen:
                repeated = True
            else:
                seen.add(key)
        if repeated and self.unique_items:
            yield f"{where} must not repeat an item"

    def _listing(self, limit: int = 12) -> str:
        shown = [escape_text(_text(c.value)[:60])[:60] for c in self.choices[:limit]]
        more = len(self.choices) - limit
        return ", ".join(shown) + (f" (and {more} more)" if more > 0 else "")


class _Choices:
    """What ``Field.choices`` is on the class, under the dataclass's default ``()``.

    [`read_form`][toolnexus.forms.read_form] keeps a field's choices as two tuples, their
    values and their titles (``_values`` and ``_titles`` among its attributes): checking an
    answer needs only the values, and a ``Choice`` costs more to make than the reading of
    it. The ``Choice``s are made from them the first time ``choices`` is asked for (by a
    user, or by the field's ``==``, ``hash`` and ``repr``) and kept as the attribute then,
    which is what the constructor writes at once: the same values either way, never
    changed once seen. A field made by its constructor has no ``_titles``: its ``choices``
    is its own, or this default."""

    __slots__ = ()

    def __get__(self, field: Field | None, owner: object = None) -> tuple[Choice, ...]:
        if field is None:
            return ()
        values = field.__dict__
        titles = values.get("_titles")
        if titles is None:
            return ()
        choices = tuple(map(Choice, values["_values"], titles))
        values["choices"] = choices
        return choices


# Set on the class once the dataclass is made, so that its default (dataclasses.fields,
# Field.choices) stays the empty tuple. A non-data descriptor: once written, the attribute
# is read from the instance.
setattr(Field, "choices", _Choices())  # noqa: B010 (mypy would refuse the assignment)


@dataclass(frozen=True, init=False)
class Form:
    """A form: its fields in the schema's order, read by [`read_form`][toolnexus.forms.read_form]."""

    fields: tuple[Field, ...] = ()
    """The fields, in the order of the schema's ``properties``."""
    title: str | None = None
    """The schema's own ``title``."""
    description: str | None = None
    """The schema's own ``description``."""
    _by_name: ClassVar[Mapping[str, Field]] = MappingProxyType({})

    def __init__(
        self, fields: tuple[Field, ...] = (), title: str | None = None, description: str | None = None
    ) -> None:
        # The one way a Form is made; frozen, its attributes written here once.
        by_name: dict[str, Field] = {}
        for field in fields:  # (a loop: zip(strict=...) takes the slow way of a keyword)
            by_name[field.name] = field
        if len(by_name) != len(fields):
            raise FormError("Form: two fields have the same name")
        values = self.__dict__
        values["fields"] = fields
        values["title"] = title
        values["description"] = description
        values["_by_name"] = by_name

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
        if content.__class__ is not dict and not isinstance(content, Mapping):
            raise TypeError(f"Form.problems: content must be a mapping, not {type(content).__name__}")
        by_name = self._by_name
        problems: list[str] = []
        if not by_name.keys() >= content.keys():
            problems.extend(
                f"{_quote(str(key))} is not a field of the requested schema"
                for key in content
                if not isinstance(key, str) or key not in by_name
            )
        for f in self.fields:
            value = content.get(f.name, _MISSING)
            if value is _MISSING:
                if f.required:
                    problems.append(f"{_quote(f.name)} is required")
            elif not f._fits(value):
                problems.extend(f._problems(value))
        return problems

    def with_defaults(self, content: Mapping[str, Any]) -> dict[str, Any]:
        """``content`` with the schema's default filled in for every field it leaves out,
        as the spec's SEP-1034 has a client do when the user accepts a form.

        A default that does not fit its own field (of the wrong type, out of range) is not
        filled in: it would turn an answer that fits into one that does not. The result is
        a new ``dict``; ``content`` is not changed.

        Raises ``TypeError`` when ``content`` is not a mapping.
        """
        if content.__class__ is not dict and not isinstance(content, Mapping):
            raise TypeError(f"Form.with_defaults: content must be a mapping, not {type(content).__name__}")
        filled = dict(content)
        for f in self.fields:
            if f.has_default and f.name not in filled and f._fits(f.default):
                default = f.default
                filled[f.name] = list(default) if default.__class__ is list else default  # not shared
        return filled


_MISSING: Any = object()
_SCAN = 8  # up to this many choices, a look through them beats making an index


# How read_form makes a Field or a Form without calling its constructor: the object, whose
# attributes it then writes as the constructor would (only those of a Field that are not
# its defaults). A constructor call, with its twenty comparisons for a Field, costs about
# as much as reading the field. It is the one other way they are made; Choices are made by
# their constructor only (see _Choices).
_new = object.__new__


# --- reading ------------------------------------------------------------------------------

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
_TYPE_WORDS: dict[str, str] = {
    "string": "a string",
    "number": "a number",
    "integer": "an integer",
    "boolean": "true or false",
    "choice": "one of the choices",
    "choices": "a list of choices",
}
_FLOAT_MAX = 1.7976931348623157e308
_EMPTY: Mapping[str, Any] = MappingProxyType({})
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
        raise FormError(f"the schema must be a JSON object, not {_json_type(schema)}")
    if not _TOP_REFUSED.isdisjoint(schema):
        _refuse(schema, _TOP_REFUSED, "the schema")
    kind = schema.get("type", "object")
    if kind != "object":
        raise FormError(f"the schema's 'type' must be \"object\", not {_json_type(kind, show=True)}")
    properties = schema.get("properties", _EMPTY)
    if properties.__class__ is not dict and not isinstance(properties, Mapping):
        raise FormError(f"the schema's 'properties' must be an object, not {_json_type(properties)}")
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
            f"the schema's 'additionalProperties' must be a boolean or a schema, not {_json_type(extra)}"
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
            raise FormError(f"the schema's 'properties' has a key that is {_json_type(name)}, not a name")
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
    if len(by_name) != len(fields):
        raise FormError("Form: two fields have the same name")
    # The form is made here rather than by Form(...) (see _new): the same attributes, with
    # the fields by name already made while they were read.
    form = _new(Form)
    values = form.__dict__
    values["fields"] = tuple(fields)
    values["title"] = title
    values["description"] = description
    values["_by_name"] = by_name
    return form


def _required(required: object, properties: Mapping[str, Any]) -> frozenset[str]:
    if not isinstance(required, list):
        raise FormError(f"the schema's 'required' must be an array, not {_json_type(required)}")
    if len(required) > MAX_FIELDS:
        raise FormError(f"the schema's 'required' lists {len(required)} names; at most {MAX_FIELDS} are read")
    names = frozenset(required) if set(map(type, required)) <= _ONLY_TEXT else None
    if names is not None and properties.keys() >= names:
        return names  # the common case: names of properties
    for name in required:
        if not isinstance(name, str):
            raise FormError(f"the schema's 'required' holds {_json_type(name)}, not a property name")
        if name not in properties:
            raise FormError(
                f"the schema's 'required' names {_quote(name)}, which is not one of its properties"
            )
    return frozenset(required)


def _where(name: str, part: str = "") -> str:
    """Where a problem is, for a message: written only when there is one."""
    return f"property {_quote(name)}{part}"


def _refuse(node: Mapping[str, Any], refused: frozenset[str], where: str) -> None:
    for key in node:
        if key in refused:
            raise FormError(f"{where}: the keyword {_quote(str(key))} is outside the elicitation subset")


def _resolve(root: Mapping[str, Any], ref: object, where: str) -> Mapping[str, Any]:
    """The target of a local ``$ref`` into the schema's own ``$defs``/``definitions``."""
    if not isinstance(ref, str):
        raise FormError(f"{where}: '$ref' must be a string, not {_json_type(ref)}")
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
                    f"{_where(name, part)}: {_quote(str(key))} is set both beside {_quote(drop)} and in what "
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
            raise FormError(f"{_where(name)}: '{union}' holds {_json_type(other)}, not a schema")
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
        raise FormError(f"{_where(name)} must be a schema object, not {_json_type(prop)}")
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
            raise FormError(f"{_where(name)}: 'title' must be a string, not {_json_type(title)}")
        size += len(title)
    description = node.get("description")
    if description is not None:
        if description.__class__ is not str and not isinstance(description, str):
            raise FormError(f"{_where(name)}: 'description' must be a string, not {_json_type(description)}")
        size += len(description)
    # The field is made here rather than by Field(...) (see _new): its attributes are
    # written below as its constructor writes them, only those that are not the defaults.
    field = _new(Field)
    values = field.__dict__
    values["name"] = name
    if required:
        values["required"] = True
    if title is not None:
        values["title"] = title
    if description is not None:
        values["description"] = description
    if nullable:
        values["nullable"] = True
    if kind == "string" and not choosing:
        values["type"] = "string"
        pattern = node.get("pattern")
        if pattern is not None:
            if pattern.__class__ is not str and not isinstance(pattern, str):
                raise FormError(f"{_where(name)}: 'pattern' must be a string, not {_json_type(pattern)}")
            size += len(pattern)
            values["pattern"] = pattern
        fmt = node.get("format")
        if fmt is not None and fmt.__class__ is str and fmt in FORMATS:
            values["format"] = fmt  # another format is an annotation
        if "minLength" in node:
            _put_count(values, node, "minLength", "min_length", name)
        if "maxLength" in node:
            _put_count(values, node, "maxLength", "max_length", name)
        if "default" in node:
            default = _default(node, name, "string", nullable, values)
            if default is not None:
                size += len(default)
        return field, size
    if kind == "array":
        if choosing:
            raise FormError(
                f"{_where(name)}: an array's own 'enum', 'const', 'oneOf' or 'anyOf' is not read; "
                "its choices go in 'items'"
            )
        values["type"] = "choices"
        count, read_size = _read_multi(node, name, reading, shared, values)
        if "default" in node:
            default = _default(node, name, "choices", nullable, values)
            if default is not None:
                read_size += sum(map(len, default))
                count += len(default)
        reading.room -= count
        if reading.room < 0:
            raise _too_many_choices()
        return field, size + read_size
    if choosing:
        if kind is not None and kind not in ("string", "number", "integer", "boolean"):
            raise FormError(f"{_where(name)}: 'type' {_json_type(kind, show=True)} does not fit a choice")
        values["type"] = "choice"
        if read is None:
            if not shared and reading.room >= MAX_CHOICES:  # room for any list: as _read_choices does
                read = _read_choices_anew(node, name, "", False)
            else:
                read = _read_choices(node, name, "", reading, shared, False)
        pattern = node.get("pattern")
        if pattern is not None:
            if pattern.__class__ is not str and not isinstance(pattern, str):
                raise FormError(f"{_where(name)}: 'pattern' must be a string, not {_json_type(pattern)}")
            size += len(pattern)
            values["pattern"] = pattern
        choice_values, values["_titles"], read_size = read
        values["_values"] = choice_values
        if "default" in node:
            default = _default(node, name, "choice", nullable, values)
            if default.__class__ is str:
                size += len(default)
        reading.room -= len(choice_values)
        if reading.room < 0:
            raise _too_many_choices()
        return field, size + read_size
    if kind == "number" or kind == "integer":
        values["type"] = kind
        low, high = node.get("minimum"), node.get("maximum")
        if not (  # the common case, whole-number bounds, taken as they are
            (low is None or (low.__class__ is int and -_FLOAT_MAX <= low <= _FLOAT_MAX))
            and (high is None or (high.__class__ is int and -_FLOAT_MAX <= high <= _FLOAT_MAX))
            and "exclusiveMinimum" not in node
            and "exclusiveMaximum" not in node
        ):
            low, high, exclusive_low, exclusive_high = _read_bounds(node, name)
            if exclusive_low:
                values["exclusive_minimum"] = True
            if exclusive_high:
                values["exclusive_maximum"] = True
        if low is not None:
            values["minimum"] = low
        if high is not None:
            values["maximum"] = high
        if "default" in node:
            _default(node, name, kind, nullable, values)
        return field, size
    if kind == "boolean":
        values["type"] = "boolean"
        if "default" in node:
            _default(node, name, "boolean", nullable, values)
        return field, size
    if kind is None:
        raise FormError(f"{_where(name)} has no 'type' and no choices: it does not say what it asks for")
    raise FormError(f"{_where(name)}: 'type' {_json_type(kind, show=True)} is not a field of a form")


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
    node: Mapping[str, Any], name: str, reading: _Reading, shared: bool, values: dict[str, Any]
) -> tuple[int, int]:
    """A multi-select's choices, ``pattern`` and counts, written into the field's attributes
    ``values``; the number of choices and the characters of text they and the pattern hold."""
    items = node.get("items")
    if items.__class__ is not dict and not isinstance(items, Mapping):
        raise FormError(
            f"{_where(name)}: an array's 'items' must be a schema object, not {_json_type(items)}"
        )
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
        choice_values, values["_titles"], size = _read_choices_anew(items, name, _ITEMS, True)
    else:
        choice_values, values["_titles"], size = _read_choices(items, name, _ITEMS, reading, shared, True)
    values["_values"] = choice_values
    pattern = items.get("pattern")
    if pattern is not None:
        if not isinstance(pattern, str):
            raise FormError(f"{_where(name, _ITEMS)}: 'pattern' must be a string, not {_json_type(pattern)}")
        values["pattern"] = pattern
        size += len(pattern)
    unique = node.get("uniqueItems", False)
    if unique is not False:
        if unique is not True:
            raise FormError(f"{_where(name)}: 'uniqueItems' must be true or false, not {_json_type(unique)}")
        values["unique_items"] = True
    if "minItems" in node:
        _put_count(values, node, "minItems", "min_items", name)
    if "maxItems" in node:
        _put_count(values, node, "maxItems", "max_items", name)
    return len(choice_values), size


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
            raise FormError(f"{_where(name, part)}: '{key}' must be an array, not {_json_type(branches)}")
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
                    f"{_where(name, part)}: a choice's 'title' must be a string, not {_json_type(title)}"
                )
            entries.append((branch["const"], title))
    if not entries:
        raise FormError(f"{_where(name, part)}: '{key}' offers no choice")
    kind = node.get("type")
    allowed = None if _VALUE_LIMITS.isdisjoint(node) else _value_check(node, name, part)
    choices: list[Scalar] = []
    titles: list[str] = []
    seen: set[object] = set()
    size = 0
    for value, title in entries:
        if isinstance(value, str):
            if value in seen:
                raise FormError(f"{_where(name, part)}: '{key}' offers the same choice twice")
            seen.add(value)
            if kind is not None and kind != "string":
                continue  # of another type than the field's: never a valid answer
            if allowed is None or allowed(value):
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
                f"{_where(name, part)}: a multi-select's choices must be strings, not {_json_type(value)}"
            )
        scalar_key = _choice_key(value)
        if scalar_key is None:
            raise FormError(
                f"{_where(name, part)}: a choice must be a string, a number or a boolean, "
                f"not {_json_type(value)}"
            )
        if scalar_key in seen:
            raise FormError(f"{_where(name, part)}: '{key}' offers the same choice twice")
        seen.add(scalar_key)
        if kind is not None and not _fits_type(kind, value):
            continue  # of another type than the field's: never a valid answer
        if allowed is None or allowed(value):
            text = title if isinstance(title, str) else _text(value)
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
        if word in _BRANCH_REFUSED and not (word == "type" and _fits_type(branch["type"], branch["const"])):
            raise FormError(
                f"{where}: a choice of '{key}' holds {_quote(str(word))}; a choice is read only as "
                "{const, title}"
            )


def _fits_type(kind: object, value: object) -> bool:
    """Whether ``value`` is of the JSON ``type`` ``kind`` (one of the field types)."""
    if kind == "string":
        return isinstance(value, str)
    if kind == "number" or kind == "integer":
        return _number_problem(value, integer=kind == "integer") is None
    if kind == "boolean":
        return isinstance(value, bool)
    return False


def _value_check(node: Mapping[str, Any], name: str, part: str) -> Any:
    """What a select's choice must fit: a string's lengths and ``format``
    or a number's bounds (given beside the choices, they apply to the value chosen)."""
    min_length, max_length = _count(node, "minLength", name, part), _count(node, "maxLength", name, part)
    fmt = node.get("format")
    check = _FORMAT_CHECKS.get(fmt) if isinstance(fmt, str) else None
    low, high, exclusive_low, exclusive_high = _read_bounds(node, name, part)

    def allowed(value: object) -> bool:
        if isinstance(value, str):
            length = len(value)
            if min_length is not None and length < min_length:
                return False
            if max_length is not None and length > max_length:
                return False
            return check is None or check(value)
        if isinstance(value, bool):
            return True
        if low is not None and (value <= low if exclusive_low else value < low):  # type: ignore[operator]
            return False
        return not (high is not None and (value >= high if exclusive_high else value > high))  # type: ignore[operator]

    return allowed


def _enum_entries(node: Mapping[str, Any], name: str, part: str) -> list[tuple[object, object]]:
    values = node["enum"]
    if not isinstance(values, list):
        raise FormError(f"{_where(name, part)}: 'enum' must be an array, not {_json_type(values)}")
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
    node: Mapping[str, Any], name: str, kind: FieldType, nullable: bool, values: dict[str, Any]
) -> Any:
    """The schema's ``default``, checked to be of the field's JSON type, written into the
    field's attributes ``values`` with ``has_default``; ``None`` when it is ``null``."""
    default = node["default"]
    if default is None:
        if nullable:  # (on a field that is not nullable, "= None" in a model: no default)
            values["has_default"] = True
        return None
    if not _default_fits(kind, default):
        raise FormError(f"{_where(name)}: 'default' must be {_TYPE_WORDS[kind]}, not {_json_type(default)}")
    if kind == "choices":
        default = list(default)
    values["default"] = default
    values["has_default"] = True
    return default


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


def _text_of(node: Mapping[str, Any], key: str, where: str) -> str | None:
    value = node.get(key)
    if value is None or isinstance(value, str):
        return value
    raise FormError(f"{where}: '{key}' must be a string, not {_json_type(value)}")


def _put_count(values: dict[str, Any], node: Mapping[str, Any], key: str, attribute: str, name: str) -> None:
    """A field's ``minLength``, ``maxLength``, ``minItems`` or ``maxItems``, read with
    ``_count`` and written among its attributes when it is set (not ``null``)."""
    count = _count(node, key, name)
    if count is not None:
        values[attribute] = count


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
    if value.__class__ is int and -_FLOAT_MAX <= value <= _FLOAT_MAX:
        return value  # the common case
    if _number_problem(value, integer=False) is not None:
        raise FormError(f"{_where(name, part)}: '{key}' must be a finite number a 64-bit float can hold")
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
    if not (at and local and "@" not in domain) or value.split(None, 1) != [value]:
        return False  # (split: any white space, in one pass)
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
    if schema.__class__ is not dict and not isinstance(schema, Mapping):
        raise TypeError(f"validate_content: schema must be a mapping, not {type(schema).__name__}")
    if content.__class__ is not dict and not isinstance(content, Mapping):
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
        if form.__class__ is not dict and not isinstance(form, Mapping):
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
