"""The MCP elicitation bridge: MCP ``elicitation/create`` onto the §10 ``Request``/``Answer``.

- :func:`elicitation_to_request` and :func:`answer_to_elicit_result` are the pure mapping,
  the exact behaviour of the JS reference.
- :func:`new_request_id` makes the ids those requests carry.

Importing this module loads only the SDK's wire types (``mcp_types``), never its
transports.
"""

from __future__ import annotations

from ._mapping import ElicitationParams, answer_to_elicit_result, elicitation_to_request, new_request_id

__all__ = [
    "ElicitationParams",
    "answer_to_elicit_result",
    "elicitation_to_request",
    "new_request_id",
]
