"""A loopback stand-in meter that misbehaves at the byte level (tests only).

The project's wire simulators (``drivers.simulators``) answer like the real instruments; a
stand-in answers each command line with whatever byte chunks a test's ``answer`` function
returns — a reply split by a pause, sent twice, streamed without a line end — so the
transports' framing can be tried against links no well-behaved simulator would produce. It
is the simulators' own line server with the answering replaced.
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterable

from drivers.simulators.server import LineDialect, LineServer

#: a chunk to send, and the pause before it (seconds)
Chunk = tuple[bytes, float]
Answer = Callable[[str], Iterable[Chunk]]


class StandIn(LineServer):
    """``answer(command)`` gives the chunks; an ``answer`` that yields for ever streams
    until the test ends the stand-in (leaving its ``with`` block)."""

    def __init__(self, answer: Answer) -> None:
        super().__init__(LineDialect())
        self.answer = answer
        self.commands: list[str] = []
        self.start()

    def __enter__(self) -> StandIn:
        return self

    def _handle(self, conn: socket.socket, raw: bytes) -> bool:
        command = raw.decode(errors="replace").strip()
        self.commands.append(command)
        for data, pause in self.answer(command):
            if self._stop.wait(pause):
                return False
            try:
                conn.sendall(data)
            except OSError:
                return False
        return True
