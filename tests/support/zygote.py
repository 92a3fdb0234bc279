"""The fork server's own process (see ``forkserver.py``): imports the package and the SDK once,
then forks one process per command it is sent, over a ``SOCK_SEQPACKET`` socket whose number
is its only argument.

Each request is one JSON message with three file descriptors (the child's stdin, stdout and
stderr); the reply is ``{"id": ..., "pid": ...}``, and ``{"exit": pid, "code": ...}`` when
that child ends. The child is a process of its own: its own descriptors, working directory,
environment, session and ``sys.argv``; it runs the command as ``python`` would (``-m`` a
module, ``-c`` code, a script, or the ``toolnexus`` entry point) and ends through the interpreter's own
exit, so ``SystemExit`` codes, tracebacks and ``atexit`` work as they do in a new process.
Standard library only until the preload, which imports what the commands use.
"""

from __future__ import annotations

import importlib
import io
import json
import os
import select
import signal
import socket
import sys
import threading
from typing import Any

PRELOAD = (
    "anyio",
    "pydantic",
    "mcp",
    "mcp.client",
    "mcp.client.stdio",
    "mcp.client.streamable_http",
    "mcp.server.mcpserver",
    "toolnexus",
    "toolnexus.cli",
    "toolnexus.cli._commands",
    "toolnexus.console",
    "toolnexus.durable",
    "toolnexus.forms",
    "toolnexus.mcp",
    "toolnexus.policy",
    "toolnexus.testing",
    "toolnexus.worker",
)


def _text(fd: int, mode: str, errors: str, *, write_through: bool) -> io.TextIOWrapper:
    raw = io.FileIO(fd, mode, closefd=False)
    buffered: Any = io.BufferedReader(raw) if mode == "r" else io.BufferedWriter(raw)
    encoding = os.environ.get("PYTHONIOENCODING", "utf-8").split(":")[0] or "utf-8"
    return io.TextIOWrapper(
        buffered,
        encoding=encoding,
        errors=errors,
        line_buffering=mode == "w" and (fd == 2 or os.isatty(fd)),
        write_through=write_through,
    )


def _become(request: dict[str, Any], fds: list[int]) -> None:
    """In the child: take the request's descriptors, place, environment and arguments."""
    if request["new_session"]:
        os.setsid()
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
    for fd in fds:
        if fd > 2:
            os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    signal.signal(signal.SIGINT, signal.default_int_handler)
    unbuffered = bool(os.environ.get("PYTHONUNBUFFERED"))
    sys.stdin = _text(0, "r", "strict", write_through=False)
    sys.stdout = _text(1, "w", "strict", write_through=unbuffered)
    sys.stderr = _text(2, "w", "backslashreplace", write_through=True)


def _run(request: dict[str, Any]) -> None:
    """Run the command as ``python`` would; returns only when it ran to its end."""
    import runpy

    how, argv = request["how"], request["argv"]
    if how == "module":  # python -m NAME ARGS...
        sys.argv = [argv[0], *argv[1:]]
        sys.path[0] = os.getcwd()
        runpy.run_module(argv[0], run_name="__main__", alter_sys=True)
    elif how == "script":  # python SCRIPT ARGS...
        sys.argv = list(argv)
        sys.path[0] = os.path.dirname(os.path.abspath(argv[0]))
        runpy.run_path(argv[0], run_name="__main__")
    elif how == "code":  # python -c CODE ARGS...
        sys.argv = ["-c", *argv[1:]]
        sys.path[0] = ""
        exec(compile(argv[0], "<string>", "exec"), {"__name__": "__main__", "__builtins__": __builtins__})
    else:  # the toolnexus entry point
        from toolnexus.cli import main

        sys.argv = list(argv)
        sys.path[0] = os.path.dirname(argv[0])
        raise SystemExit(main())


def serve(sock: socket.socket) -> None:
    for name in PRELOAD:
        importlib.import_module(name)
    if threading.active_count() != 1:  # a fork would copy a thread's locks mid-use
        raise RuntimeError(f"the preload started threads: {threading.enumerate()}")
    sock.send(b'{"ready": true}')
    while True:
        ready, _, _ = select.select([sock], [], [], 0.02)
        while True:  # every child that ended
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            sock.send(json.dumps({"exit": pid, "code": os.waitstatus_to_exitcode(status)}).encode())
        if not ready:
            continue
        message, fds, _, _ = socket.recv_fds(sock, 1 << 20, 3)
        if not message:  # the tests are over
            return
        request = json.loads(message)
        pid = os.fork()
        if pid == 0:
            sock.close()
            _become(request, fds)
            _run(request)
            raise SystemExit(0)
        for fd in fds:
            os.close(fd)
        sock.send(json.dumps({"id": request["id"], "pid": pid}).encode())


if __name__ == "__main__":
    serve(socket.socket(fileno=int(sys.argv[1])))
