"""What a SQLite database path may name: a regular file (or nothing yet) on a real disk.

SQLite opens whatever the path names. Issue 25: a URL naming a character device was "opened"
as an empty database and ``<device>-journal`` created beside it; ``/proc/self/mem`` failed
with "disk I/O error" and, its file system reporting no free space, was called a full disk.
So before SQLite sees the path it must be a regular file or not exist yet, in a folder of a
file system with a capacity (``/proc`` and ``/sys`` have none); anything else is refused
naming what it is. Nothing is created or opened here.
"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

from app.storage.errors import DatabaseUnreachableError


def refuse_special_path(url: str, database: str) -> None:
    """Raise :class:`DatabaseUnreachableError` unless ``database`` (the URL's file path) may
    hold a StorWatt database."""
    path = Path(database)
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as exc:
        raise DatabaseUnreachableError(f"cannot open database {url}: {path} cannot be "
                                       f"inspected ({exc.strerror or exc})") from None
    if mode is not None and not stat.S_ISREG(mode):
        kind = ("a folder" if stat.S_ISDIR(mode) else "a device" if stat.S_ISCHR(mode)
                or stat.S_ISBLK(mode) else "a pipe or socket")
        raise DatabaseUnreachableError(
            f"cannot open database {url}: {path} is {kind}, not a database file; name a file "
            "(a new name starts a new database)")
    if _pseudo_file_system(path.resolve().parent):
        raise DatabaseUnreachableError(
            f"cannot open database {url}: {path.resolve().parent} is not on a disk (a kernel "
            "file system such as /proc or /sys): name a file on a disk")


def _pseudo_file_system(folder: Path) -> bool:
    """A file system without capacity (/proc, /sys): nothing is stored there."""
    try:
        return shutil.disk_usage(folder).total == 0
    except OSError:
        return False  # a missing folder: SQLite's own error names it
