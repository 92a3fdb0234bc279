"""Layer 1: the §10 wire values, ``Request`` and ``Answer``.

They are frozen dataclasses holding exactly the §10 wire fields, in wire order. The
field ``expiresAt`` keeps its camelCase name: it is wire data shared with the other
ports of toolnexus, so the Python attribute and the JSON key are the same word.

Nothing here imports the MCP SDK.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from typing_extensions import Self

from ._util import type_name

__all__ = ["Answer", "AnswerLike", "Reason", "Request", "as_answer", "check_fields"]

Reason: TypeAlias = Literal["declined", "cancelled", "expired"] | str
"""Why an ``Answer`` is not ok. The three named reasons are the ones §10 defines;
any other string is allowed and treated like ``"cancelled"`` by the MCP bridge."""


def _check_str(cls: str, field: str, value: object) -> None:
    if not isinstance(value, str):
        raise TypeError(f"{cls}.{field} must be a str, not {type_name(value)}")


def _check_opt_str(cls: str, field: str, value: object) -> None:
    if value is not None and not isinstance(value, str):
        raise TypeError(f"{cls}.{field} must be a str or None, not {type_name(value)}")


def _check_opt_data(cls: str, field: str, value: object) -> None:
    if value is None:
        return
    if not isinstance(value, dict):
        raise TypeError(f"{cls}.{field} must be a dict or None, not {type_name(value)}")
    for key in value:
        if not isinstance(key, str):
            raise TypeError(f"{cls}.{field} keys must be str, not {type_name(key)} ({key!r})")


def check_fields(cls: str, mapping: object, allowed: frozenset[str], required: tuple[str, ...]) -> None:
    """Check that ``mapping`` is a mapping with the ``required`` keys and no key outside
    ``allowed``; the messages name ``cls`` and the key. Shared by every ``from_dict``."""
    if not isinstance(mapping, Mapping):
        raise TypeError(f"{cls}.from_dict expects a mapping, not {type_name(mapping)}")
    for name in required:
        if name not in mapping:
            raise ValueError(f"{cls}.{name} is missing")
    for key in mapping:
        if key not in allowed:
            raise ValueError(f"{cls} has no field {key!r} (allowed: {', '.join(sorted(allowed))})")


@dataclass(frozen=True, slots=True, init=False)
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

    def __init__(
        self,
        id: str,
        kind: str,
        prompt: str,
        url: str | None = None,
        data: dict[str, Any] | None = None,
        expiresAt: str | None = None,  # noqa: N803 - the wire key
    ) -> None:
        # The one way to make a Request: every field checked, then set once. The common case
        # is told in one expression; any doubt takes the checks that name the field. The
        # fields are set through their slots, as the frozen dataclass's own __init__ does
        # through object.__setattr__, at a third of the cost.
        if not (
            type(id) is str
            and type(kind) is str
            and type(prompt) is str
            and (url is None or type(url) is str)
            and (expiresAt is None or type(expiresAt) is str)
            and (data is None or (type(data) is dict and _str_keys(data)))
        ):
            _check_str("Request", "id", id)
            _check_str("Request", "kind", kind)
            _check_str("Request", "prompt", prompt)
            _check_opt_str("Request", "url", url)
            _check_opt_data("Request", "data", data)
            _check_opt_str("Request", "expiresAt", expiresAt)
        _set_id(self, id)
        _set_kind(self, kind)
        _set_prompt(self, prompt)
        _set_url(self, url)
        _set_data(self, data)
        _set_expires_at(self, expiresAt)

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
        check_fields("Request", mapping, _REQUEST_FIELDS, ("id", "kind", "prompt"))
        return cls(
            mapping["id"],
            mapping["kind"],
            mapping["prompt"],
            mapping.get("url"),
            mapping.get("data"),
            mapping.get("expiresAt"),
        )


def _str_keys(data: dict[str, Any]) -> bool:
    for key in data:  # noqa: SIM110 - a loop: all() over a generator costs more here
        if type(key) is not str:
            return False
    return True


def _slot_setter(name: str) -> Callable[[Request, Any], None]:
    setter: Callable[[Request, Any], None] = Request.__dict__[name].__set__
    return setter


_set_id = _slot_setter("id")
_set_kind = _slot_setter("kind")
_set_prompt = _slot_setter("prompt")
_set_url = _slot_setter("url")
_set_data = _slot_setter("data")
_set_expires_at = _slot_setter("expiresAt")


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
            raise TypeError(f"Answer.ok must be a bool, not {type_name(self.ok)}")
        _check_opt_data("Answer", "data", self.data)
        _check_opt_str("Answer", "reason", self.reason)

    @classmethod
    def accept(cls, request: Request | str, data: dict[str, Any] | None = None) -> Self:
        """``ok=True`` for ``request`` (a [`Request`][toolnexus.Request] or its id), carrying
        ``data`` (a form's values; ``None`` for a URL or an approval)."""
        return cls(_id_of(request), True, data)

    @classmethod
    def decline(cls, request: Request | str) -> Self:
        """The human said no to ``request``: ``ok=False, reason="declined"``."""
        return cls(_id_of(request), False, None, "declined")

    @classmethod
    def cancel(cls, request: Request | str) -> Self:
        """Nobody answered ``request`` (dismissed, closed, nobody there): ``ok=False,
        reason="cancelled"``."""
        return cls(_id_of(request), False, None, "cancelled")

    @classmethod
    def expire(cls, request: Request | str) -> Self:
        """``request`` ran out of time: ``ok=False, reason="expired"``."""
        return cls(_id_of(request), False, None, "expired")

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
        check_fields("Answer", mapping, _ANSWER_FIELDS, ("id", "ok"))
        return cls(mapping["id"], mapping["ok"], mapping.get("data"), mapping.get("reason"))


_REQUEST_FIELDS = frozenset(("id", "kind", "prompt", "url", "data", "expiresAt"))
_ANSWER_FIELDS = frozenset(("id", "ok", "data", "reason"))


def _id_of(request: Request | str) -> str:
    if isinstance(request, Request):
        return request.id
    if isinstance(request, str):
        return request
    raise TypeError(f"an Answer answers a Request (or its id), not {type_name(request)}")


AnswerLike: TypeAlias = Answer | Mapping[str, Any]
"""What a resolver may return: an [`Answer`][toolnexus.Answer] or its wire mapping."""


def as_answer(value: object, where: str = "the answer") -> Answer:
    """``value`` as an [`Answer`][toolnexus.Answer]: the answer itself, or one read from its
    wire mapping as [`Answer.from_dict`][toolnexus.Answer.from_dict] reads it.

    The one reading of "an Answer or its wire mapping" (a resolver's return, a store's row,
    the answers given to ``resume``). Raises ``TypeError`` for anything else, and the
    ``TypeError``/``ValueError`` of ``from_dict`` for a mapping that is not an answer, each
    message starting with ``where``.
    """
    if type(value) is Answer or isinstance(value, Answer):
        return value
    if isinstance(value, Mapping):
        try:
            return Answer.from_dict(value)
        except TypeError as err:
            raise TypeError(f"{where}: {err}") from None
        except ValueError as err:
            raise ValueError(f"{where}: {err}") from None
    raise TypeError(f"{where} must be an Answer or its wire mapping, not {type_name(value)}")
