"""Tell people a question waits: signed webhooks, sent from the store's history (an outbox).

```python
from toolnexus import durable, notify

store = durable.open_store("calls.db")
secret = open("secret").read()
hook = notify.Webhook("https://hooks.example.com/toolnexus", secret)
await notify.Notifier(store, [hook]).run()
```

Every change of a call is kept in its history in the same transaction as the change
([`history`][toolnexus.durable.SqliteStore.history]); a [`Notifier`][toolnexus.notify.Notifier]
sends the entries a person cares about to each target, in order: a question starts waiting
(``question.waiting``, with its prompt and its deadline), still waits after a while
(``question.reminder``, with ``remind_after``), is answered (``question.answered``,
by whom and how: never the content), is withdrawn (``question.withdrawn``), and a call ends
(``call.finished``: done, failed, expired or cancelled). Each target keeps its place in the
history in the store, so nothing is lost when the sending process dies: whichever process
runs a notifier with that target next (a worker, the inbox) goes on from there. Delivery is
at least once: a notification sent just before its sender died is sent again, under the same
event id (``Toolnexus-Event-Id``), which a receiver uses to drop the second.

A target that fails (an error, a status other than 2xx, no answer within ``timeout``) waits
and is tried again, its pause doubling up to five minutes, across restarts; meanwhile the
other targets are sent to as usual, and no call or answer waits for any of them.

Each request is signed, the way Stripe and GitHub sign theirs: ``Toolnexus-Signature:
t=<unix time>,v1=<hex HMAC-SHA256 of "<t>.<body>" with the secret>``;
[`verify`][toolnexus.notify.verify] checks one (docs/notify.md shows the check in a few lines
of any language's standard library).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import math
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from ._engine import Sendable
from ._links import LINK_LIFE, answer_link
from ._store import Store, check_lease
from ._time import read_expires_at, span, utc_timestamp
from ._util import escape_text
from ._wire import Request

__all__ = ["EVENT_TYPES", "Channel", "Notifier", "Webhook", "message", "notification", "sign", "verify"]

logger = logging.getLogger(__name__)

EVENT_TYPES: Final = (
    "question.waiting",
    "question.reminder",
    "question.answered",
    "question.withdrawn",
    "call.finished",
)
"""What a webhook is told, as its body's ``type``."""

_PROMPT_LIMIT: Final = 2000  # characters of a prompt in a notification
_TOLERANCE: Final = 300.0  # seconds a signature's time may be off, by default
_PAUSES: Final = (1.0, 300.0)  # the first and the longest pause after a target failed
_BATCH: Final = 50  # history entries read at a time


@dataclass(frozen=True)
class Webhook:
    """A URL that is POSTed a JSON body, signed with ``secret``, for each notification.

    Args:
        url: ``https://...`` (or ``http://`` for a receiver on the same machine).
        secret: the key of the signature (at least 16 characters); never sent, never logged.
        name: the target's name in the store, where its place in the history is kept; by
            default derived from the URL (two processes with one URL share one place).
        events: the types it is told of (``None``: all of ``EVENT_TYPES``); for instance
            ``{"question.reminder"}`` for an escalation: a target told only of the questions
            still unanswered.
    """

    url: str
    secret: str = field(repr=False)
    name: str = ""
    events: Collection[str] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.url, str) or not self.url.lower().startswith(("https://", "http://")):
            raise ValueError("Webhook.url must be an http:// or https:// URL")
        if not isinstance(self.secret, str) or len(self.secret.strip()) < 16:
            raise ValueError("Webhook.secret must be text of at least 16 characters")
        if not isinstance(self.name, str):
            raise TypeError(f"Webhook.name must be a str, not {type(self.name).__name__}")
        if not self.name:
            digest = hashlib.sha256(self.url.encode()).hexdigest()[:16]
            object.__setattr__(self, "name", f"webhook:{digest}")
        object.__setattr__(self, "events", _events(self.events, "Webhook"))

    @property
    def shown(self) -> str:
        """The webhook as a log line names it: its scheme and host, and its name; never its
        path or its query, which often hold a token."""
        from urllib.parse import urlsplit

        parts = urlsplit(self.url)
        return f"{parts.scheme}://{(parts.hostname or '?')[:100]} ({self.name})"


