"""The fork server's own process (see ``forkserver.py``): imports the package and the SDK once,
then forks one process per command it is sent, over a ``SOCK_SEQPACKET`` socket whose number
is its first argument.

Each request is one JSON message with three file descriptors (the child's stdin, stdout and
stderr); the reply is ``{"id": ..., "pid": ...}``, and ``{"exit": pid, "code": ...}`` when
that child ends. The child is a process of its own: its own descriptors, working directory,
environment, session and ``sys.argv``; it runs the command as ``python`` would (``-m`` a
module, ``-c`` code, a script, or the ``toolnexus`` entry point) and ends as the interpreter's
own exit would (``_exit``): ``SystemExit`` codes, tracebacks, threads waited for, ``atexit``,
standard streams flushed, as in a new process, without tearing the inherited modules down.
Standard library only until the preload, which imports what the commands use.

It also listens on a Unix socket (its second argument) for ``launch.py``, the small program a
command under test starts as its server over stdio: each launcher connects, sends the same
request with its own three descriptors, and is answered ``{"pid": ...}``, then ``{"code": ...}``
when the child ends. A launcher that goes away before its child ended (killed) takes the
child with it: the child is sent SIGKILL, so killing the process a command started kills the
server, as it would with a server started by ``python`` itself. A child's ``sys.executable``
is a small script that runs ``launch.py`` (``_python_shim``), so what a command starts with
``sys.executable`` (``toolnexus demo``'s server) is forked too.

A request may ask that the child's stdin, a pty, become its controlling terminal
(``controlling_terminal``), for the tests that type at a command.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import gc
import importlib
import io
import json
import os
import select
import shutil
import signal
import socket
import sys
import tempfile
import threading
from typing import Any, NoReturn

MAX_FDS = 3 + 8  # standard input, output and error, and up to 8 more (``pass_fds``)
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
    "toolnexus.cli._main",  # what toolnexus.cli.main loads when called
    "toolnexus.console",
    "toolnexus.durable",
    "toolnexus.forms",
    "toolnexus.mcp",
    "toolnexus.policy",
    "toolnexus.testing",
    "toolnexus.worker",
    "jsonschema",  # the SDK's client loads it to check a tool's structured result
)
PRELOAD_IF_INSTALLED = ("psycopg", "toolnexus._postgres", "toolnexus.inbox")
"""The extras' modules (``postgres``, ``inbox``), where they are installed: the workers' and
inbox commands would each load them again (0.1 s of CPU in each worker, measured)."""


def _text(fd: int, mode: str, errors: str, *, unbuffered: bool) -> io.TextIOWrapper:
    """A standard stream as the interpreter makes it (Python/pylifecycle.c, ``create_stdio``):
    unbuffered (``PYTHONUNBUFFERED``), an output writes straight to its descriptor; otherwise
    through a buffer, flushed at each line on a terminal and on standard error."""
    raw = io.FileIO(fd, mode, closefd=False)
    buffered: Any = io.BufferedReader(raw) if mode == "r" else raw if unbuffered else io.BufferedWriter(raw)
    encoding = os.environ.get("PYTHONIOENCODING", "utf-8").split(":")[0] or "utf-8"
    return io.TextIOWrapper(
        buffered,
        encoding=encoding,
        errors=errors,
        line_buffering=mode == "w" and not unbuffered and (fd == 2 or os.isatty(fd)),
        write_through=mode == "w" and (unbuffered or fd == 2),
    )


def _become(request: dict[str, Any], fds: list[int], python: str) -> None:
    """In the child: take the request's descriptors, place, environment and arguments;
    ``python`` is what the child's ``sys.executable`` names (see :func:`_python_shim`)."""
    if request["new_session"]:
        os.setsid()
    # Standard input, output and error, then the descriptors passed at the numbers they had
    # in the process that asked (``pass_fds``); moved out of the way first, so that placing
    # one never closes another.
    targets = [0, 1, 2, *request.get("pass_fds", ())]
    moved = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 256) for fd in fds]
    for fd in fds:
        os.close(fd)
    for target, fd in zip(targets, moved, strict=True):
        os.dup2(fd, target)  # (inheritable, as subprocess.Popen leaves pass_fds)
        os.close(fd)
    if request.get("controlling_terminal"):  # its stdin, a terminal, as its session's (a pty test)
        import termios

        fcntl.ioctl(0, termios.TIOCSCTTY, 0)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    signal.signal(signal.SIGINT, signal.default_int_handler)
    unbuffered = bool(os.environ.get("PYTHONUNBUFFERED"))
    sys.stdin = _text(0, "r", "strict", unbuffered=unbuffered)
    sys.stdout = _text(1, "w", "strict", unbuffered=unbuffered)
    sys.stderr = _text(2, "w", "backslashreplace", unbuffered=unbuffered)
    sys.executable = python


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


def _child(request: dict[str, Any], fds: list[int], python: str) -> int | None:
    """Run the request in the forked child; its exit status as ``python`` would give it after
    the command (``None``: it ended by an uncaught ``KeyboardInterrupt``)."""
    try:
        _become(request, fds, python)
        _run(request)
    except SystemExit as exc:  # as the interpreter reads one (Python/pythonrun.c)
        if exc.code is None or isinstance(exc.code, int):
            return exc.code or 0
        with contextlib.suppress(Exception):
            print(exc.code, file=sys.stderr)
        return 1
    except KeyboardInterrupt as exc:
        _print_traceback(exc)
        return None
    except BaseException as exc:
        _print_traceback(exc)
        return 1
    return 0


