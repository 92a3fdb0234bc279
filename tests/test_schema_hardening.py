"""What a hostile or careless server's schema cannot make the client do.

The schema comes from the server. Reading it must never fetch anything (the spec forbids a
client to pre-fetch URLs), never run the server's regular expressions (one crafted pattern
can hold the event loop), and never let an exception carry its text to the server: a schema
outside the subset is one problem in our own words, and the bridge then sends cancel.
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
from toolnexus.forms import validate_content
from toolnexus.mcp import elicitation_callback


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


def _outside(schema: dict[str, Any], content: dict[str, Any]) -> str:
    """The one problem validate_content gives for a schema outside the subset."""
    problems = validate_content(schema, content)
    assert len(problems) == 1, problems
    assert problems[0].startswith("the requested schema is outside the elicitation subset: ")
    return problems[0]


@pytest.mark.parametrize("where", ["/schema.json", "/schema.json#/definitions/x"])
def test_a_remote_ref_is_never_fetched(http_hits: tuple[str, list[str]], where: str) -> None:
    base, hits = http_hits
    schema = {"type": "object", "properties": {"a": {"$ref": base + where}}}
    assert "references elsewhere are never fetched" in _outside(schema, {"a": "x"})
    assert hits == []


def test_a_file_ref_is_never_opened(tmp_path: Any) -> None:
    target = tmp_path / "secret.json"
    target.write_text('{"type": "integer"}')
    schema = {"type": "object", "properties": {"a": {"$ref": target.as_uri()}}}
    assert "never fetched" in _outside(schema, {"a": "x"})


def test_a_ref_inside_the_schema_still_resolves() -> None:
    schema = {
        "type": "object",
        "properties": {"n": {"$ref": "#/$defs/small"}},
        "$defs": {"small": {"type": "integer", "maximum": 3}},
    }
    assert validate_content(schema, {"n": 2}) == []
    assert validate_content(schema, {"n": 9}) == ["'n' must be at most 3"]


def test_an_unresolvable_local_ref_is_refused() -> None:
    schema = {"type": "object", "properties": {"a": {"$ref": "#/$defs/nowhere"}}}
    assert "points to nothing" in _outside(schema, {"a": "x"})


def test_the_servers_regular_expressions_are_not_run() -> None:
    # The server checks its own pattern on receipt; a crafted one could hold the loop.
    schema = {"type": "object", "properties": {"a": {"type": "string", "pattern": "^(b+)+$"}}}
    assert validate_content(schema, {"a": "b" * 40 + "!"}) == []
    by_pattern = {"type": "object", "patternProperties": {"^x": {"type": "integer"}}}
    assert "'patternProperties' is outside the elicitation subset" in _outside(by_pattern, {"xa": 1})


@pytest.mark.parametrize("meta", [5, [], {"x": 1}, "https://example.com/my-dialect"])
def test_the_dialect_is_an_annotation(meta: object) -> None:
    schema = {"$schema": meta, "type": "object", "properties": {"n": {"type": "integer"}}}
    assert validate_content(schema, {"n": "x"}) == ["'n' must be an integer"]


def test_a_nested_object_is_refused_naming_the_property() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"type": "object", "properties": {"b": {"type": "string"}}}},
    }
    assert "property 'a': a nested object" in _outside(schema, {"a": {"b": 5}})


def test_a_keyword_outside_the_subset_is_refused_naming_it() -> None:
    assert "'minProperties' is outside" in _outside({"type": "object", "minProperties": 2}, {"a": 1})


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
async def test_the_bridge_cancels_a_form_outside_the_subset_without_asking(
    http_hits: tuple[str, list[str]], caplog: pytest.LogCaptureFixture
) -> None:
    base, hits = http_hits
    asked: list[Request] = []

    def accept(request: Request) -> Answer:
        asked.append(request)
        return Answer(request.id, True, {"a": "x"})

    callback = elicitation_callback(accept)
    for schema in (
        {"type": "object", "properties": {"a": {"$ref": base + "/s.json"}}},
        {"type": "object", "properties": {"a": {"type": "string"}}, "not": {}},
        {"type": "object", "properties": {"a": {"$ref": "#/nowhere"}}},
    ):
        params = ElicitRequestFormParams(message="m", requested_schema=schema)
        with caplog.at_level(logging.WARNING, logger="toolnexus"):
            result = await callback(None, params)  # type: ignore[arg-type]
        assert result.model_dump(exclude_none=True) == {"action": "cancel"}
    assert hits == []
    assert asked == []
    assert caplog.text.count("cancel sent without asking") == 3


@pytest.mark.anyio
async def test_without_validation_a_form_outside_the_subset_still_reaches_the_resolver() -> None:
    callback = elicitation_callback(lambda request: Answer(request.id, True, {"a": "x"}), validate=False)
    schema = {"type": "object", "properties": {"a": {"type": "string"}}, "not": {}}
    params = ElicitRequestFormParams(message="m", requested_schema=schema)
    result = await callback(None, params)  # type: ignore[arg-type]
    assert result.model_dump(exclude_none=True) == {"action": "accept", "content": {"a": "x"}}


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
