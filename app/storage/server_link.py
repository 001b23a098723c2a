"""Bounded waits on a database server: nothing StorWatt asks a PostgreSQL server can hang.

A server that stops answering without closing the connection (frozen, a black-holed network,
a dead switch) left the run writer waiting for ever: a run ending during such a freeze could
neither be stored nor journaled (issue 25 §2). Every server connection now carries:

* libpq's ``connect_timeout`` — establishing a connection (TCP, TLS, start-up) is bounded;
* ``statement_timeout``, ``lock_timeout`` and ``idle_in_transaction_session_timeout`` — the
  server itself ends a statement, a lock wait or a transaction left open too long;
* TCP keepalives and ``tcp_user_timeout`` — a peer that vanished is noticed by the kernel;
* an ``application_name`` naming StorWatt and the station, so ``pg_stat_activity`` tells the
  lab's DBA which station holds a connection;
* a **reply bound** on the client: the server's own timeouts cannot fire in a frozen server,
  and a frozen server's kernel still acknowledges TCP, so keepalives stay happy. Every wait
  for the server is therefore bounded in this process too (:class:`_BoundedConnection`); past
  it the connection is closed and the operation fails like any lost connection — the run
  writer then journals and retries (``app/storage/writer.py``).

Values given in the database URL (``?connect_timeout=…&options=…``) take precedence over
these defaults. The run writer gets short bounds (its statements are small and the run's
events must reach the journal quickly when the server is gone); readers get long ones (a QA
user loading a day-long run over the lab network).
"""

from __future__ import annotations

import socket
from dataclasses import dataclass
from typing import Any

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from app import __version__


@dataclass(frozen=True)
class ServerTimeouts:
    """How long StorWatt waits for a database server, in seconds."""

    connect_s: int = 5  # libpq counts whole seconds, at least 2
    statement_s: float = 10.0
    idle_in_transaction_s: float = 30.0
    keepalive_idle_s: int = 10
    keepalive_interval_s: int = 5
    keepalive_count: int = 3
    reply_s: float = 15.0  # longest wait for any answer, measured here

    def libpq_parameters(self, role: str) -> dict[str, Any]:
        """Connection parameters (libpq keywords) for a connection used as ``role``."""
        ms = lambda s: int(s * 1000)  # noqa: E731 - the server's unit
        options = (f"-c statement_timeout={ms(self.statement_s)} "
                   f"-c lock_timeout={ms(self.statement_s)} "
                   f"-c idle_in_transaction_session_timeout={ms(self.idle_in_transaction_s)}")
        return {"connect_timeout": max(2, int(self.connect_s)), "options": options,
                "keepalives": 1, "keepalives_idle": self.keepalive_idle_s,
                "keepalives_interval": self.keepalive_interval_s,
                "keepalives_count": self.keepalive_count,
                "tcp_user_timeout": ms(self.reply_s),
                "application_name": application_name(role)}


#: the run writer: small statements; events must reach the journal soon when the server is gone
WRITER_TIMEOUTS = ServerTimeouts()
#: readers (history, reports, QA on the lab copy): a day-long run's samples may take a while
READER_TIMEOUTS = ServerTimeouts(statement_s=300.0, idle_in_transaction_s=600.0,
                                 reply_s=330.0)


def application_name(role: str) -> str:
    """What ``pg_stat_activity.application_name`` shows (PostgreSQL keeps 63 bytes)."""
    return f"StorWatt {__version__} {role} on {socket.gethostname()}"[:63]


def connect(timeouts: ServerTimeouts, role: str, cparams: dict[str, Any]) -> Any:
    """Open a psycopg connection with ``timeouts`` (the URL's own parameters win)."""
    for key, value in timeouts.libpq_parameters(role).items():
        cparams.setdefault(key, value)
    return _connection_class().connect(reply_s=timeouts.reply_s, **cparams)


_CLASS: type | None = None


def _connection_class() -> type:
    """psycopg is imported only when a server is used (a station on SQLite never loads it)."""
    global _CLASS
    if _CLASS is None:
        import psycopg
        from psycopg import errors

        class _BoundedConnection(psycopg.Connection):
            """A connection whose every wait for the server ends within ``reply_s``."""

            reply_s: float = WRITER_TIMEOUTS.reply_s

            @classmethod
            def connect(cls, conninfo: str = "", *, reply_s: float, **kwargs: Any) -> Any:
                conn = super().connect(conninfo, **kwargs)
                conn.reply_s = reply_s
                return conn

            def wait(self, gen: Any, interval: float = 0.1,
                     timeout: float | None = None) -> Any:
                try:
                    return super().wait(gen, interval=interval,
                                        timeout=self.reply_s if timeout is None else timeout)
                except errors._WaitTimeout:  # its own class: a server error is not a timeout
                    self.pgconn.finish()  # mid-protocol: unusable; the pool replaces it
                    raise psycopg.OperationalError(
                        f"the database server did not answer within {self.reply_s:g} s; "
                        "connection closed") from None

        _CLASS = _BoundedConnection
    return _CLASS


__all__ = ["ServerTimeouts", "WRITER_TIMEOUTS", "READER_TIMEOUTS", "application_name",
           "connect"]


def shown(url: str) -> str:
    """A database URL as it may be shown: without its password."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:  # never as typed: it may hold a password
        return "(a URL that does not parse)"
