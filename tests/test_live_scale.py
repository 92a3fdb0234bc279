"""Live questions at scale and a host that dies: 1,000 live questions open at once from 4 host
processes, answered in a random order from the inbox (HTTP posts, as a browser sends them) and
with ``toolnexus answer``: each answer reaches its own call exactly once, none lost, none
crossed. And a host process killed -9 with questions open: they read withdrawn within their
lease, everywhere, and take no answer.
"""

from __future__ import annotations

import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx2 as httpx
import pytest

from support import forkserver
from toolnexus import inbox
from toolnexus.durable import SqliteStore, open_store

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]

HOSTS = 4
PER_HOST = 250
TOKEN = "scale-test-token-0123456789abcdef"
TOOLNEXUS = str(Path(sys.executable).with_name("toolnexus"))
SCHEMA = '{"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}'
HOST = """
import asyncio, json, sys
from toolnexus import Request
from toolnexus.durable import ask_in, open_store

spec, tag, count, lease = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
schema = json.loads(sys.argv[5])

async def main() -> None:
    store = open_store(spec, create=False)
    ask = ask_in(store, server=f"host-{tag}", lease=lease)

    async def one(n: int) -> None:
        request = Request(f"elc-{tag}-{n}", "input", f"Name for {tag}-{n}?", None, {"schema": schema})
        answer = await ask(request)
        print(request.id, json.dumps(answer.to_dict()), flush=True)

    print("asking", flush=True)
    await asyncio.gather(*(one(n) for n in range(count)))

asyncio.run(main())
"""


def start_host(spec: str, tag: str, count: int, lease: float = 30) -> forkserver.Forked:
    return forkserver.popen(
        [sys.executable, "-c", HOST, spec, tag, str(count), str(lease), SCHEMA],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for_live(store: SqliteStore, count: int, timeout: float = 120) -> dict[str, str]:
    """Request id to key of the live questions, once ``count`` of them wait."""
    watcher = store.watch()
    deadline = time.monotonic() + timeout
    while True:
        live = {call.pending.requests[0].id: call.key for call in store.calls(status="live") if call.pending}
        if len(live) >= count:
            return live
        assert time.monotonic() < deadline, f"{len(live)} of {count} live questions"
        watcher.wait(1)


def test_a_thousand_live_questions_from_four_processes_each_reach_their_own_call_once(tmp_path: Path) -> None:
    spec = str(tmp_path / "live.db")
    SqliteStore(spec).close()
    hosts = [start_host(spec, f"h{i}", PER_HOST) for i in range(HOSTS)]
    try:
        with SqliteStore(spec) as store, inbox.serving(store, token=TOKEN) as serving:
            live = wait_for_live(store, HOSTS * PER_HOST)
            order = list(live.items())
            random.Random(11).shuffle(order)
            by_command, by_inbox = order[:10], order[10:]
            base = serving.address.split("/?")[0]
            with httpx.Client(base_url=base, timeout=60) as browser:
                browser.get(f"/?token={TOKEN}")
                assert browser.get("/").status_code == 200  # the CSRF cookie, with a page
                csrf = next(value for name, value in browser.cookies.items() if name.endswith("_csrf"))
                for request_id, key in by_inbox:
                    posted = browser.post(
                        f"/calls/{key}/{request_id}",
                        data={"csrf": csrf, "action": "accept", "f0": request_id},
                    )
                    assert posted.status_code == 303, posted.text[:300]
            for request_id, key in by_command:
                done = forkserver.run(
                    [TOOLNEXUS, "answer", spec, key],
                    input=f"{request_id}\n\n",
                    capture_output=True,
                    text=True,
                    timeout=60,
                    start_new_session=True,
                )
                assert done.returncode == 0, done.stderr
        outputs = [host.communicate(timeout=300) for host in hosts]
    finally:
        for host in hosts:
            if host.poll() is None:
                host.kill()
                host.communicate()
    got: dict[str, list[str]] = {}
    for (out, err), host in zip(outputs, hosts, strict=True):
        assert host.returncode == 0, err
        for line in out.splitlines()[1:]:  # after "asking"
            request_id, answer = line.split(" ", 1)
            got.setdefault(request_id, []).append(answer)
    assert sorted(got) == sorted(live)  # none lost
    for request_id, answers in got.items():
        assert len(answers) == 1, (request_id, answers)  # each once
        assert f'"name":"{request_id}"' in answers[0].replace(" ", ""), (request_id, answers)  # none crossed
    with open_store(spec, create=False, read_only=True) as reader:
        statuses = {call.status for call in reader.calls()}
    assert statuses == {"answered"}


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="kills a process")
def test_a_host_killed_with_questions_open_withdraws_them_within_their_lease(tmp_path: Path) -> None:
    spec = str(tmp_path / "live.db")
    SqliteStore(spec).close()
    host = start_host(spec, "dies", 3, lease=2)
    try:
        with SqliteStore(spec) as store:
            live = wait_for_live(store, 3)
            os.kill(host.pid, signal.SIGKILL)
            killed = time.monotonic()
            host.communicate(timeout=30)
            while {call.status for call in store.calls()} != {"withdrawn"}:
                assert time.monotonic() - killed < 2 + 3, "still live after the lease ran out"
                time.sleep(0.05)
            for call in store.calls():
                assert call.error is not None
                assert "stopped" in call.error
            key = next(iter(live.values()))
            with pytest.raises(ValueError, match="withdrawn"):
                store.record(key, {"id": next(iter(live)), "ok": True, "data": {"name": "late"}})
            with inbox.serving(store, token=TOKEN) as serving:
                page = httpx.get(serving.address, follow_redirects=True, timeout=30).text
            assert "Servers waiting now" not in page  # nothing waits forever in the list
            assert len(re.findall("status-withdrawn", page)) == 3
            store.sweep()
        with open_store(spec, create=False, read_only=True) as reader:
            assert {call.status for call in reader.calls()} == {"withdrawn"}
    finally:
        if host.poll() is None:
            host.kill()
            host.communicate()
