"""Synthetic runs stored, or written with a fault in the middle, for tests of what is kept."""

from __future__ import annotations

from collections.abc import Callable

from app.sequencer import events as ev
from app.storage.db import Database
from app.storage.opening import open_database
from app.storage.synthetic import full_run
from app.storage.writer import Durability, RunWriter


def store_synthetic_run(url: str, run_id: str) -> Database:
    """Store :func:`app.storage.synthetic.full_run` under ``run_id``; returns the database."""
    database = open_database(url)
    writer = RunWriter(database)
    for event in full_run(run_id=run_id):
        writer(event)
    assert writer.close().in_database
    return database


def run_events(run_id: str) -> list[ev.RunEvent]:
    """The events of a whole synthetic run as a writer receives them."""
    return [e for e in full_run(run_id=run_id) if not isinstance(e, ev.Progress)]


def power_samples(events: list[ev.RunEvent]) -> int:
    return sum(len(e.samples) for e in events if isinstance(e, ev.PowerSamples))


def write_with_fault(database: Database, run_id: str,
                     fault: Callable[[], object], *, committed: int = 10,
                     close_timeout_s: float = 2.0) -> tuple[list[ev.RunEvent], Durability]:
    """Write a synthetic run: ``committed`` events stored, then ``fault()``, then the rest and
    the writer closed; ``fault`` may return a callable that undoes it, called after the
    close (anything else it returns is ignored)."""
    writer = RunWriter(database, retry_interval_s=0.05)
    events = run_events(run_id)
    for event in events[:committed]:
        writer(event)
    assert writer.flush(10.0)
    undo = fault()
    try:
        for event in events[committed:]:
            writer(event)
        return events, writer.close(timeout=close_timeout_s)
    finally:
        if callable(undo):
            undo()
