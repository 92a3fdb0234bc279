"""Measure toolnexus against the upstream Python port (toolnexus 0.21.0) and the SDK floor.

One command, from the repository root::

    python benchmarks/run.py            # the full run (several minutes, most of it the round trip)
    python benchmarks/run.py --quick    # fewer repeats, for a look
    python benchmarks/run.py --update-docs   # also write the table into docs/performance.md

It needs an interpreter where this repository's ``toolnexus`` is installed (the project's
``.venv``; when the running one is not such an interpreter, ``.venv/bin/python`` is used,
and created with ``pip install -e .`` when it does not exist). The upstream pins ``mcp<2``,
so it gets a virtual environment of its own, ``benchmarks/.upstream-venv``, created here
with ``toolnexus==0.21.0`` on the first run and reused after.

What is measured, side by side in one run (see docs/performance.md):

- the mapping functions and the ``ElicitResult`` floor: one worker process per side
  (``_micro.py``), driven in alternation, sample by sample; the best of ``--rounds``
  samples, in ns per call;
- import times: a fresh interpreter per import, the three alternating, best of
  ``--imports``;
- the round trip through ``elicitation_callback`` against an in-process ``MCPServer``, and
  the same with a bare callback (``_roundtrip.py``): CPU time of each call, the two taking
  turns call by call, the overhead the median of the paired ratios over the quietest quarter
  of the rounds, with its 95 % interval. A 5 % target is PASS when the whole interval is
  under 5 %, FAIL when it is all above, UNRESOLVED (not met) otherwise;
- durable calls (``_durable.py``): ``durable.call_tool_or_park`` + ``durable.resume`` against the
  SDK's own manual loop, and ``SqliteStore`` against a raw ``sqlite3`` insert
  (``--durable-only`` measures just these, without the upstream).

It prints the times, then every target with its ratio and PASS or FAIL.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "benchmarks"
UPSTREAM_VENV = BENCH / ".upstream-venv"
UPSTREAM_DIST = "toolnexus"
UPSTREAM_VERSION = "0.21.0"
DOCS = ROOT / "docs" / "performance.md"
DOCS_BEGIN = "<!-- benchmarks:begin (written by benchmarks/run.py --update-docs) -->"
DOCS_END = "<!-- benchmarks:end -->"

IMPORT_CODE = "import time\nt = time.perf_counter_ns()\nimport {module}\nprint(time.perf_counter_ns() - t)\n"


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _bin(venv: Path, name: str) -> Path:
    return venv / ("Scripts" if os.name == "nt" else "bin") / name


# --- environments ------------------------------------------------------------------------


def _is_ours(python: str) -> bool:
    """Whether ``python`` imports this repository's toolnexus and mcp 2.x's ``mcp_types``."""
    code = "import toolnexus, mcp_types; print(toolnexus.__file__)"
    proc = subprocess.run([python, "-c", code], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        return False
    return Path(proc.stdout.strip()).resolve().is_relative_to(ROOT / "src")


def ours_python(explicit: str | None) -> str:
    if explicit:
        if not _is_ours(explicit):
            raise SystemExit(f"{explicit} does not import toolnexus from {ROOT / 'src'}")
        return explicit
    if _is_ours(sys.executable):
        return sys.executable
    venv = ROOT / ".venv"
    python = _bin(venv, "python")
    if not python.exists():
        log(f"creating {venv} (pip install -e .)")
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run(
            [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", "-e", str(ROOT)],
            check=True,
        )
    if not _is_ours(str(python)):
        raise SystemExit(
            f"{python} does not import toolnexus from {ROOT / 'src'}; run: {python} -m pip install -e ."
        )
    return str(python)


def _dist_version(python: Path, dist: str) -> str | None:
    code = f"from importlib.metadata import version; print(version({dist!r}))"
    proc = subprocess.run([str(python), "-I", "-c", code], capture_output=True, text=True, check=False)
    return proc.stdout.strip() if proc.returncode == 0 else None


def upstream_python(base: str) -> str:
    """``benchmarks/.upstream-venv`` with toolnexus 0.21.0 (and the mcp 1.x it pins)."""
    python = _bin(UPSTREAM_VENV, "python")
    if python.exists() and _dist_version(python, UPSTREAM_DIST) == UPSTREAM_VERSION:
        return str(python)
    version = subprocess.run(
        [base, "-c", "import sys; print(sys.version_info >= (3, 11))"],
        capture_output=True,
        text=True,
        check=True,
    )
    if version.stdout.strip() != "True":
        raise SystemExit(
            f"toolnexus {UPSTREAM_VERSION} needs Python >= 3.11; run this with a newer interpreter"
        )
    log(f"creating {UPSTREAM_VENV.relative_to(ROOT)} with {UPSTREAM_DIST}=={UPSTREAM_VERSION}")
    subprocess.run([base, "-m", "venv", "--clear", str(UPSTREAM_VENV)], check=True)
    subprocess.run(
        [
            str(python),
            "-m",
            "pip",
            "install",
            "-q",
            "--disable-pip-version-check",
            f"{UPSTREAM_DIST}=={UPSTREAM_VERSION}",
        ],
        check=True,
    )
    if _dist_version(python, UPSTREAM_DIST) != UPSTREAM_VERSION:
        raise SystemExit(f"could not install {UPSTREAM_DIST}=={UPSTREAM_VERSION} into {UPSTREAM_VENV}")
    return str(python)


# --- the mapping functions, side by side -------------------------------------------------


class Worker:
    """A ``_micro.py`` process for one side, spoken to one JSON line at a time."""

    def __init__(self, python: str, side: str) -> None:
        self.side = side
        self.proc = subprocess.Popen(
            [python, "-I", str(BENCH / "_micro.py"), side],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            bufsize=1,
        )
        hello = self._read()
        self.cases: list[str] = hello["cases"]
        self.versions: dict[str, str] = hello["versions"]

    def _read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit(f"the {self.side} worker stopped (exit code {self.proc.wait()})")
        reply: dict[str, Any] = json.loads(line)
        return reply

    def ask(self, **command: Any) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(command) + "\n")
        self.proc.stdin.flush()
        return self._read()

    def close(self) -> None:
        if self.proc.poll() is None:
            self.ask_quit()
        self.proc.wait(timeout=30)

    def ask_quit(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"op": "quit"}) + "\n")
        self.proc.stdin.close()


def measure_micro(
    pythons: dict[str, str], rounds: int, sample_seconds: float
) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, str]]]:
    """Best ns per call of every case on every side, the sides alternating sample by sample."""
    workers = {side: Worker(python, side) for side, python in pythons.items()}
    try:
        numbers = {
            side: {
                case: w.ask(op="calibrate", case=case, seconds=sample_seconds)["number"] for case in w.cases
            }
            for side, w in workers.items()
        }
        best: dict[str, dict[str, float]] = {side: {} for side in workers}
        names = list(dict.fromkeys(case for w in workers.values() for case in w.cases))
        sides = list(workers)
        for r in range(rounds):
            order = sides if r % 2 == 0 else sides[::-1]
            for case in names:
                for side in order:
                    w = workers[side]
                    if case in w.cases:
                        ns = w.ask(op="time", case=case, number=numbers[side][case])["ns"]
                        best[side][case] = min(best[side].get(case, float("inf")), ns)
        return best, {side: w.versions for side, w in workers.items()}
    finally:
        for w in workers.values():
            w.close()


# --- imports -------------------------------------------------------------------------------


def import_ns(python: str, module: str) -> int:
    proc = subprocess.run(
        [python, "-I", "-c", IMPORT_CODE.format(module=module)], capture_output=True, text=True, check=True
    )
    return int(proc.stdout.strip().splitlines()[-1])


def measure_imports(targets: Sequence[tuple[str, str, str]], repeats: int) -> dict[str, float]:
    """Best import time, in ns, of each ``(name, python, module)``: a fresh interpreter each time."""
    for _, python, module in targets:  # once, unmeasured: bytecode caches written
        import_ns(python, module)
    best = {name: float("inf") for name, _, _ in targets}
    for r in range(repeats):
        k = r % len(targets)
        for name, python, module in [*targets[k:], *targets[:k]]:
            best[name] = min(best[name], import_ns(python, module))
    return best


# --- the round trip ------------------------------------------------------------------------


def measure_roundtrip(python: str, rounds: int) -> dict[str, dict[str, Any]]:
    proc = subprocess.run(
        [python, "-I", str(BENCH / "_roundtrip.py"), "--rounds", str(rounds)],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise SystemExit(f"the round-trip benchmark failed:\n{proc.stderr}")
    result: dict[str, dict[str, Any]] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


# --- durable calls ------------------------------------------------------------------------


def measure_durable(python: str, rounds: int, store_rounds: int, ops: int) -> dict[str, Any]:
    script = str(BENCH / "_durable.py")
    options = ["--rounds", str(rounds), "--store-rounds", str(store_rounds), "--ops", str(ops)]
    proc = subprocess.run(
        [python, "-I", script, *options],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise SystemExit(f"the durable benchmark failed:\n{proc.stderr}")
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def durable_section(durable: dict[str, Any], settings: dict[str, Any]) -> tuple[list[str], list[Target]]:
    """The durable tables, and the target: call_tool + resume within 10 % of the SDK's loop."""
    ex: dict[str, Any] = durable["exchange"]
    store: dict[str, float] = durable["store"]
    lines = [
        f"| durable exchange (in-process MCPServer, 2026-07-28; {ex['rounds']:,} rounds, one exchange "
        "of each a round) | CPU µs, median | quietest quarter | over the SDK loop, quietest quarter "
        "(95 % interval) |",
        "| --- | ---: | ---: | ---: |",
    ]
    labels = {
        "sdk": "SDK manual loop: `session.call_tool(allow_input_required=True)`, `client.call_tool(...)`",
        "floor": "floor: `session.call_tool` for both legs",
        "durable": "`durable.call_tool_or_park` + `durable.resume`",
        "durable_json": "the same, the `Pending` through JSON between the two",
    }
    for name, label in labels.items():
        shown = "baseline"
        if name != "sdk":
            estimate, low, high = ex["overhead"][name]["quiet"]
            shown = f"{estimate * 100:+.1f} % ({low * 100:+.1f} to {high * 100:+.1f} %)"
        lines.append(f"| {label} | {_us(ex['ns'][name])} | {_us(ex['quiet_ns'][name])} | {shown} |")
    lines += [
        "",
        f"| `SqliteStore`, operations per second (best of {settings['store_rounds']} x "
        f"{settings['store_ops']}) | per second | vs raw insert |",
        "| --- | ---: | ---: |",
    ]
    store_labels = {
        "raw_insert": "baseline: raw `sqlite3` INSERT of the same JSON text",
        "put": "`put(pending)`",
        "record": "`record(key, answer)` (reads the pending, checks the answer)",
        "get": "`get(key)`",
    }
    for name, label in store_labels.items():
        lines.append(f"| {label} | {store[name]:,.0f} | {store[name] / store['raw_insert']:.2f}x |")
    lines.append("")
    estimate, low, high = ex["overhead"]["durable"]["quiet"]
    targets = [
        Target(
            "durable `call_tool` + `resume` overhead <= 10 % over the SDK's manual loop (CPU, paired, "
            "quietest quarter, 95 % interval)",
            estimate,
            0.10,
            "%",
            interval=(low, high),
        )
    ]
    return lines, targets


