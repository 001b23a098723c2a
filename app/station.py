"""The station's name: set once per station, recorded in every run (issue 26).

A lab has several benches and one QA team; a run must say which bench measured it (the
history's Station column, the report, compare, ``runs list --station``). The name is a station
setting kept in the station's data folder (``station.json``), so the command line and the GUI
record the same name, and every run started here records it in its configuration. Until a name
is set, runs record the computer's host name: never nothing.
"""

from __future__ import annotations

import json
import os
import socket
import unicodedata
from pathlib import Path

from app.paths import data_dir

STATION_FILE = "station.json"
MAX_NAME_CHARS = 64


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
    bad = [c for c in name if unicodedata.category(c).startswith("C")]
    if bad:
        raise StationNameError(f"a station name cannot hold control characters "
                               f"({', '.join(repr(c) for c in bad[:3])})")
    return name


def configured_name() -> str:
    """The name set for this station, or "" while none is set."""
    try:
        data = json.loads(station_file().read_text(encoding="utf-8"))
        return check_name(str(data["name"]))
    except (OSError, ValueError, KeyError, TypeError):
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
    path = station_file()
    partial = path.with_name(path.name + ".partial")
    with open(partial, "x", encoding="utf-8") as out:  # never through a planted link
        json.dump({"name": name}, out, ensure_ascii=False)
        out.flush()
        os.fsync(out.fileno())
    os.replace(partial, path)
    return name
