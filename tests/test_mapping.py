"""The pure mapping: the seed's three examples, the JS reference vectors, the edge cases."""

from __future__ import annotations

import json
import math
import re
import threading
import time
from pathlib import Path
from typing import Any

import mcp.types
import pytest
from mcp_types import ElicitRequestFormParams, ElicitRequestURLParams, ElicitResult

from toolnexus import Answer, Request, answer_to_elicit_result, elicitation_to_request
from toolnexus.mcp import new_request_id

VECTORS = json.loads((Path(__file__).parent / "js_reference_vectors.json").read_text(encoding="utf-8"))
ID_RE = re.compile(r"elc-([0-9a-z]+)-([1-9][0-9]*)")


def dump(result: ElicitResult) -> dict[str, Any]:
    out: dict[str, Any] = result.model_dump(mode="json", by_alias=True, exclude_none=True)
    return out


def without_id(request: Request) -> dict[str, Any]:
    wire = request.to_dict()
    assert ID_RE.fullmatch(wire.pop("id"))
    return wire


# --- The seed's examples, as wire dicts and as SDK models ---------------------------------


def test_seed_example_1_form_mode_is_input() -> None:
    params = {
        "message": "What is your deployment target?",
        "requestedSchema": {
            "type": "object",
            "properties": {"env": {"type": "string", "enum": ["staging", "production"]}},
            "required": ["env"],
        },
    }
    for given in (params, ElicitRequestFormParams.model_validate(params)):
        req = elicitation_to_request(given)
        assert req.kind == "input"
        assert req.prompt == "What is your deployment target?"
        assert req.data is not None
        assert req.data["schema"] == params["requestedSchema"]
        assert len(req.id) > 0
        assert req.url is None


def test_seed_example_1_schema_is_carried_by_reference_unmodified() -> None:
    schema = {"type": "object", "properties": {"x": {"type": "string"}}}
    snapshot = json.dumps(schema)
    req = elicitation_to_request({"message": "m", "requestedSchema": schema})
    assert req.data is not None
    assert req.data["schema"] is schema
    assert json.dumps(schema) == snapshot


def test_seed_example_2_url_mode_is_authorization() -> None:
    params = {
        "mode": "url",
        "message": "Authorize access to your GitHub account",
        "url": "https://github.com/login/oauth/authorize?client_id=abc123",
    }
    model = ElicitRequestURLParams.model_validate({**params, "elicitationId": "e-1"})
    for given in (params, model):
        req = elicitation_to_request(given)
        assert req.kind == "authorization"
        assert req.url == "https://github.com/login/oauth/authorize?client_id=abc123"
        assert req.data is None


def test_seed_example_3_round_trip_with_every_answer_outcome() -> None:
    def wait_for(request: Request) -> Answer:
        if request.kind == "authorization":
            return Answer("a1", False, reason="declined")
        return Answer("a1", True, {"env": "production"})

    input_req = elicitation_to_request(
        {"message": "Pick an environment", "requestedSchema": {"type": "object"}}
    )
    accepted = answer_to_elicit_result(wait_for(input_req))
    assert accepted.action == "accept"
    assert accepted.content == {"env": "production"}

    auth_req = elicitation_to_request(
        {"mode": "url", "message": "Authorize", "url": "https://example.com/auth"}
    )
    declined = answer_to_elicit_result(wait_for(auth_req))
    assert declined.action == "decline"

    assert answer_to_elicit_result({"id": "a2", "ok": False, "reason": "expired"}).action == "cancel"
    assert answer_to_elicit_result({"id": "a3", "ok": False}).action == "cancel"
    empty = answer_to_elicit_result({"id": "a4", "ok": True})
    assert empty.content == {}


# --- Every JS reference vector, both directions -------------------------------------------


@pytest.mark.parametrize("case", VECTORS["elicitation_to_request"], ids=lambda c: c["params"]["message"])
def test_js_vectors_elicitation_to_request(case: dict[str, Any]) -> None:
    assert without_id(elicitation_to_request(case["params"])) == case["request_without_id"]
    model_cls = ElicitRequestURLParams if case["params"].get("mode") == "url" else ElicitRequestFormParams
    model = model_cls.model_validate(case["params"])
    assert without_id(elicitation_to_request(model)) == case["request_without_id"]


@pytest.mark.parametrize("case", VECTORS["answer_to_elicit_result"], ids=lambda c: json.dumps(c["answer"]))
def test_js_vectors_answer_to_elicit_result(case: dict[str, Any]) -> None:
    assert dump(answer_to_elicit_result(case["answer"])) == case["result"]
    assert dump(answer_to_elicit_result(Answer.from_dict(case["answer"]))) == case["result"]


def test_js_vector_id_sample_has_our_id_form() -> None:
    assert ID_RE.fullmatch(VECTORS["id_sample"])


