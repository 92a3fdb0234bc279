"""The values of the form model, [`Form`][toolnexus.forms.Form], [`Field`][toolnexus.forms.Field]
and [`Choice`][toolnexus.forms.Choice], and the rules an answer must meet.

Each value is made one way. A ``Choice`` by its constructor. A ``Field`` by ``made_field``,
which its constructor calls with the arguments that differ from the defaults, and the reader
with what it read (the choices as their values and titles: a ``Choice`` is made from them
only when ``choices`` is first asked for). A ``Form`` by ``made_form``, called by its
constructor and by the reader.

Each rule on an answer (its type, ``minLength``, ``maximum``, the choices, ...) is one
``Rule``: a test, and the words said when the test fails. The quick check
(``Field._fits``, a bool) runs the tests; the problems (``Field._problems``) run the same
tests and word those that fail; the reader checks a select's choices against the same
rules (``within_limits``, ``of_type``). Nothing is written twice, so nothing can drift.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, ClassVar, Literal, TypeAlias

from .._util import escape_text
from ..errors import FormError
from ._formats import FORMAT_CHECKS, FORMATS
from ._json import FLOAT_MAX, TYPE_WORDS, Scalar, choice_key, number_problem, plural, quote, text

FieldType: TypeAlias = Literal["string", "number", "integer", "boolean", "choice", "choices"]
"""What a field asks for: text, a number, a whole number, yes or no, one choice
(single-select) or several choices (multi-select)."""


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
    # The values of the choices, which is all that checking an answer needs (see made_field).
    _values: ClassVar[tuple[Scalar, ...]] = ()

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
        # The arguments that differ from the class's defaults (a form has many fields and
        # each sets few of its twenty attributes; reading them is the same either way),
        # handed to made_field, which writes every Field.
        given: dict[str, Any] = {"name": name, "type": type}
        if required is not False:
            given["required"] = required
        if title is not None:
            given["title"] = title
        if description is not None:
            given["description"] = description
        if default is not None:
            given["default"] = default
        if has_default is not False:
            given["has_default"] = has_default
        if nullable is not False:
            given["nullable"] = nullable
        if min_length is not None:
            given["min_length"] = min_length
        if max_length is not None:
            given["max_length"] = max_length
        if format is not None:
            given["format"] = format
        if pattern is not None:
            given["pattern"] = pattern
        if minimum is not None:
            given["minimum"] = minimum
        if maximum is not None:
            given["maximum"] = maximum
        if exclusive_minimum is not False:
            given["exclusive_minimum"] = exclusive_minimum
        if exclusive_maximum is not False:
            given["exclusive_maximum"] = exclusive_maximum
        if min_items is not None:
            given["min_items"] = min_items
        if max_items is not None:
            given["max_items"] = max_items
        if unique_items is not False:
            given["unique_items"] = unique_items
        if choices != ():
            given["choices"] = choices
            made_field(given, tuple(c.value for c in choices), tuple(c.title for c in choices), self)
        else:
            made_field(given, (), (), self)

    def _index(self) -> dict[tuple[str, Scalar] | None, Choice]:
        """The choices by value, so that checking an answer is linear, however many there
        are: made when the first answer is checked (reading a form does not need it), and
        kept beside the attributes (it is not one: it only repeats ``choices``)."""
        keys: dict[tuple[str, Scalar] | None, Choice] | None = self.__dict__.get("_keys")
        if keys is None:
            keys = {}
            for choice in self.choices:
                value = choice.value
                keys[("s", value) if value.__class__ is str else choice_key(value)] = choice
            self.__dict__["_keys"] = keys
        return keys

    @property
    def label(self) -> str:
        """The title, or the name when there is none."""
        return self.title if self.title else self.name

    def choice(self, value: object) -> Choice | None:
        """The choice whose value is ``value`` (``"1"`` is not ``1``, ``True`` is not ``1``),
        or ``None``."""
        key = choice_key(value)
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
        message written: the tests of the field's rules, those ``_problems`` runs, in order,
        until one fails (see ``_CHECKS``)."""
        given = self.__dict__
        for setting, test in _NULL_CHECKS if value is None else _CHECKS.get(self.type, _MULTI_CHECKS):
            if (setting is None or setting in given) and not test(self, value):
                return False
        return True

    def _problems(self, value: object) -> Iterator[str]:
        """The words of each of the field's rules that ``value`` breaks, in order, each
        after the field's name; none after a rule that ends the check (a wrong type)."""
        where = quote(self.name)
        for rule in _NULL_RULES if value is None else _RULES.get(self.type, _RULES["choices"]):
            if not rule.fits(self, value):
                for words in rule.says(self, value):
                    yield f"{where} {words}"
                if rule.final:
                    return

    def _listing(self, limit: int = 12) -> str:
        shown = [escape_text(text(c.value)[:60])[:60] for c in self.choices[:limit]]
        more = len(self.choices) - limit
        return ", ".join(shown) + (f" (and {more} more)" if more > 0 else "")