@dataclass(frozen=True)
class Channel:
    """A person's channel, as an Apprise URL (the ``notify`` extra: ``pip install
    'toolnexus-mcp[notify]'``): ``mailto://``, ``slack://``, ``msteams://``, ``discord://``,
    ``matrix://``, ``ntfy://``, ``json://`` and the rest Apprise supports. Each notification is
    a title and a plain text message: the server's text made visible (control and bidi
    characters shown as escapes), mentions (``@here``, ``<!channel>``) defused, each prompt cut
    to 1,000 characters; Apprise fits them to each medium's limits.

    Args:
        url: the Apprise URL. It may hold a token or a password: it is never logged, never
            shown, and not kept in the store (a target's name is made of its hash).
        name: the target's name in the store (by default made of the URL's hash).
        events: the types it is told of (``None``: all), as for a webhook.
    """

    url: str = field(repr=False)
    name: str = ""
    events: Collection[str] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.url, str) or "://" not in self.url or len(self.url) > 4000:
            raise ValueError("Channel.url must be an Apprise URL (scheme://...)")
        if not isinstance(self.name, str):
            raise TypeError(f"Channel.name must be a str, not {type(self.name).__name__}")
        if not self.name:
            digest = hashlib.sha256(self.url.encode()).hexdigest()[:16]
            object.__setattr__(self, "name", f"apprise:{digest}")
        object.__setattr__(self, "events", _events(self.events, "Channel"))

    @property
    def shown(self) -> str:
        """The channel as a log line names it: its scheme and its name, never the rest."""
        return f"{self.url.split('://', 1)[0][:20]}:// ({self.name})"


def _events(events: object, owner: str) -> frozenset[str] | None:
    if events is None:
        return None
    if isinstance(events, str) or not isinstance(events, (set, frozenset, list, tuple)):
        raise TypeError(f"{owner}.events must be a set of event types or None")
    chosen = frozenset(str(kind) for kind in events)
    unknown = sorted(chosen - set(EVENT_TYPES))
    if unknown or not chosen:
        raise ValueError(
            f"{owner}.events must be some of {', '.join(EVENT_TYPES)}, not {unknown[:3] or 'none'}"
        )
    return chosen


def message(body: dict[str, Any]) -> tuple[str, str]:
    """A notification as a channel shows it: a title (one line, at most 120 characters) and a
    plain text message, the server's text made visible and its mentions defused."""
    call = body.get("call", {})
    what = f"{_cut(str(call.get('target') or '?'), 80)} on {_cut(str(call.get('server') or '?'), 60)}"
    kind = body.get("type")
    titles = {
        "question.waiting": f"A question waits: {what}",
        "question.reminder": f"Still waiting: {what}",
        "question.answered": f"Answered: {what}",
        "question.withdrawn": f"Withdrawn: {what}",
        "call.finished": f"{str(call.get('status') or 'finished').capitalize()}: {what}",
    }
    title = _plain(titles.get(str(kind), what), 120)
    lines: list[str] = []
    for question in body.get("questions", ()):
        lines.append(_plain(str(question.get("prompt", "")), 1000, lines=True))
        if question.get("expiresAt"):
            until = f"Until {_plain(str(question['expiresAt']), 40)}"
            deadline = read_expires_at(question["expiresAt"])
            if deadline is not None:
                left = deadline - time.time()
                until += f" ({span(left)} left)" if left > 0 else " (passed)"
            lines.append(until)
        if question.get("link"):
            lines.append(f"Answer: {question['link']}")
        lines.append("")
    for label, name in (("", "detail"), ("By ", "by")):
        if body.get(name):
            lines.append(label + _plain(str(body[name]), 300))
    return title, "\n".join(lines).strip() or title


def _plain(text: str, limit: int, *, lines: bool = False) -> str:
    """Text as a channel gets it: cut first (a megabyte costs nothing), control and bidi
    characters made visible, line breaks kept only with ``lines``, mentions defused by a word
    joiner (``@\u2060here``, ``<\u2060!channel>``)."""
    shown = escape_text(_cut(text, limit), lines=lines)
    return shown.replace("@", "@\u2060").replace("<!", "<\u2060!")


def sign(secret: str, timestamp: int, body: bytes) -> str:
    """The ``Toolnexus-Signature`` header of ``body`` sent at ``timestamp`` (unix seconds)."""
    mac = hmac.new(secret.strip().encode(), f"{timestamp}.".encode() + body, hashlib.sha256)
    return f"t={timestamp},v1={mac.hexdigest()}"


def verify(
    secret: str, header: str, body: bytes, *, tolerance: float = _TOLERANCE, now: float | None = None
) -> bool:
    """Whether ``header`` (a ``Toolnexus-Signature``) signs ``body`` with ``secret``, at a time
    within ``tolerance`` seconds of ``now`` (a replayed old request is refused)."""
    parts = dict(part.split("=", 1) for part in str(header).split(",") if "=" in part)
    stamp, given = parts.get("t", ""), parts.get("v1", "")
    if not stamp.isdigit() or len(stamp) > 12:
        return False
    moment = time.time() if now is None else now
    if abs(moment - int(stamp)) > tolerance:
        return False
    expected = sign(secret, int(stamp), body).split("v1=", 1)[1]
    return hmac.compare_digest(expected, given)


