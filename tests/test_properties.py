"""Property tests: whatever a server or a resolver hands over, the mapping either maps it or
raises TypeError/ValueError; wire values survive a round trip; ids never repeat."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from support.fuzzing import examples
from toolnexus import Answer, Request, answer_to_elicit_result, elicitation_to_request
from toolnexus.errors import AnswerProblemError
from toolnexus.forms import read_form
from toolnexus.mcp import new_request_id, result_for
from toolnexus.policy import Policy
from toolnexus.testing import form_request
from toolnexus.testing import strategies as _kit

json_scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
odd_values = st.sampled_from([object(), b"bytes", (1, 2), {1, 2}, 1j, Ellipsis])
any_value = json_values | odd_values


def wire_mapping(
    keys: list[str], known: dict[str, st.SearchStrategy[Any]]
) -> st.SearchStrategy[dict[str, Any]]:
    """Mappings whose keys come mostly from the wire shape, each value well- or ill-typed."""
    fields = {k: known.get(k, st.nothing()) | any_value for k in keys}
    return st.fixed_dictionaries({}, optional=fields).flatmap(
        lambda d: st.dictionaries(st.text(max_size=6), any_value, max_size=2).map(
            lambda extra: {**extra, **d}
        )
    )


elicit_params = wire_mapping(
    ["mode", "message", "url", "requestedSchema", "elicitationId", "_meta", "task"],
    {
        "mode": st.sampled_from(["url", "form"]),
        "message": st.text(),
        "url": st.text(),
        "requestedSchema": json_values,
    },
)

odd_answers = wire_mapping(
    ["id", "ok", "data", "reason"],
    {
        "id": st.text(),
        "ok": st.booleans(),
        "data": st.dictionaries(st.text(), json_values, max_size=4),
        "reason": st.sampled_from(["declined", "cancelled", "expired", "other"]),
    },
)
well_formed_answers = st.fixed_dictionaries(
    {"id": st.text(min_size=1, max_size=12), "ok": st.booleans()},
    optional={
        "data": st.dictionaries(
            st.text(max_size=8), st.text(max_size=8) | st.integers() | st.booleans(), max_size=3
        ),
        "reason": st.sampled_from(["declined", "cancelled", "expired", "other"]),
    },
)
answers = odd_answers | well_formed_answers
"""Answers a host could send (every outcome among them), and odd shapes beside them."""


@pytest.mark.timeout(600)  # 400 examples: room for a loaded machine (pytest-timeout stops at 120 s)
def test_any_params_mapping_maps_or_raises_type_or_value_error() -> None:
    mapped = 0

    @given(elicit_params)
    @settings(max_examples=examples(400))
    def check(params: dict[str, Any]) -> None:
        nonlocal mapped
        try:
            req = elicitation_to_request(params)
        except (TypeError, ValueError):
            return
        assert req.kind == ("authorization" if params.get("mode") == "url" else "input")
        assert isinstance(req.prompt, str)
        assert Request.from_dict(req.to_dict()) == req
        mapped += 1

    check()
    assert mapped > 0, "no example mapped: the test checked the errors alone"


@pytest.mark.timeout(600)  # as above
def test_any_answer_mapping_maps_or_raises_type_or_value_error() -> None:
    mapped = {True: 0, False: 0}

    @given(answers)
    @settings(max_examples=examples(400))
    def check(answer: dict[str, Any]) -> None:
        try:
            result = answer_to_elicit_result(answer)
        except (TypeError, ValueError):
            return
        if answer["ok"]:
            assert result.action == "accept"
            assert result.content == (answer.get("data") or {})
        else:
            assert result.action == ("decline" if answer.get("reason") == "declined" else "cancel")
            assert result.content is None
        mapped[bool(answer["ok"])] += 1

    check()
    assert all(mapped.values()), f"not every outcome mapped (accepted, refused): {mapped}"


optional_text = st.none() | st.text()
requests = st.builds(
    Request,
    st.text(),
    st.text(),
    st.text(),
    optional_text,
    st.none() | st.dictionaries(st.text(), json_values, max_size=4),
    optional_text,
)
answer_values = st.builds(
    Answer,
    st.text(),
    st.booleans(),
    st.none() | st.dictionaries(st.text(), json_values, max_size=4),
    st.none() | st.sampled_from(["declined", "cancelled", "expired"]) | st.text(),
)


@given(requests)
def test_request_round_trips_through_its_wire_form(req: Request) -> None:
    assert Request.from_dict(req.to_dict()) == req


@given(answer_values)
def test_answer_round_trips_through_its_wire_form(answer: Answer) -> None:
    assert Answer.from_dict(answer.to_dict()) == answer


@given(st.integers(min_value=2, max_value=8), st.integers(min_value=1, max_value=300))
@settings(max_examples=examples(25), deadline=None)
def test_ids_stay_unique_under_threads(threads: int, per_thread: int) -> None:
    out: list[str] = []
    lock = threading.Lock()
    barrier = threading.Barrier(threads)

    def work() -> None:
        barrier.wait()
        mine = [new_request_id() for _ in range(per_thread)]
        with lock:
            out.extend(mine)

    workers = [threading.Thread(target=work) for _ in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert len(out) == threads * per_thread
    assert len(set(out)) == len(out)


# --- with toolnexus.testing.strategies: forms, requests and answers as a server and a user give them


@given(_kit.forms().flatmap(lambda schema: _kit.answers_for(schema).map(lambda content: (schema, content))))
@settings(max_examples=examples(60), deadline=None)
def test_an_answer_that_fits_the_form_reaches_the_server_with_its_defaults(
    case: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    schema, content = case
    request = form_request(schema, "Fill in")
    result = result_for(request, Answer(request.id, True, content))
    assert result.action == "accept"
    assert result.content == read_form(schema).with_defaults(content)


@given(
    _kit.forms(min_fields=1).flatmap(
        lambda schema: _kit.answers_for(schema, valid=False).map(lambda broken: (schema, *broken))
    )
)
@settings(max_examples=examples(60), deadline=None)
def test_an_answer_that_breaks_a_field_never_reaches_the_server(
    case: tuple[dict[str, Any], dict[str, Any], str],
) -> None:
    schema, content, name = case
    request = form_request(schema, "Fill in")
    with pytest.raises(AnswerProblemError) as caught:
        result_for(request, Answer(request.id, True, content), apply_defaults=False)
    assert caught.value.problems
    assert all(repr(name) in problem for problem in caught.value.problems)


@given(_kit.requests(), st.booleans())
@settings(max_examples=examples(60), deadline=None)
def test_a_policy_cancels_what_no_rule_accepts_and_never_declines(request: Request, url_rule: bool) -> None:
    rules: list[dict[str, Any]] = [{"kind": "input", "prompt": "^never$", "action": "accept"}]
    if url_rule:
        rules.append({"kind": "authorization", "url_host": "elsewhere.example", "action": "accept"})
    answer = Policy(rules)(request)
    assert answer == Answer(request.id, False, None, "cancelled")
