"""A server for a command under test, forked by the fork server instead of started anew.

The command's end-to-end tests start a hundred and more servers over stdio (``toolnexus call
--stdio "python server.py"``), each of which would pay about a second of CPU importing the SDK.
Given as the server's command instead, ``python -S -I launch.py SOCKET ARGS...`` (standard
library only, so it starts in milliseconds) asks the fork server (``zygote.py``, listening on
``SOCKET``) to run ``python ARGS...`` (``-m MODULE ...``, ``-c CODE ...`` or ``SCRIPT ...``) on
its own standard input, output and error, in its working directory and environment, in a new
session. It then holds none of them, so the command and the server see each other's end as
they would; it passes SIGTERM, SIGINT and SIGHUP on to the server, and ends with the server's
exit status (killed by the same signal when the server was). When the launcher is killed
(SIGKILL cannot be passed on), the fork server kills the server: killing the process the
command started kills its server, as it does when ``python`` is that process. When no fork
server listens on ``SOCKET``, or ``ARGS`` are another use of ``python`` (an option first),
the launcher becomes ``python ARGS...`` (``exec``).

:func:`forkserver.server_command` builds the command line; the fork server's children have a
``sys.executable`` that runs it too (``zygote._python_shim``).
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import signal
import socket
import sys


def command(socket_path: str, *args: str) -> list[str]:
    """The command line that runs ``python ARGS...`` through the fork server listening on
    ``socket_path``, by way of this launcher (with ``sys.executable``, the real interpreter)."""
    return [sys.executable, "-S", "-I", os.path.abspath(__file__), socket_path, *args]


def write_shim(path: str, socket_path: str, *args: str) -> str:
    """Write an executable ``path`` (a shell script) that runs ``python ARGS...`` followed by its
    own arguments through the fork server at ``socket_path``: a ``python`` (no ``ARGS``) or a
    ``toolnexus`` (``-m toolnexus``) that costs milliseconds, not a second, to start."""
    with open(path, "w", encoding="utf-8") as shim:
        shim.write(f'#!/bin/sh\nexec {shlex.join(command(socket_path, *args))} "$@"\n')
    os.chmod(path, 0o755)
    return path


def main(argv: list[str]) -> int:
    path, args = argv[0], argv[1:]
    if args[:1] == ["-m"]:
        how, rest = "module", args[1:]
    elif args[:1] == ["-c"]:
        how, rest = "code", args[1:]
    elif args and not args[0].startswith("-"):
        how, rest = "script", args
    else:  # another use of python (an option first, or none): python itself
        os.execv(sys.executable, [sys.executable, *args])
    # The server's parent is the fork server: who started the launcher is said in its
    # environment, for a server that wants to know (servers/counting_server.py).
    env = {**os.environ, "TOOLNEXUS_TEST_STARTED_BY": str(os.getppid())}
    request = {"how": how, "argv": rest, "cwd": os.getcwd(), "env": env, "new_session": True}
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        conn.connect(path)
    except OSError:  # no fork server (yet): be python
        conn.close()
        os.execv(sys.executable, [sys.executable, *args])
    socket.send_fds(conn, [json.dumps(request).encode()], [0, 1, 2])
    reply = conn.recv(1 << 16)
    if not reply:
        print("launch.py: the fork server did not start the server", file=sys.stderr)
        return 1
    child = json.loads(reply)["pid"]
    null = os.open(os.devnull, os.O_RDWR)  # hold no copy of the pipes
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)

    def forward(signum: int, frame: object) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, signum)

    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, forward)
    ended = conn.recv(1 << 16)  # until the child ends (a signal's handler runs, then it goes on)
    if not ended:
        return 1  # the fork server went away
    code = json.loads(ended)["code"]
    if code < 0:  # killed by a signal: so is the launcher
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    return int(code)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
