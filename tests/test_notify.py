"""Notifications (toolnexus.notify): signed webhooks sent from each store's history, to a real
HTTP receiver (tests/support/receiver.py) that checks every signature: each kind once and in
order, nothing of an answer's content nor the secret, a receiver that fails or goes away given
every notification once it is back (a resend under its event id), a slow one delaying no
other, and the notifying process killed (SIGKILL) between an event and its sending."""

from __future__ import annotations

import email
import email.header
import email.message
import json
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from support import forkserver
from support.processes import TESTS_DIR, Processes
from support.receiver import Receiver
from support.stores import FakeClock
from toolnexus import Answer, Request, durable
from toolnexus._links import link_holds
from toolnexus.notify import Channel, Notifier, Webhook, sign, verify

SECRET = "a-webhook-secret-of-some-length"
SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}}


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    made = Receiver(SECRET)
    try:
        yield made
    finally:
        made.stop()


def pending(n: int, prompt: str = "Name?") -> durable.Pending:
    request = Request(f"elc-{n}", "input", prompt, None, {"schema": SCHEMA}, "2030-01-01T00:00:00.000Z")
    return durable.Pending("tools/call", "deploy", {"n": n}, "state", ("k",), (request,), {}, "srv")


def deliver(notifier: Notifier) -> int:
    return anyio.run(notifier.deliver)


def test_a_signature_verifies_and_any_change_breaks_it() -> None:
    body = b'{"id":"evt_1"}'
    header = sign(SECRET, 1_800_000_000, body)
    assert verify(SECRET, header, body, now=1_800_000_100)
    assert not verify(SECRET, header, body + b" ", now=1_800_000_100)  # the body altered
    assert not verify("another-secret-of-length", header, body, now=1_800_000_100)
    assert not verify(SECRET, header.replace("v1=", "v1=0"), body, now=1_800_000_100)
    assert not verify(SECRET, header, body, now=1_800_000_000 + 301)  # replayed later
    for garbage in ("", "t=x,v1=y", "v1=abc", "t=99999999999999,v1=00"):
        assert not verify(SECRET, garbage, body, now=1_800_000_100)
    with pytest.raises(ValueError, match="at least 16"):
        Webhook("https://example.com/", "short")
    with pytest.raises(ValueError, match="http"):
        Webhook("file:///etc/passwd", SECRET)
    assert SECRET not in repr(Webhook("https://example.com/", SECRET))


def test_each_notification_once_in_order_signed_and_without_an_answers_content(
    tmp_path: Path, receiver: Receiver
) -> None:
    with durable.open_store(tmp_path / "calls.db") as store:
        notifier = Notifier(store, [Webhook(receiver.url, SECRET)], public_url="https://inbox.example.com/")
        link_key = store.link_key
        assert deliver(notifier) == 0  # a new target starts at the history's end
        key = store.put(pending(1, "Where <!channel> @here?\r\nBcc: x" + "y" * 5000))
        store.record(key, Answer("elc-1", True, {"name": "the-secret-answer"}), by="alice", via="inbox")
        (claim,) = store.claim(lease=30, by="w-1")
        store.finish(key, claim.token, {"content": [{"type": "text", "text": "done"}]})
        assert deliver(notifier) == 3
        assert deliver(notifier) == 0  # nothing twice
    assert receiver.types() == ["question.waiting", "question.answered", "call.finished"]
    assert all(got.signed for got in receiver.got)
    waiting, answered, finished = (got.body for got in receiver.got)
    assert waiting["call"] == {"key": key, "server": "srv", "target": "deploy", "status": "waiting"}
    (question,) = waiting["questions"]
    assert question["expiresAt"] == "2030-01-01T00:00:00.000Z"
    # Its answer link: that question, signed, for a week (its deadline is later).
    *_, link_call, link_id, expires, signature = question["link"].split("/")
    assert question["link"].startswith(f"https://inbox.example.com/a/{key}/elc-1/")
    assert link_holds(link_key, link_call, link_id, expires, signature, time.time())
    assert 7 * 86400 - 60 < int(expires) - time.time() <= 7 * 86400
    assert len(question["prompt"]) == 2000  # cut to a length a message can carry
    assert (answered["by"], answered["via"], answered["detail"]) == ("alice", "inbox", "elc-1: accept")
    assert finished["call"]["status"] == "done"
    assert len({got.event_id for got in receiver.got}) == 3
    assert [got.event_id for got in receiver.got] == [got.body["id"] for got in receiver.got]
    for got in receiver.got:
        assert b"the-secret-answer" not in got.raw
        assert SECRET.encode() not in got.raw