_new = object.__new__
_set = object.__setattr__  # (a frozen dataclass's own refuses)


def made_field(
    given: dict[str, Any],
    values: tuple[Scalar, ...] = (),
    titles: tuple[str, ...] = (),
    field: Field | None = None,
) -> Field:
    """The field of the attributes ``given`` (as ``Field``'s constructor takes them, those
    that differ from the defaults, ``name`` and ``type`` always) and of the choices of these
    ``values`` and ``titles``: the one way a field is made, by
    [`read_form`][toolnexus.forms.read_form] (which calls it once it has read the field),
    and by ``Field``'s constructor (which passes its ``field``, and its ``choices`` in
    ``given``).

    A field keeps its choices as their values and titles: checking an answer needs only the
    values, and ``choices`` is made from both when it is first asked for (see
    ``_Choices``). Every attribute is written here, once: a Field is frozen. ``given``
    becomes the field's own attributes (a dict made for it, not to be kept)."""
    if field is None:
        field = _new(Field)
    if values:
        given["_values"] = values
        given["_titles"] = titles
    _set(field, "__dict__", given)
    return field


class _Choices:
    """What ``Field.choices`` is on the class, under the dataclass's default ``()``.

    A field keeps its choices as two tuples, their values and their titles (``_values`` and
    ``_titles`` among its attributes, see ``made_field``): checking an answer needs only the
    values, and a ``Choice`` costs more to make than the reading of it. The ``Choice``s are
    made from them the first time ``choices`` is asked for (by a user, or by the field's
    ``==``, ``hash`` and ``repr``) and kept as the attribute then, which is what the
    constructor writes at once: the same values either way, never changed once seen."""

    __slots__ = ()

    def __get__(self, field: Field | None, owner: object = None) -> tuple[Choice, ...]:
        if field is None:
            return ()
        state = field.__dict__
        titles = state.get("_titles")
        if titles is None:
            return ()
        choices = tuple(map(Choice, state["_values"], titles))
        state["choices"] = choices
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
        by_name: dict[str, Field] = {}
        for field in fields:  # (a loop: zip(strict=...) takes the slow way of a keyword)
            by_name[field.name] = field
        made_form(fields, title, description, by_name, self)

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
                f"{quote(str(key))} is not a field of the requested schema"
                for key in content
                if not isinstance(key, str) or key not in by_name
            )
        for f in self.fields:
            value = content.get(f.name, _MISSING)
            if value is _MISSING:
                if f.required:
                    problems.append(f"{quote(f.name)} is required")
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


def made_form(
    fields: tuple[Field, ...],
    title: str | None,
    description: str | None,
    by_name: dict[str, Field],
    form: Form | None = None,
) -> Form:
    """The form of these ``fields``, ``title`` and ``description``, with ``by_name`` the
    fields by name: the one way a form is made, by [`read_form`][toolnexus.forms.read_form]
    (which gathers ``by_name`` while it reads) and by ``Form``'s constructor (which passes
    its ``form``). Frozen: its attributes are written here, once."""
    if len(by_name) != len(fields):
        raise FormError("Form: two fields have the same name")
    if form is None:
        form = _new(Form)
    state = form.__dict__
    state["fields"] = fields
    state["title"] = title
    state["description"] = description
    state["_by_name"] = by_name
    return form


_MISSING: Any = object()
_SCAN = 8  # up to this many choices, a look through them beats making an index


# --- the rules -----------------------------------------------------------------------------
#
# Each rule is written once: its test, a function of the field and the value that is true when
# the value meets the rule, and its words, said after the field's name when it does not. The
# problems (``_problems``) and the reader's ``within_limits`` run each rule's ``Rule.fits``;
# the quick check (``Field._fits``) runs the same tests, those of the field's type in order
# (``_CHECKS``), in a plain loop that stops at the first that fails.
#
# A rule on a setting (``min_length``, ...) is met when the field leaves it at its default:
# the setting is then not among the field's own attributes (see made_field), and its test is
# not run. The type's rule comes first and is final: the rules after it are given a value of
# the type.

