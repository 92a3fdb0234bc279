"""``toolnexus pending STORE`` (the calls kept in a store, and where each question stands) and
``toolnexus show STORE KEY`` (one call: its questions, its history, its result). Both with
``--json`` for a program; neither holds an answer's content."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from .._util import escape_text
from ._base import EXIT_OK, EXIT_TOOL_ERROR, CliError, Command, Context
from ._results import json_text
from ._stores import add_store_argument, open_store, shown_store, what_is_called

if TYPE_CHECKING:
    from .._wire import Answer, Request
    from ..durable import Call, HistoryEntry, Store

__all__ = ["COMMAND", "SHOW"]


def _arguments(parser: argparse.ArgumentParser) -> None:
    add_store_argument(parser, key=False)
    parser.add_argument(
        "--json", action="store_true", help="one JSON array of the calls, each with its history"
    )


def _show_arguments(parser: argparse.ArgumentParser) -> None:
    add_store_argument(parser, key=True)
    parser.add_argument("--json", action="store_true", help="the call as one JSON object")


class _Seen:
    """One call as the commands show it: its answers read (a call whose answers do not read
    is counted, and its questions say so), its history."""

    def __init__(self, store: Store, call: Call) -> None:
        self.call = call
        self.garbled = False
        self.answers: dict[str, Answer] = {}
        try:
            self.answers = store.answers(call.key) if call.answered else {}
        except (KeyError, ValueError):  # an answer that does not read: the call's error says which
            self.garbled = True
        try:
            self.history: list[HistoryEntry] = store.history(call.key)
        except KeyError:  # removed meanwhile
            self.history = []

    def state(self, request: Request) -> str:
        """Where a question stands: waiting, accepted, declined, cancelled, expired, ..."""
        answer = self.answers.get(request.id)
        if answer is None and self.garbled and request.id in self.call.answered:
            return "answered (does not read)"
        if answer is None:
            return "waiting" if self.call.status in ("waiting", "live") else "unanswered"
        if answer.ok:
            return "accepted"
        return str(answer.reason or "declined")

    def lines(self, *, history: bool) -> list[str]:
        """The call as lines of text, every text from the store escaped (a line break in a key
        or a prompt would fake the next entry)."""
        call = self.call
        key = escape_text(call.key)
        if call.pending is None:
            return [f"{key}  {call.status}  (the record does not read: {escape_text(call.error or '')})"]
        pending = call.pending
        server = escape_text(pending.server) if pending.server else "(unnamed server)"
        out = [f"{key}  {server}  {what_is_called(pending)}  {call.status}"]
        if pending.task is not None:
            line = f"  task {escape_text(pending.task.id[:80])}"
            if call.note:
                line += f": {' '.join(escape_text(call.note).split())}"
            out.append(line)
        for request in pending.requests:
            prompt = " ".join(escape_text(request.prompt).split()) or f"({escape_text(request.kind)})"
            line = f"  {escape_text(request.id)}  {escape_text(self.state(request))}  {prompt}"
            if request.expiresAt:
                line += f"  (until {escape_text(request.expiresAt)})"
            out.append(line)
        if call.error:
            out.append(f"  ({escape_text(call.error)})")
        if call.leases_lost:
            lost = "once" if call.leases_lost == 1 else f"{call.leases_lost} times"
            out.append(f"  (a resumer's lease ran out {lost}: it was taken over)")
        if history:
            for entry in self.history:
                at = entry.to_dict()["at"]
                out.append(f"  {at}  {' '.join(escape_text(entry.describe()).split())}")
        return out

    def to_json(self) -> dict[str, Any]:
        """The call as JSON: what it is, where it stands, its questions (never their answers'
        content), its history, its result when it is done."""
        call = self.call
        out: dict[str, Any] = {"key": call.key, "status": call.status, "created": call.created}
        pending = call.pending
        if pending is not None:
            out |= {"server": pending.server, "method": pending.method, "target": pending.target}
            if pending.task is not None:
                out["task"] = {"id": pending.task.id, "note": call.note}
            out["questions"] = [
                {"id": r.id, "kind": r.kind, "prompt": r.prompt, "state": self.state(r)}
                for r in pending.requests
            ]
        for name in ("error", "follows", "next"):
            if getattr(call, name) is not None:
                out[name] = getattr(call, name)
        out["attempts"] = call.attempts
        out["history"] = [entry.to_dict() for entry in self.history]
        if call.result is not None:
            out["result"] = call.result
        return out

    @property
    def unreadable(self) -> bool:
        return self.call.pending is None or self.garbled


def _run(args: argparse.Namespace, context: Context) -> int:
    store = open_store(args.store, read_only=True)  # writes nothing, not even the tables
    context.stack.callback(store.close)
    seen = [_Seen(store, call) for call in store.calls()]
    if args.json:
        context.output.result(json_text([call.to_json() for call in seen]))
    elif not seen:
        context.output.error(f"nothing waits in {shown_store(args.store)}")
        return EXIT_OK
    else:
        context.output.result("\n".join(line for call in seen for line in call.lines(history=False)))
    unreadable = sum(1 for call in seen if call.unreadable)
    if unreadable:
        context.output.error(f"{unreadable} call(s) do not read: listed as failed, with the reason")
        return EXIT_TOOL_ERROR
    return EXIT_OK


def _show(args: argparse.Namespace, context: Context) -> int:
    store = open_store(args.store, read_only=True)
    context.stack.callback(store.close)
    try:
        call = store.call(args.key)
    except KeyError:
        raise CliError(EXIT_TOOL_ERROR, f"nothing is kept under {escape_text(args.key)}") from None
    seen = _Seen(store, call)
    if args.json:
        context.output.result(json_text(seen.to_json()))
    else:
        lines = seen.lines(history=True)
        if call.result is not None:
            lines += ["result:", json_text(call.result)]
        context.output.result("\n".join(lines))
    return EXIT_TOOL_ERROR if seen.unreadable else EXIT_OK


COMMAND = Command(
    name="pending",
    help="list the calls kept in a store, and where each question stands",
    description="List the calls kept in STORE (a file, or a postgresql:// URL), oldest first: key, "
    "server, what was called, its status (waiting, ready, resuming, working, done, failed, expired, "
    "cancelled), and each question: waiting, accepted, declined, cancelled or expired. A call the "
    "server made a task shows the task's id and its last status message. With --json, one JSON "
    "array, each call with its history; never an answer's content. The store is opened read-only, "
    "and never made. Exit 0; 1 when a call (or one of its answers) does not read: it is listed as "
    "failed with the reason, every other call as usual.",
    arguments=_arguments,
    run=_run,
)

SHOW = Command(
    name="show",
    help="show one call: its questions, its history (who answered, which worker), its result",
    description="Show the call kept under KEY in STORE: what was called, its status, each "
    "question and where it stands, its history (parked, opened and answered by whom and through "
    "what, claimed by which worker, how it ended) and, when it is done, its result as JSON. With "
    "--json, all of it as one JSON object. Never an answer's content. The store is opened "
    "read-only. Exit 0; 1 when nothing is kept under KEY, or the call does not read.",
    arguments=_show_arguments,
    run=_show,
)
