"""Reading and checking forms: toolnexus.forms against a general-purpose JSON Schema evaluator.

From the repository root, with the project's environment::

    .venv/bin/python benchmarks/forms.py            # prints a Markdown table
    .venv/bin/python benchmarks/forms.py --quick    # fewer repeats

Five measurements, each in one process and one run:

0. The speed of a parse: ``read_form`` of the realistic five-field form below, and
   ``validate_content`` of a good answer to it, against the SDK's own
   ``ElicitRequestFormParams.model_validate`` of the same params, sampled in alternation
   (CPU time of this thread, best sample of each); the ratios and their targets (8x, 10x).
1. Growth: ``read_form`` and ``Form.problems`` on forms of 10 to 1,000 fields, and on a
   single-select of 10 to 1,000 choices; time per field (or choice) should stay flat.
2. The common case against jsonschema, the path toolnexus used before the form model:
   a realistic five-field form, read and checked once per answer (``read_form`` +
   ``problems``), against jsonschema's ``Draft202012Validator`` with its format checker,
   (a) compiled once and reused, the best jsonschema can do, and (b) with ``check_schema``
   each time, as for a new server schema.
3. The attacks: ``read_form`` + ``problems`` on each hostile schema of
   ``tests/test_form_attacks.py``, against jsonschema checking the same answer in a child
   process stopped after ``--cap`` seconds (a stalled or crashed child is reported as such).
4. ``$ref`` amplification: many properties that ``$ref`` one ``$defs`` entry. Within the
   limits the time per produced choice (or character) stays flat; past them the schema is
   refused after a bounded read, whatever the number of uses.

jsonschema is installed with the SDK (``mcp`` depends on it); toolnexus no longer uses it.
"""

from __future__ import annotations

import argparse
import gc
import multiprocessing
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "src"))

from toolnexus.errors import FormError  # noqa: E402
from toolnexus.forms import MAX_FORM_CHOICES, MAX_TEXT, read_form, validate_content  # noqa: E402

REALISTIC = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Name", "minLength": 1, "maxLength": 80},
        "email": {"type": "string", "format": "email"},
        "age": {"type": "integer", "minimum": 0, "maximum": 150},
        "plan": {
            "type": "string",
            "oneOf": [{"const": "free", "title": "Free"}, {"const": "pro", "title": "Pro"}],
        },
        "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b", "c"]}, "maxItems": 2},
    },
    "required": ["name", "email"],
}
REALISTIC_ANSWER = {"name": "Ada", "email": "ada@example.com", "age": 36, "plan": "pro", "tags": ["a"]}


def best_per_call(fn: Callable[[], object], *, rounds: int, target: float = 0.02) -> float:
    """Best of ``rounds`` samples of about ``target`` seconds each, in seconds of this
    thread's CPU time per call (a loaded machine pausing the process does not count)."""
    fn()
    loops = 1
    while True:
        started = time.thread_time()
        for _ in range(loops):
            fn()
        spent = time.thread_time() - started
        if spent >= target / 4 or loops > 1 << 20:
            break
        loops *= 2
    samples = []
    for _ in range(rounds):
        started = time.thread_time()
        for _ in range(loops):
            fn()
        samples.append((time.thread_time() - started) / loops)
    return min(samples)


PARAMS = {"mode": "form", "message": "Please fill in your profile", "requestedSchema": REALISTIC}
TARGETS = {"read_form": 8.0, "validate_content": 10.0}


def against_the_sdk(rounds: int) -> dict[str, float]:
    """Best CPU time per call of the SDK's parse, ``read_form`` and ``validate_content``,
    sampled in alternation (the order rotating), in seconds."""
    from mcp_types import ElicitRequestFormParams

    assert validate_content(REALISTIC, REALISTIC_ANSWER) == []
    cases: dict[str, Callable[[], object]] = {
        "sdk": lambda: ElicitRequestFormParams.model_validate(PARAMS),
        "read_form": lambda: read_form(REALISTIC),
        "validate_content": lambda: validate_content(REALISTIC, REALISTIC_ANSWER),
    }
    loops = {}
    for name, fn in cases.items():
        fn()
        n = 1
        while _cpu(fn, n) < 0.002:
            n *= 2
        loops[name] = n
    best = dict.fromkeys(cases, float("inf"))
    names = list(cases)
    for round_ in range(rounds * 8):
        for name in names[round_ % 3 :] + names[: round_ % 3]:
            best[name] = min(best[name], _cpu(cases[name], loops[name]) / loops[name])
    return best