def notification(
    store: Store, sent: Sendable, *, instance: str, public_url: str | None = None
) -> dict[str, Any] | None:
    """The body of the notification about one history entry, or ``None`` when it is not one a
    person is told of (a claim, a poll, a page opened). Never an answer's content. With
    ``public_url`` (the inbox's address as people open it), each waiting question carries its
    answer ``link``."""
    entry = sent.entry
    kind = entry.kind
    if kind in ("parked", "asked") and entry.status in ("waiting", "live"):
        kind_name = "question.waiting"
    elif kind == "reminded":
        kind_name = "question.reminder"
    elif kind == "answer":
        kind_name = "question.answered"
    elif kind == "withdrawn":
        kind_name = "question.withdrawn"
    elif kind == "finished":
        kind_name = "call.finished"
    else:
        return None
    body: dict[str, Any] = {
        "id": f"evt_{instance}_{sent.seq}",
        "type": kind_name,
        "at": utc_timestamp(now=entry.at),
        "call": {"key": sent.key, "server": sent.server, "target": sent.target, "status": entry.status},
    }
    if entry.detail is not None:
        body["detail"] = entry.detail
    if entry.actor is not None:
        body["by"] = entry.actor
    if entry.via is not None:
        body["via"] = entry.via
    if kind_name in ("question.waiting", "question.reminder"):
        try:
            pending = store.get(sent.key)
        except (KeyError, ValueError):
            return body
        link_key = store.link_key if public_url is not None else ""
        body["questions"] = [
            {
                "id": request.id,
                "kind": request.kind,
                "prompt": _cut(request.prompt, _PROMPT_LIMIT),
                **({"expiresAt": request.expiresAt} if request.expiresAt else {}),
                **(
                    {
                        "link": answer_link(
                            public_url, link_key, sent.key, request.id, _link_end(request, entry.at)
                        )
                    }
                    if public_url is not None
                    else {}
                ),
            }
            for request in pending.requests
        ]
    return body


def _link_end(request: Request, at: float) -> int:
    """When a question's link expires: its deadline, at most a week after it was asked."""
    deadline = read_expires_at(request.expiresAt)
    latest = at + LINK_LIFE
    return math.floor(min(deadline, latest) if deadline is not None else latest)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _post(url: str, body: bytes, headers: dict[str, str], timeout: float) -> int:
    """POST ``body``; the response's status (an ``OSError`` when there is none)."""
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            status: int = answer.status
            return status
    except urllib.error.HTTPError as refused:
        return int(refused.code)


