"""A hand elsewhere for the live-question tests: another store object (as another process, the
inbox or ``toolnexus answer`` would be) that answers each live question as soon as it appears."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from toolnexus import Answer, Request
from toolnexus.durable import open_store

__all__ = ["answering"]


@contextmanager
def answering(spec: str, respond: Callable[[Request], Answer | None], **options: Any) -> Iterator[list[str]]:
    """While inside, each live question of the store at ``spec`` is answered with
    ``respond(request)`` (``None``: left alone) from a store object of its own, in a thread.
    Yields the keys of the questions it saw, in order. Nothing is asserted in the thread: a
    test checks afterwards, so that a failure is quick, never a hang."""
    store = open_store(spec, **options)
    watcher = store.watch()
    seen: list[str] = []
    stop = threading.Event()

    def run() -> None:
        while not stop.is_set():
            for live in store.calls(status="live"):
                if live.key in seen or live.pending is None:
                    continue
                (request,) = live.pending.requests
                answer = respond(request)
                if answer is not None:
                    store.record(live.key, answer)
                seen.append(live.key)
            watcher.wait(0.2)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        yield seen
    finally:
        stop.set()
        thread.join(10)
        store.close()