def _print_traceback(exc: BaseException) -> None:
    """The traceback ``python`` prints for ``exc``: from the command's own frames on."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename == __file__:
        tb = tb.tb_next
    sys.excepthook(type(exc), exc.with_traceback(tb), tb)  # (the hook shows the exception's own)


def _exit(code: int | None) -> NoReturn:
    """End the child as the interpreter's own exit does what can be seen of it: wait for the
    threads that are not daemons, run the ``atexit`` functions, flush standard output and
    error (an error there makes the status 120), and die of SIGINT after an uncaught
    ``KeyboardInterrupt``. Then ``os._exit``, without the rest: tearing down the modules a
    child inherited costs about 60 ms of CPU and 9,700 page copies (every frozen object it
    touches), measured, in each of the suite's few hundred forked processes. One difference
    stays: a file the command left open and unflushed is not flushed, where the teardown
    would flush it."""
    with contextlib.suppress(BaseException):
        threading._shutdown()  # type: ignore[attr-defined]
    with contextlib.suppress(BaseException):
        atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None and not stream.closed:
                stream.flush()
        except Exception:
            code = 120 if code is not None else code
    if code is None:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
        code = 130
    os._exit(code & 0xFF)


def _python_shim(directory: str, listen_path: str) -> str:
    """A ``python`` for the children's ``sys.executable``: the processes a command starts with
    ``sys.executable`` (``toolnexus demo``'s server, a docs example's agent) go through the fork
    server too, by way of ``launch.py``, which runs any other use of ``python`` as itself."""
    # launch.py, beside this file: this process runs as a script, so its folder is on the
    # path, where the tests' is not (mypy knows the module as support.launch).
    import launch  # type: ignore[import-not-found]

    return str(launch.write_shim(os.path.join(directory, "python"), listen_path))


def serve(sock: socket.socket, listen_path: str) -> None:
    for name in PRELOAD:
        importlib.import_module(name)
    for name in PRELOAD_IF_INSTALLED:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    zygote = os.getpid()
    shims = tempfile.mkdtemp(prefix="toolnexus-zygote-")
    try:
        _serve(sock, listen_path, _python_shim(shims, listen_path))
    finally:
        if os.getpid() == zygote:  # (a child's exit passes through here too)
            shutil.rmtree(shims, ignore_errors=True)


def _serve(sock: socket.socket, listen_path: str, python: str) -> None:
    if threading.active_count() != 1:  # a fork would copy a thread's locks mid-use
        raise RuntimeError(f"the preload started threads: {threading.enumerate()}")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(listen_path)
    listener.bind(listen_path)
    listener.listen(64)
    launchers: dict[socket.socket, int] = {}  # a launcher's connection: its child (0: none yet)
    launched: dict[int, socket.socket] = {}  # a launched child: its launcher's connection
    # A child's end wakes the loop below (SIGCHLD, written to a pipe by the interpreter's
    # handler), which otherwise sleeps until a request comes: no polling while tests wait.
    woken, wake = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
    signal.signal(signal.SIGCHLD, lambda signum, frame: None)
    signal.set_wakeup_fd(wake, warn_on_full_buffer=False)
    gc.freeze()  # the preloaded objects: no collection in a child walks them
    sock.send(b'{"ready": true}')

    def fork(request: dict[str, Any], fds: list[int]) -> int:
        pid = os.fork()
        if pid == 0:  # hold none of the connections: a launcher's end must be seen
            for held in (sock, listener, *launchers):
                held.close()
            signal.set_wakeup_fd(-1)
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            os.close(woken)
            os.close(wake)
            _exit(_child(request, fds, python))
        for fd in fds:
            os.close(fd)
        return pid

    def drop(conn: socket.socket) -> None:
        launchers.pop(conn, None)
        conn.close()

    while True:
        waiting: list[socket.socket | int] = [sock, listener, woken, *launchers]
        ready, _, _ = select.select(waiting, [], [])
        if woken in ready:
            with contextlib.suppress(BlockingIOError):
                while os.read(woken, 4096):
                    pass
        while True:  # every child that ended (one ending from now on wakes the next select)
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            code = os.waitstatus_to_exitcode(status)
            conn = launched.pop(pid, None)
            if conn is None:
                sock.send(json.dumps({"exit": pid, "code": code}).encode())
            elif conn in launchers:
                with contextlib.suppress(OSError):
                    conn.send(json.dumps({"code": code}).encode())
                drop(conn)
        for one in ready:
            if one == woken:
                continue
            if one is sock:
                message, fds, _, _ = socket.recv_fds(sock, 1 << 20, MAX_FDS)
                if not message:  # the tests are over
                    return
                request = json.loads(message)
                pid = fork(request, fds)
                sock.send(json.dumps({"id": request["id"], "pid": pid}).encode())
            elif one is listener:
                try:
                    conn, _ = listener.accept()
                except OSError:  # a launcher gone before it was taken
                    continue
                launchers[conn] = 0
            elif one in launchers:
                try:
                    message, fds, _, _ = socket.recv_fds(one, 1 << 20, 3)
                except OSError:  # a launcher killed with our reply unread: a reset, not an end
                    message, fds = b"", []
                child = launchers[one]
                if child:  # the launcher is gone (or spoke out of turn): so is its server
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(child, signal.SIGKILL)
                    drop(one)
                elif not message or len(fds) != 3:
                    for fd in fds:
                        os.close(fd)
                    drop(one)
                else:
                    pid = fork(json.loads(message), fds)
                    launchers[one] = pid
                    launched[pid] = one
                    with contextlib.suppress(OSError):  # a launcher killed at once: seen next round
                        one.send(json.dumps({"pid": pid}).encode())


if __name__ == "__main__":
    serve(socket.socket(fileno=int(sys.argv[1])), sys.argv[2])
