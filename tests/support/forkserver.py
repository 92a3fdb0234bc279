"""Run a command of this package in a new process without paying for the interpreter's start.

Importing the SDK (both protocol eras' models) costs about a second of CPU per process, and the
command's end-to-end tests start a hundred and more of them: on the test command's two cores
that was most of its time. A fork server (``zygote.py``) imports the package once and forks one
process per command. Each is a real process: its own stdin, stdout and stderr (pipes or files),
working directory, environment, session and exit status, and the servers it starts are its
own children. What it skips is only the interpreter's start and the imports.

Only commands of this package go through it (``toolnexus ...``, ``python -m ...``, ``python -c ...``,
``python SCRIPT``, with this interpreter); the tests that exercise the interpreter's start
itself (the entry point script, ``-X`` options, the import cost) start processes as usual.

:func:`popen` is a stand-in for ``subprocess.Popen`` (bytes, the three streams as pipes by
default) and :func:`run` for ``subprocess.run(..., capture_output=True, text=True)``.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import selectors
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import IO, Any

from support import launch

__all__ = ["LAUNCH_SOCKET", "Forked", "handles", "path_shims", "popen", "run", "server_command", "start"]

PIPE = subprocess.PIPE
DEVNULL = subprocess.DEVNULL
TOOLNEXUS = str(Path(sys.executable).with_name("toolnexus"))


class Forked:
    """A process forked by the fork server: the part of ``subprocess.Popen`` the tests use."""

    def __init__(
        self, pid: int, args: list[str], streams: dict[str, IO[Any] | None], *, text: bool = False
    ) -> None:
        self.pid = pid
        self.args = args
        self.text = text
        """Whether the pipes are text (``text=True``): ``str`` through them and from
        :meth:`communicate`, universal newlines, as ``subprocess.Popen`` gives them."""
        self.stdin = streams["stdin"]
        self.stdout = streams["stdout"]
        self.stderr = streams["stderr"]
        self.returncode: int | None = None
        self._ended = threading.Event()

    def _end(self, code: int) -> None:
        self.returncode = code
        self._ended.set()

    def poll(self) -> int | None:
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if not self._ended.wait(timeout):
            raise subprocess.TimeoutExpired(self.args, timeout or 0)
        assert self.returncode is not None
        return self.returncode

    def send_signal(self, signum: int) -> None:
        if self.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signum)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def communicate(self, input: bytes | str | None = None, timeout: float | None = None) -> tuple[Any, Any]:
        """Write ``input`` (then close stdin), read stdout and stderr to their ends, wait; the
        two outputs as ``bytes``, or as ``str`` when the pipes are text."""
        deadline = None if timeout is None else time.monotonic() + timeout
        chunks: dict[int, list[bytes]] = {}
        if isinstance(input, str):
            input = input.encode()
        if self.stdin is not None and self.text:
            self.stdin.flush()
        pending = memoryview(input or b"")
        with selectors.DefaultSelector() as selector:
            if self.stdin is not None:
                if pending:
                    selector.register(self.stdin, selectors.EVENT_WRITE)
                else:
                    self.stdin.close()
            for stream in (self.stdout, self.stderr):
                if stream is not None:
                    chunks[stream.fileno()] = []
                    selector.register(stream, selectors.EVENT_READ)
            while selector.get_map():
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise subprocess.TimeoutExpired(self.args, timeout or 0)
                for key, _ in selector.select(left):
                    fd = key.fd
                    if key.fileobj is self.stdin:
                        try:
                            pending = pending[os.write(fd, pending[:65536]) :]
                        except BrokenPipeError:
                            pending = pending[:0]
                        if not pending:
                            selector.unregister(key.fileobj)
                            assert self.stdin is not None
                            self.stdin.close()
                        continue
                    data = os.read(fd, 65536)
                    if data:
                        chunks[fd].append(data)
                    else:
                        selector.unregister(key.fileobj)
        out = b"".join(chunks[self.stdout.fileno()]) if self.stdout is not None else b""
        err = b"".join(chunks[self.stderr.fileno()]) if self.stderr is not None else b""
        for stream in (self.stdout, self.stderr):
            if stream is not None:
                stream.close()
        left = None if deadline is None else max(0.0, deadline - time.monotonic())
        self.wait(left)
        if self.text:
            return _text(out), _text(err)
        return out, err


class _Server:
    def __init__(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(LAUNCH_SOCKET)  # a stale one, of an earlier process with this pid
        atexit.register(_unlink, LAUNCH_SOCKET)
        self.proc = subprocess.Popen(
            [sys.executable, str(Path(__file__).with_name("zygote.py")), str(theirs.fileno()), LAUNCH_SOCKET],
            pass_fds=[theirs.fileno()],
            stdin=subprocess.DEVNULL,
        )
        theirs.close()
        self.sock = ours
        if json.loads(self.sock.recv(1 << 16) or b"{}") != {"ready": True}:
            raise RuntimeError("the fork server did not start (its stderr says why)")
        self.lock = threading.Lock()
        self.next_id = 0
        self.started: dict[int, threading.Event] = {}
        self.pids: dict[int, int] = {}
        self.children: dict[int, Forked] = {}
        self.early: dict[int, int] = {}  # exits read before their Forked was registered
        self.gone = False  # the fork server ended: no exit status will come any more
        threading.Thread(target=self._read, name="forkserver", daemon=True).start()
        atexit.register(self._stop)

    def _stop(self) -> None:
        """At the tests' end: the fork server is told (its socket closed) and waited for, so it
        is not left behind, and what it and its children used is counted as this process's
        children's (the test command's CPU per step)."""
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def _read(self) -> None:
        try:
            while message := self.sock.recv(1 << 16):
                reply = json.loads(message)
                with self.lock:
                    if "exit" in reply:
                        child = self.children.pop(reply["exit"], None)
                        if child is None:
                            self.early[reply["exit"]] = reply["code"]
                        else:
                            child._end(reply["code"])
                    else:
                        self.pids[reply["id"]] = reply["pid"]
                        self.started[reply["id"]].set()
        except OSError:
            pass
        self._lost()

    def _lost(self) -> None:
        """The fork server is gone (killed, or crashed): nobody will report its children's exits,
        so each is killed and its wait ends with SIGKILL's status, a clear failure instead of a
        test that waits until its timeout. A start still waiting is told too."""
        with self.lock:
            self.gone = True
            orphans, self.children = list(self.children.values()), {}
            for waiting in self.started.values():
                waiting.set()
        for child in orphans:
            _kill_orphan(child)

    def start(
        self,
        how: str,
        argv: list[str],
        fds: list[int],
        cwd: str,
        env: dict[str, str],
        new_session: bool,
        pass_fds: list[int],
        controlling_terminal: bool = False,
    ) -> int:
        with self.lock:
            self.next_id += 1
            request_id = self.next_id
            self.started[request_id] = threading.Event()
            request = {
                "id": request_id,
                "how": how,
                "argv": argv,
                "cwd": cwd,
                "env": env,
                "new_session": new_session,
                "pass_fds": pass_fds,
                "controlling_terminal": controlling_terminal,
            }
            socket.send_fds(self.sock, [json.dumps(request).encode()], fds)
        if not self.started[request_id].wait(60):
            raise RuntimeError("the fork server did not answer")
        with self.lock:
            del self.started[request_id]
            if request_id not in self.pids:
                raise RuntimeError("the fork server stopped before it started the command")
            return self.pids.pop(request_id)

    def register(self, child: Forked) -> None:
        with self.lock:
            if child.pid in self.early:
                child._end(self.early.pop(child.pid))
                return
            if not self.gone:
                self.children[child.pid] = child
                return
        _kill_orphan(child)


def _kill_orphan(child: Forked) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(child.pid, signal.SIGKILL)
    child._end(-signal.SIGKILL)


_server: _Server | None = None
_server_lock = threading.Lock()


def start() -> None:
    """Start the fork server now (it starts on the first command otherwise): for tests whose
    commands start servers with :func:`server_command` but are not themselves forked."""
    _the_server()


def _the_server() -> _Server:
    global _server
    with _server_lock:
        if _server is None or _server.proc.poll() is not None:
            _server = _Server()
        return _server


def _how(argv: list[str]) -> tuple[str, list[str]]:
    """How the zygote runs ``argv``, and the arguments it gives it."""
    if argv[0] == TOOLNEXUS:
        return "entry", argv
    if argv[0] == sys.executable and len(argv) >= 3 and argv[1] in ("-m", "-c"):
        return ("module" if argv[1] == "-m" else "code"), argv[2:]
    if argv[0] == sys.executable and len(argv) >= 2 and not argv[1].startswith("-"):
        return "script", argv[1:]
    raise ValueError(f"the fork server runs this interpreter's commands only, not {argv!r}")


LAUNCH_SOCKET = os.path.join(tempfile.gettempdir(), f"toolnexus-zygote-{os.getpid()}")
"""Where the fork server of this process listens for ``launch.py`` (known before it starts)."""


def server_command(argv: list[str]) -> str:
    """``argv`` (``python -m ...``, ``python -c ...`` or ``python SCRIPT ...``, this interpreter)
    as a ``--stdio`` command whose process has the fork server run it (``launch.py`` says how):
    for the server a command under test starts, which then costs milliseconds of CPU, not a
    second. Before the fork server runs (no command of this process went through it yet), the
    launcher runs ``python`` itself; the server is the same either way."""
    how, _ = _how(argv)
    if how == "entry":
        raise ValueError("server_command: a server is started with python, not the toolnexus command")
    return shlex.join(launch.command(LAUNCH_SOCKET, *argv[1:]))


def path_shims(directory: Path) -> Path:
    """Write ``directory/python`` and ``directory/toolnexus``, which run this interpreter and
    the command through the fork server (:func:`server_command`'s launcher), and return
    ``directory``: put first on ``PATH`` for a shell line under test (a docs page's), whose
    ``toolnexus`` and ``python`` then cost milliseconds, not a second and more, each."""
    start()
    directory.mkdir(parents=True, exist_ok=True)
    launch.write_shim(str(directory / "python"), LAUNCH_SOCKET)
    launch.write_shim(str(directory / "toolnexus"), LAUNCH_SOCKET, "-m", "toolnexus")
    return directory


def _unlink(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


def handles(argv: list[str]) -> bool:
    """Whether :func:`popen` can run ``argv`` (a command of this interpreter)."""
    try:
        _how(argv)
    except ValueError:
        return False
    return True


def popen(
    argv: list[str],
    *,
    stdin: int | IO[Any] | None = PIPE,
    stdout: int | IO[Any] | None = PIPE,
    stderr: int | IO[Any] | None = PIPE,
    cwd: str | os.PathLike[str] | None = None,
    env: dict[str, str] | None = None,
    start_new_session: bool = True,
    pass_fds: tuple[int, ...] = (),
    controlling_terminal: bool = False,
    text: bool = False,
) -> Forked:
    """Like ``subprocess.Popen(argv, ...)`` for a command of this interpreter (see the module);
    ``pass_fds`` are given to the child at the same numbers, as ``subprocess.Popen`` does.
    With ``controlling_terminal``, the child's stdin (a pty's slave side) becomes the
    controlling terminal of its new session, as a shell's job has its terminal. With ``text``,
    the pipes are text (UTF-8, universal newlines when read), as ``subprocess.Popen`` makes them."""
    how, args = _how(argv)
    if controlling_terminal and not start_new_session:
        raise ValueError("controlling_terminal: the child takes its terminal in a session of its own")
    theirs: list[int] = []
    streams: dict[str, IO[Any] | None] = {}
    close_after: list[int] = []
    for number, (name, spec, reading) in enumerate(
        (("stdin", stdin, False), ("stdout", stdout, True), ("stderr", stderr, True))
    ):
        stream: IO[Any] | None = None
        if spec is None:  # this process's own, as subprocess.Popen leaves it
            child_end = number
        elif spec == PIPE:
            read_end, write_end = os.pipe()
            mine, child_end = (read_end, write_end) if reading else (write_end, read_end)
            stream = (
                os.fdopen(mine, "r" if reading else "w", encoding="utf-8", newline=None if reading else "")
                if text
                else os.fdopen(mine, "rb" if reading else "wb", buffering=0)
            )
            close_after.append(child_end)
        elif spec == DEVNULL:
            child_end = os.open(os.devnull, os.O_WRONLY if reading else os.O_RDONLY)
            close_after.append(child_end)
        elif spec == subprocess.STDOUT:
            child_end = theirs[1]
        elif isinstance(spec, int):
            child_end = spec
        else:
            child_end = spec.fileno()
        theirs.append(child_end)
        streams[name] = stream
    try:
        server = _the_server()
        pid = server.start(
            how,
            args,
            [*theirs, *pass_fds],
            str(cwd if cwd is not None else os.getcwd()),
            dict(os.environ if env is None else env),
            start_new_session,
            list(pass_fds),
            controlling_terminal,
        )
    finally:
        for fd in close_after:
            os.close(fd)
    child = Forked(pid, argv, streams, text=text)
    server.register(child)
    return child


def run(
    argv: list[str],
    *,
    input: str | None = None,
    stdin: int | None = None,
    cwd: str | os.PathLike[str] | None = None,
    env: dict[str, str] | None = None,
    timeout: float | None = None,
    start_new_session: bool = True,
    capture_output: bool = True,
    text: bool = True,
    check: bool = False,
) -> subprocess.CompletedProcess[str]:
    """Like ``subprocess.run(argv, input=..., capture_output=True, text=True)``; stdin is
    ``/dev/null`` when there is no ``input``. The keywords ``subprocess.run`` takes for that
    are accepted as given, so a call reads the same either way."""
    if not (capture_output and text) or (stdin is not None and stdin != DEVNULL):
        raise ValueError("forkserver.run captures text output, with input= or stdin=DEVNULL")
    child = popen(
        argv,
        stdin=DEVNULL if input is None else PIPE,
        cwd=cwd,
        env=env,
        start_new_session=start_new_session,
    )
    try:
        out, err = child.communicate(None if input is None else input.encode(), timeout=timeout)
    except BaseException:
        child.kill()
        raise
    done = subprocess.CompletedProcess(argv, child.wait(), _text(out), _text(err))
    if check:
        done.check_returncode()
    return done


def _text(data: bytes) -> str:
    """As ``subprocess.run(text=True)`` reads output: decoded, universal newlines."""
    return data.decode(errors="replace").replace("\r\n", "\n").replace("\r", "\n")
