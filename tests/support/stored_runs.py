"""Synthetic runs stored, or written with a fault in the middle, for tests of what is kept."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import astuple

from app.metrics.steady_state import SteadyStateVerdict
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


#: PTS steady-state verdicts for the restarted phase 1 of :func:`full_run`: one its first
#: attempt reached (cleared when the phase restarts), then its second attempt's, a round
#: without a figure (NaN figures, stored as null)
FIRST_ATTEMPT_VERDICT = SteadyStateVerdict(True, 6, 1234.5, 7.25, 3.5, False, "")
LAST_VERDICT = SteadyStateVerdict(False, None, math.nan, math.nan, math.nan, False,
                                  "round 3 has no value (NaN or infinity); re-run it")


def with_steady_verdicts(events: list[ev.RunEvent]) -> list[ev.RunEvent]:
    """``events`` with a ``SteadyStateJudged`` after each attempt of phase 1 starts; the
    phase's stored verdict must come back as :data:`LAST_VERDICT`."""
    out: list[ev.RunEvent] = []
    for event in events:
        out.append(event)
        if isinstance(event, ev.PhaseStarted) and event.phase.index == 1:
            verdict = FIRST_ATTEMPT_VERDICT if event.attempt == 1 else LAST_VERDICT
            out.append(ev.SteadyStateJudged(1, event.attempt, verdict))
    return out


def same_verdict(a: SteadyStateVerdict | None, b: SteadyStateVerdict | None) -> bool:
    """Equal field by field, NaN equal to NaN."""
    if a is None or b is None:
        return a is b
    return all(x == y or (isinstance(x, float) and math.isnan(x) and math.isnan(y))
               for x, y in zip(astuple(a), astuple(b)))
