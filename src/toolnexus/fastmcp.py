"""The bridge in the shape FastMCP and pydantic-ai take: ``elicitation_handler(wait_for)``.

FastMCP's ``Client(..., elicitation_handler=...)`` and pydantic-ai's ``MCPToolset(...,
elicitation_handler=...)`` take a handler ``async h(message, response_type, params,
context)``, not the SDK's ``elicitation_callback``.
[`elicitation_handler`][toolnexus.fastmcp.elicitation_handler] makes one from a host's §10
resolver, on top of [`elicitation_callback`][toolnexus.mcp.elicitation_callback], so both
paths share one bridge.

This is the only toolnexus module that imports FastMCP; install it with
``pip install 'toolnexus-mcp[fastmcp]'``.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeAlias

from typing_extensions import Unpack

from .errors import FormError

try:
    import fastmcp as _fastmcp
except ModuleNotFoundError as _err:  # only FastMCP itself missing gets the hint, not a broken install
    if _err.name != "fastmcp":
        raise
    raise ImportError("toolnexus.fastmcp needs FastMCP: pip install 'toolnexus-mcp[fastmcp]'") from None

from mcp_types import ElicitRequestFormParams, ElicitRequestParams, ElicitResult

from ._answering import form_of
from ._callback import CallbackOptions, WaitFor, elicitation_callback
from ._mapping import elicitation_to_request
from .forms import Form

if TYPE_CHECKING:
    from mcp.client.session import ElicitationFnT

__all__ = ["ANSWERS_BELOW_FASTMCP", "ElicitationHandler", "elicitation_handler"]

logger = logging.getLogger(__name__)

ElicitationHandler: TypeAlias = Callable[[str, Any, ElicitRequestParams, Any], Awaitable[ElicitResult]]
"""What [`elicitation_handler`][toolnexus.fastmcp.elicitation_handler] returns: ``async h(message,
response_type, params, context) -> ElicitResult``, the handler FastMCP's ``Client`` and
pydantic-ai's ``MCPToolset`` take as ``elicitation_handler``."""

_CANCEL = ElicitResult(action="cancel")


def _fastmcp_checks_content(version: str) -> bool:
    """Whether a FastMCP of this version checks accepted form content against the schema with
    ``jsonschema`` after the handler returns (4.2 and later), sending the server the error
    text, which quotes the value. A version that cannot be read is taken to check."""
    match = re.match(r"(\d+)\.(\d+)", version)
    return match is None or (int(match[1]), int(match[2])) >= (4, 2)


_FASTMCP_CHECKS_CONTENT = _fastmcp_checks_content(str(getattr(_fastmcp, "__version__", "")))


class _Handler:
    """The FastMCP-shaped handler; ``sdk_callback`` is the same bridge in the SDK's shape,
    which FastMCP's ``Client`` is made to use directly (see ``_answer_below_fastmcp``)."""

    def __init__(self, sdk_callback: ElicitationFnT) -> None:
        self.sdk_callback = sdk_callback

    async def __call__(
        self, message: str, response_type: Any, params: ElicitRequestParams, context: Any
    ) -> ElicitResult:
        # Called by FastMCP's own wrapper: it has turned the schema into a type already, and
        # checks an accepted answer with jsonschema (4.2 and later) once this returns.
        form: Form | None = None
        if isinstance(params, ElicitRequestFormParams):
            try:
                form = form_of(elicitation_to_request(params))
            except FormError as err:
                logger.warning("a form the form model refuses (%s); cancel sent without asking", err)
                return _CANCEL
        result = await self.sdk_callback(context, params)
        if not isinstance(result, ElicitResult):  # elicitation_callback never gives ErrorData
            return _CANCEL
        if (
            _FASTMCP_CHECKS_CONTENT
            and form is not None
            and result.action == "accept"
            and result.content is not None
            and not _fits_before_fastmcp(form, result.content)
        ):
            return _CANCEL
        return result


