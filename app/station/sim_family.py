"""A product family measured on the simulated lab: one run per configuration (issue 18 §6).

The best-foot-forward view needs a family of runs that differ in one range variable. On the
simulated SUT, random IO scales with the drive count (seek-bound drives) while sequential IO
stops at the controller's bandwidth, so a drive-count sweep shows both cases the Emerald
training describes: metrics that peak inside the range, and ones still rising at its end.
The runs are real simulated runs (sequencer, recorder, storage), on a fake clock so a sweep
takes seconds. With the ``demo`` method's search (up to 64 outstanding IOs) the random metrics
peak at 50 drives, the sequential ones at the smallest configuration (the controller's
bandwidth is reached early) and EP_RI still rises at 250: every case the disclosure names.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from app.core.records import RunConfig, SutDescription
from app.station.session import open_session
from drivers.clock import FakeClock

#: a seed-like scale-up sweep (the training's exercises step by drive shelves of 25)
DRIVE_COUNTS = (25, 50, 75, 100, 125, 150, 200, 250)


def run_family(db_url: str, drive_counts: Iterable[int] = DRIVE_COUNTS,
               raid_levels: Iterable[str] = ("RAID 5",), method: str = "demo",
               model: str = "Simulated array") -> list[str]:
    """Store one COMPLETED sim-direct run per (RAID level, drive count); returns run ids."""
    run_ids = []
    for raid in raid_levels:
        for drives in drive_counts:
            sut = replace(SutDescription(model=model), drive_count=drives, raid=raid,
                          raw_capacity_bytes=drives * 146_000_000_000)
            config = RunConfig(method=method, taxonomy="online-3", lab="sim-direct", sut=sut)
            session = open_session(config, db_url=db_url, clock=FakeClock())
            session.run()
            run_ids.append(session.run_id)
    return run_ids
