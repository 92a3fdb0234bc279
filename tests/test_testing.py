"""toolnexus.testing: real requests, the scripted and replaying resolvers, a real server."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from servers.elicit_server import Profile, build_server
from servers.harness import call, connect
from support.processes import Processes
from toolnexus import Answer, Request, log_traffic
from toolnexus.mcp import elicitation_callback
from toolnexus.testing import (
    ReplayResolver,
    ScriptedResolver,
    elicit_through_server,
    form_request,
    url_request,
)

SCHEMA = {
    "type": "object",
    "properties": {"region": {"type": "string"}, "replicas": {"type": "integer", "default": 2}},
    "required": ["region"],
}


# --- form_request, url_request ------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("era", "tool", "version"),
    [("legacy", "form_elicit", None), ("legacy", "form", "2025-11-25"), ("2026", "form", "2026-07-28")],
)
async def test_a_models_schema_is_the_one_the_sdks_server_sends(era: Any, tool: str, version: Any) -> None:
    script = ScriptedResolver([{"action": "cancel"}])
    async with connect(build_server()[0], era, elicitation_callback(script)) as client:
        await call(client, tool, "t")
    sent = script.requests[0]
    made = form_request(Profile, sent.prompt, era=version)
    assert made.data == sent.data
    assert made.kind == "input"
    assert made.prompt == sent.prompt
    assert sent.data is not None
    assert "description" in sent.data["schema"]["properties"]["name"]
    assert ("description" in sent.data["schema"]) == (version != "2026-07-28")


def test_form_request_copies_a_schema_and_refuses_what_is_not_one() -> None:
    schema = json.loads(json.dumps(SCHEMA))
    request = form_request(schema, "Deploy?")
    schema["properties"].clear()
    assert request.data == {"schema": SCHEMA}
    with pytest.raises(TypeError, match="pydantic model class"):
        form_request(dict)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="mapping or a pydantic model"):
        form_request(["region"])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="message"):
        form_request(SCHEMA, None)  # type: ignore[arg-type]


def test_url_request() -> None:
    request = url_request("https://auth.example.com/start", "Sign in")
    assert (request.kind, request.url, request.prompt, request.data) == (
        "authorization",
        "https://auth.example.com/start",
        "Sign in",
        None,
    )
    with pytest.raises(TypeError, match="url"):
        url_request(None)  # type: ignore[arg-type]


# --- ScriptedResolver ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("step", "error", "words"),
    [
        ({"action": "accept", "prompt": "x", "colour": 1}, ValueError, "step 0: unknown key 'colour'"),
        ({"action": "ask"}, ValueError, "step 0: action must be one of accept, decline, cancel, not 'ask'"),
        ({"prompt": "x"}, ValueError, "step 0: action is missing"),
        ({"action": "decline", "values": {"a": 1}}, ValueError, "step 0: values is given with action"),
        ({"action": "accept", "fields": "region"}, TypeError, "step 0: fields must be a list"),
        ({"action": "accept", "values": {"a": {"b": 1}}}, TypeError, "step 0: values['a'] must be"),
        (
            {"action": "cancel", "kind": "form"},
            ValueError,
            "step 0: kind must be one of input, authorization",
        ),
        ({"action": "accept", "server": "x"}, ValueError, "step 0: unknown key 'server'"),
    ],
)
def test_a_step_that_cannot_be_right_is_refused_naming_step_and_key(
    step: dict[str, Any], error: type[Exception], words: str
) -> None:
    with pytest.raises(error) as caught:
        ScriptedResolver([step])
    assert str(caught.value).startswith(words)


def test_a_script_matches_each_key_and_answers_each_action() -> None:
    script = ScriptedResolver(
        [
            {
                "kind": "input",
                "prompt": "Deploy",
                "fields": ["replicas", "region"],
                "action": "accept",
                "values": {"region": "eu"},
            },
            {"url_host": "auth.example.com", "action": "accept", "kind": "authorization"},
            {"action": "decline"},
        ]
    )
    form = form_request(SCHEMA, "Deploy where?")
    assert script(form) == Answer(form.id, True, {"region": "eu"})
    link = url_request("https://AUTH.example.com:8443/x")
    assert script(link) == Answer(link.id, True)
    assert script(form).reason == "declined"
    assert script.requests == [form, link, form]
    script.assert_done()


def test_a_mismatch_shows_what_was_asked_and_what_the_step_expected() -> None:
    script = ScriptedResolver([{"url_host": "auth.example.com", "action": "accept"}])
    with pytest.raises(AssertionError) as caught:
        script(url_request("https://auth.example.com.evil.example/x", "Sign in\x1b[2J"))
    assert str(caught.value) == (
        "ScriptedResolver: request 1 does not match step 0: the URL's host is "
        "'auth.example.com.evil.example', not 'auth.example.com'\n"
        "  asked:    kind 'authorization', prompt 'Sign in\\x1b[2J', url "
        "'https://auth.example.com.evil.example/x'\n"
        "  expected: url_host='auth.example.com', action='accept'"
    )
    with pytest.raises(AssertionError, match="failed while answering"):
        script.assert_done()


def test_without_strict_a_mismatch_is_cancelled_and_the_step_waits() -> None:
    script = ScriptedResolver([{"prompt": "Deploy", "action": "decline"}], strict=False)
    other = form_request(SCHEMA, "Something else")
    assert script(other) == Answer(other.id, False, None, "cancelled")
    assert script(form_request(SCHEMA, "Deploy")).reason == "declined"
    extra = form_request(SCHEMA, "More")
    assert script(extra).reason == "cancelled"
    assert len(script.failures) == 2
    with pytest.raises(AssertionError, match="request 1 does not match step 0"):
        script.assert_done()


def test_a_request_after_the_last_step() -> None:
    script = ScriptedResolver([])
    with pytest.raises(AssertionError, match="request 1 was not expected: all 0 steps are used"):
        script(form_request(SCHEMA))


@pytest.mark.anyio
@pytest.mark.parametrize("era", ["2025-11-25", "2026-07-28"])
async def test_the_async_twin_through_a_real_server(era: Any) -> None:
    script = ScriptedResolver([{"action": "accept", "values": {"region": "eu"}}])
    result = await elicit_through_server(script.acall, schema=SCHEMA, era=era)
    assert (result.action, result.content) == ("accept", {"region": "eu", "replicas": 2})
    script.assert_done()


# --- elicit_through_server ------------------------------------------------------------------


class Consent(BaseModel):
    agree: bool


@pytest.mark.anyio
@pytest.mark.parametrize("era", ["2025-11-25", "2026-07-28"])
async def test_the_server_gets_what_the_bridge_sends(era: Any) -> None:
    async def refuse_link(request: Request) -> Answer:
        return Answer(request.id, True, {"ignored": 1})  # URL mode: accept carries no content

    url = await elicit_through_server(refuse_link, url="https://auth.example.com/", era=era)
    assert (url.action, url.content) == ("accept", None)

    def wrong(request: Request) -> Answer:
        return Answer(request.id, True, {"agree": "yes"})

    form = await elicit_through_server(wrong, schema=Consent, era=era)
    assert form.action == "cancel"  # the bridge never sends what does not fit


@pytest.mark.anyio
async def test_elicit_through_server_refuses_bad_arguments() -> None:
    def nobody(request: Request) -> Answer:
        raise AssertionError("never asked")

    with pytest.raises(TypeError, match="exactly one of schema and url"):
        await elicit_through_server(nobody)
    with pytest.raises(ValueError, match="era must be one of 2025-11-25, 2026-07-28"):
        await elicit_through_server(nobody, schema=SCHEMA, era="2025-06-18")  # type: ignore[arg-type]


# --- ReplayResolver -----------------------------------------------------------------------


def _record(
    path: Path, resolver: Callable[[Request], Any], requests: list[Request], values: bool = True
) -> None:
    with path.open("w", encoding="utf-8") as out:
        logged: Callable[[Request], Any] = log_traffic(
            resolver, lambda line: out.write(line + "\n"), values=values
        )
        for request in requests:
            with contextlib.suppress(RuntimeError):
                logged(request)


def test_a_replay_gives_the_recorded_answers_under_the_new_ids(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"

    def answer(request: Request) -> Any:
        if request.prompt == "boom":
            raise RuntimeError("the resolver failed")
        if request.kind == "authorization":
            return {"id": request.id, "ok": False, "reason": "declined"}
        return Answer(request.id, True, {"region": "eu"})

    asked = [
        form_request(SCHEMA, "Deploy"),
        url_request("https://auth.example.com/a?state=1"),
        form_request(SCHEMA, "boom"),
    ]
    _record(log, answer, asked)
    replay = ReplayResolver.from_log(log)
    again = [
        form_request(SCHEMA, "Deploy"),
        url_request("https://auth.example.com/b?state=2"),
        form_request(SCHEMA, "boom"),
    ]
    answers = [replay(request) for request in again]
    assert answers == [
        Answer(again[0].id, True, {"region": "eu"}),
        Answer(again[1].id, False, None, "declined"),
        Answer(again[2].id, False, None, "cancelled"),  # the resolver raised: the server got cancel
    ]
    replay.assert_done()


def test_a_replay_with_requests_left_over(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    _record(log, lambda r: Answer(r.id, False, None, "cancelled"), [url_request("https://a.example/", "One")])
    replay = ReplayResolver.from_log(log)
    with pytest.raises(AssertionError, match=r"1 of 1 recorded requests left unused after 0 requests"):
        replay.assert_done()


def test_a_masked_or_broken_log_is_refused_naming_the_line(tmp_path: Path) -> None:
    log = tmp_path / "masked.jsonl"
    _record(log, lambda r: Answer(r.id, True, {"region": "eu"}), [form_request(SCHEMA)], values=False)
    with pytest.raises(ValueError, match=r"masked.jsonl:2: this log was written with masked values"):
        ReplayResolver.from_log(log)
    broken = tmp_path / "broken.jsonl"
    broken.write_text('\n{"event": "request"}\nnot json\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"broken.jsonl:2: a malformed request event"):
        ReplayResolver.from_log(broken)
    broken.write_text('{"time": 1}\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"broken.jsonl:1: not a traffic log event"):
        ReplayResolver.from_log(broken)
    deep = 100_000
    broken.write_text('{"event": "request", "request": ' + "[" * deep + "]" * deep + "}\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"broken.jsonl:1: nested too deeply to be a traffic log event"):
        ReplayResolver.from_log(broken)  # issue 20: was a RecursionError


# --- what importing costs -----------------------------------------------------------------

PROBE = """
import json, sys
for name in {blocked!r}:
    sys.modules[name] = None  # importing it now fails
import {module}
heavy = ["mcp.client", "mcp.server", "anyio", "starlette", "pytest", "hypothesis"]
names = [n for n, m in sys.modules.items() if m is not None]
print(json.dumps(sorted({{h for h in heavy for n in names if n == h or n.startswith(h + ".")}})))
"""


@pytest.mark.parametrize(
    ("module", "blocked", "expected"),
    [
        ("toolnexus.testing, toolnexus.policy", ["pytest", "hypothesis"], []),
        ("toolnexus.testing.pytest_plugin", ["hypothesis"], ["pytest"]),
    ],
)
def test_the_kit_imports_without_pytest_hypothesis_or_the_sdks_server(
    module: str, blocked: list[str], expected: list[str], processes: Processes
) -> None:
    code = PROBE.format(module=module, blocked=blocked)
    out = processes.python(code, check=True).stdout
    assert json.loads(out) == expected
