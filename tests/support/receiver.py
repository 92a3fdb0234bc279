"""A webhook receiver: a real HTTP server on 127.0.0.1 (the standard library's, in a thread)
that checks each request's signature as a receiver would, keeps what it got, and can be made
to refuse, to hang, or to go away and come back on its port."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from toolnexus.notify import verify


@dataclass
class Got:
    """One request received."""

    event_id: str
    body: dict[str, Any]
    raw: bytes
    signed: bool
    """Whether its ``Toolnexus-Signature`` verified with the receiver's secret."""


class Receiver:
    """``url`` takes POSTs; ``got`` is what came (every request, a resend too), in order."""

    def __init__(self, secret: str) -> None:
        self.secret = secret
        self.got: list[Got] = []
        self.refuse = 0
        """Answer the next this many requests 503 (and keep nothing)."""
        self.hold: threading.Event | None = None
        """While set to an unset event, each request waits for it (up to 10 s) before answering."""
        self.entered = threading.Event()
        self._lock = threading.Lock()
        self.port = 0
        self._server: ThreadingHTTPServer | None = None
        self.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"

    def start(self) -> None:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                receiver.entered.set()
                if receiver.hold is not None:
                    receiver.hold.wait(10)
                with receiver._lock:
                    if receiver.refuse > 0:
                        receiver.refuse -= 1
                        status = 503
                    else:
                        signed = verify(receiver.secret, self.headers.get("Toolnexus-Signature", ""), raw)
                        body = json.loads(raw)
                        receiver.got.append(
                            Got(self.headers.get("Toolnexus-Event-Id", ""), body, raw, signed)
                        )
                        status = 200
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

        server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        server.daemon_threads = True
        self.port = server.server_address[1]
        self._server = server
        threading.Thread(target=server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        """Go away: the port refuses connections until ``start``."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def types(self) -> list[str]:
        with self._lock:
            return [str(got.body["type"]) for got in self.got]
