"""A SQLite database file deleted under a running station, and its restoration.

Deleting the file (a clean-up script, ``rm`` in the wrong folder) does not stop SQLite: the
station's open connection keeps writing into the unlinked file, the run "completes", its
journal is emptied, and when the process exits every sample is gone — the run was lost
silently (docs/reliability.md). The writer therefore checks, before each commit, that the
path still names the file it opened; when it does not, the open connection is copied back to
the path with SQLite's online backup (every committed page, the WAL's included), and writing
continues there. Nothing committed is lost, and the operator is told.
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass

from sqlalchemy.engine import Engine, make_url

from app.storage.errors import StorageError


class DatabaseDeletedError(StorageError):
    """The database file was deleted under the station and could not be put back."""


@dataclass(frozen=True)
class FileIdentity:
    """Which file a SQLite URL named when the station opened it (device and inode)."""

    path: str
    device: int
    inode: int

    @classmethod
    def of(cls, url: str) -> FileIdentity | None:
        """The file behind a SQLite URL; None for another database or an in-memory one."""
        parsed = make_url(url)
        if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
            return None
        path = os.path.abspath(parsed.database)
        try:
            st = os.stat(path)
        except OSError:
            return None
        return cls(path, st.st_dev, st.st_ino)

    def replaced(self) -> bool:
        """Another file now has this path."""
        try:
            st = os.stat(self.path)
        except OSError:
            return False
        return (st.st_dev, st.st_ino) != (self.device, self.inode)

    def still_there(self) -> bool:
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return False
        return (st.st_dev, st.st_ino) == (self.device, self.inode)


def let_go_of_replaced(identity: FileIdentity, *engines: Engine) -> None:
    """Another file was moved over ours (``mv other.db runs.db``): our connections still hold
    the old file and its ``-wal`` lies beside the new one, where the next opening would apply
    our pages to a database we never wrote (issue 25). So the WAL is checkpointed into the
    old file through a connection opened before the move and emptied, then every connection
    closed; the last one to close removes the WAL."""
    for engine in engines:
        if engine.pool.checkedin():  # a pooled connection: opened on the old file
            raw = engine.raw_connection()
            try:
                raw.driver_connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            except sqlite3.Error:
                pass  # busy: closing below still lets the last connection checkpoint
            finally:
                raw.close()
            break
    for engine in engines:
        engine.dispose()


def restore_from_connection(engine: Engine, identity: FileIdentity) -> FileIdentity:
    """Copy the database ``engine`` still has open back to its path; returns the new file's
    identity. Raises :class:`DatabaseDeletedError` when that is impossible (its folder is gone
    or not writable, another file took the name)."""
    if os.path.exists(identity.path):
        raise DatabaseDeletedError(
            f"the database file {identity.path} was replaced by another file under the running "
            "station; the run goes on in the run journal")
    raw = engine.raw_connection()
    try:
        target = sqlite3.connect(identity.path)
        try:
            raw.driver_connection.backup(target)
        finally:
            target.close()
    except (sqlite3.Error, OSError) as exc:
        raise DatabaseDeletedError(
            f"the database file {identity.path} was deleted under the running station and "
            f"could not be restored ({exc}); the run goes on in the run journal") from None
    finally:
        raw.close()
    engine.dispose()  # the next connection opens the restored file, not the unlinked one
    restored = FileIdentity.of(f"sqlite:///{identity.path}")
    assert restored is not None
    return restored
