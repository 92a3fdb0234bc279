"""Layer 1: the §10 wire values, ``Request`` and ``Answer``.

They are frozen dataclasses holding exactly the §10 wire fields, in wire order. The
field ``expiresAt`` keeps its camelCase name: it is wire data shared with the other
ports of toolnexus, so the Python attribute and the JSON key are the same word.

Nothing here imports the MCP SDK.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from typing_extensions import Self

__all__ = ["Answer", "Reason", "Request"]

Reason: TypeAlias = Literal["declined", "cancelled", "expired"] | str
"""Why an ``Answer`` is not ok. The three named reasons are the ones §10 defines;
any other string is allowed and treated like ``"cancelled"`` by the MCP bridge."""


def _type_name(value: object) -> str:
    return type(value).__name__


def _check_str(cls: str, field: str, value: object) -> None:
    if not isinstance(value, str):
        raise TypeError(f"{cls}.{field} must be a str, not {_type_name(value)}")


def _check_opt_str(cls: str, field: str, value: object) -> None:
    if value is not None and not isinstance(value, str):
        raise TypeError(f"{cls}.{field} must be a str or None, not {_type_name(value)}")


def _check_opt_data(cls: str, field: str, value: object) -> None:
    if value is None:
        return
    if not isinstance(value, dict):
        raise TypeError(f"{cls}.{field} must be a dict or None, not {_type_name(value)}")
    for key in value:
        if not isinstance(key, str):
            raise TypeError(f"{cls}.{field} keys must be str, not {_type_name(key)} ({key!r})")


def _fields_of(cls: str, mapping: object, allowed: frozenset[str], required: tuple[str, ...]) -> None:
    """Check that ``mapping`` is a mapping with the required keys and no unknown ones."""
    if not isinstance(mapping, Mapping):
        raise TypeError(f"{cls}.from_dict expects a mapping, not {_type_name(mapping)}")
    for name in required:
        if name not in mapping:
            raise ValueError(f"{cls}.{name} is missing")
    for key in mapping:
        if key not in allowed:
            raise ValueError(f"{cls} has no field {key!r} (allowed: {', '.join(sorted(allowed))})")


@dataclass(frozen=True, slots=True)
class Request:
    """A §10 suspension: something a tool needs from a human before it can go on.

    The host's one ``wait_for(request)`` resolves it with an [`Answer`][toolnexus.Answer].
    Construction checks the type of every field and raises ``TypeError`` naming the
    field that is wrong.
    """

    id: str
    """Unique id of this request. The MCP bridge makes ``elc-<time>-<seq>``."""
    kind: str
    """What is asked: ``"input"`` (a form), ``"authorization"`` (a URL to visit), or
    another kind of the open §10 vocabulary such as ``"approval"``."""
    prompt: str
    """The text to show the human; ``""`` when the source gave none."""
    url: str | None = None
    """For ``"authorization"``: the URL the human is asked to visit."""
    data: dict[str, Any] | None = None
    """Kind-specific payload. For ``"input"``: ``{"schema": <requested JSON Schema>}``."""
    expiresAt: str | None = None  # noqa: N815 - wire key shared with the other ports
    """When the request stops waiting, as an RFC 3339 timestamp; ``None`` for no deadline."""

    def __post_init__(self) -> None:
        _check_str("Request", "id", self.id)
        _check_str("Request", "kind", self.kind)
        _check_str("Request", "prompt", self.prompt)
        _check_opt_str("Request", "url", self.url)
        _check_opt_data("Request", "data", self.data)
        _check_opt_str("Request", "expiresAt", self.expiresAt)

    def to_dict(self) -> dict[str, Any]:
        """The §10 wire object: every field by its wire key, absent optional fields left out.

        ``data`` is the same dict object as the attribute, not a copy.
        """
        out: dict[str, Any] = {"id": self.id, "kind": self.kind, "prompt": self.prompt}
        if self.url is not None:
            out["url"] = self.url
        if self.data is not None:
            out["data"] = self.data
        if self.expiresAt is not None:
            out["expiresAt"] = self.expiresAt
        return out

    @classmethod
    def from_dict(cls, mapping: Mapping[str, Any]) -> Self:
        """Build a ``Request`` from its wire object.

        Raises ``ValueError`` when a required field (``id``, ``kind``, ``prompt``) is
        missing or an unknown field is present, ``TypeError`` when a field has the
        wrong type. Both name the field.
        """
        _fields_of("Request", mapping, _REQUEST_FIELDS, ("id", "kind", "prompt"))
        return cls(
            mapping["id"],
            mapping["kind"],
            mapping["prompt"],
            mapping.get("url"),
            mapping.get("data"),
            mapping.get("expiresAt"),
        )


@dataclass(frozen=True, slots=True)
class Answer:
    """The resolution of a §10 [`Request`][toolnexus.Request], as returned by the host's ``wait_for``.

    Construction checks the type of every field and raises ``TypeError`` naming the
    field that is wrong.
    """

    id: str
    """The id of the answer (hosts usually echo the request's id)."""
    ok: bool
    """``True`` when the human gave what was asked for."""
    data: dict[str, Any] | None = None
    """What the human gave, when ``ok``. For an ``"input"`` request: the form's values."""
    reason: Reason | None = None
    """Why not, when not ``ok``: ``"declined"`` (an explicit no), ``"cancelled"``
    (dismissed) or ``"expired"`` (timed out); other strings are allowed."""

    def __post_init__(self) -> None:
        _check_str("Answer", "id", self.id)
        if type(self.ok) is not bool:
            raise TypeError(f"Answer.ok must be a bool, not {_type_name(self.ok)}")
        _check_opt_data("Answer", "data", self.data)
        _check_opt_str("Answer", "reason", self.reason)

    def to_dict(self) -> dict[str, Any]:
        """The §10 wire object: every field by its wire key, absent optional fields left out.

        ``data`` is the same dict object as the attribute, not a copy.
        """
        out: dict[str, Any] = {"id": self.id, "ok": self.ok}
        if self.data is not None:
            out["data"] = self.data
        if self.reason is not None:
            out["reason"] = self.reason
        return out

    @classmethod
    def from_dict(cls, mapping: Mapping[str, Any]) -> Self:
        """Build an ``Answer`` from its wire object.

        Raises ``ValueError`` when a required field (``id``, ``ok``) is missing or an
        unknown field is present, ``TypeError`` when a field has the wrong type. Both
        name the field.
        """
        _fields_of("Answer", mapping, _ANSWER_FIELDS, ("id", "ok"))
        return cls(mapping["id"], mapping["ok"], mapping.get("data"), mapping.get("reason"))


_REQUEST_FIELDS = frozenset(("id", "kind", "prompt", "url", "data", "expiresAt"))
_ANSWER_FIELDS = frozenset(("id", "ok", "data", "reason"))
