"""What a station's database holds committed, read from outside the station, for the crash
drills (tests/test_station_sigkill.py, tests/test_storage_durability.py).

The drills' promise is "a SIGKILL loses nothing that was committed". They measured
"committed" as "published more than 1 s before the kill" — the writer's commit interval,
in wall time; on a loaded machine the writer thread waited its turn for the CPU past that
second and a drill failed with the station right (issue 36: "run lost although it was more
than 1 s old"). So a drill reads, just before each kill, what another connection already
sees committed in the station's SQLite file, and after the kill every bit of it must be
there: an event (the commit), not a duration. Read-only (``mode=ro``): the reader never
creates, locks for writing or migrates the station's file.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from dataclasses import dataclass

#: how long the reader waits for a lock the station's writer holds (its schema creation)
BUSY_WAIT_S = 1.0


@dataclass(frozen=True)
class Committed:
    """One look at a run in the database: whether its row was there, and its power samples
    as ``(phase_index, t)``."""

    run: bool = False
    samples: frozenset[tuple[int, float]] = frozenset()


def committed(url: str, run_id: str) -> Committed:
    """What ``url`` (``sqlite:///PATH``) holds committed of run ``run_id`` now.

    Nothing if it cannot be read yet (no file, a schema half created, a start-up's lock):
    what was not seen is not required. A reader that never saw anything would make a drill
    prove nothing, so each drill also requires enough kills after committed samples."""
    path = url.removeprefix("sqlite:///")
    try:
        with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True,
                                     timeout=BUSY_WAIT_S)) as conn:
            run = conn.execute("SELECT id FROM runs WHERE uuid = ?", (run_id,)).fetchone()
            if run is None:
                return Committed()
            rows = conn.execute("SELECT phase_index, t FROM power_samples WHERE run_id = ?",
                                run).fetchall()
    except sqlite3.DatabaseError:
        return Committed()
    return Committed(True, frozenset((int(p), float(t)) for p, t in rows))