def test_the_result_is_the_sdk_class() -> None:
    result = answer_to_elicit_result(Answer("a", True))
    assert type(result) is ElicitResult
    assert ElicitResult is mcp.types.ElicitResult


# --- JavaScript truthiness wins where Python's differs ------------------------------------


@pytest.mark.parametrize(
    ("schema", "carried"),
    [
        ({}, True),  # an empty object is truthy in JS
        ([], True),
        ("s", True),
        (1, True),
        (None, False),
        ("", False),
        (0, False),
        (0.0, False),
        (math.nan, False),
        (False, False),
    ],
)
def test_requested_schema_presence_follows_js_truthiness(schema: object, carried: bool) -> None:
    req = elicitation_to_request({"message": "m", "requestedSchema": schema})
    assert req.kind == "input"
    assert (req.data == {"schema": schema}) if carried else (req.data is None)


def test_sdk_form_model_with_empty_schema_carries_it() -> None:
    req = elicitation_to_request(ElicitRequestFormParams(message="m", requested_schema={}))
    assert req.data == {"schema": {}}


def test_form_without_schema_has_no_data() -> None:
    assert elicitation_to_request({"message": "m"}).data is None


@pytest.mark.parametrize("url", ["", None])
def test_url_mode_with_an_empty_url_leaves_url_out(url: str | None) -> None:
    req = elicitation_to_request({"mode": "url", "message": "m", "url": url})
    assert req.kind == "authorization"
    assert req.url is None
    assert elicitation_to_request(ElicitRequestURLParams(message="m", url="")).url is None


def test_message_absent_or_null_is_empty_prompt() -> None:
    assert elicitation_to_request({}).prompt == ""
    assert elicitation_to_request({"message": None, "mode": "url"}).prompt == ""


@pytest.mark.parametrize("mode", ["form", "URL", "", "other"])
def test_any_mode_but_url_is_form(mode: str) -> None:
    req = elicitation_to_request(
        {"mode": mode, "message": "m", "url": "https://x.test", "requestedSchema": {}}
    )
    assert req.kind == "input"
    assert req.url is None
    assert req.data == {"schema": {}}


def test_url_mode_ignores_a_schema() -> None:
    req = elicitation_to_request(
        {"mode": "url", "message": "m", "url": "https://x", "requestedSchema": {"a": 1}}
    )
    assert req.data is None


def test_extra_wire_keys_are_ignored() -> None:
    req = elicitation_to_request(
        {"message": "m", "_meta": {"k": 1}, "task": {"ttl": 5}, "requestedSchema": {}}
    )
    assert without_id(req) == {"kind": "input", "prompt": "m", "data": {"schema": {}}}


def test_a_subclass_of_the_sdk_model_maps_like_the_model() -> None:
    class MyParams(ElicitRequestFormParams):
        pass

    req = elicitation_to_request(MyParams(message="m", requested_schema={"type": "object"}))
    assert without_id(req) == {"kind": "input", "prompt": "m", "data": {"schema": {"type": "object"}}}


def test_ok_false_with_data_still_declines_or_cancels() -> None:
    assert dump(answer_to_elicit_result(Answer("a", False, {"x": "y"}, "declined"))) == {"action": "decline"}
    assert dump(answer_to_elicit_result(Answer("a", False, {"x": "y"}, "other"))) == {"action": "cancel"}


def test_accept_with_empty_data_sends_empty_content() -> None:
    assert dump(answer_to_elicit_result(Answer("a", True, {}))) == {"action": "accept", "content": {}}


def test_accept_carries_every_value_kind_elicit_result_allows() -> None:
    data = {"s": "x", "i": 3, "f": 2.5, "b": False, "l": ["a", "b"], "n": None}
    assert dump(answer_to_elicit_result(Answer("a", True, data)))["content"] == data


# --- Bad input ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "bad", [None, "params", 3, ["message"], object(), mcp.types.ElicitResult(action="accept")]
)
def test_elicitation_to_request_refuses_anything_but_params(bad: object) -> None:
    with pytest.raises(TypeError, match="elicitation_to_request expects"):
        elicitation_to_request(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"message": 42}, "message"),
        ({"message": ["m"]}, "message"),
        ({"mode": 1, "message": "m"}, "mode"),
        ({"mode": "url", "message": "m", "url": 5}, "url"),
        ({"mode": "url", "message": "m", "url": {"href": "x"}}, "url"),
    ],
)
def test_wrong_wire_types_name_the_field(params: dict[str, Any], field: str) -> None:
    with pytest.raises(TypeError, match=rf"field '{field}' must be a str"):
        elicitation_to_request(params)


