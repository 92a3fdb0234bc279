"""A test module as a user of toolnexus writes it: the ``elicit_server`` fixture, a scripted
and a replayed resolver, against a real MCP server.

``tests/test_testing_plugin.py`` runs it with pytest's ``pytester``. The tests whose names
start with ``test_fails_`` fail on purpose, to show the messages a user sees.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, Field

from toolnexus import Answer, Request, log_traffic
from toolnexus.testing import ReplayResolver, ScriptedResolver

ERAS = ["2025-11-25", "2026-07-28"]


class Deploy(BaseModel):
    region: str
    replicas: int = Field(default=2, ge=1, le=10)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def my_resolver(request: Request) -> Answer:
    """The resolver under test: deploys to the EU, refuses every link."""
    if request.kind == "authorization":
        return Answer(request.id, False, None, "declined")
    return Answer(request.id, True, {"region": "eu-west-1"})


@pytest.mark.anyio
@pytest.mark.parametrize("era", ERAS)
async def test_my_resolver_accepts_the_form(elicit_server: Any, era: str) -> None:
    result = await elicit_server(my_resolver, schema=Deploy, message="Deploy where?", era=era)
    assert result.action == "accept"
    assert result.content == {"region": "eu-west-1", "replicas": 2}  # the default laid in


@pytest.mark.anyio
@pytest.mark.parametrize("era", ERAS)
async def test_my_resolver_declines_links(elicit_server: Any, era: str) -> None:
    result = await elicit_server(my_resolver, url="https://auth.example.com/start", era=era)
    assert result.action == "decline"


@pytest.mark.anyio
async def test_a_script_answers_in_order(elicit_server: Any) -> None:
    script = ScriptedResolver(
        [
            {
                "prompt": "Deploy",
                "fields": ["region", "replicas"],
                "action": "accept",
                "values": {"region": "us-east-1", "replicas": 5},
            },
            {"kind": "authorization", "url_host": "auth.example.com", "action": "cancel"},
        ]
    )
    form = await elicit_server(script, schema=Deploy, message="Deploy where?")
    link = await elicit_server(script, url="https://auth.example.com/start", message="Sign in")
    assert (form.action, form.content, link.action) == (
        "accept",
        {"region": "us-east-1", "replicas": 5},
        "cancel",
    )
    assert [request.kind for request in script.requests] == ["input", "authorization"]
    script.assert_done()


@pytest.mark.anyio
async def test_a_recorded_session_replays(elicit_server: Any, tmp_path: Path) -> None:
    log = tmp_path / "session.jsonl"
    with log.open("w", encoding="utf-8") as out:
        recorder = log_traffic(my_resolver, lambda line: out.write(line + "\n"), values=True)
        await elicit_server(recorder, schema=Deploy, message="Deploy where?", era="2025-11-25")
    replay = ReplayResolver.from_log(log)
    result = await elicit_server(replay, schema=Deploy, message="Deploy where?", era="2026-07-28")
    assert result.content == {"region": "eu-west-1", "replicas": 2}
    replay.assert_done()


def test_a_masked_log_is_refused(tmp_path: Path) -> None:
    log = tmp_path / "masked.jsonl"
    with log.open("w", encoding="utf-8") as out:
        log_traffic(my_resolver, lambda line: out.write(line + "\n"))(
            Request("r1", "input", "Deploy where?", data={"schema": {"type": "object"}})
        )
    with pytest.raises(ValueError, match="masked values"):
        ReplayResolver.from_log(log)


# --- what a user sees when a script does not match ---------------------------------------


@pytest.mark.anyio
async def test_fails_wrong_prompt(elicit_server: Any) -> None:
    script = ScriptedResolver([{"prompt": "Sign in", "action": "accept"}])
    await elicit_server(script, schema=Deploy, message="Deploy where?")


@pytest.mark.anyio
async def test_fails_steps_left(elicit_server: Any) -> None:
    script = ScriptedResolver([{"action": "decline"}, {"prompt": "Confirm", "action": "cancel"}])
    result = await elicit_server(script, schema=Deploy, message="Deploy where?")
    assert result.action == "decline"
    script.assert_done()


@pytest.mark.anyio
async def test_fails_replay_of_another_form(elicit_server: Any, tmp_path: Path) -> None:
    log = tmp_path / "session.jsonl"
    with log.open("w", encoding="utf-8") as out:
        recorder = log_traffic(my_resolver, lambda line: out.write(line + "\n"), values=True)
        await elicit_server(recorder, schema=Deploy, message="Deploy where?")
    other = {"type": "object", "properties": {"region": {"type": "string"}}, "required": ["region"]}
    await elicit_server(ReplayResolver.from_log(log), schema=other, message="Deploy where?")
