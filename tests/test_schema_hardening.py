"""What a hostile or careless server's schema cannot make the client do.

The schema comes from the server. Checking an answer against it must never fetch anything
(the spec forbids a client to pre-fetch URLs), never run the server's regular expressions
(one crafted pattern can hold the event loop), and never let an exception carry its text to
the server: every failure is a problem in our own words, and the bridge then sends cancel.
"""

from __future__ import annotations

import http.server
import logging
import math
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from mcp_types import ElicitRequestFormParams, ElicitRequestURLParams

from toolnexus import Answer, Request
from toolnexus.mcp import elicitation_callback, validate_content


@pytest.fixture
def http_hits() -> Iterator[tuple[str, list[str]]]:
    """A local HTTP server that records every path asked of it and serves a schema."""
    hits: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            hits.append(self.path)
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(b'{"type": "integer"}')

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", hits
    finally:
        server.shutdown()
        server.server_close()


def test_the_fixture_server_answers_when_asked(http_hits: tuple[str, list[str]]) -> None:
    import urllib.request

    base, hits = http_hits
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(base + "/probe", timeout=5) as response:
        assert response.status == 200
    assert hits == ["/probe"]  # so an empty list below means: never asked


@pytest.mark.parametrize("where", ["/schema.json", "/schema.json#/definitions/x"])
def test_a_remote_ref_is_never_fetched(http_hits: tuple[str, list[str]], where: str) -> None:
    base, hits = http_hits
    schema = {"type": "object", "properties": {"a": {"$ref": base + where}}}
    with pytest.raises(ValueError, match="references outside the schema are never fetched"):
        validate_content(schema, {"a": "x"})
    assert hits == []


def test_a_file_ref_is_never_opened(tmp_path: Any) -> None:
    target = tmp_path / "secret.json"
    target.write_text('{"type": "integer"}')
    schema = {"type": "object", "properties": {"a": {"$ref": target.as_uri()}}}
    with pytest.raises(ValueError, match="never fetched"):
        validate_content(schema, {"a": "x"})


def test_a_ref_inside_the_schema_still_resolves() -> None:
    schema = {
        "type": "object",
        "properties": {"n": {"$ref": "#/$defs/small"}},
        "$defs": {"small": {"type": "integer", "maximum": 3}},
    }
    assert validate_content(schema, {"n": 2}) == []
    assert validate_content(schema, {"n": 9}) == ["'n' must be at most 3"]


def test_an_unresolvable_local_ref_is_a_value_error() -> None:
    schema = {"type": "object", "properties": {"a": {"$ref": "#/nowhere"}}}
    with pytest.raises(ValueError, match="cannot be applied"):
        validate_content(schema, {"a": "x"})


def test_the_servers_regular_expressions_are_not_run() -> None:
    # Outside the restricted schema; a crafted one could hold the loop for as long as it likes.
    schema = {"type": "object", "properties": {"a": {"type": "string", "pattern": "^b+$"}}}
    assert validate_content(schema, {"a": "aaa"}) == []
    by_pattern = {"type": "object", "patternProperties": {"^x": {"type": "integer"}}}
    assert validate_content(by_pattern, {"xa": "not an integer"}) == []


def test_additional_properties_false_is_judged_by_properties_alone() -> None:
    schema = {"type": "object", "patternProperties": {"^(a+)+$": {}}, "additionalProperties": False}
    assert validate_content(schema, {"aaaa!": 1}) == [
        "the form has a field the requested schema does not allow"
    ]
    assert validate_content({**schema, "properties": {"k": {}}}, {"k": 1}) == []


@pytest.mark.parametrize("meta", [5, [], {"x": 1}])
def test_a_schema_whose_dialect_is_not_a_string_is_a_value_error(meta: object) -> None:
    with pytest.raises(ValueError, match="not a valid JSON Schema"):
        validate_content({"$schema": meta, "type": "object"}, {})


def test_problems_below_a_field_name_the_field_and_the_part() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"type": "object", "properties": {"b": {"type": "string"}}}},
    }
    assert validate_content(schema, {"a": {"b": 5}}) == ["'a' (its part 'b') must be a string"]


def test_a_problem_with_the_whole_form_says_so() -> None:
    assert validate_content({"type": "object", "minProperties": 2}, {"a": 1}) == [
        "the form does not fit the requested schema (minProperties)"
    ]


@pytest.mark.parametrize(
    ("value", "fits"),
    [
        ("2026-01-31T09:30:00Z", True),
        ("2026-01-31T09:30:00+05:30", True),
        ("2026-01-31T09:30:00-23:59", True),
        ("2026-01-31T09:30:00+24:00", False),
        ("2026-01-31T09:30:00+99:99", False),
        ("2026-01-31T09:30:00+05:60", False),
    ],
)
def test_date_time_zone_offsets_are_checked(value: str, fits: bool) -> None:
    schema = {"type": "object", "properties": {"d": {"type": "string", "format": "date-time"}}}
    assert (validate_content(schema, {"d": value}) == []) is fits


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_non_finite_numbers_do_not_fit(value: float) -> None:
    schema = {"type": "object", "properties": {"n": {"type": "number", "maximum": 2}}}
    problems = validate_content(schema, {"n": value})
    assert problems[0] == "'n' must be a finite number"


# --- through the bridge: the server gets cancel, and no exception text --------------------


@pytest.mark.anyio
async def test_the_bridge_sends_cancel_for_a_schema_that_cannot_be_applied(
    http_hits: tuple[str, list[str]], caplog: pytest.LogCaptureFixture
) -> None:
    base, hits = http_hits
    callback = elicitation_callback(lambda request: Answer(request.id, True, {"a": "x"}))
    for schema in (
        {"type": "object", "properties": {"a": {"$ref": base + "/s.json"}}},
        {"$schema": 5, "type": "object", "properties": {"a": {"type": "string"}}},
        {"type": "object", "properties": {"a": {"$ref": "#/nowhere"}}},
    ):
        params = ElicitRequestFormParams(message="m", requested_schema=schema)
        with caplog.at_level(logging.WARNING, logger="toolnexus"):
            result = await callback(None, params)  # type: ignore[arg-type]
        assert result.model_dump(exclude_none=True) == {"action": "cancel"}
    assert hits == []
    assert "cannot be applied" in caplog.text or "not a valid JSON Schema" in caplog.text


@pytest.mark.anyio
async def test_a_url_accept_sends_no_content_whatever_data_the_answer_holds() -> None:
    callback = elicitation_callback(lambda request: Answer(request.id, True, {"nested": {"x": 1}}))
    params = ElicitRequestURLParams(message="Sign in", url="https://example.com/a", elicitation_id="e1")
    result = await callback(None, params)  # type: ignore[arg-type]
    assert result.model_dump(exclude_none=True) == {"action": "accept"}


@pytest.mark.parametrize("timeout", [1e12, float(2**62)])
def test_a_timeout_past_the_calendar_is_refused_up_front(timeout: float) -> None:
    def accept(request: Request) -> Answer:
        return Answer(request.id, True)

    with pytest.raises(ValueError, match="after the year 9999"):
        elicitation_callback(accept, timeout=timeout)


def test_an_unknown_dialect_falls_back_to_the_latest_draft_without_a_warning() -> None:
    import warnings

    schema = {
        "$schema": "https://example.com/my-dialect",
        "type": "object",
        "properties": {"n": {"type": "integer"}},
    }
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert validate_content(schema, {"n": "x"}) == ["'n' must be an integer"]
