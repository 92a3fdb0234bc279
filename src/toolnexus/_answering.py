"""Layer 2: the answering core, the one home of the rules between a question and its result.

- ``form_of``: a request's form, read once with the form model
  and passed along by whoever needs it (callback, policy, console, command, testing kit).
- ``as_answer`` (defined with the wire values): a resolver's
  return, a store's row or a ``resume`` argument turned into an ``Answer``, with one set of
  messages.
- [`result_for`][toolnexus.mcp.result_for]: the ``ElicitResult`` a server gets for an
  answer: the form's defaults laid in, then the content checked, then the result.
- ``fill``: values laid over a form's defaults, in the form's order.
- [`AnswerProblemError`][toolnexus.errors.AnswerProblemError]: accepted content that does not fit.

Pure: no I/O, no event loop, no thread. It imports the wire values, the mapping and the form
model, and nothing above them; every layer below (the SDK wiring, the stores, the resolvers,
the command) uses it and repeats none of it.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import EllipsisType
from typing import Any

from mcp_types import ElicitResult

from ._mapping import answer_to_elicit_result
from ._wire import Answer, AnswerLike, Request, as_answer
from .errors import AnswerProblemError, FormError
from .forms import Form, read_form

__all__ = [
    "AnswerLike",
    "as_answer",
    "fill",
    "form_of",
    "result_for",
]


def form_of(request: Request) -> Form | None:
    """The form ``request`` asks to fill, read with [`read_form`][toolnexus.forms.read_form].

    ``None`` when it asks for no form: a URL request (``kind="authorization"``) or a
    request without ``data`` (``None`` or empty: a form request whose server sent no
    schema has none, as the mapping leaves it). Raises
    [`FormError`][toolnexus.errors.FormError] when the data holds no schema, or one the
    form model does not read.

    Read it once per request and hand the ``Form`` to whatever needs it next
    ([`result_for`][toolnexus.mcp.result_for] takes it as ``form=``): reading a server's
    schema is the costly, hostile part of answering.
    """
    data = request.data
    if not data or request.kind == "authorization":
        return None
    if "schema" not in data:
        raise FormError("the request carries no schema of fields")
    return read_form(data["schema"])


def fill(form: Form, values: Mapping[str, Any]) -> dict[str, Any]:
    """``values`` laid over ``form``'s defaults, in the form's field order.

    A field the values leave out gets its default, when it has one; a name that is not a
    field of the form is kept, after the fields, for
    [`Form.problems`][toolnexus.forms.Form.problems] to report.
    """
    filled = form.with_defaults(values)
    ordered = {name: filled[name] for name in form.names if name in filled}
    if len(ordered) != len(filled):
        ordered.update((name, value) for name, value in filled.items() if name not in ordered)
    return ordered


def result_for(
    request: Request,
    answer: AnswerLike,
    *,
    form: Form | EllipsisType | None = ...,
    validate: bool = True,
    apply_defaults: bool = True,
) -> ElicitResult:
    """The ``ElicitResult`` a server gets for ``answer``, the way
    [`elicitation_callback`][toolnexus.mcp.elicitation_callback] makes it.

    The answer is mapped with [`answer_to_elicit_result`][toolnexus.mcp.answer_to_elicit_result].
    An accepted URL request carries no content. An accepted form gets the schema's
    defaults for the fields it leaves out (``apply_defaults``), then is checked against the
    form (``validate``).

    Args:
        request: the request answered.
        answer: an [`Answer`][toolnexus.Answer] or its wire mapping.
        form: the request's form as ``form_of`` gave it, so it
            is not read again; ``None`` for a request that has none (nothing is laid in or
            checked). Left out, it is read from the request.
        validate: check accepted content against the form.
        apply_defaults: lay the form's defaults into accepted content first.

    Raises [`AnswerProblemError`][toolnexus.errors.AnswerProblemError] (a ``ValueError``
    naming the fields) when accepted content does not fit the form, or the form cannot be
    read; ``TypeError``/``ValueError`` when ``answer`` is not an answer or holds data an
    ``ElicitResult`` cannot carry, the message starting ``the answer to <id>``.
    """
    if type(answer) is not Answer:  # the message is written only for what is not an Answer
        answer = as_answer(answer, f"the answer to {request.id}")
    if answer.ok and request.kind == "authorization":
        return ElicitResult(action="accept")  # URL mode: no content, whatever data holds
    try:
        result = answer_to_elicit_result(answer)
    except ValueError as err:  # data an ElicitResult cannot carry: the message names the keys
        raise ValueError(f"the answer to {request.id}: {err}") from None
    if result.action != "accept" or not (validate or apply_defaults):
        return result
    if form is ...:
        try:
            form = form_of(request)
        except FormError as err:
            if validate:
                raise AnswerProblemError(request.id, [f"the form cannot be read: {err}"]) from None
            return result
    if form is None:
        return result
    content = result.content or {}
    if apply_defaults:
        filled = form.with_defaults(content)
        if len(filled) != len(content):
            content = filled
            result = ElicitResult(action="accept", content=filled)
    if validate:
        problems = form.problems(content)
        if problems:
            raise AnswerProblemError(request.id, problems)
    return result