def test_a_receiver_that_fails_or_goes_away_gets_everything_once_it_is_back(
    tmp_path: Path, receiver: Receiver, caplog: pytest.LogCaptureFixture
) -> None:
    clock = FakeClock()
    with durable.open_store(tmp_path / "calls.db", clock=clock) as store:
        notifier = Notifier(store, [Webhook(receiver.url, SECRET)])
        deliver(notifier)
        keys = [store.put(pending(n)) for n in range(3)]
        receiver.refuse = 1
        assert deliver(notifier) == 0  # refused: the target pauses (1 s), nothing is lost
        assert deliver(notifier) == 0  # still pausing: not tried
        clock.advance(1.5)
        receiver.stop()  # gone: connections refused
        assert deliver(notifier) == 0  # the second failure in a row: a pause of 2 s
        clock.advance(1.5)
        assert deliver(notifier) == 0
        receiver.start()
        clock.advance(1)
        assert deliver(notifier) == 3
    assert [got.body["call"]["key"] for got in receiver.got] == keys
    assert all(got.signed for got in receiver.got)
    assert "could not be told" in caplog.text
    assert "/hook" not in caplog.text  # a webhook's path (often a token) is never logged


def test_a_question_still_unanswered_is_notified_again_and_escalated(
    tmp_path: Path, receiver: Receiver
) -> None:
    clock = FakeClock()
    escalation = Receiver(SECRET)  # told of reminders alone
    try:
        with durable.open_store(tmp_path / "calls.db", clock=clock) as store:
            hooks = [
                Webhook(receiver.url, SECRET),
                Webhook(escalation.url, SECRET, events={"question.reminder"}),
            ]
            notifier = Notifier(store, hooks, remind_after=3600)
            deliver(notifier)
            key = store.put(pending(1))
            clock.advance(3599)
            assert deliver(notifier) == 1
            clock.advance(2)
            assert deliver(notifier) == 2
            assert deliver(notifier) == 0
            told = [(e.kind, e.actor, e.detail) for e in store.history(key) if e.kind == "notified"]
        assert told == [
            ("notified", hooks[0].name, "question.waiting"),
            ("notified", hooks[0].name, "question.reminder"),
            ("notified", hooks[1].name, "question.reminder"),
        ] or told == [
            ("notified", hooks[0].name, "question.waiting"),
            ("notified", hooks[1].name, "question.reminder"),
            ("notified", hooks[0].name, "question.reminder"),
        ]
        assert escalation.types() == ["question.reminder"]
    finally:
        escalation.stop()
    with pytest.raises(ValueError, match="events"):
        Webhook(receiver.url, SECRET, events={"question.nothing"})
    assert receiver.types() == ["question.waiting", "question.reminder"]
    reminder = receiver.got[1].body
    assert (reminder["call"]["key"], reminder["detail"]) == (key, "unanswered for 1 h")
    assert [q["prompt"] for q in reminder["questions"]] == ["Name?"]