Test: TypeAlias = Callable[[Field, Any], bool]
"""A rule's test: whether the value (the second argument) meets the rule on the field."""


@dataclass(frozen=True)
class Rule:
    """One rule on an answer: its ``test``, what it ``says`` when the test is false (the
    words after the field's name, one entry per problem), the ``setting`` it checks
    (``None``: a rule on every value), and whether it is ``final`` (when it is broken, the
    rules after it are not checked)."""

    test: Test
    says: Callable[[Field, Any], Iterable[str]]
    setting: str | None = None
    final: bool = False

    def fits(self, field: Field, value: Any) -> bool:
        """Whether ``value`` meets the rule on ``field``: the test, when the field sets the
        rule's setting (a rule on every value, when it has none)."""
        setting = self.setting
        return (setting is not None and setting not in field.__dict__) or self.test(field, value)


def _says_type(field: Field, value: object) -> tuple[str]:
    return (f"must be {TYPE_WORDS[field.type]}",)


def _says_number(field: Field, value: object) -> tuple[str, ...]:
    problem = number_problem(value, integer=field.type == "integer")
    return () if problem is None else (problem,)


def _says_too_short(field: Field, value: str) -> tuple[str]:
    return (f"must be at least {plural(field.min_length or 0, 'character')} long",)


def _says_too_long(field: Field, value: str) -> tuple[str]:
    return (f"must be at most {plural(field.max_length or 0, 'character')} long",)


def _says_format(field: Field, value: str) -> tuple[str]:
    return (f"must be {FORMATS[field.format or '']}",)


def _says_below(field: Field, value: int | float) -> tuple[str]:
    low = text(field.minimum)
    return (f"must be greater than {low}" if field.exclusive_minimum else f"must be at least {low}",)


def _says_above(field: Field, value: int | float) -> tuple[str]:
    high = text(field.maximum)
    return (f"must be less than {high}" if field.exclusive_maximum else f"must be at most {high}",)


def _says_not_a_choice(field: Field, value: object) -> tuple[str]:
    return (f"must be one of: {field._listing()}",)


def _says_too_few(field: Field, value: list[Any]) -> tuple[str]:
    return (f"must have at least {plural(field.min_items or 0, 'item')}",)


def _says_too_many(field: Field, value: list[Any]) -> tuple[str]:
    return (f"must have at most {plural(field.max_items or 0, 'item')}",)


def _says_items(field: Field, value: list[Any]) -> Iterator[str]:
    for number, item in enumerate(value, start=1):
        if not _is_choice_item(field, item):
            yield f"item {number} must be one of: {field._listing()}"


def _says_repeat(field: Field, value: list[Any]) -> tuple[str]:
    return ("must not repeat an item",)


def _is_choice(field: Field, value: object) -> bool:
    """Whether ``value`` is one of the field's choices (``"1"`` is not ``1``, ``True`` is
    not ``1``)."""
    if value.__class__ is str:
        values = field._values
        if len(values) <= _SCAN:
            return value in values  # (a number or a boolean never equals a str)
    key = choice_key(value)
    return key is not None and key in field._index()


def _is_choice_item(field: Field, item: object) -> bool:
    """Whether ``item`` of a multi-select's answer is one of its choices: a string."""
    return (item.__class__ is str or isinstance(item, str)) and _is_choice(field, item)


def _all_choices(field: Field, value: list[Any]) -> bool:
    for item in value:  # noqa: SIM110 (a loop: quicker than all() of a generator)
        if not _is_choice_item(field, item):
            return False
    return True


def _no_repeat(field: Field, value: list[Any]) -> bool:
    """Whether no choice is picked twice (what is not a choice is another rule's to tell)."""
    seen: set[str] = set()
    for item in value:
        if _is_choice_item(field, item):
            if item in seen:
                return False
            seen.add(item)
    return True


# The tests. A test of a setting runs only when the field sets it (``Rule.fits``,
# ``Field._fits``); it reads the default (``None``) as met all the same, so that it is right
# on any field and mypy checks it whole.


def _is_string(field: Field, value: object) -> bool:
    return value.__class__ is str or isinstance(value, str)


