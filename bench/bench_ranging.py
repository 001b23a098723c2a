"""What the ranging pass costs a run (method-notes §3): station seconds added to a smoke run
per ``[ranging] mode``, and the wall time of reading the peaks over the wire.

Each run is the ``smoke`` method on the built-in ``sim`` lab (the production WT300 driver on a
loopback WT310 simulator) with a fake station clock, so the station seconds are exact and the
wall time is the instrument traffic and the station's own work. Median of 3 per mode.
Run: ``python -m bench.run_all ranging``.
"""

from __future__ import annotations

import statistics
import time

from app.labs.builder import build_lab
from app.method.loader import load_method
from app.method.model import Method, RangingRule
from app.core.records import RunConfig, RunStatus
from app.sequencer.sequencer import Sequencer
from bench.figure import Figure
from drivers.clock import FakeClock

REPEATS = 3
#: the dedicated pass at 1 s per profile: 6 active profiles and ready idle
DEDICATED_PROFILE_S = 1.0


def smoke_with(mode: str) -> Method:
    method = load_method("smoke")
    rule = RangingRule.model_validate({"mode": mode, "profile_s": DEDICATED_PROFILE_S})
    return method.model_copy(update={"ranging": rule})


def one_run(method: Method) -> tuple[float, float]:
    """(station seconds, wall seconds) of one whole smoke run."""
    clock = FakeClock()
    config = RunConfig(method="smoke", lab="sim")
    lab = build_lab(config, clock)
    try:
        seq = Sequencer(method, config, lab, clock)
        start, wall = clock.now(), time.perf_counter()
        if seq.run() is not RunStatus.COMPLETED:
            raise RuntimeError(f"smoke run with ranging {method.ranging.mode}: {seq.error}")
        return clock.now() - start, time.perf_counter() - wall
    finally:
        lab.close()


def medians(mode: str) -> tuple[float, float]:
    runs = [one_run(smoke_with(mode)) for _ in range(REPEATS)]
    return (statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs))


def run() -> list[Figure]:
    off_station, off_wall = medians("off")
    search_station, search_wall = medians("search")
    dedicated_station, _ = medians("dedicated")
    search_added = search_station - off_station
    return [
        Figure("ranging: smoke run without ranging, station time (median of 3)",
               round(off_station, 2), "s", "reference", None),
        Figure("ranging: station seconds added by mode search (peaks read during the search)",
               round(search_added, 2), "s", "= 0 s", abs(search_added) < 0.5),
        Figure("ranging: station seconds added by mode dedicated at 1 s per profile "
               "(6 profiles + idle)", round(dedicated_station - off_station, 2), "s",
               "≈ 7 s (planned)", abs(dedicated_station - off_station - 7.0) < 1.0),
        Figure("ranging: wall seconds added by mode search (peak queries over loopback)",
               round(search_wall - off_wall, 3), "s", "informative", None),
        Figure("ranging: wall seconds of a smoke run without ranging (fake clock, loopback)",
               round(off_wall, 3), "s", "reference", None),
    ]
