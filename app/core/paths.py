"""Where StorWatt's files live: shipped resources and the per-user data directory.

Resources sit beside the packages in a source checkout and inside the bundle when frozen by
PyInstaller (``sys._MEIPASS``); user data (the default database, reports) goes to the platform's
data directory so a lab PC keeps it across upgrades.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import platformdirs

import app

APP_NAME = "StorWatt"


def resources_dir() -> Path:
    """The shipped ``resources/`` folder (methods, icons, simulator definitions)."""
    frozen_root = getattr(sys, "_MEIPASS", None)
    if frozen_root:
        return Path(frozen_root) / "resources"
    return Path(app.__file__).resolve().parent.parent / "resources"  # the package, not this file


def traces_dir() -> Path:
    """Shipped block traces; a method's relative ``trace`` path names a file here."""
    return resources_dir() / "traces"


def methods_dir() -> Path:
    return resources_dir() / "methods"


class DataDirError(OSError):
    """The data directory cannot be used (it names a file, or cannot be created)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "the StorWatt data folder cannot be used"


def data_dir() -> Path:
    """Per-user data directory; ``STORWATT_DATA_DIR`` overrides it (tests, portable installs).
    :class:`DataDirError` (one line, naming the folder and the variable) when it cannot be
    made: issue 25 found a ``FileExistsError`` traceback in every command when it named a file."""
    override = os.environ.get("STORWATT_DATA_DIR")
    path = Path(override) if override else Path(platformdirs.user_data_dir(APP_NAME, APP_NAME))
    source = "STORWATT_DATA_DIR" if override else "the platform's data folder"
    try:
        path.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise DataDirError(f"the StorWatt data folder {path} ({source}) is a file, not a "
                           "folder: point STORWATT_DATA_DIR at a folder") from None
    except OSError as exc:
        raise DataDirError(f"cannot create the StorWatt data folder {path} ({source}): "
                           f"{exc.strerror or exc}; point STORWATT_DATA_DIR at a writable "
                           "folder") from None
    return path


def default_db_url() -> str:
    """SQLite file in the data directory unless ``STORWATT_DB`` names another URL."""
    return os.environ.get("STORWATT_DB") or f"sqlite:///{data_dir() / 'storwatt.db'}"
