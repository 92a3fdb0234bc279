"""The bridge in the shape FastMCP and pydantic-ai take: ``elicitation_handler(wait_for)``.

FastMCP's ``Client(..., elicitation_handler=...)`` and pydantic-ai's ``MCPToolset(...,
elicitation_handler=...)`` take a handler ``async h(message, response_type, params,
context)``, not the SDK's ``elicitation_callback``.
[`elicitation_handler`][toolnexus.fastmcp.elicitation_handler] makes one from a host's §10
resolver, on top of [`elicitation_callback`][toolnexus.mcp.elicitation_callback], so both
paths share one bridge.

This is the only toolnexus module that imports FastMCP; install it with
``pip install 'toolnexus[fastmcp]'``.
"""

from __future__ import annotations

import logging
import re
import warnings
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeAlias

try:
    import fastmcp as _fastmcp
except ModuleNotFoundError as _err:  # only FastMCP itself missing gets the hint, not a broken install
    if _err.name != "fastmcp":
        raise
    raise ImportError("toolnexus.fastmcp needs FastMCP: pip install 'toolnexus[fastmcp]'") from None

from mcp_types import ElicitRequestFormParams, ElicitRequestParams, ElicitResult

from ._callback import WaitFor, elicitation_callback

__all__ = ["ElicitationHandler", "elicitation_handler"]

logger = logging.getLogger(__name__)

ElicitationHandler: TypeAlias = Callable[[str, Any, ElicitRequestParams, Any], Awaitable[ElicitResult]]
"""What [`elicitation_handler`][toolnexus.fastmcp.elicitation_handler] returns: ``async h(message,
response_type, params, context) -> ElicitResult``, the handler FastMCP's ``Client`` and
pydantic-ai's ``MCPToolset`` take as ``elicitation_handler``."""


def _fastmcp_checks_content(version: str) -> bool:
    """Whether a FastMCP of this version checks accepted form content against the schema with
    ``jsonschema`` after the handler returns (4.2 and later), sending the server the error
    text, which quotes the value. A version that cannot be read is taken to check."""
    match = re.match(r"(\d+)\.(\d+)", version)
    return match is None or (int(match[1]), int(match[2])) >= (4, 2)


_FASTMCP_CHECKS_CONTENT = _fastmcp_checks_content(str(getattr(_fastmcp, "__version__", "")))


def elicitation_handler(
    wait_for: WaitFor,
    *,
    timeout: float | None = None,
    validate: bool = True,
    apply_defaults: bool = True,
) -> ElicitationHandler:
    """Make FastMCP's ``elicitation_handler`` from a host's one §10 resolver.

    ```python
    fastmcp.Client(server, elicitation_handler=elicitation_handler(wait_for))
    pydantic_ai.mcp.MCPToolset(server, elicitation_handler=elicitation_handler(wait_for))
    ```

    The same bridge as [`elicitation_callback`][toolnexus.mcp.elicitation_callback], which it is
    built on, with the same arguments and the same behaviour: one resolver (sync or async) for
    form and URL mode in both protocol eras, ``timeout``, validation against the form, and
    every failure (the resolver raises, times out, or answers something that does not fit)
    sent to the server as ``cancel`` with no exception text and no value in it.

    The handler ignores the ``message`` and ``response_type`` FastMCP derives and works from
    ``params``, the server's request itself. It returns the SDK's ``ElicitResult``, which FastMCP
    passes on as the explicit answer, so FastMCP's own handling (wrapping a bare value as
    ``accept``, sending ``str(exception)`` to the server when a handler raises) never decides
    anything. FastMCP 4.2 and later also check accepted form content against the schema
    themselves and would send the server their error text, which quotes the value; the handler
    runs that same check first (it includes the schema's ``pattern``, which toolnexus's own
    validation leaves alone) and sends ``cancel`` instead when it fails, whatever ``validate`` says.

    Args:
        wait_for: the resolver, as for [`elicitation_callback`][toolnexus.mcp.elicitation_callback].
        timeout: seconds the resolver may take; the server gets ``cancel`` when they are up.
        validate: check accepted form content against the form; a form outside the
            elicitation subset is cancelled without asking.
        apply_defaults: give an accepted form answer the schema's ``default`` for each field
            it leaves out, as the spec (SEP-1034) has a client do.

    Raises ``TypeError``/``ValueError`` for the arguments
    [`elicitation_callback`][toolnexus.mcp.elicitation_callback] refuses.
    """
    callback = elicitation_callback(
        wait_for, timeout=timeout, validate=validate, apply_defaults=apply_defaults
    )

    async def handle(
        message: str, response_type: Any, params: ElicitRequestParams, context: Any
    ) -> ElicitResult:
        result = await callback(context, params)
        if not isinstance(result, ElicitResult):  # elicitation_callback never gives ErrorData
            return ElicitResult(action="cancel")
        if (
            _FASTMCP_CHECKS_CONTENT
            and result.action == "accept"
            and result.content is not None
            and isinstance(params, ElicitRequestFormParams)
            and not _passes_fastmcp_check(params.requested_schema, result.content)
        ):
            return ElicitResult(action="cancel")
        return result

    return handle


def _passes_fastmcp_check(schema: Mapping[str, Any], content: Mapping[str, Any]) -> bool:
    """Whether FastMCP's own check of accepted content (plain ``jsonschema`` with the schema's
    draft, no format checker, ``$ref`` kept inside the schema) will pass. A failure is logged
    by field and keyword, never by value."""
    from jsonschema.validators import validator_for
    from referencing import Registry

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # an unknown $schema: the latest draft
            validator = validator_for(schema)(schema, registry=Registry())
            errors = [(list(e.absolute_path), e.validator) for e in validator.iter_errors(content)]
    except Exception as err:  # the schema itself: FastMCP would fail on it too
        logger.warning("FastMCP cannot apply the requested schema (%s); cancel sent", type(err).__name__)
        return False
    if errors:
        where = "; ".join(f"{'.'.join(map(str, path)) or '(form)'}: {keyword}" for path, keyword in errors)
        logger.warning("the answer fails FastMCP's check of the requested schema (%s); cancel sent", where)
        return False
    return True
