"""Request and Answer: the §10 wire values."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from toolnexus import Answer, Request


def test_request_fields_are_the_wire_fields_in_order() -> None:
    names = [f.name for f in dataclasses.fields(Request)]
    assert names == ["id", "kind", "prompt", "url", "data", "expiresAt"]
    assert [f.name for f in dataclasses.fields(Answer)] == ["id", "ok", "data", "reason"]


@pytest.mark.parametrize("cls", [Request, Answer])
def test_values_are_frozen_and_slotted(cls: type[Any]) -> None:
    value = cls("x", "input", "p") if cls is Request else cls("x", True)
    with pytest.raises(dataclasses.FrozenInstanceError):
        value.id = "y"
    assert not hasattr(value, "__dict__")
    assert "__slots__" in cls.__dict__


def test_request_to_dict_leaves_absent_fields_out() -> None:
    assert Request("r1", "input", "Pick").to_dict() == {"id": "r1", "kind": "input", "prompt": "Pick"}
    full = Request("r1", "authorization", "Go", "https://x.test/", {"a": 1}, "2026-01-01T00:00:00.000Z")
    assert full.to_dict() == {
        "id": "r1",
        "kind": "authorization",
        "prompt": "Go",
        "url": "https://x.test/",
        "data": {"a": 1},
        "expiresAt": "2026-01-01T00:00:00.000Z",
    }
    assert json.loads(json.dumps(full.to_dict())) == full.to_dict()


def test_answer_to_dict_leaves_absent_fields_out() -> None:
    assert Answer("a1", False).to_dict() == {"id": "a1", "ok": False}
    assert Answer("a1", True, {"env": "x"}).to_dict() == {"id": "a1", "ok": True, "data": {"env": "x"}}
    assert Answer("a1", False, reason="declined").to_dict() == {"id": "a1", "ok": False, "reason": "declined"}


def test_from_dict_round_trips() -> None:
    req = Request("r", "input", "p", None, {"schema": {"type": "object"}}, "2026-01-01T00:00:00.000Z")
    assert Request.from_dict(req.to_dict()) == req
    ans = Answer("a", False, None, "expired")
    assert Answer.from_dict(ans.to_dict()) == ans


def test_from_dict_takes_explicit_nulls_as_absent() -> None:
    wire = {"id": "r", "kind": "input", "prompt": "", "url": None, "data": None, "expiresAt": None}
    assert Request.from_dict(wire) == Request("r", "input", "")
    assert Answer.from_dict({"id": "a", "ok": True, "data": None, "reason": None}) == Answer("a", True)


@pytest.mark.parametrize("missing", ["id", "kind", "prompt"])
def test_request_from_dict_names_a_missing_field(missing: str) -> None:
    wire = {"id": "r", "kind": "input", "prompt": "p"}
    del wire[missing]
    with pytest.raises(ValueError, match=rf"Request\.{missing} is missing"):
        Request.from_dict(wire)


@pytest.mark.parametrize("missing", ["id", "ok"])
def test_answer_from_dict_names_a_missing_field(missing: str) -> None:
    wire: dict[str, Any] = {"id": "a", "ok": True}
    del wire[missing]
    with pytest.raises(ValueError, match=rf"Answer\.{missing} is missing"):
        Answer.from_dict(wire)


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("id", 1, "str"),
        ("kind", None, "str"),
        ("prompt", b"p", "str"),
        ("url", 5, "str or None"),
        ("data", [], "dict or None"),
        ("data", "x", "dict or None"),
        ("expiresAt", 0, "str or None"),
    ],
)
def test_request_wrong_types_name_the_field(field: str, value: object, expected: str) -> None:
    wire: dict[str, Any] = {"id": "r", "kind": "input", "prompt": "p", field: value}
    with pytest.raises(
        TypeError, match=rf"Request\.{field} must be a {expected}, not {type(value).__name__}"
    ):
        Request.from_dict(wire)


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("id", None, "str"),
        ("ok", 1, "bool"),
        ("ok", "true", "bool"),
        ("ok", None, "bool"),
        ("data", ["env"], "dict or None"),
        ("reason", False, "str or None"),
    ],
)
def test_answer_wrong_types_name_the_field(field: str, value: object, expected: str) -> None:
    wire: dict[str, Any] = {"id": "a", "ok": False, field: value}
    with pytest.raises(TypeError, match=rf"Answer\.{field} must be a {expected}, not {type(value).__name__}"):
        Answer.from_dict(wire)


def test_data_keys_must_be_strings() -> None:
    with pytest.raises(TypeError, match=r"Answer\.data keys must be str"):
        Answer("a", True, {1: "x"})  # type: ignore[dict-item]
    with pytest.raises(TypeError, match=r"Request\.data keys must be str"):
        Request("r", "input", "p", data={None: 1})  # type: ignore[dict-item]


def test_constructor_checks_like_from_dict() -> None:
    with pytest.raises(TypeError, match=r"Request\.kind must be a str"):
        Request("r", 3, "p")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"Answer\.ok must be a bool"):
        Answer("a", 0)  # type: ignore[arg-type]


def test_unknown_fields_are_refused_not_dropped() -> None:
    with pytest.raises(ValueError, match=r"Request has no field 'expires_at'"):
        Request.from_dict({"id": "r", "kind": "input", "prompt": "p", "expires_at": "x"})
    with pytest.raises(ValueError, match=r"Answer has no field 'content'"):
        Answer.from_dict({"id": "a", "ok": True, "content": {}})


@pytest.mark.parametrize("not_a_mapping", [None, [], "{}", 3, ("id", "a")])
def test_from_dict_wants_a_mapping(not_a_mapping: object) -> None:
    with pytest.raises(TypeError, match=r"Request\.from_dict expects a mapping"):
        Request.from_dict(not_a_mapping)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"Answer\.from_dict expects a mapping"):
        Answer.from_dict(not_a_mapping)  # type: ignore[arg-type]


def test_reason_accepts_any_string() -> None:
    assert Answer("a", False, reason="timeout-by-host").reason == "timeout-by-host"


def test_values_compare_and_repr() -> None:
    assert Answer("a", True, {"x": 1}) == Answer("a", True, {"x": 1})
    assert Answer("a", True) != Answer("a", False)
    assert repr(Request("r", "input", "p")) == (
        "Request(id='r', kind='input', prompt='p', url=None, data=None, expiresAt=None)"
    )
