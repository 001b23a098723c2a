"""A loopback stand-in meter that misbehaves at the byte level (tests only).

The project's wire simulators (``drivers.simulators``) answer like the real instruments; a
stand-in answers each command line with whatever byte chunks a test's ``answer`` function
returns — a reply split by a pause, sent twice, streamed without a line end — so the
transports' framing can be tried against links no well-behaved simulator would produce.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterable

#: a chunk to send, and the pause before it (seconds)
Chunk = tuple[bytes, float]
Answer = Callable[[str], Iterable[Chunk]]


class StandIn:
    """Serves one connection at a time on 127.0.0.1; ``answer(command)`` gives the chunks.
    An ``answer`` that yields for ever streams until the test ends the stand-in."""

    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.commands: list[str] = []
        self.sent_bytes = 0
        self._stop = threading.Event()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.1)
        self.port = self._listener.getsockname()[1]
        self._thread = threading.Thread(target=self._serve, daemon=True, name="standin")

    @property
    def resource(self) -> str:
        return f"TCPIP::127.0.0.1::{self.port}::SOCKET"

    def __enter__(self) -> StandIn:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
        self._listener.close()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with conn:
                self._talk(conn)

    def _talk(self, conn: socket.socket) -> None:
        conn.settimeout(0.1)
        buffer = b""
        while not self._stop.is_set():
            try:
                chunk = conn.recv(4096)
            except TimeoutError:
                continue
            except OSError:
                return
            if not chunk:
                return
            buffer += chunk
            while b"\n" in buffer:
                line, _, buffer = buffer.partition(b"\n")
                command = line.decode().strip()
                self.commands.append(command)
                for data, pause in self.answer(command):
                    if self._stop.wait(pause):
                        return
                    try:
                        conn.sendall(data)
                    except OSError:
                        return
                    self.sent_bytes += len(data)
