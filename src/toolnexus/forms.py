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

from collections.abc import Mapping
from typing import Any

from ._forms._formats import FORMATS
from ._forms._model import Choice, Field, FieldType, Form
from ._forms._reader import MAX_CHOICES, MAX_COUNT, MAX_FIELDS, MAX_FORM_CHOICES, MAX_TEXT, read_form
from ._sensitive import looks_secret
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

# The model's parts live in modules of their own, behind this one (toolnexus/_forms: the
# reader, the values and their rules, the formats); every public name is here.


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
