"""log_traffic: each Request and Answer as one JSON line, values masked unless asked for."""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
from typing import Any

import pytest

from support.values import FULL_PROFILE
from toolnexus import Answer, Request
from toolnexus._log import log_traffic

FORM = Request("elc-1", "input", "Who are you?", data={"schema": {"type": "object"}})
URL = Request("elc-2", "authorization", "Sign in", url="https://example.com/a")


def collect() -> tuple[list[dict[str, Any]], Any]:
    records: list[dict[str, Any]] = []

    def sink(line: str) -> None:
        assert "\n" not in line
        records.append(json.loads(line))

    return records, sink


def test_sync_resolver_logs_request_then_masked_answer() -> None:
    records, sink = collect()
    logged = log_traffic(lambda r: Answer(r.id, True, {"name": "Ada", "age": 36}), sink)
    answer = logged(FORM)
    assert answer == Answer("elc-1", True, {"name": "Ada", "age": 36})  # passed through unchanged
    assert [r["event"] for r in records] == ["request", "answer"]
    assert records[0]["request"] == FORM.to_dict()
    assert records[1]["id"] == "elc-1"
    assert records[1]["answer"] == {"id": "elc-1", "ok": True, "data": {"name": "***", "age": "***"}}
    assert isinstance(records[1]["seconds"], float)
    assert records[1]["seconds"] >= 0
    for record in records:
        assert record["time"].endswith("Z")
    assert "Ada" not in json.dumps(records)


def test_values_true_logs_the_values() -> None:
    records, sink = collect()
    logged = log_traffic(lambda r: Answer(r.id, True, {"name": "Ada"}), sink, values=True)
    logged(FORM)
    assert records[1]["answer"]["data"] == {"name": "Ada"}


def test_declined_answer_and_url_request() -> None:
    records, sink = collect()
    log_traffic(lambda r: Answer(r.id, False, None, "declined"), sink)(URL)
    assert records[0]["request"] == {
        "id": "elc-2",
        "kind": "authorization",
        "prompt": "Sign in",
        "url": "https://example.com/a",
    }
    assert records[1]["answer"] == {"id": "elc-2", "ok": False, "reason": "declined"}


def test_wire_mapping_answers_are_logged_and_masked_too() -> None:
    records, sink = collect()
    result = log_traffic(lambda r: {"id": r.id, "ok": True, "data": {"pin": "1234"}}, sink)(FORM)
    assert result == {"id": "elc-1", "ok": True, "data": {"pin": "1234"}}
    assert records[1]["answer"]["data"] == {"pin": "***"}


def test_a_non_answer_is_named_by_type() -> None:
    records, sink = collect()
    log_traffic(lambda r: 42, sink)(FORM)
    assert records[1]["answer"] is None
    assert records[1]["returned"] == "int"


def test_raising_resolver_logs_the_type_never_the_message() -> None:
    records, sink = collect()

    def broken(request: Request) -> Answer:
        raise RuntimeError("secret path /home/ada/token.txt")

    with pytest.raises(RuntimeError, match="secret path"):  # the resolver's own error, passed on
        log_traffic(broken, sink)(FORM)
    assert records[1]["event"] == "error"
    assert records[1]["error"] == "RuntimeError"
    assert "token.txt" not in json.dumps(records)


def test_async_resolver_gets_an_async_wrapper() -> None:
    records, sink = collect()

    async def resolver(request: Request) -> Answer:
        await asyncio.sleep(0)
        return Answer(request.id, False, None, "cancelled")

    logged = log_traffic(resolver, sink)
    assert inspect.iscoroutinefunction(logged)
    assert asyncio.run(logged(FORM)) == Answer("elc-1", False, None, "cancelled")
    assert [r["event"] for r in records] == ["request", "answer"]


def test_async_callable_object_gets_an_async_wrapper() -> None:
    class Resolver:
        async def __call__(self, request: Request) -> Answer:
            return Answer(request.id, True)

    records, sink = collect()
    logged = log_traffic(Resolver(), sink)
    assert inspect.iscoroutinefunction(logged)
    asyncio.run(logged(URL))
    assert records[1]["answer"] == {"id": "elc-2", "ok": True}


def test_default_logger_is_toolnexus_traffic(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="toolnexus.traffic"):
        log_traffic(lambda r: Answer(r.id, True))(URL)
    lines = [r.getMessage() for r in caplog.records if r.name == "toolnexus.traffic"]
    assert [json.loads(line)["event"] for line in lines] == ["request", "answer"]