class Notifier:
    """Sends the store's notifications to its targets, until stopped.

    Args:
        store: any [`Store`][toolnexus.durable.Store].
        webhooks: where to send signed JSON.
        channels: people's channels (Apprise URLs) to send a title and a message to.
        name: this sender's name (who holds a target while it sends to it).
        public_url: the inbox's address as people open it (``https://inbox.example.com/``):
            each waiting question's notification then carries its answer link, which opens
            that question alone, without the inbox's token, until it expires.
        remind_after: seconds after which a question still unanswered is notified again
            (``question.reminder``), and again after as long, while it waits.
        timeout: seconds a target has to answer one request.
        lease: seconds this notifier holds a target after each sending: a notifier that died
            holding one is taken over by another after that long.
        idle: the longest sleep between two looks at the store.
        clock: the time for the signatures (seconds since the epoch; tests move it).
    """

    def __init__(
        self,
        store: Store,
        webhooks: Iterable[Webhook] = (),
        *,
        channels: Iterable[Channel] = (),
        name: str | None = None,
        public_url: str | None = None,
        remind_after: float | None = None,
        timeout: float = 10.0,
        lease: float = 30.0,
        idle: float = 5.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.webhooks: Sequence[Webhook] = tuple(webhooks)
        self.channels: Sequence[Channel] = tuple(channels)
        for hook in self.webhooks:
            if not isinstance(hook, Webhook):
                raise TypeError(f"Notifier: webhooks must be Webhooks, not {type(hook).__name__}")
        for channel in self.channels:
            if not isinstance(channel, Channel):
                raise TypeError(f"Notifier: channels must be Channels, not {type(channel).__name__}")
        targets: list[Webhook | Channel] = [*self.webhooks, *self.channels]
        if len({target.name for target in targets}) != len(targets):
            raise ValueError("Notifier: two targets have one name")
        self.targets: Sequence[Webhook | Channel] = tuple(targets)
        if name is None:
            from .durable import resumer_name

            name = f"notifier {resumer_name()}"
        self.name = name
        if public_url is not None and (
            not isinstance(public_url, str) or not public_url.lower().startswith(("https://", "http://"))
        ):
            raise ValueError("Notifier: public_url must be an http:// or https:// URL")
        self.public_url = public_url
        self.remind_after = None if remind_after is None else check_lease(remind_after, "remind_after")
        self.timeout = float(timeout)
        self.lease = max(float(lease), self.timeout + 1)
        self.idle = float(idle)
        self.clock = clock
        self.sent = 0
        """How many notifications this notifier has delivered."""
        self._stopping = False

    def stop(self) -> None:
        """End [`run`][toolnexus.notify.Notifier.run] soon (within a quarter of a second when idle)."""
        self._stopping = True

    async def run(self) -> None:
        """Send as the history grows, each target on its own, until stopped."""
        import anyio

        watcher = await anyio.to_thread.run_sync(self.store.watch)
        while not self._stopping:
            try:
                await self.deliver()
            except Exception as err:  # the store unreachable, say: try again after a pause
                logger.warning("notifications could not be sent (%s); trying again", type(err).__name__)
            deadline = anyio.current_time() + self.idle
            while not self._stopping and anyio.current_time() < deadline:
                if await watcher.wait_async(min(0.25, max(0.0, deadline - anyio.current_time()))):
                    break

    async def deliver(self) -> int:
        """One pass: every target sent what waits for it (or tried, and paused); how many
        notifications were delivered."""
        import anyio

        before = self.sent
        if self.remind_after is not None:
            await anyio.to_thread.run_sync(self.store.remind, self.remind_after)
        async with anyio.create_task_group() as group:
            for target in self.targets:  # each on its own: a slow one delays no other
                group.start_soon(self._deliver_to, target)
        return self.sent - before

    async def _deliver_to(self, hook: Webhook | Channel) -> None:
        import anyio
        import anyio.to_thread

        def call(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
            return anyio.to_thread.run_sync(lambda: fn(*args, **kwargs))

        place = await call(self.store.take_target, hook.name, self.name, self.lease)
        if place is None:
            return
        instance = await call(lambda: self.store.instance)
        try:
            while not self._stopping:
                batch: list[Sendable] = await call(self.store.sendable, place, limit=_BATCH)
                if not batch:
                    break
                for item in batch:
                    body = await call(
                        notification, self.store, item, instance=instance, public_url=self.public_url
                    )
                    if body is not None and (hook.events is None or body["type"] in hook.events):
                        problem = await call(self._send, hook, body)
                        if problem is not None:
                            pause = await call(
                                self.store.target_failed,
                                hook.name,
                                self.name,
                                problem,
                                first=_PAUSES[0],
                                longest=_PAUSES[1],
                            )
                            logger.warning(
                                "%s could not be told (%s); trying again in %.0f s",
                                hook.shown,
                                problem,
                                pause,
                            )
                            return  # let go: the store holds the pause, and the place
                        self.sent += 1
                        await call(self.store.notified, item.key, target=hook.name, what=body["type"])
                    place = item.seq
                    await call(self.store.target_sent, hook.name, self.name, place, lease=self.lease)
        except BaseException:
            with anyio.CancelScope(shield=True):
                await call(self.store.release_target, hook.name, self.name)
            raise
        await call(self.store.release_target, hook.name, self.name)

    def _send(self, hook: Webhook | Channel, body: dict[str, Any]) -> str | None:
        """Send one notification; ``None`` when the target took it, else why not (never the
        secret, never the body)."""
        if isinstance(hook, Channel):
            return _tell(hook, body)
        data = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
        headers = {
            "Content-Type": "application/json",
            "User-Agent": "toolnexus-notify",
            "Toolnexus-Event-Id": str(body["id"]),
            "Toolnexus-Signature": sign(hook.secret, math.floor(self.clock()), data),
        }
        try:
            status = _post(hook.url, data, headers, self.timeout)
        except (OSError, ValueError) as err:
            return f"{type(err).__name__}: {' '.join(str(err).split())[:200]}"
        if 200 <= status < 300:
            return None
        return f"HTTP {status}"


def _tell(channel: Channel, body: dict[str, Any]) -> str | None:
    """Send a title and a message to ``channel`` through Apprise; ``None`` when it took it."""
    try:
        import apprise
    except ImportError:
        return "Apprise is not installed (pip install 'toolnexus-mcp[notify]')"
    sender = apprise.Apprise()
    if not sender.add(channel.url):
        return "Apprise does not read this URL"
    title, text = message(body)
    try:
        sent = sender.notify(title=title, body=text, body_format=apprise.NotifyFormat.TEXT)
    except Exception as err:  # a plugin's own failure: told as one, never raised
        return f"{type(err).__name__} in Apprise"
    return None if sent else "Apprise could not deliver it"
