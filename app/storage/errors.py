"""Typed storage errors: each names the database and says what the technician can do about it.

The CLI and the GUI show ``str(error)`` as is, so messages are complete sentences with the
file or URL and the next step; callers catch :class:`StorageError` to handle them all.
"""

from __future__ import annotations

import shutil
from pathlib import Path

#: Below this much free space a "disk I/O error" on a SQLite file is a full disk.
DISK_FULL_FREE_BYTES = 1024 * 1024


class StorageError(Exception):
    """Base class of every storage problem reported to the user."""


class DatabaseLockedError(StorageError):
    """Another program holds the database lock longer than the busy timeout."""


class DiskFullError(StorageError):
    """The disk holding the database is full; nothing already committed is lost."""


class DurabilityLostError(StorageError):
    """Neither the database nor the run journal can take the run's events any more (or the
    writer's thread died): what is measured from now on would be lost, so the run stops."""


class CorruptDatabaseError(StorageError):
    """The file exists but is not a readable SQLite database."""


class DatabaseUnreachableError(StorageError):
    """The URL cannot be opened at all (bad URL, missing folder, no permission, no server)."""


class NoDatabaseError(StorageError):
    """A command that only reads (or copies from) a database was given a SQLite file that does
    not exist: opening it would create an empty one and answer "no runs" about a typo."""


class ReadOnlySchemaError(StorageError):
    """A read-only database whose schema is older than this StorWatt: upgrading it would write."""


class SchemaTooNewError(StorageError):
    """The database was written by a newer StorWatt whose schema this version does not know."""

    def __init__(self, url: str, found: str, supported: str) -> None:
        super().__init__(
            f"database {url} has schema version {found}, but this StorWatt supports up to "
            f"version {supported}: open it with a newer StorWatt, or use another database "
            f"(--db / STORWATT_DB)")
        self.found = found
        self.supported = supported


class SchemaOwnerError(StorageError):
    """An older lab schema reached with a login that does not own it: only its owner upgrades."""


class RunNotFoundError(StorageError, KeyError):
    """No stored run matches the id or prefix."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else "run not found"


class AmbiguousRunIdError(StorageError, KeyError):
    """An id prefix matches more than one run."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "ambiguous run id"


class WriterError(StorageError):
    """The run writer could not store some events (they were kept queued until close)."""


def classify(exc: BaseException, url: str) -> StorageError:
    """Turn a driver/SQLAlchemy exception into the typed error the user can act on.

    SQLite reports its conditions only as message text, so the mapping is on the message;
    anything unrecognised becomes a plain :class:`StorageError` that still names the URL.
    """
    if isinstance(exc, StorageError):
        return exc
    # one line: a driver's message may span several (psycopg: "…refused\n\tIs the server …")
    text = " ".join(str(getattr(exc, "orig", None) or exc).split())
    low = text.lower()
    if "database is locked" in low or "database table is locked" in low:
        return DatabaseLockedError(
            f"database {url} is locked by another program (another StorWatt, a backup tool or "
            f"a database browser?): close it and try again ({text})")
    if "disk is full" in low or "no space left" in low or (
            "disk i/o error" in low and _sqlite_disk_full(url)):
        return DiskFullError(
            f"the disk holding {url} is full: free some space; run events are kept in the run "
            f"journal and stored as soon as space is available ({text})")
    if "file is not a database" in low or "malformed" in low or "not a database" in low:
        return CorruptDatabaseError(
            f"{url} is not a readable StorWatt database (the file is damaged or is something "
            f"else): restore it from a backup, or move it aside and StorWatt will start a new "
            f"one ({text})")
    if ("unable to open" in low or "could not connect" in low or "connection refused" in low
            or "no such module" in low or "can't load plugin" in low or "readonly" in low
            or "read-only" in low or "could not parse" in low or "did not answer" in low
            or "timeout expired" in low or "failed to resolve host" in low
            or "could not translate host name" in low):
        return DatabaseUnreachableError(
            f"cannot open database {url}: check the URL, that its folder exists and is writable, "
            f"or that the database server is running ({text})")
    return StorageError(f"database {url}: {text}")


def _sqlite_disk_full(url: str) -> bool:
    """SQLite reports a write into a full WAL as a plain "disk I/O error"; the free space of
    the database's folder tells a full disk from a failing one."""
    from sqlalchemy.engine import make_url  # here: this module loads with every command
    from sqlalchemy.exc import ArgumentError

    try:
        parsed = make_url(url)
        if parsed.get_backend_name() != "sqlite" or not parsed.database:
            return False
        usage = shutil.disk_usage(Path(parsed.database).resolve().parent)
        # a kernel file system (/proc, /sys) has no capacity at all: not a full disk
        return usage.total > 0 and usage.free < DISK_FULL_FREE_BYTES
    except (OSError, ValueError, ArgumentError):
        return False