def test_a_given_logger_receives_json_lines(caplog: pytest.LogCaptureFixture) -> None:
    logger = logging.getLogger("test.traffic")
    with caplog.at_level(logging.INFO, logger="test.traffic"):
        log_traffic(lambda r: Answer(r.id, True), logger)(URL)
    messages = [json.loads(r.getMessage()) for r in caplog.records if r.name == "test.traffic"]
    assert messages[0]["request"]["id"] == "elc-2"


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(TypeError, match="wait_for"):
        log_traffic(3)  # type: ignore[call-overload]
    with pytest.raises(TypeError, match="logger"):
        log_traffic(lambda r: r, "log.txt")  # type: ignore[call-overload]
    with pytest.raises(TypeError, match="values"):
        log_traffic(lambda r: r, values=1)  # type: ignore[call-overload]


def test_a_malformed_answer_mapping_has_every_other_key_masked_too() -> None:
    records, sink = collect()
    log_traffic(
        lambda r: {"id": r.id, "ok": True, "content": {"password": "hunter2"}, "note": "hunter3"}, sink
    )(FORM)
    logged = records[1]["answer"]
    assert logged == {"id": "elc-1", "ok": True, "content": {"password": "***"}, "note": "***"}
    assert "hunter" not in json.dumps(records)


def test_server_text_that_could_rewrite_a_terminal_is_escaped_and_reads_back() -> None:
    hostile = "Deploy?\x1b[2J\x1b]0;pwned\x07\u202e\x85\u2028"
    schema = {"type": "object", "properties": {hostile: {"type": "string", "enum": [hostile]}}}
    lines: list[str] = []
    logged = log_traffic(lambda request: Answer(request.id, False, None, "declined"), lines.append)
    logged(Request("r-1", "input", hostile, data={"schema": schema}))

    for line in lines:
        assert line.isprintable(), line
    request = json.loads(lines[0])["request"]
    assert request["prompt"] == hostile
    assert request["data"]["schema"] == schema


# --- what the server got, through the callback's observer --------------------------------------


@pytest.mark.parametrize("values", [False, True], ids=["masked", "values"])
def test_the_log_says_what_the_server_got_when_it_differs(values: bool) -> None:
    """A real server (in process, legacy era): an invalid answer becomes cancel (validation),
    a slow one cancel (timeout), a partial one gets its default (defaults); a fitting one
    needs no "sent" line."""
    import threading

    from servers.elicit_server import build_server
    from servers.harness import call, connect
    from toolnexus.mcp import elicitation_callback

    records, sink = collect()
    release = threading.Event()

    def wait_for(request: Request) -> Answer:
        tag = request.prompt.rsplit(" ", 1)[-1]
        if tag == "invalid":
            return Answer(request.id, True, {**FULL_PROFILE, "age": -1})
        if tag == "slow":
            release.wait(timeout=30)
            return Answer(request.id, True, FULL_PROFILE)
        if tag == "partial":
            return Answer(request.id, True, {k: v for k, v in FULL_PROFILE.items() if k != "newsletter"})
        return Answer(request.id, True, FULL_PROFILE)

    logged = log_traffic(wait_for, sink, values=values)

    async def main() -> list[str]:
        callback = elicitation_callback(logged, timeout=1.0, on_result=logged.sent)
        async with connect(build_server()[0], "legacy", callback) as client:
            return [
                (await call(client, "form_elicit", tag))["action"]
                for tag in ("invalid", "slow", "partial", "fits")
            ]

    try:
        actions = asyncio.run(main())
    finally:
        release.set()
    assert actions == ["cancel", "cancel", "accept", "accept"]
    sent = [r for r in records if r["event"] == "sent"]
    assert [(r["result"]["action"], r["reason"]) for r in sent] == [
        ("cancel", "validation"),
        ("cancel", "timeout"),
        ("accept", "defaults"),
    ]
    requests = {
        r["request"]["prompt"].rsplit(" ", 1)[-1]: r["request"]["id"]
        for r in records
        if r["event"] == "request"
    }
    assert [r["id"] for r in sent] == [requests["invalid"], requests["slow"], requests["partial"]]
    content = sent[2]["result"]["content"]
    if values:
        assert content == {
            **{k: v for k, v in FULL_PROFILE.items() if k != "newsletter"},
            "newsletter": False,
        }
    else:
        assert content == dict.fromkeys(FULL_PROFILE, "***")
        assert "Ada" not in json.dumps(records)
    # The resolver's own answer to the invalid question is there too, next to what was sent.
    answered = [r for r in records if r["event"] == "answer" and r["id"] == requests["invalid"]]
    assert answered[0]["answer"]["ok"] is True
