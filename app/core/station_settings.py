"""The station's settings: its name and its lab database (issue 26).

A lab has several benches and one QA team; a run must say which bench measured it (the
history's Station column, the report, compare, ``runs list --station``). The name is a station
setting kept in the station's data folder (``station.json``), so the command line and the GUI
record the same name, and every run started here records it in its configuration. Until a name
is set, runs record the computer's host name: never nothing.

The lab database is where the station's sender copies its runs for QA
(:mod:`app.storage.sender`): ``storwatt station lab-db URL``, or ``STORWATT_LAB_DB`` (which
wins), or ``storwatt run --lab-db URL`` for one run.
"""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

from app.core import plain_text
from app.core.paths import data_dir
from drivers import guarded_file

STATION_FILE = "station.json"
MAX_NAME_CHARS = 64
#: a few names: a larger file (or a device, a pipe) is no settings file of the station's
MAX_SETTINGS_BYTES = 64 << 10


class StationNameError(ValueError):
    """The name cannot be a station's name, or the station is already named otherwise."""


def station_file() -> Path:
    return data_dir() / STATION_FILE


def check_name(text: str) -> str:
    """A station name: 1–64 printable characters (spaces inside allowed), trimmed."""
    name = text.strip()
    if not name:
        raise StationNameError("a station name cannot be empty")
    if len(name) > MAX_NAME_CHARS:
        raise StationNameError(f"a station name has at most {MAX_NAME_CHARS} characters, "
                               f"this one {len(name)}")
    why = plain_text.refusal(name, "a station name")
    if why is not None:
        raise StationNameError(why)
    return name


def _settings() -> dict[str, str]:
    try:
        data = json.loads(guarded_file.read_text(station_file(), "station settings file",
                                                 MAX_SETTINGS_BYTES))
    except ValueError:  # GuardedFileError included: no settings, the defaults hold
        return {}
    return {k: v for k, v in data.items() if isinstance(v, str)} if isinstance(data, dict) \
        else {}


def _save(settings: dict[str, str]) -> None:
    path = station_file()
    partial = path.with_name(path.name + ".partial")
    partial.unlink(missing_ok=True)  # a leftover of a crash; never written through
    with open(partial, "x", encoding="utf-8") as out:
        json.dump(settings, out, ensure_ascii=False)
        out.flush()
        os.fsync(out.fileno())
    os.replace(partial, path)


def configured_name() -> str:
    """The name set for this station, or "" while none is set."""
    try:
        return check_name(_settings().get("name", ""))
    except StationNameError:
        return ""


def station_name() -> str:
    """What a run started here records: the set name, else the computer's host name."""
    return configured_name() or socket.gethostname()


def set_station_name(text: str, *, rename: bool = False) -> str:
    """Name this station. A station keeps its name: another name needs ``rename`` (runs
    already recorded keep the name they were measured under)."""
    name = check_name(text)
    current = configured_name()
    if current and current != name and not rename:
        raise StationNameError(f"this station is already named {current!r}; to rename it "
                               f"(runs already recorded keep {current!r}) add --rename")
    _save({**_settings(), "name": name})
    return name


def lab_database() -> str:
    """The lab database URL the station's runs are copied to ("" when none)."""
    return os.environ.get("STORWATT_LAB_DB") or _settings().get("lab_db", "")


def lab_database_origin() -> str:
    """Where :func:`lab_database` comes from, as ``storwatt db status`` names it."""
    if os.environ.get("STORWATT_LAB_DB"):
        return "STORWATT_LAB_DB"
    return f"storwatt station lab-db, {station_file()}" if _settings().get("lab_db") else ""


def set_lab_database(url: str) -> None:
    """Name the lab database ("" stops copying runs to one)."""
    settings = _settings()
    if url:
        settings["lab_db"] = url
    else:
        settings.pop("lab_db", None)
    _save(settings)
