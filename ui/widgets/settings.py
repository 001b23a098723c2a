"""Where the GUI keeps its window state: QSettings under organisation "StorWatt".

``STORWATT_SETTINGS`` names an INI file instead (tests use a temporary one, so they never
touch the technician's real settings)."""

from __future__ import annotations

import os

from PySide6.QtCore import QSettings

ORGANISATION = "StorWatt"
APPLICATION = "Station"


def station_settings(path: str | None = None) -> QSettings:
    path = path or os.environ.get("STORWATT_SETTINGS")
    if path:
        return QSettings(path, QSettings.Format.IniFormat)
    return QSettings(ORGANISATION, APPLICATION)
