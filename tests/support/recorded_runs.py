"""Smoke runs recorded on a fake clock (a fraction of a second each) for GUI tests."""

from __future__ import annotations

from app.records import RunConfig
from app.sequencer import events as ev
from app.session import open_session
from drivers.clock import FakeClock


def record_smoke_run(url: str) -> tuple[str, list[ev.RunEvent]]:
    """One completed smoke run on the in-process simulated lab: (run id, its events)."""
    events: list[ev.RunEvent] = []
    session = open_session(RunConfig(method="smoke", lab="sim-direct"), db_url=url,
                           clock=FakeClock(), listeners=[events.append])
    session.sequencer.run()
    session.writer.close()
    return session.run_id, events
