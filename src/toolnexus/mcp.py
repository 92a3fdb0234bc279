"""The MCP elicitation bridge: MCP ``elicitation/create`` onto the §10 ``Request``/``Answer``.

- ``elicitation_to_request`` and ``answer_to_elicit_result`` are the pure mapping, the exact
  behaviour of the JS reference.
- ``new_request_id`` makes the ids those requests carry.
- ``elicitation_callback`` wires a host's one resolver into the SDK's client.
- ``result_for`` makes the ``ElicitResult`` for an answer as the callback does (defaults,
  validation); ``validate_content`` checks a form's answers against the requested schema,
  read by the form model, ``toolnexus.forms``.
- ``call_tool`` calls a tool and answers a "URL elicitation required" error (``-32042``)
  with the same resolver; ``ElicitationCompletions`` hears the server say a URL is done.
- ``sensitive_fields`` spots the fields of a form that look like they ask for a secret.

Importing this module loads only the SDK's wire types (``mcp_types``), never its
transports.
"""

from __future__ import annotations

from ._answering import AnswerProblemError, result_for
from ._callback import MAX_ABANDONED_THREADS, OnResult, Outcome, WaitFor, elicitation_callback
from ._mapping import ElicitationParams, answer_to_elicit_result, elicitation_to_request, new_request_id
from ._url_required import (
    MAX_URL_ELICITATIONS,
    URL_ELICITATION_REQUIRED,
    ElicitationCompletions,
    UrlElicitationRefusedError,
    call_tool,
)
from .forms import sensitive_fields, validate_content

__all__ = [
    "MAX_ABANDONED_THREADS",
    "MAX_URL_ELICITATIONS",
    "URL_ELICITATION_REQUIRED",
    "AnswerProblemError",
    "ElicitationCompletions",
    "ElicitationParams",
    "OnResult",
    "Outcome",
    "UrlElicitationRefusedError",
    "WaitFor",
    "answer_to_elicit_result",
    "call_tool",
    "elicitation_callback",
    "elicitation_to_request",
    "new_request_id",
    "result_for",
    "sensitive_fields",
    "validate_content",
]
