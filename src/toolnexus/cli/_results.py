"""What the command prints of a server's answer: a result's text, its JSON, a tool error's line."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from .._util import escape_text

if TYPE_CHECKING:
    from mcp import Client
    from mcp_types import CallToolResult, GetPromptResult, ReadResourceResult

__all__ = [
    "ERROR_LINE_LIMIT",
    "LEGACY_HINT",
    "asks_the_legacy_way",
    "error_line",
    "json_text",
    "result_json",
    "result_text",
    "tool_failure",
]

ERROR_LINE_LIMIT = 300

LEGACY_HINT = (
    "the server asks its questions the 2025-11-25 way (elicitation/create in the middle of the "
    "call), which this 2026-07-28 connection cannot carry: run again with --protocol legacy"
)
# How the SDK (NoBackChannelError) and FastMCP word the failure of a server that asks the
# 2025-11-25 way on a 2026-07-28 connection.
_BACK_CHANNEL_MARKERS = ("no back-channel", "NoBackChannelError", "unavailable on 2026-07-28 connections")


def result_text(result: CallToolResult | GetPromptResult | ReadResourceResult) -> str:
    """The text of a result: a tool's text content (or its structured content as JSON), a
    prompt's messages, a resource's contents; what is not text as ``[type content]``."""
    from mcp_types import CallToolResult, GetPromptResult

    texts: list[str] = []
    if isinstance(result, CallToolResult):
        for item in result.content:
            text = getattr(item, "text", None)
            texts.append(text if isinstance(text, str) else f"[{getattr(item, 'type', 'other')} content]")
        if not texts and result.structured_content is not None:
            texts.append(json.dumps(result.structured_content, ensure_ascii=False))
    elif isinstance(result, GetPromptResult):
        for message in result.messages:
            text = getattr(message.content, "text", None)
            texts.append(text if isinstance(text, str) else f"[{message.content.type} content]")
    else:
        for content in result.contents:
            text = getattr(content, "text", None)
            texts.append(text if isinstance(text, str) else "[blob content]")
    return "\n".join(texts)


def result_json(result: CallToolResult | GetPromptResult | ReadResourceResult) -> str:
    """``--json``: a tool's structured content when it gives one, else ``{"content",
    "isError"}``; a prompt's or a resource's result as the server sent it."""
    from mcp_types import CallToolResult

    value: Any
    if isinstance(result, CallToolResult):
        if result.structured_content is not None:
            value = result.structured_content
        else:
            value = result.model_dump(
                mode="json", by_alias=True, include={"content", "is_error"}, exclude_none=True
            )
    else:
        value = result.model_dump(mode="json", by_alias=True, exclude_none=True)
    return json_text(value)


def json_text(value: Any) -> str:
    """``value`` as indented JSON whose strings hold no control, format or separator
    character: each is written as its ``\\u`` escape, the same value to a JSON reader."""
    text = json.dumps(value, ensure_ascii=False, indent=2)
    if all(ch == "\n" or ch.isprintable() for ch in text):
        return text
    # A control, format or separator character can only be inside a JSON string here:
    # written as its \u escape, the JSON holds the same value and no terminal acts on it.
    return "".join(_json_escape(ch) if ch != "\n" and not ch.isprintable() else ch for ch in text)


def _json_escape(ch: str) -> str:
    code = ord(ch)
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def error_line(text: str) -> str:
    """A tool's error as one line: its lines joined with "; ", capped, escaped, so that a
    validation error keeps the field it is about."""
    lines = [" ".join(line.split()) for line in text.splitlines()]
    lines = [line for line in lines if line and not line.startswith("For further information visit")]
    if not lines:
        return "the tool reported an error without a message"
    joined = "; ".join(lines)
    if len(joined) > ERROR_LINE_LIMIT:
        joined = joined[: ERROR_LINE_LIMIT - 1].rstrip() + "…"
    return escape_text(joined)


def asks_the_legacy_way(text: str, client: Client) -> bool:
    """Whether ``text`` (a failure) says the server asked the 2025-11-25 way on a 2026 connection."""
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    return client.protocol_version in MODERN_PROTOCOL_VERSIONS and any(
        marker in text for marker in _BACK_CHANNEL_MARKERS
    )


def tool_failure(client: Client, what: str, result: CallToolResult) -> str:
    """The one line that says a tool reported an error."""
    text = result_text(result)
    if asks_the_legacy_way(text, client):
        return f"{escape_text(what)} failed: {LEGACY_HINT}"
    return f"{escape_text(what)} failed: {error_line(text)}"
