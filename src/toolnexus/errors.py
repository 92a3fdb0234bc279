"""Every error toolnexus raises on purpose, in one place; each is importable from ``toolnexus``
too. A host catches ``ToolnexusError`` to catch them all, and each concrete error also
derives from the built-in it has always been, so code that catches that keeps working::

    ToolnexusError
    ├── FormError (ValueError)             a schema that is not a form
    ├── UrlError (ValueError)              a URL that cannot be read
    ├── AnswerProblemError (ValueError)    an answer that does not fit its form
    ├── UrlElicitationRefusedError         URLs the server needs were refused
    ├── LegacyProtocolError (RuntimeError) a 2025-11-25 call cannot be parked
    ├── StoreError (ValueError)            a store that cannot be used as asked
    ├── StoreUnavailableError              a store that cannot be reached
    │   (ConnectionError)
    ├── LeaseLostError (RuntimeError)      a claim that no longer holds
    ├── ServerMismatchError (ValueError)   a call resumed on another server
    ├── NotClaimableError (ValueError)     a call resume_key cannot claim
    ├── TaskError (RuntimeError)           a task that ended without a result
    └── ServerQuestionError (RuntimeError) the testing kit's server could not ask

Bad arguments raise the built-in ``TypeError``/``ValueError`` a Python caller expects. Layer
1: nothing here imports the MCP SDK, or any other module of toolnexus.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

__all__ = [
    "AnswerProblemError",
    "FormError",
    "LeaseLostError",
    "LegacyProtocolError",
    "NotClaimableError",
    "ServerMismatchError",
    "ServerQuestionError",
    "StoreError",
    "StoreUnavailableError",
    "TaskError",
    "ToolnexusError",
    "UrlElicitationRefusedError",
    "UrlError",
]

_URL_SHOWN = 200  # the characters of a refused URL a message shows


def _shortened(url: str) -> str:
    return url if len(url) <= _URL_SHOWN else url[: _URL_SHOWN - 1] + "…"


class ToolnexusError(Exception):
    """Base class of every error that toolnexus raises on purpose.

    Bad arguments still raise the built-in ``TypeError``/``ValueError`` a Python caller
    expects; the errors toolnexus defines (a form it cannot read, an answer that does not
    fit, a refused URL, a store problem) derive from this class as well.
    """


class FormError(ToolnexusError, ValueError):
    """A schema that is not a form of the MCP elicitation subset. The message names the
    property and the keyword (escaped: it is safe to show or log), never a value."""


class UrlError(ToolnexusError, ValueError):
    """A URL that cannot be parsed (a port that is not a number, a malformed IPv6 host)."""


class AnswerProblemError(ToolnexusError, ValueError):
    """An accepted answer whose content does not fit the form it answers.

    The message names the fields and what is wrong with each, never a value; the same
    sentences are in [`problems`][toolnexus.errors.AnswerProblemError.problems].
    """

    def __init__(self, request_id: str, problems: list[str]) -> None:
        super().__init__(
            f"the answer to {request_id} does not fit the requested schema: {'; '.join(problems)}"
        )
        self.problems = problems
        """One sentence per problem, as [`Form.problems`][toolnexus.forms.Form.problems] gives them."""


class UrlElicitationRefusedError(ToolnexusError):
    """The server needs URLs visited before the tool can run, and the user did not accept them all.

    Raised by [`call_tool_resolving_urls`][toolnexus.mcp.call_tool_resolving_urls]. The message
    names each URL that was not accepted and how (``declined`` or ``cancelled``); the URLs
    are the server's text, so escape them before they reach a terminal.

    Attributes:
        tool: the tool that was called.
        refused: ``(url, outcome)`` for each URL that was not accepted, in the server's
            order; ``outcome`` is ``"declined"`` or ``"cancelled"``.
    """

    def __init__(self, tool: str, refused: Sequence[tuple[str, str]]) -> None:
        self.tool = tool
        self.refused: tuple[tuple[str, str], ...] = tuple(refused)
        shown = "; ".join(f"{_shortened(url)} ({outcome})" for url, outcome in self.refused)
        super().__init__(
            f"{tool}: the server needs a URL visited first, and the user did not accept: {shown}"
        )


class LegacyProtocolError(ToolnexusError, RuntimeError):
    """The connection negotiated a protocol older than ``INPUT_REQUIRED_VERSION``, where the
    server asks in the middle of the call: such a call cannot be parked. A ``RuntimeError``,
    as it has always been."""


class StoreError(ToolnexusError, ValueError):
    """A store cannot be used as asked: its schema is newer than this toolnexus, it is not a
    toolnexus store (or holds a same-named table that is not one), or it was opened
    read-only. (A ``ValueError``, as a store of another format always was.)"""


class StoreUnavailableError(ToolnexusError, ConnectionError):
    """The store's database cannot be reached (PostgreSQL down, restarting, refusing)."""


class LeaseLostError(ToolnexusError, RuntimeError):
    """A resumer's claim is no longer its own: its lease ran out and the call was made ready
    or claimed again (or finished, or removed) since."""


class ServerMismatchError(ToolnexusError, ValueError):
    """A parked call would be resumed on a server other than the one it was parked from."""


class NotClaimableError(ToolnexusError, ValueError):
    """[`resume_key`][toolnexus.durable.resume_key] found the call not claimable: not ready,
    being resumed elsewhere, or finished. ``status`` says which."""

    def __init__(self, key: str, status: str) -> None:
        said = {"resuming": "being resumed elsewhere", "done": "done already"}.get(status, status)
        super().__init__(f"{key} is {said}: nothing to resume")
        self.key = key
        self.status = status


class TaskError(ToolnexusError, RuntimeError):
    """A task ended without a result: cancelled by the server, past its time to live or the
    extension's ``timeout``, asking more than ``max_questions``, a question no callback
    could answer, or an answer to ``tasks/get`` that does not read as a task.

    A task that *failed* raises the server's error as ``mcp.MCPError``, as a failed
    ``tools/call`` does.

    Attributes:
        task_id: the server's id of the task.
        status: ``"cancelled"``, ``"expired"`` (its time to live or the ``timeout`` passed),
            or ``"invalid"`` (the server's answers broke the protocol, or a question could not
            be answered).
    """

    def __init__(
        self, message: str, *, task_id: str, status: Literal["cancelled", "expired", "invalid"]
    ) -> None:
        super().__init__(message)
        self.task_id = task_id
        self.status = status


class ServerQuestionError(ToolnexusError, RuntimeError):
    """[`elicit_through_server`][toolnexus.testing.elicit_through_server]'s server could not
    ask its question (its tool failed, or the client negotiated another era). A
    ``RuntimeError``, as it has always been."""
