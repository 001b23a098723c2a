"""A whole synthetic run stored in a database, for tests that need one to report or load."""

from __future__ import annotations

from app.storage.db import Database, open_database
from app.storage.synthetic import full_run
from app.storage.writer import RunWriter


def store_synthetic_run(url: str, run_id: str) -> Database:
    """Store :func:`app.storage.synthetic.full_run` under ``run_id``; returns the database."""
    database = open_database(url)
    writer = RunWriter(database)
    for event in full_run(run_id=run_id):
        writer(event)
    assert writer.close().in_database
    return database
