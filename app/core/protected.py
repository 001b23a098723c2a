"""What a run must never write, whatever the operator typed: the station's own files.

The fio driver cannot know where the station keeps its data (drivers never import the app), so
the session hands it this list (``drivers.fio.safety``, ``TargetPolicy.protected``): the SQLite
database with its journals, the station's data directory and the report folder. A folder
protects everything inside it.
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy.engine import make_url

from app.core.paths import data_dir

#: the database file and the files SQLite keeps beside it while it writes
SQLITE_COMPANIONS = ("", "-wal", "-shm", "-journal")


def database_files(db_url: str) -> tuple[str, ...]:
    """The files of a SQLite database URL; () for a server database or an in-memory one."""
    url = make_url(db_url)
    if url.get_backend_name() != "sqlite" or url.database in (None, "", ":memory:"):
        return ()
    return tuple(url.database + suffix for suffix in SQLITE_COMPANIONS)


def station_paths(db_url: str, report_folder: Path | None = None) -> tuple[str, ...]:
    """Everything a run must leave alone: database files, data directory, report folder."""
    paths = [*database_files(db_url), str(data_dir())]
    if report_folder is not None:
        paths.append(str(report_folder))
    return tuple(paths)
