"""[`first_answer`][toolnexus.first_answer]: one question asked of several resolvers at once
(a terminal and an inbox, a chat and a phone); the first answer wins, and the others are
withdrawn."""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Final

from ._util import is_async_callable, type_name
from ._wire import Request

__all__ = ["ANSWERED_ELSEWHERE", "first_answer"]

logger = logging.getLogger(__name__)

ANSWERED_ELSEWHERE: Final = "answered elsewhere"
"""The reason a resolver that lost the race is given (its ``withdraw(request_id, reason)``)."""


def first_answer(*resolvers: Callable[[Request], Any]) -> Callable[[Request], Awaitable[Any]]:
    """A resolver that asks every one of ``resolvers`` at once: the first answer wins, and
    the others are withdrawn.

    ```python
    wait_for = first_answer(ConsoleResolver("deployer"), durable.ask_in(store))
    callback = elicitation_callback(wait_for)  # the terminal and the inbox race
    ```

    The winner is the first resolver to *return*, whatever it returns (an answer, a decline, a
    cancel: a person who declined has answered). Each of the others is then told why, when it
    can be (a resolver with a ``withdraw(request_id, reason)`` method: ``ask_in``'s marks its
    stored question "answered elsewhere"; the ``toolnexus`` command's terminal prompt is taken
    down with that line), and cancelled. A resolver that raises does not end the race while
    another is still asking: it is logged and left out; when every one has raised, the first
    error is raised (``elicitation_callback`` then sends ``cancel``).

    Each resolver may be an ``async def`` (awaited, and cancelled when it loses) or a plain
    function (run in a worker thread; one that loses cannot be interrupted, so its thread runs
    on and its late answer is dropped).

    Raises:
        TypeError: no resolver, or one that is not callable.
    """
    if not resolvers:
        raise TypeError("first_answer: give at least one resolver")
    for index, resolver in enumerate(resolvers):
        if not callable(resolver):
            raise TypeError(f"first_answer: resolver {index} must be callable, not {type_name(resolver)}")
    kinds = [is_async_callable(resolver) for resolver in resolvers]

    async def ask(index: int, request: Request) -> Any:
        import anyio.to_thread

        resolver = resolvers[index]
        if kinds[index]:
            result = resolver(request)
        else:
            result = await anyio.to_thread.run_sync(
                functools.partial(resolver, request), abandon_on_cancel=True
            )
        if inspect.isawaitable(result):
            result = await result
        return result

    async def race(request: Request) -> Any:
        import anyio

        won: list[Any] = []
        failed: list[BaseException] = []

        async def run(index: int) -> None:
            try:
                answer = await ask(index, request)
            except Exception as err:
                failed.append(err)
                logger.warning(
                    "first_answer: resolver %d raised %s on %s; the others go on",
                    index,
                    type_name(err),
                    request.id,
                )
                return
            if won:
                return
            won.append(answer)
            for other, loser in enumerate(resolvers):
                if other != index:
                    _tell(loser, request.id)
            group.cancel_scope.cancel()

        async with anyio.create_task_group() as group:
            for index in range(len(resolvers)):
                group.start_soon(run, index)
        if won:
            return won[0]
        raise failed[0]

    return race


def _tell(resolver: Any, request_id: str) -> None:
    withdraw = getattr(resolver, "withdraw", None)
    if not callable(withdraw):
        return
    try:
        withdraw(request_id, ANSWERED_ELSEWHERE)
    except Exception as err:  # a resolver's own failure must not end the race
        logger.warning("first_answer: withdrawing %s raised %s; ignored", request_id, type_name(err))
