"""The MCP elicitation bridge: MCP ``elicitation/create`` onto the §10 ``Request``/``Answer``.

- ``elicitation_to_request`` and ``answer_to_elicit_result`` are the pure mapping, the exact
  behaviour of the JS reference.
- ``new_request_id`` makes the ids those requests carry.
- ``elicitation_callback`` wires a host's one resolver into the SDK's client.
- ``validate_content`` checks a form's answers against the requested schema.
- ``sensitive_fields`` spots the fields of a form that look like they ask for a secret.

Importing this module loads only the SDK's wire types (``mcp_types``), never its
transports.
"""

from __future__ import annotations

from ._callback import WaitFor, elicitation_callback
from ._mapping import ElicitationParams, answer_to_elicit_result, elicitation_to_request, new_request_id
from ._sensitive import sensitive_fields
from .forms import validate_content

__all__ = [
    "ElicitationParams",
    "WaitFor",
    "answer_to_elicit_result",
    "elicitation_callback",
    "elicitation_to_request",
    "new_request_id",
    "sensitive_fields",
    "validate_content",
]
