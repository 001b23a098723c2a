"""A SQLite database file overwritten in place under a running station (``cp other.db``).

``cp other.db runs.db`` while a run is written rewrites the station's file through the same
inode, so the device-and-inode check of :mod:`app.storage.deleted` cannot see it. SQLite does
not notice either: its connections keep the old database's pages in their cache and WAL, and
the next checkpoint writes them over the copied-in pages — the copied-in database is
destroyed and the run written into a file that no longer holds its beginning (issue 25).

So each database carries its own random id (revision 0017, ``database_identity``), and a
SQLite file also in its header: ``application_id`` is StorWatt's mark and ``user_version``
31 bits of the id. In WAL mode the header on disk changes only when a checkpoint writes page
1, so the writer reads those 100 bytes from the file itself (not through SQLite, whose cache
and WAL would answer with our own page 1) before each commit, and compares them with what it
saw after its previous commit. Unchanged: nothing touched the file. Changed, and the id is
still ours with no fewer pages: another connection's checkpoint. Anything else — another id,
no StorWatt mark, an emptied or shorter file, fewer pages than our database already had (an
older copy of this same database) — means the file was replaced: :func:`let_go_of_overwritten`
empties the WAL so no page of ours ever reaches the copied-in file, and the writer keeps the
run in its journal from then on.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass

from sqlalchemy.engine import Connection, Engine

from app.storage.errors import StorageError

#: ``PRAGMA application_id`` of a StorWatt database ("SWat")
STORWATT_APPLICATION_ID = 0x53576174
_MAGIC = b"SQLite format 3\x00"
_HEADER = 100
_WAL_INDEX_HEADER = 136  # the -shm file's header: two copies of the WAL index header + info


class DatabaseReplacedError(StorageError):
    """The station's database file now holds another database; nothing more is written to it."""


def header_id(identity: str) -> int:
    """The 31 bits of a database id kept in its SQLite header (never 0: 0 is "unmarked")."""
    return (int(identity[:8], 16) & 0x7FFFFFFF) or 1


def mark_sqlite_header(conn: Connection, identity: str) -> None:
    """Write the database's mark and id into its SQLite header (nothing for a server)."""
    if conn.dialect.name != "sqlite":
        return
    conn.exec_driver_sql(f"PRAGMA application_id = {STORWATT_APPLICATION_ID}")
    conn.exec_driver_sql(f"PRAGMA user_version = {header_id(identity)}")


@dataclass(frozen=True)
class _Header:
    raw: bytes

    @classmethod
    def read(cls, path: str) -> _Header:
        try:
            with open(path, "rb") as file:
                return cls(file.read(_HEADER))
        except OSError:
            return cls(b"")

    @property
    def is_sqlite(self) -> bool:
        return len(self.raw) == _HEADER and self.raw.startswith(_MAGIC)

    def _int(self, offset: int) -> int:
        return struct.unpack_from(">I", self.raw, offset)[0]

    @property
    def pages(self) -> int:
        return self._int(28)

    @property
    def marked(self) -> bool:
        return self._int(68) == STORWATT_APPLICATION_ID

    @property
    def id(self) -> int:
        return self._int(60)


class HeaderWatch:
    """What the writer knows of its SQLite file's header (see the module docstring)."""

    def __init__(self, path: str, expected_id: int) -> None:
        self.path = path
        self.expected_id = expected_id
        self._last = _Header.read(path)

    @classmethod
    def of(cls, path: str | None, engine: Engine) -> HeaderWatch | None:
        """Watch the SQLite file at ``path`` that ``engine`` writes; None when there is no
        file or the database has no id yet (opened without its upgrade)."""
        if path is None:
            return None
        with engine.connect() as conn:
            expected = conn.exec_driver_sql("PRAGMA user_version").scalar()
        return cls(path, int(expected)) if expected else None

    def seen(self) -> None:
        """Our own commit is done: whatever it checkpointed into the file is ours."""
        self._last = _Header.read(self.path)

    def check(self) -> None:
        """Raise :class:`DatabaseReplacedError` when the file is no longer our database."""
        now = _Header.read(self.path)
        if now == self._last:
            return
        replaced_by = self._replaced_by(now)
        if replaced_by is None:
            self._last = now  # another connection's checkpoint of our database
            return
        raise DatabaseReplacedError(
            f"the database file {self.path} was replaced by {replaced_by} while the run was "
            "written (another file copied over it, such as cp other.db): the station stopped "
            "writing into it and left it as it now is; the run is kept in its run journal")

    def _replaced_by(self, now: _Header) -> str | None:
        if not now.is_sqlite:
            return ("an empty file" if not now.raw else
                    "a file that is not a SQLite database (or one still being copied)")
        if not now.marked:
            return "another database, not marked as a StorWatt database of schema 0017 or later"
        if now.id != self.expected_id:
            return (f"another StorWatt database (identity {now.id:08x}, "
                    f"this one {self.expected_id:08x})")
        if self._last.is_sqlite and now.pages < self._last.pages:
            return (f"an older copy of this same database ({now.pages} pages where it already "
                    f"had {self._last.pages})")
        return None


def let_go_of_overwritten(path: str, *engines: Engine) -> None:
    """Close every connection without letting our WAL reach the copied-in file: the WAL is
    emptied and its index marked unset first, so closing (which checkpoints when it is the
    last connection) finds no frame to copy, and the next opening finds none to replay."""
    for suffix, keep in (("-wal", 0), ("-shm", None)):
        name = path + suffix
        try:
            if keep is not None:
                os.truncate(name, keep)
            else:
                fd = os.open(name, os.O_WRONLY)
                try:
                    os.pwrite(fd, bytes(_WAL_INDEX_HEADER), 0)
                finally:
                    os.close(fd)
        except FileNotFoundError:
            continue
    for engine in engines:
        engine.dispose()
