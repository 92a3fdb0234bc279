"""toolnexus: the MCP elicitation bridge onto the toolnexus §10 suspension contract.

An MCP server may pause a ``tools/call`` to ask the user for something (a form, or a URL
to visit). toolnexus maps that question onto one §10 [`Request`][toolnexus.Request], lets the host's one
``wait_for(request)`` resolve it, and maps the [`Answer`][toolnexus.Answer] back, so a host writes one
resolver for every source of questions.
"""

from __future__ import annotations

from ._errors import ToolnexusError
from ._log import log_traffic
from ._wire import Answer, Reason, Request
from .forms import sensitive_fields, validate_content
from .mcp import answer_to_elicit_result, elicitation_callback, elicitation_to_request

__all__ = [
    "Answer",
    "Reason",
    "Request",
    "ToolnexusError",
    "__version__",
    "answer_to_elicit_result",
    "elicitation_callback",
    "elicitation_to_request",
    "log_traffic",
    "sensitive_fields",
    "validate_content",
]

__version__ = "0.1.0"
