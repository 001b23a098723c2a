"""Which database the history shows, and what to do when it cannot be opened.

A QA engineer usually browses the lab-wide database. When that is unreachable (server down,
wrong credentials, a newer StorWatt's schema, a damaged file) the history says exactly why and
falls back to this station's own SQLite file, **read-only**: the runs stay browsable and
exportable, but no audit entry is written to a database the engineer did not choose.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sqlalchemy.engine import make_url

from app.core.paths import default_db_url
from app.storage.db import Database
from app.storage.opening import open_for_reading
from app.storage.errors import StorageError


def shown_url(url: str) -> str:
    """The URL with any password replaced by ***, for messages and the window."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:  # noqa: BLE001 — an unparsable URL has no password to find
        return url


def _without_password(text: str, url: str) -> str:
    return text.replace(url, shown_url(url)) if url else text


@dataclass(frozen=True)
class HistorySource:
    database: Database | None
    url: str  # what is shown (password hidden)
    read_only: bool
    problem: str  # why the requested database is not the one shown; "" when it is


def _local_file(url: str) -> Path | None:
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return None
    return Path(parsed.database)


def open_source(url: str | None = None) -> HistorySource:
    """Open ``url`` (default: the station's database); fall back to the local file."""
    requested = url or default_db_url()
    try:
        # the station's own file is made on first use; another path must exist (a typo)
        return HistorySource(open_for_reading(requested, must_exist=url is not None),
                             shown_url(requested), False, "")
    except StorageError as exc:
        problem = _without_password(str(exc), requested)
    local = default_db_url()
    if local == requested:
        return HistorySource(None, shown_url(requested), True, problem)
    path = _local_file(local)
    if path is not None and not path.exists():  # never create a file just to show nothing
        return HistorySource(None, shown_url(local), True,
                             f"{problem}\nThis station has no local database either.")
    try:
        database = open_for_reading(local)
    except StorageError as exc:
        return HistorySource(None, shown_url(local), True,
                             f"{problem}\nThe local database cannot be read either: "
                             f"{_without_password(str(exc), local)}")
    return HistorySource(database, shown_url(local), True,
                         f"{problem}\nShowing this station's local runs instead, read-only "
                         "(notes and dispositions are disabled).")
