"""What the server sees when the resolver fails, hangs or answers with content that does not fit.

In every case the server gets ``cancel``; nothing the resolver raised or typed reaches it (its
journal records every inbound message, every raw line or HTTP body on stdio and HTTP, and
every outcome or error its tools saw), and the failure is logged on the ``toolnexus`` logger.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import re
import threading
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import anyio
import pytest

from servers.elicit_server import build_server
from servers.harness import (
    ERA_VERSIONS,
    FORM_TOOLS,
    Era,
    Target,
    call,
    connect,
    resolver,
    server_journal,
    tag_of,
)
from support.values import ERAS, PROFILE
from toolnexus import Answer, Request
from toolnexus.mcp import elicitation_callback

pytestmark = pytest.mark.anyio


def cancel_outcome(era: Era, tool: str) -> dict[str, Any]:
    """What a tool reports when the server received ``cancel`` (and no content)."""
    return {"era": ERA_VERSIONS[era], "tool": tool, "action": "cancel", "content": None}


def _tools(era: Era) -> list[str]:
    return [tool for tool_era, tool in FORM_TOOLS if tool_era == era]


def _toolnexus_records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "toolnexus" or r.name.startswith("toolnexus.")]


# --- a resolver that raises, or returns something that is not an Answer -----------------------


@dataclass(frozen=True)
class Failure:
    name: str
    respond: Callable[[Request], Any]
    raised: type[BaseException] | None = None


def _raise(secret: str) -> Callable[[Request], Any]:
    def respond(request: Request) -> Any:
        raise RuntimeError(f"cannot read /home/ada/.config/token: {secret}")

    return respond


class LazyAnswer(Mapping[str, Any]):
    """A resolver's answer read lazily (from a vault, say): every lookup raises with a secret."""

    def __init__(self, secret: str) -> None:
        self._secret = secret

    def __getitem__(self, key: str) -> Any:
        raise RuntimeError(f"vault locked: {self._secret}")

    def __iter__(self) -> Iterator[str]:
        return iter(("id", "ok", "data"))

    def __len__(self) -> int:
        return 3


class LockedData(dict[str, Any]):
    """Answer data whose reading raises with a secret."""

    def __init__(self, secret: str) -> None:
        super().__init__(name="x")
        self._secret = secret

    def items(self) -> Any:
        raise RuntimeError(f"vault locked: {self._secret}")

    def __iter__(self) -> Iterator[str]:
        raise RuntimeError(f"vault locked: {self._secret}")

    def __getitem__(self, key: str) -> Any:
        raise RuntimeError(f"vault locked: {self._secret}")


def _stray_cancellation(request: Request) -> Any:
    raise asyncio.CancelledError  # a cancelled UI future the resolver awaited, say


def failures(secret: str) -> list[Failure]:
    return [
        Failure("returns-a-lazy-mapping", lambda request: LazyAnswer(secret)),
        Failure("answers-locked-data", lambda request: Answer(request.id, True, LockedData(secret))),
        Failure("raises-a-stray-cancellation", _stray_cancellation),
        Failure("raises", _raise(secret), RuntimeError),
        Failure("returns-an-int", lambda request: 42),
        Failure("returns-a-str", lambda request: f"yes {secret}"),
        Failure("returns-none", lambda request: None),
        Failure("returns-a-malformed-mapping", lambda request: {"ok": "yes", "data": {"name": secret}}),
        # An Answer, but with data an ElicitResult cannot carry (a nested object).
        Failure(
            "answers-unmappable-data",
            lambda request: Answer(request.id, True, {"name": {"first": secret}, "age": 36}),
        ),
    ]


