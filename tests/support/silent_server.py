"""Database servers that stop answering, on a loopback socket (issue 25 §2).

A frozen PostgreSQL server (``SIGSTOP``, a black-holed network) keeps its TCP connections open
and its kernel keeps acknowledging them: nothing tells the client that no answer will come.
These stand-ins reproduce that without root tricks:

* :func:`silent_server` accepts connections and never sends a byte (frozen during connect);
* :func:`mute_after_startup` completes PostgreSQL's start-up exchange (protocol 3.0: no TLS,
  trust authentication) and then reads every query without ever answering it (frozen
  after the connection is established).
"""

from __future__ import annotations

import socket
import struct
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager

SSL_REQUEST = 80877103
GSS_REQUEST = 80877104
PROTOCOL_3 = 196608
PARAMETERS = {"server_version": "16.0", "server_encoding": "UTF8", "client_encoding": "UTF8",
              "standard_conforming_strings": "on", "DateStyle": "ISO, MDY",
              "integer_datetimes": "on", "TimeZone": "UTC"}


def _message(kind: bytes, body: bytes) -> bytes:
    return kind + struct.pack("!i", len(body) + 4) + body


def _start_up(conn: socket.socket) -> None:
    """Answer the client's start-up as a trusting server would, then stop answering."""
    while True:
        length, code = struct.unpack("!ii", _exactly(conn, 8))
        _exactly(conn, length - 8)
        if code in (SSL_REQUEST, GSS_REQUEST):
            conn.sendall(b"N")  # no TLS, no GSSAPI: go on in plain text
            continue
        assert code == PROTOCOL_3, code
        break
    reply = _message(b"R", struct.pack("!i", 0))  # authentication OK
    for key, value in PARAMETERS.items():
        reply += _message(b"S", key.encode() + b"\0" + value.encode() + b"\0")
    reply += _message(b"K", struct.pack("!ii", 4242, 1234))
    reply += _message(b"Z", b"I")  # ready for query: the last answer it will ever give
    conn.sendall(reply)


def _exactly(conn: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = conn.recv(n - len(data))
        if not chunk:
            raise ConnectionError("client went away")
        data += chunk
    return data


@contextmanager
def _serve(handshake: bool) -> Iterator[str]:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.settimeout(0.1)  # the serving thread looks at ``stop`` between accepts
    held: list[socket.socket] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            conn.settimeout(5.0)
            held.append(conn)  # kept open: the client must not see a closed connection
            if handshake:
                try:
                    _start_up(conn)
                except (OSError, ConnectionError):
                    pass

    thread = threading.Thread(target=serve, name="silent-server", daemon=True)
    thread.start()
    port = listener.getsockname()[1]
    try:
        yield f"postgresql+psycopg://storwatt@127.0.0.1:{port}/storwatt"
    finally:
        stop.set()
        listener.close()
        for conn in held:
            conn.close()
        thread.join(2.0)


def silent_server() -> AbstractContextManager[str]:
    """A URL whose server accepts the connection and never answers."""
    return _serve(handshake=False)


def mute_after_startup() -> AbstractContextManager[str]:
    """A URL whose server completes the start-up, then never answers a query."""
    return _serve(handshake=True)


def server_processes(url: str) -> list[int]:
    """Every process of a real PostgreSQL server at ``url``: its backends and helpers and the
    postmaster above them — what to stop (SIGSTOP) to freeze the whole server."""
    import os

    import sqlalchemy as sa

    engine = sa.create_engine(url)
    with engine.connect() as conn:
        pids = set(conn.exec_driver_sql("SELECT pid FROM pg_stat_activity").scalars())
    engine.dispose()
    for pid in list(pids):
        try:
            with open(f"/proc/{pid}/status", encoding="ascii") as status:
                pids.add(int(next(line for line in status
                                  if line.startswith("PPid:")).split()[1]))
        except FileNotFoundError:  # a backend that ended since (this query's own, closed
            pids.discard(pid)      # by dispose()): nothing left to stop
    return sorted(p for p in pids if p > 1 and p != os.getpid())


@contextmanager
def frozen_server(url: str) -> Iterator[list[int]]:
    """Every process of the server at ``url`` stopped (SIGSTOP) inside the block and continued
    after it; yields the stopped pids. A process that ended between the listing and its
    signal (the listing's own backend, closed by ``dispose()`` but not yet gone) is skipped:
    it has nothing left to freeze. That race failed a CI run under load."""
    import os
    import signal

    stopped = []
    try:
        for pid in server_processes(url):
            try:
                os.kill(pid, signal.SIGSTOP)
            except ProcessLookupError:
                continue
            stopped.append(pid)
        yield stopped
    finally:
        for pid in stopped:
            try:
                os.kill(pid, signal.SIGCONT)
            except ProcessLookupError:
                pass
