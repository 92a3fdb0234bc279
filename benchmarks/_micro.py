"""Micro-benchmark worker: times the mapping functions in ONE environment.

``run.py`` starts one worker per side, each with its own interpreter:

- ``python _micro.py ours``: this repository's ``toolnexus`` with ``mcp`` 2.x (``mcp_types``);
- ``python _micro.py upstream``: ``toolnexus==0.21.0`` from the package index, with the
  ``mcp`` 1.x it pins (its own virtual environment).

and drives them in alternation over stdin/stdout, one JSON object per line:

- ``{"op": "calibrate", "case": NAME, "seconds": S}`` -> ``{"number": N}``: how many calls
  take about ``S`` seconds;
- ``{"op": "time", "case": NAME, "number": N}`` -> ``{"ns": T}``: one sample, ns per call;
- ``{"op": "quit"}``.

On start the worker prints ``{"cases": [...], "versions": {...}}``. Every case is first run
once and its result checked, so a timing is never the timing of an error path.

Each case is timed as a caller writes it (``timeit`` statement ``f(arg)``), with the garbage
collector off during a sample, as ``timeit`` does.
"""

from __future__ import annotations

import json
import sys
import timeit
from collections.abc import Callable
from importlib.metadata import version
from typing import Any

FORM_MESSAGE = "Where should the demo service be deployed?"
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "environment": {"type": "string", "enum": ["staging", "production"], "title": "Environment"},
        "replicas": {"type": "integer", "minimum": 1, "maximum": 10, "title": "Replicas"},
        "notify": {"type": "boolean", "default": True, "title": "Notify the team"},
        "note": {"type": "string", "default": "routine deploy", "title": "Note"},
    },
    "required": ["environment", "replicas"],
}
URL_MESSAGE = "Sign in to the demo service to authorize deploys"
URL = "https://auth.example.com/authorize?client_id=toolnexus-demo&scope=deploy"
ELICITATION_ID = "0f1e2d3c4b5a69788796a5b4c3d2e1f0"
DATA: dict[str, Any] = {"environment": "staging", "replicas": 3, "notify": True, "note": "routine deploy"}

WIRE_FORM: dict[str, Any] = {"mode": "form", "message": FORM_MESSAGE, "requestedSchema": SCHEMA}
WIRE_URL: dict[str, Any] = {
    "mode": "url",
    "message": URL_MESSAGE,
    "url": URL,
    "elicitationId": ELICITATION_ID,
}


class Case:
    """One timed statement, with the check that its result is the expected one."""

    def __init__(self, stmt: str, env: dict[str, Any], check: Callable[[Any], bool]) -> None:
        self.stmt = stmt
        self.env = env
        self.check = check
        self.timer = timeit.Timer(stmt, globals=env)

    def verify(self, name: str) -> None:
        result = eval(self.stmt, self.env)  # the statement the timer runs, once
        if not self.check(result):
            raise SystemExit(f"benchmark case {name!r} gave an unexpected result: {result!r}")


def _request_check(kind: str, url: str | None, with_schema: bool) -> Callable[[Any], bool]:
    def check(req: Any) -> bool:
        return (
            req.kind == kind
            and req.url == url
            and (req.data == {"schema": SCHEMA} if with_schema else req.data is None)
            and req.id.startswith("elc-")
        )

    return check


def _result_check(action: str, content: dict[str, Any] | None) -> Callable[[Any], bool]:
    def check(result: Any) -> bool:
        return bool(result.action == action and result.content == content)

    return check