@pytest.mark.parametrize("flavour", ["async", "sync"])
@pytest.mark.parametrize("era", ERAS)
async def test_a_failing_resolver_sends_cancel_and_no_text_to_the_server(
    target: Target, era: Era, flavour: str, caplog: pytest.LogCaptureFixture, subtests: pytest.Subtests
) -> None:
    caplog.set_level(logging.DEBUG, logger="toolnexus")
    secret = f"secret-{uuid.uuid4().hex}"
    by_name = {failure.name: failure for failure in failures(secret)}

    def respond(request: Request) -> Any:
        return by_name[tag_of(request).split(":")[0]].respond(request)

    async with connect(target, era, elicitation_callback(resolver(flavour, respond))) as client:
        for failure in by_name.values():
            for tool in _tools(era):
                with subtests.test(msg=f"{failure.name} via {tool}"):
                    caplog.clear()
                    outcome = await call(client, tool, f"{failure.name}:{tool}")
                    assert outcome == cancel_outcome(era, tool)
                    logged = [r for r in _toolnexus_records(caplog) if r.levelno >= logging.WARNING]
                    assert logged, "the failure was not logged on the toolnexus logger"
                    if failure.raised is not None:
                        with_traceback = [r for r in logged if r.exc_info and r.exc_info[1] is not None]
                        assert with_traceback, "the exception was logged without its traceback"
                        assert isinstance(with_traceback[0].exc_info[1], failure.raised)  # type: ignore[index]
                    else:  # what the resolver returned is described, never quoted
                        assert not [r for r in logged if secret in r.getMessage()]
        journal = await server_journal(client)

    assert secret not in journal, "text from the resolver reached the server"


# --- a resolver that does not answer in time -------------------------------------------------

TIMEOUT = 1.0  # long enough for an immediate answer on a saturated machine; the hangs wait it out
SYNC_TIMEOUT = 1.5
RFC3339_UTC = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z")


def _parse_utc(stamp: str) -> dt.datetime:
    assert RFC3339_UTC.fullmatch(stamp), f"expiresAt {stamp!r} is not RFC 3339 UTC"
    return dt.datetime.fromisoformat(stamp[:-1] + "+00:00")


@pytest.mark.parametrize("era", ERAS)
async def test_a_hanging_async_resolver_is_cancelled_and_the_server_gets_cancel(
    target: Target, era: Era
) -> None:
    requests: dict[str, Request] = {}
    cancelled: list[str] = []

    async def wait_for(request: Request) -> Answer:
        requests[tag_of(request)] = request
        if tag_of(request).startswith("prompt"):
            return Answer(request.id, True, dict(PROFILE))
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            cancelled.append(tag_of(request))
            raise
        raise AssertionError("unreachable")  # pragma: no cover

    async with connect(target, era, elicitation_callback(wait_for, timeout=TIMEOUT)) as client:
        for tool in _tools(era):
            before = dt.datetime.now(dt.timezone.utc)
            outcome = await call(client, tool, f"hang:{tool}")
            after = dt.datetime.now(dt.timezone.utc)
            assert outcome == cancel_outcome(era, tool)
            expires = _parse_utc(requests[f"hang:{tool}"].expiresAt or "")
            # The deadline is the moment of asking plus the timeout (to the millisecond).
            slack = dt.timedelta(milliseconds=1)
            assert (
                before + dt.timedelta(seconds=TIMEOUT) - slack
                <= expires
                <= after + dt.timedelta(seconds=TIMEOUT)
            )

            # A resolver that answers in time is not affected, and also sees the deadline.
            outcome = await call(client, tool, f"prompt:{tool}")
            assert outcome["action"] == "accept"
            assert outcome["content"] == {**PROFILE, "newsletter": False}  # the form's default, filled in
            _parse_utc(requests[f"prompt:{tool}"].expiresAt or "")

    assert cancelled == [f"hang:{tool}" for tool in _tools(era)], "the hanging resolver was not cancelled"


@pytest.mark.parametrize("era", ERAS)
async def test_an_answer_that_comes_after_the_deadline_is_dropped(era: Era) -> None:
    """A resolver that shields itself from cancellation (say, to finish writing a record)
    and answers after the deadline: the time is up, so the server gets cancel. (Client-side
    logic only: in process is enough.)"""
    finished: list[str] = []

    async def wait_for(request: Request) -> Answer:
        with anyio.CancelScope(shield=True):
            await anyio.sleep(TIMEOUT * 2)
        finished.append(tag_of(request))
        return Answer(request.id, True, dict(PROFILE))

    async with connect(build_server()[0], era, elicitation_callback(wait_for, timeout=TIMEOUT)) as client:
        tool = _tools(era)[0]
        outcome = await call(client, tool, "late")

    assert finished == ["late"]
    assert outcome == cancel_outcome(era, tool)