# --- the report ----------------------------------------------------------------------------


@dataclass
class Target:
    what: str
    ratio: float | None
    limit: float
    unit: str = "x"  # "x": a ratio; "%": an overhead
    note: str = ""
    interval: tuple[float, float] | None = None  # a 95 % interval of ``ratio``, when measured with one

    @property
    def verdict(self) -> str:
        if self.ratio is None:
            return "n/a"
        if self.interval is not None:  # met or missed only when the interval says so
            low, high = self.interval
            if high <= self.limit:
                return "PASS"
            return "FAIL" if low > self.limit else "UNRESOLVED"
        return "PASS" if self.ratio <= self.limit else "FAIL"

    @property
    def measured(self) -> str:
        if self.interval is None:
            return self.shown(self.ratio)
        low, high = self.interval
        return f"{self.shown(self.ratio)} ({self.shown(low)} to {self.shown(high)})"

    def shown(self, value: float | None) -> str:
        if value is None:
            return "n/a"
        return f"{value * 100:+.1f} %" if self.unit == "%" else f"{value:.2f}x"


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def machine(pythons: dict[str, str]) -> dict[str, str]:
    ver = subprocess.run(
        [pythons["ours"], "-c", "import platform; print(platform.python_version())"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    return {
        "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "python": ver,
        "machine": platform.machine(),
        "cpu": _cpu_model(),
        "cores": str(os.cpu_count()),
        "load": " / ".join(f"{x:.1f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "n/a",
    }


def _ns(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"{value:,.0f}"


def _ms(value: float | None) -> str:
    return "n/a" if value is None else f"{value / 1e6:.1f}"


def _us(value: float) -> str:
    return f"{value / 1e3:,.1f}"


def summary(results: dict[str, Any]) -> list[str]:
    """What a user pays: each operation, ours, the peer, the ratio, all from this one run."""
    ours: dict[str, float] = results["micro"]["ours"]
    up: dict[str, float] = results["micro"]["upstream"]
    imports: dict[str, float] = results["imports"]
    upstream = "upstream 0.21 (mcp 1.x)"
    rows: list[tuple[str, str, str, float | None]] = []

    def micro(what: str, key: str, peer_key: str, peer: str, peer_side: dict[str, float]) -> None:
        theirs = peer_side.get(peer_key)
        shown = f"{_ns(theirs)} ns, {peer}" if theirs is not None else "n/a"
        ratio = ours[key] / theirs if theirs else None
        rows.append((what, f"{_ns(ours[key])} ns", shown, ratio))

    micro("a form question to a `Request`", "e2r_form_model", "e2r_form_model", upstream, up)
    micro("a URL question to a `Request`", "e2r_url_model", "e2r_url_model", upstream, up)
    micro("an accept to the `ElicitResult`", "a2e_accept", "a2e_accept", upstream, up)
    micro("the same, against building it by hand", "a2e_accept", "floor_accept", "`ElicitResult(...)`", ours)
    micro("a decline to the `ElicitResult`", "a2e_decline", "a2e_decline", upstream, up)
    for label, peer_key, peer in (
        ("`import toolnexus.mcp`", "upstream", "the upstream's module"),
        ("the same, against the SDK's types alone", "mcp_types", "`import mcp_types`"),
    ):
        rows.append(
            (
                label,
                f"{_ms(imports['ours'])} ms",
                f"{_ms(imports[peer_key])} ms, {peer}",
                imports["ours"] / imports[peer_key],
            )
        )
    for era, rt in results["roundtrip"].items():
        t = rt["quiet_ns"]
        rows.append(
            (
                f"a tool call that asks one form question, {era} (CPU)",
                f"{_us(t['bridge'])} µs",
                f"{_us(t['bare'])} µs, a bare callback",
                1 + rt["overhead"]["bridge"]["quiet"][0],
            )
        )
    if "durable" in results:
        exchange = results["durable"]["exchange"]
        cpu = exchange["quiet_ns"]
        rows.append(
            (
                "parking a call and resuming it (CPU)",
                f"{_us(cpu['durable'])} µs",
                f"{_us(cpu['sdk'])} µs, the SDK's manual loop",
                1 + exchange["overhead"]["durable"]["quiet"][0],
            )
        )
        store = results["durable"]["store"]
        for label, key in (("`SqliteStore.put`", "put"), ("`SqliteStore.record`", "record")):
            rows.append(
                (
                    label,
                    f"{_us(1e9 / store[key])} µs",
                    f"{_us(1e9 / store['raw_insert'])} µs, a raw `sqlite3` INSERT",
                    store["raw_insert"] / store[key],
                )
            )
    lines = [
        "| operation | ours | the peer | ratio |",
        "| --- | ---: | ---: | ---: |",
    ]
    for what, mine, theirs, ratio in rows:
        lines.append(f"| {what} | {mine} | {theirs} | {'n/a' if ratio is None else f'{ratio:.2f}x'} |")
    return [*lines, ""]


def _pct(values: list[float]) -> str:
    estimate, low, high = values
    return f"{estimate * 100:+.1f} % ({low * 100:+.1f} to {high * 100:+.1f})"


def roundtrip_section(rt: dict[str, dict[str, Any]]) -> list[str]:
    """The round-trip tables: CPU per call, and each variant's overhead with its interval."""
    first = next(iter(rt.values()))
    lines = [
        f"| round trip, CPU µs per tool call (median; {first['rounds']:,} rounds of bare and bridge "
        "call by call) | bare callback | bridge (defaults) | overhead, quietest quarter (95 % interval) "
        "| overhead, all rounds |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for era, t in rt.items():
        over = t["overhead"]["bridge"]
        lines.append(
            f"| in-process MCPServer, protocol {era}, quietest quarter | {_us(t['quiet_ns']['bare'])} "
            f"| {_us(t['quiet_ns']['bridge'])} | {_pct(over['quiet'])} | {_pct(over['all'])} |"
        )
    lines.append("")
    if all("reference" in t for t in rt.values()):
        ref = first["reference"]
        lines += [
            f"| for reference: every variant ({ref['rounds']:,} rounds, overhead in the quietest "
            "quarter, 95 % interval) | bridge (defaults) | bridge, validate=False | bridge, sync wait_for |",
            "| --- | ---: | ---: | ---: |",
        ]
        for era, t in rt.items():
            over = t["reference"]["overhead"]
            cells = " | ".join(
                _pct(over[name]["quiet"]) for name in ("bridge", "bridge_novalidate", "bridge_sync")
            )
            lines.append(f"| protocol {era} | {cells} |")
        lines.append("")
    if all("inside" in t for t in rt.values()):
        lines += [
            "| CPU inside the callback during a round trip, µs (median) | bare callback | bridge "
            "| the bridge's extra (95 % interval) | extra over the bare round trip |",
            "| --- | ---: | ---: | ---: | ---: |",
        ]
        for era, t in rt.items():
            inside = t["inside"]
            extra, low, high = inside["extra"]
            share = extra / t["quiet_ns"]["bare"] * 100
            lines.append(
                f"| protocol {era} ({inside['rounds']:,} rounds) | {_us(inside['bare'])} "
                f"| {_us(inside['bridge'])} | {_us(extra)} ({_us(low)} to {_us(high)}) | {share:.1f} % |"
            )
        lines.append("")
    return lines


def report(results: dict[str, Any]) -> tuple[str, list[Target]]:
    ours: dict[str, float] = results["micro"]["ours"]
    up: dict[str, float] = results["micro"]["upstream"]
    imports: dict[str, float] = results["imports"]
    rt: dict[str, dict[str, Any]] = results["roundtrip"]
    env = results["machine"]
    ver = results["versions"]
    lines: list[str] = []
    add = lines.append

    add(
        f"Measured {env['date']} on Python {env['python']}, {env['machine']}, {env['cpu']}, "
        f"{env['cores']} cores, load average {env.get('load', 'n/a')} (1 / 5 / 15 min) at the end. "
        f"Ours: toolnexus {ver['ours']['toolnexus']} with mcp {ver['ours']['mcp']}; "
        f"upstream: toolnexus {ver['upstream']['toolnexus']} with mcp {ver['upstream']['mcp']} "
        f"(pydantic {ver['ours']['pydantic']} / {ver['upstream']['pydantic']}). "
        f"Best of {results['settings']['rounds']} samples, sides alternating."
    )
    add("")
    lines.extend(summary(results))
    add("The same run in full:")
    add("")
    add("| ns per call (best) | ours | upstream 0.21.0 |")
    add("| --- | ---: | ---: |")
    rows = [
        ("`elicitation_to_request`, form params model", "e2r_form_model"),
        ("`elicitation_to_request`, URL params model", "e2r_url_model"),
        ("`elicitation_to_request`, form wire dict", "e2r_form_wire"),
        ("`elicitation_to_request`, URL wire dict", "e2r_url_wire"),
        ("`answer_to_elicit_result`, accept with data", "a2e_accept"),
        ("`answer_to_elicit_result`, decline", "a2e_decline"),
        ("floor: `ElicitResult(action='accept', content=...)`", "floor_accept"),
        ("floor: `ElicitResult(action='decline')`", "floor_decline"),
        ("for reference: `ElicitResult`'s validator alone, accept", "validator_accept"),
        ("for reference: `ElicitResult`'s validator alone, decline", "validator_decline"),
    ]
    for label, key in rows:
        theirs = up.get(key)
        shown = _ns(theirs) if theirs is not None else "n/a (no such input)"
        if key.startswith("validator"):
            shown = "—"
        add(f"| {label} | {_ns(ours.get(key))} | {shown} |")
    add("")
    add(f"| import, ms (fresh interpreter, best of {results['settings']['imports']}) | time |")
    add("| --- | ---: |")
    add(f"| `import toolnexus.mcp` (ours) | {_ms(imports['ours'])} |")
    add(f"| `import mcp_types` (alone) | {_ms(imports['mcp_types'])} |")
    add(f"| `import toolnexus.mcp_source` (upstream) | {_ms(imports['upstream'])} |")
    add("")
    lines.extend(roundtrip_section(rt))

    def ratio(a: float | None, b: float | None) -> float | None:
        return None if a is None or b is None else a / b

    targets = [
        Target(
            "`elicitation_to_request`, form params model <= 0.45x upstream",
            ratio(ours["e2r_form_model"], up.get("e2r_form_model")),
            0.45,
        ),
        Target(
            "`elicitation_to_request`, URL params model <= 0.45x upstream",
            ratio(ours["e2r_url_model"], up.get("e2r_url_model")),
            0.45,
        ),
        Target(
            "`elicitation_to_request`, form wire dict <= 0.45x upstream (†)",
            ratio(ours["e2r_form_wire"], up.get("e2r_form_model")),
            0.45,
        ),
        Target(
            "`elicitation_to_request`, URL wire dict <= 0.45x upstream (†)",
            ratio(ours["e2r_url_wire"], up.get("e2r_url_model")),
            0.45,
        ),
        Target(
            "`answer_to_elicit_result`, accept <= 1.0x upstream",
            ratio(ours["a2e_accept"], up.get("a2e_accept")),
            1.0,
        ),
        Target(
            "`answer_to_elicit_result`, accept <= 1.25x the floor",
            ratio(ours["a2e_accept"], ours["floor_accept"]),
            1.25,
        ),
        Target(
            "`answer_to_elicit_result`, decline <= 1.0x upstream",
            ratio(ours["a2e_decline"], up.get("a2e_decline")),
            1.0,
        ),
        Target(
            "`answer_to_elicit_result`, decline <= 1.25x the floor",
            ratio(ours["a2e_decline"], ours["floor_decline"]),
            1.25,
        ),
        Target(
            "`import toolnexus.mcp` <= 1.25x `mcp_types` alone",
            ratio(imports["ours"], imports["mcp_types"]),
            1.25,
        ),
        Target(
            "`import toolnexus.mcp` <= 0.6x upstream's module",
            ratio(imports["ours"], imports["upstream"]),
            0.6,
        ),
    ]
    for era, t in rt.items():
        estimate, low, high = t["overhead"]["bridge"]["quiet"]
        targets.append(
            Target(
                f"round-trip overhead <= 5 %, protocol {era} (bridge defaults; CPU, paired, "
                "quietest quarter, 95 % interval)",
                estimate,
                0.05,
                "%",
                interval=(low, high),
            )
        )
    if "durable" in results:
        durable_lines, durable_targets = durable_section(results["durable"], results["settings"])
        lines.extend(durable_lines)
        targets.extend(durable_targets)
    add("| target | measured | verdict |")
    add("| --- | ---: | :---: |")
    for target in targets:
        add(f"| {target.what} | {target.measured} | {target.verdict} |")
    add("")
    add(
        "(†) The upstream reads params with `getattr`, so it takes no mapping (given a dict it "
        "returns a wrong `Request` without an error): the wire-dict rows are set against the "
        "upstream's time for the same question given as its SDK 1.x model."
    )
    return "\n".join(lines), targets


def update_docs(table: str) -> None:
    text = DOCS.read_text(encoding="utf-8")
    start, end = text.find(DOCS_BEGIN), text.find(DOCS_END)
    if start < 0 or end < start:
        raise SystemExit(f"{DOCS} has no {DOCS_BEGIN} ... {DOCS_END} block")
    DOCS.write_text(text[: start + len(DOCS_BEGIN)] + "\n\n" + table + "\n\n" + text[end:], encoding="utf-8")
    log(f"wrote the table into {DOCS.relative_to(ROOT)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="fewer repeats: a look, not a record")
    parser.add_argument("--rounds", type=int, help="samples per mapping case and side (default 15; quick 5)")
    parser.add_argument("--sample", type=float, default=0.02, help="seconds per sample (default 0.02)")
    parser.add_argument("--imports", type=int, help="fresh interpreters per import (default 9; quick 3)")
    parser.add_argument(
        "--rt-rounds",
        type=int,
        help="round-trip rounds, one call each of bare and bridge (default 3000; quick 600)",
    )
    parser.add_argument(
        "--python", help="the interpreter with this repository's toolnexus (default: this one)"
    )
    parser.add_argument(
        "--durable-rounds",
        type=int,
        help="durable rounds, one exchange of each variant a round (default 1500; quick 300)",
    )
    parser.add_argument(
        "--store-ops", type=int, default=300, help="store operations per sample (default 300)"
    )
    parser.add_argument(
        "--durable-only", action="store_true", help="measure only the durable calls (no upstream needed)"
    )
    parser.add_argument("--json", type=Path, help="also write the raw results to this file")
    parser.add_argument("--update-docs", action="store_true", help="write the table into docs/performance.md")
    parser.add_argument("--check", action="store_true", help="exit with status 1 when a target is missed")
    args = parser.parse_args(argv)
    rounds = args.rounds or (5 if args.quick else 15)
    imports = args.imports or (3 if args.quick else 9)
    rt_rounds = args.rt_rounds or (600 if args.quick else 3000)
    durable_rounds = args.durable_rounds or (300 if args.quick else 1500)
    store_rounds = 3 if args.quick else 5
    durable_settings = {
        "durable_rounds": durable_rounds,
        "store_rounds": store_rounds,
        "store_ops": args.store_ops,
    }

    pythons = {"ours": ours_python(args.python)}
    if args.durable_only:
        log(f"durable: {durable_rounds} rounds of every variant, call by call (CPU time); the store")
        durable = measure_durable(pythons["ours"], durable_rounds, store_rounds, args.store_ops)
        durable_lines, durable_targets = durable_section(durable, durable_settings)
        print("\n".join(durable_lines))
        for target in durable_targets:
            print(f"{target.what}: {target.shown(target.ratio)} {target.verdict}")
        if args.json:
            args.json.write_text(json.dumps({"durable": durable}, indent=1) + "\n", encoding="utf-8")
        return 1 if args.check and any(t.verdict == "FAIL" for t in durable_targets) else 0
    pythons["upstream"] = upstream_python(pythons["ours"])

    log(f"mapping functions: {rounds} rounds of {args.sample:g} s samples, sides alternating")
    micro, versions = measure_micro(pythons, rounds, args.sample)
    log(f"imports: best of {imports} fresh interpreters each")
    import_times = measure_imports(
        [
            ("ours", pythons["ours"], "toolnexus.mcp"),
            ("mcp_types", pythons["ours"], "mcp_types"),
            ("upstream", pythons["upstream"], "toolnexus.mcp_source"),
        ],
        imports,
    )
    log(f"round trip: {rt_rounds} rounds of bare and bridge per era, call by call (CPU time)")
    roundtrip = measure_roundtrip(pythons["ours"], rt_rounds)
    log(f"durable: {durable_rounds} rounds of every variant, call by call (CPU time); the store")
    durable = measure_durable(pythons["ours"], durable_rounds, store_rounds, args.store_ops)
    results: dict[str, Any] = {
        "machine": machine(pythons),
        "versions": versions,
        "settings": {
            "rounds": rounds,
            "sample_seconds": args.sample,
            "imports": imports,
            "rt_rounds": rt_rounds,
            **durable_settings,
        },
        "micro": micro,
        "imports": import_times,
        "roundtrip": roundtrip,
        "durable": durable,
    }
    table, targets = report(results)
    print(table)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    if args.update_docs:
        update_docs(table)
    failed = [t for t in targets if t.verdict in ("FAIL", "UNRESOLVED")]
    print(
        f"\n{len(targets) - len(failed)} of {len(targets)} targets met"
        + (f"; FAIL or UNRESOLVED: {len(failed)}" if failed else "")
    )
    return 1 if failed and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