def elicitation_handler(wait_for: WaitFor, **options: Unpack[CallbackOptions]) -> ElicitationHandler:
    """Make FastMCP's ``elicitation_handler`` from a host's one §10 resolver.

    ```python
    fastmcp.Client(server, elicitation_handler=elicitation_handler(wait_for))
    pydantic_ai.mcp.MCPToolset(server, elicitation_handler=elicitation_handler(wait_for))
    ```

    The same bridge as [`elicitation_callback`][toolnexus.mcp.elicitation_callback], which it is
    built on, with the same options ([`CallbackOptions`][toolnexus.mcp.CallbackOptions]:
    ``timeout``, ``validate``, ``apply_defaults``, ``on_result``) and the same behaviour: one
    resolver (sync or async) for form and URL mode in both protocol eras, validation against
    the form, and every failure sent to the server as ``cancel`` with no exception text and
    no value in it.

    FastMCP wraps a handler in its own SDK callback, which turns the server's schema into a
    Python type before the handler runs and (4.2 and later) checks an accepted answer with
    ``jsonschema``, the server's ``pattern`` run by Python's backtracking ``re``, on the
    event loop. A FastMCP ``Client`` built with this handler (directly, or by pydantic-ai's
    ``MCPToolset``) answers below that wrapper instead: it uses the bridge's own SDK callback,
    so neither the type conversion nor ``jsonschema`` sees the server's schema (see
    docs/fastmcp.md). Where FastMCP's wrapper still calls the handler, a form the form model
    refuses is cancelled before anything else reads it, and an accepted answer goes on only
    when the form model finds it fits and every ``pattern`` is decided by a linear-time
    engine first (pydantic-core's Rust ``regex``): a pattern that engine cannot read, a value
    it finds not matching, or a value the server chose (its default) for a field with a
    pattern is cancelled instead, so FastMCP never runs a server's regular expression on a
    server's value, and never sends its error text, which quotes the value.

    Raises ``TypeError``/``ValueError`` for the arguments
    [`elicitation_callback`][toolnexus.mcp.elicitation_callback] refuses, and ``TypeError``
    for an option it does not take.
    """
    unknown = sorted(set(options) - set(CallbackOptions.__annotations__))
    if unknown:
        raise TypeError(f"elicitation_handler: unknown option {unknown[0]!r}")
    callback = elicitation_callback(wait_for, **options)
    return _Handler(callback)


@functools.lru_cache(maxsize=64)
def _pattern_checker(pattern: str) -> Callable[[str], bool] | None:
    """A linear-time test of ``pattern`` (searched, as JSON Schema does), or ``None`` when the
    linear engine cannot read it (back-references, look-around, too large)."""
    from pydantic_core import SchemaError, SchemaValidator, ValidationError, core_schema

    try:
        validator = SchemaValidator(core_schema.str_schema(pattern=pattern, regex_engine="rust-regex"))
    except SchemaError:
        return None

    def matches(value: str) -> bool:
        try:
            validator.validate_python(value)
        except ValidationError:
            return False
        return True

    return matches


def _fits_before_fastmcp(form: Form, content: Mapping[str, Any]) -> bool:
    """Whether an accepted answer may go on to FastMCP's own ``jsonschema`` check: it fits the
    form, and each ``pattern`` is decided without a backtracking engine. Logged by field,
    never by value."""
    problems = form.problems(content)
    if problems:
        logger.warning("the answer does not fit the form (%s); cancel sent", "; ".join(problems))
        return False
    for field in form.fields:
        if field.pattern is None or field.name not in content:
            continue
        value = content[field.name]
        if not isinstance(value, str):
            continue
        if field.default is not None and value == field.default:
            why = "its value is the server's own default"
        else:
            check = _pattern_checker(field.pattern)
            if check is None:
                why = "its pattern is not one a linear-time engine reads"
            elif not check(value):
                why = "the value does not match its pattern"
            else:
                continue
        logger.warning(
            "field %r: %s; cancel sent rather than have FastMCP run the server's pattern", field.name, why
        )
        return False
    return True


def _answer_below_fastmcp() -> bool:
    """Have FastMCP's ``Client`` use a toolnexus handler's own SDK callback, below FastMCP's
    wrapper; any other handler is wrapped by FastMCP as before. ``False`` when this FastMCP
    is not laid out as expected (the handler then defends itself, see ``_Handler``)."""
    try:
        import fastmcp.client.client as client_module
    except ImportError:  # pragma: no cover - FastMCP without its client
        return False
    original = getattr(client_module, "create_elicitation_callback", None)
    if original is None or not callable(original):  # pragma: no cover - another FastMCP layout
        return False
    if getattr(original, "toolnexus_below", False):
        return True

    def create_elicitation_callback(handler: Any) -> Any:
        if isinstance(handler, _Handler):
            return handler.sdk_callback
        return original(handler)

    create_elicitation_callback.toolnexus_below = True  # type: ignore[attr-defined]
    setattr(client_module, "create_elicitation_callback", create_elicitation_callback)  # noqa: B010
    return True


ANSWERS_BELOW_FASTMCP = _answer_below_fastmcp()
"""Whether FastMCP clients given a toolnexus handler use its SDK callback directly."""
