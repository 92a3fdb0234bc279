"""elicitation_callback's own argument checks and the containment of params it cannot map.

The behaviour against real servers is in the test_bridge_* modules."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from toolnexus import Answer, Request
from toolnexus.mcp import elicitation_callback


def accept(request: Request) -> Answer:
    return Answer(request.id, True, {})


@pytest.mark.parametrize("wait_for", [None, "resolver", 3, Answer("a", True)])
def test_wait_for_must_be_callable(wait_for: Any) -> None:
    with pytest.raises(TypeError, match="wait_for must be callable"):
        elicitation_callback(wait_for)


@pytest.mark.parametrize("timeout", ["5", True, [1], object()])
def test_timeout_must_be_a_number(timeout: Any) -> None:
    with pytest.raises(TypeError, match="timeout must be a number of seconds or None"):
        elicitation_callback(accept, timeout=timeout)


@pytest.mark.parametrize("timeout", [0, -1, float("inf"), float("nan")])
def test_timeout_must_be_positive_and_finite(timeout: float) -> None:
    with pytest.raises(ValueError, match="timeout must be a positive, finite number"):
        elicitation_callback(accept, timeout=timeout)


@pytest.mark.parametrize("validate", [1, "yes", None])
def test_validate_must_be_a_bool(validate: Any) -> None:
    with pytest.raises(TypeError, match="validate must be a bool"):
        elicitation_callback(accept, validate=validate)


def test_good_arguments_make_a_coroutine_function() -> None:
    import inspect

    assert inspect.iscoroutinefunction(elicitation_callback(accept, timeout=1, validate=False))
    assert inspect.iscoroutinefunction(elicitation_callback(accept, timeout=0.5))


@pytest.mark.anyio
async def test_params_it_cannot_map_are_cancelled_and_logged(caplog: pytest.LogCaptureFixture) -> None:
    seen: list[Request] = []

    def wait_for(request: Request) -> Answer:
        seen.append(request)
        return Answer(request.id, True, {})

    callback = elicitation_callback(wait_for)
    with caplog.at_level(logging.ERROR, logger="toolnexus"):
        result = await callback(None, {"message": 42})  # type: ignore[arg-type]
    assert result.model_dump(exclude_none=True) == {"action": "cancel"}
    assert seen == []
    assert "cannot map" in caplog.text
