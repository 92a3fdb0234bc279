"""The elicitation server over stdio without paying its start-up for every test.

Starting ``python -m servers.elicit_server stdio`` costs about a second of CPU (importing the
SDK), once per stdio test. Instead, one process per test session imports the server once and
waits on a Unix socket (``python -m servers.stdio_fork SOCKET``, the "fork server"). Each test's
``mcp.Client`` still starts a process of its own and speaks to it over that process's stdin and
stdout: a small launcher (``python -S -I stdio_fork.py --launch SOCKET``, standard library only)
hands its three standard file descriptors to the fork server, which forks a child that serves
MCP on exactly those pipes, the same ``_serve_stdio`` as the plain module. The launcher lives as
long as that child, and passes SIGTERM and SIGINT on to it, so the SDK's shutdown (close stdin,
wait, terminate) works as with any server process.
"""

from __future__ import annotations

import os
import signal
import socket
import sys
import time
from contextlib import suppress


def launch(path: str) -> int:
    """The launcher: give stdin, stdout and stderr to the fork server, then wait for the child."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.connect(path)
        socket.send_fds(conn, [b"serve"], [0, 1, 2])
        answer = b""
        while not answer.endswith(b"\n"):
            chunk = conn.recv(64)
            if not chunk:
                return 1
            answer += chunk
    child = int(answer)
    # Hold no copy of the pipes: the client's EOF and the server's must reach each other.
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)

    def forward(signum: int, frame: object) -> None:
        with suppress(ProcessLookupError):
            os.kill(child, signum)

    signal.signal(signal.SIGTERM, forward)
    signal.signal(signal.SIGINT, forward)
    while True:  # the child is not ours to wait for: watch for it to be gone
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            return 0
        time.sleep(0.02)


def serve(path: str) -> None:
    """The fork server: import the server once, then fork one child per launcher."""
    import traceback

    from servers import elicit_server

    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped as they exit
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    print("ready", flush=True)
    while True:
        conn, _ = listener.accept()
        with conn:
            _, fds, _, _ = socket.recv_fds(conn, 16, 3)
            if len(fds) != 3:
                for fd in fds:
                    os.close(fd)
                continue
            pid = os.fork()
            if pid == 0:
                code = 0
                try:
                    listener.close()
                    conn.close()
                    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                    for target, fd in enumerate(fds):
                        os.dup2(fd, target)
                        os.close(fd)
                    elicit_server.main(["stdio"])
                except BaseException:
                    traceback.print_exc()
                    code = 1
                finally:
                    sys.stdout.flush()
                    os._exit(code)
            for fd in fds:
                os.close(fd)
            conn.sendall(f"{pid}\n".encode())


if __name__ == "__main__":
    if sys.argv[1] == "--launch":
        raise SystemExit(launch(sys.argv[2]))
    serve(sys.argv[1])