class Mailbox:
    """A real SMTP server (aiosmtpd) on 127.0.0.1, in a thread: what it received, as messages.
    Stopped, its port refuses; started again, it is back on that port."""

    def __init__(self) -> None:
        import socket

        probe = socket.socket()
        probe.bind(("127.0.0.1", 0))
        self.port = probe.getsockname()[1]
        probe.close()
        self.got: list[email.message.Message] = []
        self.controller: Any = None
        self.start()

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802 (aiosmtpd's name)
        self.got.append(email.message_from_bytes(envelope.content))
        return "250 OK"

    def start(self) -> None:
        from aiosmtpd.controller import Controller

        self.controller = Controller(self, hostname="127.0.0.1", port=self.port)
        self.controller.start()

    def stop(self) -> None:
        self.controller.stop()

    @property
    def url(self) -> str:
        return f"mailto://127.0.0.1:{self.port}?from=toolnexus@example.com&to=ops@example.com&mode=insecure"


@pytest.fixture
def mailbox() -> Iterator[Mailbox]:
    made = Mailbox()
    try:
        yield made
    finally:
        made.stop()


def text_of(message: email.message.Message) -> str:
    payload = message.get_payload(decode=True)
    assert isinstance(payload, bytes)
    return payload.decode()


def test_an_e_mail_through_a_real_smtp_server_escaped_cut_and_with_its_link(
    tmp_path: Path, mailbox: Mailbox, caplog: pytest.LogCaptureFixture
) -> None:
    hostile = "Deploy <b>now</b> <!channel> @here?\r\nBcc: evil@example.com\u202e" + "y" * 1_000_000
    with durable.open_store(tmp_path / "calls.db") as store:
        channel = Channel(mailbox.url)
        notifier = Notifier(store, channels=[channel], public_url="https://inbox.example.com/")
        deliver(notifier)
        question = Request("elc-1", "input", hostile, None, {"schema": SCHEMA})
        server = "srv\r\nBcc: evil@example.com"
        key = store.put(durable.Pending("tools/call", "deploy", None, "s", ("k",), (question,), {}, server))
        store.record(key, Answer("elc-1", True, {"name": "the-secret-answer"}), by="alice", via="inbox")
        assert deliver(notifier) == 2
        stored = backend_targets(tmp_path / "calls.db")
    waiting, answered = mailbox.got
    subject = str(email.header.make_header(email.header.decode_header(waiting["Subject"])))
    assert subject == "A question waits: deploy on srv\\r\\nBcc: evil@\u2060example.com"
    assert waiting.get_all("Bcc") is None  # no header of the server's making
    body = text_of(waiting)
    assert body.startswith(
        "Deploy <b>now</b> <\u2060!channel> @\u2060here?\\r"
    )  # plain text, mentions defused
    assert "evil@\u2060example.com\\u202eyyy" in body  # the bidi override shown, not obeyed
    assert len(body) < 1200  # a megabyte cut to a message's length
    assert f"Answer: https://inbox.example.com/a/{key}/elc-1/" in body
    assert str(email.header.make_header(email.header.decode_header(answered["Subject"]))).startswith(
        "Answered: deploy on srv"
    )
    assert "By alice" in text_of(answered)
    for message in mailbox.got:
        assert "the-secret-answer" not in message.as_string()
    assert stored == {channel.name}  # the store keeps the channel's hash, never its URL
    assert mailbox.url not in caplog.text
    assert "ops@example.com" not in repr(channel)


def backend_targets(path: Path) -> set[str]:
    import sqlite3

    with sqlite3.connect(path) as db:
        names = {str(row[0]) for row in db.execute("SELECT target FROM toolnexus_cursor")}
    db.close()
    return names


def test_a_mail_server_down_for_a_while_gets_every_notification_once_back(
    tmp_path: Path, mailbox: Mailbox, receiver: Receiver
) -> None:
    clock = FakeClock()
    with durable.open_store(tmp_path / "calls.db", clock=clock) as store:
        as_json = Channel(f"json://127.0.0.1:{receiver.port}/hook")
        notifier = Notifier(store, channels=[Channel(mailbox.url), as_json])
        deliver(notifier)
        mailbox.stop()
        keys = [store.put(pending(n, f"Question {n}?")) for n in range(2)]
        assert deliver(notifier) == 2  # the JSON receiver took both; the mail server is down
        clock.advance(1.5)
        mailbox.start()
        assert deliver(notifier) == 2
    assert [text_of(m).splitlines()[0] for m in mailbox.got] == ["Question 0?", "Question 1?"]
    assert [got.body["title"] for got in receiver.got] == ["A question waits: deploy on srv"] * 2
    until = r"Until 2030-01-01T00:00:00\.000Z \(\d+ d( \d+ h)? left\)"  # the time left, in words
    assert re.search(until, receiver.got[0].body["message"])
    assert len(keys) == 2


def test_a_slow_receiver_delays_no_other(tmp_path: Path, receiver: Receiver) -> None:
    fast = Receiver(SECRET)
    try:
        with durable.open_store(tmp_path / "calls.db") as store:
            notifier = Notifier(store, [Webhook(receiver.url, SECRET), Webhook(fast.url, SECRET)], timeout=5)
            deliver(notifier)
            store.put(pending(1))
            store.put(pending(2))
            hold = receiver.hold = threading.Event()  # the slow one answers once the fast one has all

            fast_first: list[bool] = []

            def release() -> None:  # sequential sending would get the fast one nothing meanwhile
                fast_first.append(_until(lambda: len(fast.got) == 2, within=5))
                hold.set()

            released = threading.Thread(target=release, daemon=True)
            released.start()
            assert deliver(notifier) == 4
            released.join(10)
        assert fast_first == [True]  # the fast one had both while the slow one still held the first
        assert len(fast.got) == 2
    finally:
        fast.stop()


def _until(done: Callable[[], bool], within: float = 10.0) -> bool:
    deadline = time.monotonic() + within
    while not done():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def test_the_notifying_process_killed_between_an_event_and_its_sending_loses_nothing(
    tmp_path: Path, receiver: Receiver, processes: Processes
) -> None:
    """``toolnexus inbox --webhook`` sends; killed (SIGKILL) while the receiver holds its
    request, another takes over: every notification arrives, the one in flight twice under
    one event id."""
    store_path = tmp_path / "calls.db"
    secret_file = tmp_path / "secret"
    secret_file.write_text(SECRET + "\n")
    with durable.open_store(store_path) as store:
        deliver(Notifier(store, [Webhook(receiver.url, SECRET)]))  # the target's place: now

    def inbox() -> forkserver.Forked:
        return forkserver.popen(
            [
                *(sys.executable, "-m", "toolnexus", "inbox", str(store_path)),
                *("--webhook", receiver.url, "--webhook-secret-file", str(secret_file)),
                *("--webhook-lease", "2"),  # a notifier killed holding the target: 2 s
            ],
            cwd=TESTS_DIR,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )

    receiver.hold = threading.Event()
    first = inbox()
    try:
        with durable.open_store(store_path) as store:
            keys = [store.put(pending(n)) for n in range(3)]
        assert receiver.entered.wait(30), "the inbox sent nothing"
        first.send_signal(signal.SIGKILL)  # while its first notification is held
        first.wait()
        receiver.hold.set()
        receiver.hold = None
        second = inbox()
        _until(lambda: len({got.event_id for got in receiver.got}) >= 3, within=60)
        second.send_signal(signal.SIGTERM)
        second.wait(10)
    finally:
        for proc in (first,):
            if proc.poll() is None:
                proc.kill()
    ids = [got.event_id for got in receiver.got]
    assert len(set(ids)) == 3
    assert [got.body["call"]["key"] for got in receiver.got if got.event_id != ids[0]][-2:] == keys[1:]
    assert len(ids) - len(set(ids)) <= 1  # the one in flight at the kill, and only it, again
    assert all(got.signed for got in receiver.got)
    assert json.dumps([got.body for got in receiver.got]).count(SECRET) == 0