@pytest.mark.parametrize("bad", [None, "ok", 1, [("id", "a")], Request("r", "input", "p")])
def test_answer_to_elicit_result_refuses_anything_but_answers(bad: object) -> None:
    with pytest.raises(TypeError, match="answer_to_elicit_result: answer must be an Answer"):
        answer_to_elicit_result(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("answer", "error", "pattern"),
    [
        ({"ok": True}, ValueError, r"Answer\.id is missing"),
        ({"id": "a"}, ValueError, r"Answer\.ok is missing"),
        ({"id": "a", "ok": "yes"}, TypeError, r"Answer\.ok must be a bool"),
        ({"id": "a", "ok": True, "data": "env"}, TypeError, r"Answer\.data must be a dict"),
        ({"id": "a", "ok": False, "reason": 3}, TypeError, r"Answer\.reason must be a str"),
        ({"id": "a", "ok": True, "extra": 1}, ValueError, r"Answer has no field 'extra'"),
    ],
)
def test_answer_mapping_is_checked_like_from_dict(
    answer: dict[str, Any], error: type[Exception], pattern: str
) -> None:
    with pytest.raises(error, match=pattern):
        answer_to_elicit_result(answer)


@pytest.mark.parametrize(
    ("data", "keys"),
    [
        ({"nested": {"a": 1}}, "key 'nested'"),
        ({"ok": "x", "nums": [1, 2]}, "key 'nums'"),
        ({"a": {"b": 1}, "c": [None], "d": "fine"}, "keys 'a', 'c'"),
        ({"obj": object()}, "key 'obj'"),
    ],
)
def test_data_elicit_result_cannot_carry_names_the_key(data: dict[str, Any], keys: str) -> None:
    with pytest.raises(ValueError, match=r"^Answer\.data ") as info:
        answer_to_elicit_result(Answer("a", True, data))
    message = str(info.value)
    assert keys in message
    assert "validation error" not in message  # not a raw pydantic dump
    assert "pydantic" not in message
    assert info.value.__cause__ is None


# --- Ids ------------------------------------------------------------------------------------


def js_base36(n: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while n:
        n, r = divmod(n, 36)
        out = digits[r] + out
    return out or "0"


def test_id_is_milliseconds_in_base36_and_a_sequence() -> None:
    before = time.time_ns() // 1_000_000
    first = new_request_id()
    second = elicitation_to_request({"message": "m"}).id
    after = time.time_ns() // 1_000_000
    m1, m2 = ID_RE.fullmatch(first), ID_RE.fullmatch(second)
    assert m1 is not None
    assert m2 is not None
    assert before <= int(m1.group(1), 36) <= int(m2.group(1), 36) <= after
    assert int(m2.group(2)) == int(m1.group(2)) + 1
    assert js_base36(int(m1.group(1), 36)) == m1.group(1)


def test_base36_matches_javascript_to_string_36() -> None:
    from toolnexus._mapping import _base36

    # Written by Node.js 20: (n).toString(36)
    node = {
        0: "0",
        35: "z",
        36: "10",
        1295: "zz",
        1296: "100",
        1_700_000_000_000: "loyw3v28",
        1_798_000_000_000: "mxzmrz0g",
        9_007_199_254_740_991: "2gosa7pa2gv",
    }
    assert {n: _base36(n) for n in node} == node


@pytest.mark.parametrize(
    "ms",
    [0, 1, 35, 36, 1295, 1296, 1297, 2591, 2592, 46655, 46656, 1_700_000_000_000, 1_798_000_001_295],
)
def test_id_time_is_base36_across_the_kept_digits(monkeypatch: pytest.MonkeyPatch, ms: int) -> None:
    # The digits before the last two are kept from one id to the next: each moment, the
    # ones before it and after it, in either order, write the time as JavaScript does.
    for at in (ms, ms + 1, ms - 1 if ms else ms, ms):
        monkeypatch.setattr(time, "time_ns", lambda at=at: at * 1_000_000 + 999_999)
        m = ID_RE.fullmatch(new_request_id())
        assert m is not None
        assert m.group(1) == js_base36(at)


def test_ids_are_unique_and_increasing_under_threads() -> None:
    per_thread, threads = 2000, 8
    results: list[list[str]] = [[] for _ in range(threads)]
    start = threading.Barrier(threads)

    def work(out: list[str]) -> None:
        start.wait()
        for _ in range(per_thread):
            out.append(new_request_id())

    workers = [threading.Thread(target=work, args=(results[i],)) for i in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    every = [i for r in results for i in r]
    assert len(set(every)) == per_thread * threads
    for ids in results:  # each thread sees its own ids' sequence numbers increase
        seqs = [int(i.rsplit("-", 1)[1]) for i in ids]
        assert seqs == sorted(seqs)
        assert len(set(seqs)) == len(seqs)


def test_the_locked_counter_of_free_threaded_builds_never_repeats() -> None:
    from toolnexus._mapping import _locked_counter

    draw = _locked_counter()
    seen: list[int] = []
    lock = threading.Lock()

    def work() -> None:
        mine = [draw() for _ in range(5000)]
        with lock:
            seen.extend(mine)

    workers = [threading.Thread(target=work) for _ in range(6)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert sorted(seen) == list(range(1, 30_001))