def _cpu(fn: Callable[[], object], loops: int) -> float:
    started = time.thread_time()
    for _ in range(loops):
        fn()
    return time.thread_time() - started


def ref_growth(rounds: int) -> list[tuple[str, int, int, str, float]]:
    """``read_form`` of ``uses`` properties that each ``$ref`` one target: (target, uses,
    produced units, outcome, seconds)."""
    rows = []
    targets = {
        "10 choices": ({"type": "string", "enum": [f"c{i}" for i in range(10)]}, 10),
        "1,000 choices": ({"type": "string", "enum": [f"c{i}" for i in range(1000)]}, 1000),
        "a 100-character description": ({"type": "string", "description": "d" * 100}, 100),
        "a 1 MB description": ({"type": "string", "description": "d" * 1_000_000}, 1_000_000),
    }
    for label, (target, units) in targets.items():
        for uses in (10, 100, 1000):
            schema = {
                "type": "object",
                "properties": {f"p{i}": {"$ref": "#/$defs/t"} for i in range(uses)},
                "$defs": {"t": target},
            }

            def run(schema: dict[str, Any] = schema) -> str:
                try:
                    read_form(schema)
                    return "read"
                except FormError:
                    return "refused"

            outcome = run()
            rows.append((label, uses, units * uses, outcome, best_per_call(run, rounds=rounds)))
    return rows


def ours(schema: Any, answer: dict[str, Any]) -> Callable[[], object]:
    def run() -> object:
        try:
            return read_form(schema).problems(answer)
        except FormError:
            return None

    return run


def growth(rounds: int) -> list[tuple[str, int, float]]:
    rows = []
    for n in (10, 100, 1000):
        schema = {
            "type": "object",
            "properties": {f"f{i}": {"type": "string", "maxLength": 20} for i in range(n)},
        }
        answer = {f"f{i}": "x" for i in range(n)}
        rows.append(("fields", n, best_per_call(ours(schema, answer), rounds=rounds)))
    for n in (10, 100, 1000):
        schema = {
            "type": "object",
            "properties": {"c": {"type": "string", "enum": [f"v{i}" for i in range(n)]}},
        }
        rows.append(("choices", n, best_per_call(ours(schema, {"c": f"v{n - 1}"}), rounds=rounds)))
    return rows


def jsonschema_once(schema: dict[str, Any]) -> Callable[[dict[str, Any]], list[Any]]:
    from jsonschema import Draft202012Validator, FormatChecker

    validator = Draft202012Validator(schema, format_checker=FormatChecker())
    return lambda answer: list(validator.iter_errors(answer))


def jsonschema_fresh(schema: dict[str, Any], answer: dict[str, Any]) -> list[Any]:
    from jsonschema import Draft202012Validator, FormatChecker

    Draft202012Validator.check_schema(schema)
    return list(Draft202012Validator(schema, format_checker=FormatChecker()).iter_errors(answer))


def _child(schema: dict[str, Any], answer: dict[str, Any], out: Any) -> None:
    started = time.perf_counter()
    try:
        jsonschema_fresh(schema, answer)
        out.send(("done", time.perf_counter() - started))
    except RecursionError:
        out.send(("RecursionError", time.perf_counter() - started))
    except Exception as err:
        out.send((type(err).__name__, time.perf_counter() - started))