def ours() -> tuple[dict[str, Case], dict[str, str]]:
    from mcp_types import ElicitRequestFormParams, ElicitRequestURLParams, ElicitResult

    from toolnexus import Answer
    from toolnexus.mcp import answer_to_elicit_result, elicitation_to_request

    form = ElicitRequestFormParams(message=FORM_MESSAGE, requested_schema=SCHEMA)
    url = ElicitRequestURLParams(message=URL_MESSAGE, url=URL, elicitation_id=ELICITATION_ID)
    accept = Answer("elc-bench-1", True, dict(DATA))
    decline = Answer("elc-bench-1", False, None, "declined")
    env: dict[str, Any] = {
        "e2r": elicitation_to_request,
        "a2e": answer_to_elicit_result,
        "ElicitResult": ElicitResult,
        "validate": ElicitResult.__pydantic_validator__.validate_python,
        "form": form,
        "url": url,
        "wire_form": WIRE_FORM,
        "wire_url": WIRE_URL,
        "accept": accept,
        "decline": decline,
        "data": DATA,
        "accept_input": {"action": "accept", "content": DATA},
        "decline_input": {"action": "decline"},
    }
    cases = {
        "e2r_form_model": Case("e2r(form)", env, _request_check("input", None, True)),
        "e2r_url_model": Case("e2r(url)", env, _request_check("authorization", URL, False)),
        "e2r_form_wire": Case("e2r(wire_form)", env, _request_check("input", None, True)),
        "e2r_url_wire": Case("e2r(wire_url)", env, _request_check("authorization", URL, False)),
        "a2e_accept": Case("a2e(accept)", env, _result_check("accept", DATA)),
        "a2e_decline": Case("a2e(decline)", env, _result_check("decline", None)),
        "floor_accept": Case(
            "ElicitResult(action='accept', content=data)", env, _result_check("accept", DATA)
        ),
        "floor_decline": Case("ElicitResult(action='decline')", env, _result_check("decline", None)),
        "validator_accept": Case("validate(accept_input)", env, _result_check("accept", DATA)),
        "validator_decline": Case("validate(decline_input)", env, _result_check("decline", None)),
    }
    versions = {"toolnexus": version("toolnexus-mcp"), "mcp": version("mcp"), "pydantic": version("pydantic")}
    return cases, versions


def upstream() -> tuple[dict[str, Case], dict[str, str]]:
    # toolnexus 0.21.0 reads params with getattr, so it takes the SDK 1.x models (whose
    # fields are camelCase) and no mapping; its Answer is a plain dataclass.
    from mcp.types import ElicitRequestFormParams, ElicitRequestURLParams, ElicitResult
    from toolnexus.mcp_source import (  # type: ignore[import-not-found]
        answer_to_elicit_result,
        elicitation_to_request,
    )
    from toolnexus.types import Answer  # type: ignore[import-not-found]

    form = ElicitRequestFormParams(message=FORM_MESSAGE, requestedSchema=SCHEMA)  # type: ignore[call-arg]
    url = ElicitRequestURLParams(message=URL_MESSAGE, url=URL, elicitationId=ELICITATION_ID)  # type: ignore[call-arg]
    accept = Answer("elc-bench-1", True, dict(DATA))
    decline = Answer("elc-bench-1", False, None, "declined")
    env: dict[str, Any] = {
        "e2r": elicitation_to_request,
        "a2e": answer_to_elicit_result,
        "ElicitResult": ElicitResult,
        "form": form,
        "url": url,
        "accept": accept,
        "decline": decline,
        "data": DATA,
    }
    cases = {
        "e2r_form_model": Case("e2r(form)", env, _request_check("input", None, True)),
        "e2r_url_model": Case("e2r(url)", env, _request_check("authorization", URL, False)),
        "a2e_accept": Case("a2e(accept)", env, _result_check("accept", DATA)),
        "a2e_decline": Case("a2e(decline)", env, _result_check("decline", None)),
        "floor_accept": Case(
            "ElicitResult(action='accept', content=data)", env, _result_check("accept", DATA)
        ),
        "floor_decline": Case("ElicitResult(action='decline')", env, _result_check("decline", None)),
    }
    return cases, {"toolnexus": version("toolnexus"), "mcp": version("mcp"), "pydantic": version("pydantic")}


def _calibrate(case: Case, seconds: float) -> int:
    number = 1
    while True:
        elapsed = case.timer.timeit(number)
        if elapsed >= seconds / 5 or number >= 10**8:
            return max(1, int(number * seconds / max(elapsed, 1e-9)))
        number *= 10


def main() -> None:
    side = sys.argv[1]
    cases, versions = {"ours": ours, "upstream": upstream}[side]()
    for name, case in cases.items():
        case.verify(name)
    out = sys.stdout
    out.write(json.dumps({"cases": list(cases), "versions": versions}) + "\n")
    out.flush()
    for line in sys.stdin:
        cmd = json.loads(line)
        if cmd["op"] == "quit":
            break
        case = cases[cmd["case"]]
        if cmd["op"] == "calibrate":
            reply: dict[str, Any] = {"number": _calibrate(case, float(cmd["seconds"]))}
        else:
            number = int(cmd["number"])
            reply = {"ns": case.timer.timeit(number) / number * 1e9}
        out.write(json.dumps(reply) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