@pytest.mark.parametrize("era", ERAS)
async def test_a_hanging_sync_resolver_does_not_hold_the_call(target: Target, era: Era) -> None:
    release = threading.Event()
    requests: dict[str, Request] = {}

    def wait_for(request: Request) -> Answer:
        requests[tag_of(request)] = request
        if not tag_of(request).startswith("prompt"):
            release.wait(30)  # blocks its worker thread well past the timeout
        return Answer(request.id, True, dict(PROFILE))

    try:
        # A longer deadline than the others': the answer after a hang comes from a pool thread,
        # which a saturated machine (the test command runs three Pythons' tests at once) can
        # leave waiting past TIMEOUT.
        async with connect(target, era, elicitation_callback(wait_for, timeout=SYNC_TIMEOUT)) as client:
            for tool in _tools(era):
                outcome = await call(client, tool, f"hang:{tool}")
                assert outcome == cancel_outcome(era, tool)
                _parse_utc(requests[f"hang:{tool}"].expiresAt or "")
                outcome = await call(client, tool, f"prompt:{tool}")
                assert outcome["action"] == "accept"
    finally:
        release.set()


# --- content that does not fit the requested schema -------------------------------------------


@dataclass(frozen=True)
class Misfit:
    name: str
    content: dict[str, Any]
    field: str
    value: str | None  # the offending value as text, which must appear nowhere


MISFITS = [
    Misfit("bad-email", {**PROFILE, "email": "zq-not-an-address-zq"}, "email", "zq-not-an-address-zq"),
    # Long, specific numbers: the journal of the shared HTTP server holds ids and hex digits.
    Misfit("too-old", {**PROFILE, "age": 987654321987}, "age", "987654321987"),
    Misfit("too-young", {**PROFILE, "age": -876543219876}, "age", "-876543219876"),
    Misfit("long-name", {**PROFILE, "name": "Zebulon" * 7}, "name", "Zebulon" * 7),
    Misfit("age-not-a-number", {**PROFILE, "age": "thirty-something"}, "age", "thirty-something"),
    Misfit("name-missing", {"age": 36, "email": "ada@example.com"}, "name", None),
]


@pytest.mark.parametrize("era", ERAS)
async def test_content_that_breaks_the_schema_is_sent_as_cancel(
    target: Target, era: Era, caplog: pytest.LogCaptureFixture, subtests: pytest.Subtests
) -> None:
    caplog.set_level(logging.DEBUG, logger="toolnexus")
    by_name = {misfit.name: misfit for misfit in MISFITS}

    def wait_for(request: Request) -> Answer:
        return Answer(request.id, True, dict(by_name[tag_of(request).split(":")[0]].content))

    async with connect(target, era, elicitation_callback(wait_for)) as client:
        for misfit in MISFITS:
            for tool in _tools(era):
                with subtests.test(msg=f"{misfit.name} via {tool}"):
                    caplog.clear()
                    outcome = await call(client, tool, f"{misfit.name}:{tool}")
                    assert outcome == cancel_outcome(era, tool)
                    warnings = [r for r in _toolnexus_records(caplog) if r.levelno == logging.WARNING]
                    assert warnings, "no warning on the toolnexus logger"
                    text = " ".join(r.getMessage() for r in warnings)
                    assert misfit.field in text
                    if misfit.value is not None:
                        for record in _toolnexus_records(caplog):
                            assert misfit.value not in record.getMessage()
                            assert misfit.value not in str(record.args)
        journal = await server_journal(client)

    for misfit in MISFITS:
        if misfit.value is not None:
            assert misfit.value not in journal, f"{misfit.name}: the rejected value reached the server"


@pytest.mark.parametrize("era", ERAS)
async def test_validate_false_passes_content_through(
    target: Target, era: Era, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="toolnexus")
    # The server's own model does not check the email format, so the value gets through.
    content = {**PROFILE, "email": "unchecked-not-an-address"}

    def wait_for(request: Request) -> Answer:
        return Answer(request.id, True, dict(content))

    async with connect(target, era, elicitation_callback(wait_for, validate=False)) as client:
        for tool in _tools(era):
            outcome = await call(client, tool, f"unchecked:{tool}")
            sent = {**content, "newsletter": False}  # defaults are filled in without validation too
            assert outcome == {"era": ERA_VERSIONS[era], "tool": tool, "action": "accept", "content": sent}

    assert not [r for r in _toolnexus_records(caplog) if r.levelno >= logging.WARNING]
