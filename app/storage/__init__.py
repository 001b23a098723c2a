"""Durable run storage: schema and migrations, the background run writer, the read model.

``open_database(url)`` → :class:`Database`; ``RunWriter(database)`` is the sequencer listener
that stores a run; ``load_run(database, id)`` → :class:`StoredRun` is what reports and the
history view read. See docs/storage.md.
"""

from app.storage.db import Database, open_database
from app.storage.errors import (AmbiguousRunIdError, CorruptDatabaseError, DatabaseLockedError,
                                DatabaseUnreachableError, DiskFullError, RunNotFoundError,
                                SchemaTooNewError, StorageError, WriterError)

__all__ = ["Database", "open_database", "StorageError", "DatabaseLockedError",
           "DiskFullError", "CorruptDatabaseError", "DatabaseUnreachableError",
           "SchemaTooNewError", "RunNotFoundError", "AmbiguousRunIdError", "WriterError"]