def jsonschema_capped(schema: dict[str, Any], answer: dict[str, Any], cap: float) -> str:
    here, there = multiprocessing.Pipe(duplex=False)
    child = multiprocessing.get_context("fork").Process(target=_child, args=(schema, answer, there))
    child.start()
    child.join(cap)
    if child.is_alive():
        child.kill()
        child.join()
        return f"still running at {cap:g} s (stopped)"
    if child.exitcode != 0 or not here.poll():
        return f"crashed (exit code {child.exitcode})"
    outcome, seconds = here.recv()
    return f"{seconds * 1000:,.1f} ms" + ("" if outcome == "done" else f" ({outcome})")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    parser.add_argument("--cap", type=float, default=10.0, help="seconds a jsonschema attack child may run")
    args = parser.parse_args(argv)
    rounds = 5 if args.quick else 15

    print("## The form model against the SDK's parse\n")
    best = against_the_sdk(rounds)
    print("| call (the realistic five-field form) | CPU time per call (best) | ratio to the SDK | target |")
    print("| --- | ---: | ---: | ---: |")
    sdk = best["sdk"] * 1e6
    print(f"| `ElicitRequestFormParams.model_validate(params)` (the SDK) | {sdk:,.2f} µs | 1.00x | |")
    for name, target in TARGETS.items():
        ratio = best[name] / best["sdk"]
        verdict = "PASS" if ratio <= target else "FAIL"
        call = "read_form(schema)" if name == "read_form" else "validate_content(schema, answer)"
        print(f"| `{call}` | {best[name] * 1e6:,.2f} µs | {ratio:.2f}x | <= {target:g}x {verdict} |")

    print("\n## $ref amplification: reading time against what would be produced\n")
    print(
        f"Limits: {MAX_FORM_CHOICES:,} choices and {MAX_TEXT:,} characters of text per form, "
        "a `$ref` counted once per use.\n"
    )
    print(
        "| each property `$ref`s | uses | would produce | outcome | read_form | per use | per produced unit |"
    )
    print("| --- | ---: | ---: | --- | ---: | ---: | ---: |")
    for label, uses, produced, outcome, seconds in ref_growth(rounds):
        unit = "characters" if "description" in label else "choices"
        print(
            f"| {label} | {uses:,} | {produced:,} {unit} | {outcome} | {seconds * 1e6:,.1f} µs "
            f"| {seconds * 1e9 / uses:,.0f} ns | {seconds * 1e9 / produced:,.2f} ns |"
        )

    print("\n## Growth: read_form + problems\n")
    print("| form | size | per call | per field or choice |")
    print("| --- | ---: | ---: | ---: |")
    for kind, n, seconds in growth(rounds):
        print(f"| {kind} | {n:,} | {seconds * 1e6:,.1f} µs | {seconds * 1e9 / n:,.0f} ns |")

    print("\n## A realistic five-field form, one answer\n")
    ours_s = best_per_call(ours(REALISTIC, REALISTIC_ANSWER), rounds=rounds)
    check = jsonschema_once(REALISTIC)
    once_s = best_per_call(lambda: check(REALISTIC_ANSWER), rounds=rounds)
    fresh_s = best_per_call(lambda: jsonschema_fresh(REALISTIC, REALISTIC_ANSWER), rounds=rounds)
    print("| path | per answer | ratio to read_form + problems |")
    print("| --- | ---: | ---: |")
    print(f"| read_form + problems (no cache) | {ours_s * 1e6:,.1f} µs | 1.00 |")
    print(f"| jsonschema, validator compiled once | {once_s * 1e6:,.1f} µs | {once_s / ours_s:.2f} |")
    print(
        f"| jsonschema, check_schema + compile each time | {fresh_s * 1e6:,.1f} µs | {fresh_s / ours_s:.2f} |"
    )

    from test_form_attacks import ATTACKS, _deep

    attacks = {name: (schema, answer) for name, (schema, answer, _) in ATTACKS.items()}
    attacks["nesting-10000"] = (_deep(10_000), {"x": "y"})
    print(f"\n## The attacks (jsonschema in a child process, stopped at {args.cap:g} s)\n")
    print("| attack | read_form + problems (best of 5, CPU) | outcome | jsonschema |")
    print("| --- | ---: | --- | --- |")
    for name, (schema, answer) in attacks.items():
        times = []
        gc.collect()  # the heap the earlier rows left is not this row's to sweep
        for _ in range(5):
            started = time.thread_time()
            try:
                read_form(schema).problems(answer)
                outcome = "a form"
            except FormError:
                outcome = "FormError"
            times.append(time.thread_time() - started)
        theirs = jsonschema_capped(schema, answer, args.cap)
        print(f"| {name} | {min(times) * 1000:,.2f} ms | {outcome} | {theirs} |")


if __name__ == "__main__":
    main()
