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

APP_NAME = "StorWatt"


def resources_dir() -> Path:
    """The shipped ``resources/`` folder (methods, icons, simulator definitions)."""
    frozen_root = getattr(sys, "_MEIPASS", None)
    if frozen_root:
        return Path(frozen_root) / "resources"
    return Path(__file__).resolve().parent.parent / "resources"


def traces_dir() -> Path:
    """Shipped block traces; a method's relative ``trace`` path names a file here."""
    return resources_dir() / "traces"


def methods_dir() -> Path:
    return resources_dir() / "methods"


def data_dir() -> Path:
    """Per-user data directory; ``STORWATT_DATA_DIR`` overrides it (tests, portable installs)."""
    override = os.environ.get("STORWATT_DATA_DIR")
    path = Path(override) if override else Path(platformdirs.user_data_dir(APP_NAME, APP_NAME))
    path.mkdir(parents=True, exist_ok=True)
    return path


def default_db_url() -> str:
    """SQLite file in the data directory unless ``STORWATT_DB`` names another URL."""
    return os.environ.get("STORWATT_DB") or f"sqlite:///{data_dir() / 'storwatt.db'}"
