"""A threaded loopback line server that records every exchange byte for byte.

One thread accepts connections, one thread per connection splits the byte stream into
commands (LF, CR or CRLF end a command, like the instruments accept), asks the dialect for a
reply and applies the fault plan. The transcript lets protocol tests assert the exact bytes a
driver sent and what it got back. It keeps the latest :data:`TRANSCRIPT_LIMIT` exchanges: a
day-long rehearsal with 16 inputs would otherwise hold every reading (~390 MB, issue 27),
and a protocol test looks at the last few dozen.
"""

from __future__ import annotations

import socket
import threading
from collections import deque
from dataclasses import dataclass
from typing import Self

from drivers.simulators.faults import FaultKind, FaultPlan

GARBAGE_REPLY = "#\x15?!garbled~~"
#: exchanges a simulator remembers (~3 MB of short SCPI lines); older ones are forgotten
TRANSCRIPT_LIMIT = 10_000


@dataclass(frozen=True)
class Exchange:
    received: bytes  # the command as it arrived, with its terminator
    sent: bytes  # the reply as sent ("" when none)


class LineDialect:
    """How one instrument answers; subclasses implement ``respond``."""

    termination = "\n"

    def wants_reply(self, command: str) -> bool:
        return "?" in command

    def is_measurement(self, command: str) -> bool:
        return False

    def respond(self, command: str, special: FaultKind | None) -> str | None:
        raise NotImplementedError

    def hold(self, held: bool) -> None:
        """The HOLD fault is on (or off) while this command is answered."""


def _split_command(buffer: bytes) -> tuple[bytes, bytes] | None:
    """(raw command incl. terminator, rest) or None when no complete command yet."""
    ends = [i for i in (buffer.find(b"\n"), buffer.find(b"\r")) if i >= 0]
    if not ends:
        return None
    end = min(ends)
    if buffer[end:end + 2] == b"\r\n":
        end += 1
    return buffer[:end + 1], buffer[end + 1:]


class LineServer:
    def __init__(self, dialect: LineDialect, host: str = "127.0.0.1", port: int = 0) -> None:
        if host not in ("127.0.0.1", "localhost", "::1"):
            raise ValueError("simulators listen on loopback only (127.0.0.1)")
        self.dialect = dialect
        self.host = host
        self.port = port
        self.faults = FaultPlan()
        self._transcript: deque[Exchange] = deque(maxlen=TRANSCRIPT_LIMIT)
        self._lock = threading.Lock()
        self._recorded = threading.Condition(self._lock)
        self._stop = threading.Event()
        self._listener: socket.socket | None = None
        self._threads: list[threading.Thread] = []
        self._conns: list[socket.socket] = []
        self._held: dict[str, str] = {}  # measurement command → the reply held (HOLD fault)

    # -- life cycle ---------------------------------------------------------------------------
    def start(self) -> int:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((self.host, self.port))
        listener.listen(8)
        listener.settimeout(0.2)
        self._listener = listener
        self.port = listener.getsockname()[1]
        self._spawn(self._accept_loop)
        return self.port

    def stop(self) -> None:
        self._stop.set()
        with self._lock:
            conns, self._conns = self._conns, []
        for conn in conns:
            _close(conn)
        if self._listener is not None:
            _close(self._listener)
        for thread in self._threads:
            thread.join(timeout=2)

    def __enter__(self) -> Self:  # the simulator itself, with its own setters
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def resource(self) -> str:
        """The VISA resource string a driver uses to reach this simulator."""
        return f"TCPIP::{self.host}::{self.port}::SOCKET"

    @property
    def transcript(self) -> list[Exchange]:
        """The latest exchanges (at most :data:`TRANSCRIPT_LIMIT`), oldest first."""
        with self._lock:
            return list(self._transcript)

    def take_address(self, other: LineServer) -> None:
        """Another instrument takes this address (a bench where someone swapped the meter on
        its LAN address mid-run): its dialect answers from now on, and every open connection
        is reset, as a real swap resets them."""
        with self._lock:
            self.dialect = other.dialect
            conns, self._conns = self._conns, []
            self._held.clear()
        for conn in conns:
            _close(conn)

    def clear_transcript(self) -> None:
        with self._lock:
            self._transcript.clear()

    # -- internals ----------------------------------------------------------------------------
    def _spawn(self, target, *args) -> None:
        thread = threading.Thread(target=target, args=args, daemon=True,
                                  name=f"sim-{self.port}")
        self._threads.append(thread)
        thread.start()

    def _accept_loop(self) -> None:
        assert self._listener is not None
        while not self._stop.is_set():
            try:
                conn, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self._lock:
                self._conns.append(conn)
            self._spawn(self._serve, conn)

    def _serve(self, conn: socket.socket) -> None:
        buffer = b""
        try:
            conn.settimeout(0.2)
        except OSError:  # a drop_connections() or stop() closed it before this thread began
            return
        while not self._stop.is_set():
            try:
                chunk = conn.recv(4096)
            except TimeoutError:
                continue
            except OSError:
                break
            if not chunk:
                break
            buffer += chunk
            while (split := _split_command(buffer)) is not None:
                raw, buffer = split
                if not self._handle(conn, raw):
                    _close(conn)
                    return
        _close(conn)

    def _handle(self, conn: socket.socket, raw: bytes) -> bool:
        """Answer one command; False when the connection must be dropped."""
        command = raw.decode(errors="replace").strip()
        if not command:
            return True
        reply: str | None = None
        active = self.faults.active
        self.dialect.hold(active is not None and active.kind is FaultKind.HOLD)
        if self.dialect.wants_reply(command):
            measurement = self.dialect.is_measurement(command)
            fault = self.faults.take(measurement)
            kind = fault.kind if fault else None
            if kind is FaultKind.HOLD:
                reply = self._held.get(command) or self.dialect.respond(command, None)
                self._held[command] = reply or ""
                kind = None
            elif measurement:
                self._held.pop(command, None)
            if kind is FaultKind.DROP:
                self._record(raw, b"")
                return False
            if kind is FaultKind.SILENT:
                self._record(raw, b"")
                self.dialect.respond(command, None)
                return True
            if kind is FaultKind.SLOW and fault is not None:
                self._stop.wait(fault.delay_s)
            if reply is None:
                reply = GARBAGE_REPLY if kind is FaultKind.GARBAGE else \
                    self.dialect.respond(command, kind if kind and kind.measurement_only else None)
        else:
            self.dialect.respond(command, None)
        sent = b"" if reply is None else (reply + self.dialect.termination).encode()
        self._record(raw, sent)
        if sent:
            try:
                conn.sendall(sent)
            except OSError:
                return False
        return True

    def _record(self, raw: bytes, sent: bytes) -> None:
        with self._recorded:
            self._transcript.append(Exchange(raw, sent))
            self._recorded.notify_all()

    def wait_for_exchanges(self, count: int, timeout_s: float = 2.0) -> list[Exchange]:
        """The transcript once it holds ``count`` exchanges (commands sent without a reply
        may still be in flight when the driver returns)."""
        with self._recorded:
            self._recorded.wait_for(lambda: len(self._transcript) >= count, timeout_s)
            return list(self._transcript)


def _close(sock: socket.socket) -> None:
    try:
        sock.close()
    except OSError:
        pass
