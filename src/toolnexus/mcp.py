"""The MCP elicitation bridge: MCP ``elicitation/create`` onto the §10 ``Request``/``Answer``.

- ``elicitation_to_request`` and ``answer_to_elicit_result`` are the pure mapping, the exact
  behaviour of the JS reference.
- ``new_request_id`` makes the ids those requests carry.
- ``elicitation_callback`` wires a host's one resolver into the SDK's client;
  ``first_answer`` makes one resolver of several that race (the first answer wins).
- ``result_for`` makes the ``ElicitResult`` for an answer as the callback does (defaults,
  validation).
- ``call_tool_resolving_urls`` calls a tool and answers a "URL elicitation required" error
  (``-32042``) with the same resolver; ``ElicitationCompletions`` hears the server say a URL
  is done.

``validate_content`` and ``sensitive_fields`` live in ``toolnexus.forms`` (and at the top,
``toolnexus``).

Importing this module loads only the SDK's wire types (``mcp_types``), never its
transports.
"""

from __future__ import annotations

from ._answering import result_for
from ._callback import (
    MAX_ABANDONED_THREADS,
    RESOLVER_THREADS,
    CallbackOptions,
    OnResult,
    ResultReason,
    WaitFor,
    elicitation_callback,
    set_resolver_threads,
)
from ._mapping import ElicitationParams, answer_to_elicit_result, elicitation_to_request, new_request_id
from ._race import ANSWERED_ELSEWHERE, first_answer
from ._url_required import (
    MAX_URL_ELICITATIONS,
    URL_ELICITATION_REQUIRED,
    ElicitationCompletions,
    call_tool_resolving_urls,
)

__all__ = [
    "ANSWERED_ELSEWHERE",
    "MAX_ABANDONED_THREADS",
    "MAX_URL_ELICITATIONS",
    "RESOLVER_THREADS",
    "URL_ELICITATION_REQUIRED",
    "CallbackOptions",
    "ElicitationCompletions",
    "ElicitationParams",
    "OnResult",
    "ResultReason",
    "WaitFor",
    "answer_to_elicit_result",
    "call_tool_resolving_urls",
    "elicitation_callback",
    "elicitation_to_request",
    "first_answer",
    "new_request_id",
    "result_for",
    "set_resolver_threads",
]
