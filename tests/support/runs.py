"""Reading a stored run's facts back in tests."""

from __future__ import annotations

from app.core.records import RunStatus
from app.storage.opening import open_database
from app.storage.repository import load_run


def stored_status(url: str, run_id: str) -> RunStatus:
    """The run's status as a fresh open of its database finds it."""
    database = open_database(url)
    try:
        return load_run(database, run_id).status
    finally:
        database.close()