def _number_test(integer: bool) -> Test:
    """The test of a ``"number"`` (or, ``integer``, an ``"integer"``) field's type."""

    def is_number(field: Field, value: object) -> bool:
        return (value.__class__ is int and -FLOAT_MAX <= value <= FLOAT_MAX) or (  # (a whole number, at once)
            number_problem(value, integer=integer) is None
        )

    return is_number


def _is_boolean(field: Field, value: object) -> bool:
    return isinstance(value, bool)


def _is_list(field: Field, value: object) -> bool:
    return isinstance(value, list)


def _is_nullable(field: Field, value: None) -> bool:
    return field.nullable


def _long_enough(field: Field, value: str) -> bool:
    least = field.min_length
    return least is None or len(value) >= least


def _short_enough(field: Field, value: str) -> bool:
    most = field.max_length
    return most is None or len(value) <= most


def _of_format(field: Field, value: str) -> bool:
    fmt = field.format
    return fmt is None or FORMAT_CHECKS[fmt](value)


def _high_enough(field: Field, value: int | float) -> bool:
    low = field.minimum
    return low is None or (value > low if field.exclusive_minimum else value >= low)


def _low_enough(field: Field, value: int | float) -> bool:
    high = field.maximum
    return high is None or (value < high if field.exclusive_maximum else value <= high)


def _enough_items(field: Field, value: list[Any]) -> bool:
    least = field.min_items
    return least is None or len(value) >= least


def _few_enough_items(field: Field, value: list[Any]) -> bool:
    most = field.max_items
    return most is None or len(value) <= most


_STRING_RULES = (
    Rule(_long_enough, _says_too_short, "min_length"),
    Rule(_short_enough, _says_too_long, "max_length"),
    Rule(_of_format, _says_format, "format"),
)
_BOUND_RULES = (
    Rule(_high_enough, _says_below, "minimum"),
    Rule(_low_enough, _says_above, "maximum"),
)
_RULES: dict[str, tuple[Rule, ...]] = {
    "string": (Rule(_is_string, _says_type, final=True), *_STRING_RULES),
    "number": (Rule(_number_test(integer=False), _says_number, final=True), *_BOUND_RULES),
    "integer": (Rule(_number_test(integer=True), _says_number, final=True), *_BOUND_RULES),
    "boolean": (Rule(_is_boolean, _says_type, final=True),),
    "choice": (Rule(_is_choice, _says_not_a_choice, final=True),),
    "choices": (
        Rule(_is_list, _says_type, final=True),
        Rule(_enough_items, _says_too_few, "min_items"),
        Rule(_few_enough_items, _says_too_many, "max_items"),
        Rule(_all_choices, _says_items),
        Rule(_no_repeat, _says_repeat, "unique_items"),
    ),
}
# ``None``: an answer only to a nullable field.
_NULL_RULES = (Rule(_is_nullable, _says_type, final=True),)

# The quick check's view of the rules (``Field._fits``): each rule's setting and test, for each
# field type in order; another type is checked as a multi-select, as ``_problems`` does.
_CHECKS: dict[str, tuple[tuple[str | None, Test], ...]] = {
    kind: tuple((rule.setting, rule.test) for rule in rules) for kind, rules in _RULES.items()
}
_MULTI_CHECKS = _CHECKS["choices"]
_NULL_CHECKS = tuple((rule.setting, rule.test) for rule in _NULL_RULES)
_ANY = made_field({"name": "", "type": "string"})  # (a type's test reads no setting)
_TYPE_TESTS: dict[object, Test] = {
    kind: _RULES[kind][0].test for kind in ("string", "number", "integer", "boolean")
}


def of_type(kind: object, value: object) -> bool:
    """Whether ``value`` is of the JSON ``type`` ``kind`` (``"string"``, ``"number"``,
    ``"integer"`` or ``"boolean"``), by the rule of that field type."""
    test = _TYPE_TESTS.get(kind)
    return test is not None and test(_ANY, value)


def within_limits(limits: Field, value: object) -> bool:
    """Whether a choice's ``value`` meets the lengths and ``format`` (a string) or the
    bounds (a number) of ``limits``, by the rules of those field types: a select's own
    constraints, given beside its choices, apply to the value chosen."""
    if isinstance(value, str):
        return all(rule.fits(limits, value) for rule in _STRING_RULES)
    if isinstance(value, bool):
        return True
    return all(rule.fits(limits, value) for rule in _BOUND_RULES)
