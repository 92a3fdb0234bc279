"""toolnexus: the MCP elicitation bridge onto the toolnexus §10 suspension contract.

An MCP server may pause a ``tools/call`` to ask the user for something (a form, or a URL
to visit). toolnexus maps that question onto one §10 [`Request`][toolnexus.Request], lets the host's one
``wait_for(request)`` resolve it, and maps the [`Answer`][toolnexus.Answer] back, so a host writes one
resolver for every source of questions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._util import lazy_names

if TYPE_CHECKING:
    from ._log import log_traffic
    from ._wire import Answer, Reason, Request
    from .errors import (
        AnswerProblemError,
        FormError,
        LeaseLostError,
        LegacyProtocolError,
        NotClaimableError,
        ServerMismatchError,
        ServerQuestionError,
        StoreError,
        StoreUnavailableError,
        TaskError,
        ToolnexusError,
        UrlElicitationRefusedError,
        UrlError,
    )
    from .forms import sensitive_fields, validate_content
    from .mcp import answer_to_elicit_result, elicitation_callback, elicitation_to_request, first_answer

__all__ = [
    "Answer",
    "AnswerProblemError",
    "FormError",
    "LeaseLostError",
    "LegacyProtocolError",
    "NotClaimableError",
    "Reason",
    "Request",
    "ServerMismatchError",
    "ServerQuestionError",
    "StoreError",
    "StoreUnavailableError",
    "TaskError",
    "ToolnexusError",
    "UrlElicitationRefusedError",
    "UrlError",
    "__version__",
    "answer_to_elicit_result",
    "elicitation_callback",
    "elicitation_to_request",
    "first_answer",
    "log_traffic",
    "sensitive_fields",
    "validate_content",
]

__version__ = "0.1.0"

# Each name's home, imported when the name is first used (PEP 562): ``import toolnexus`` (and
# so ``toolnexus.cli``, the command's entry point) loads none of the SDK, and the command can
# treat a Ctrl-C while the SDK loads as any other interruption.
_HOMES = {
    "Answer": "._wire",
    "Reason": "._wire",
    "Request": "._wire",
    "AnswerProblemError": ".errors",
    "FormError": ".errors",
    "LeaseLostError": ".errors",
    "LegacyProtocolError": ".errors",
    "NotClaimableError": ".errors",
    "ServerMismatchError": ".errors",
    "ServerQuestionError": ".errors",
    "StoreError": ".errors",
    "StoreUnavailableError": ".errors",
    "TaskError": ".errors",
    "ToolnexusError": ".errors",
    "UrlElicitationRefusedError": ".errors",
    "UrlError": ".errors",
    "answer_to_elicit_result": ".mcp",
    "elicitation_callback": ".mcp",
    "elicitation_to_request": ".mcp",
    "first_answer": ".mcp",
    "log_traffic": "._log",
    "sensitive_fields": ".forms",
    "validate_content": ".forms",
}


if not TYPE_CHECKING:  # so that a type checker still reports a name that is not here
    __getattr__, __dir__ = lazy_names(__name__, _HOMES, globals(), __all__)
