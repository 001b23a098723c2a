"""Hand-made run events for the live-plot tests: a two-phase smoke run (RR, SW) started at
station time ``T0`` and its workload slices."""

from __future__ import annotations

from app.core.records import PhaseInfo, PhaseKind, RunConfig, Window
from app.sequencer import events as ev
from drivers.interfaces import WorkloadInterval

T0 = 500.0  # the station clock at run start: provenance only, event times are run-relative
PHASES = (PhaseInfo(0, PhaseKind.ACTIVE, "RR", "RR", 10.0, 0, 10),
          PhaseInfo(1, PhaseKind.ACTIVE, "SW", "SW", 10.0, 0, 10))


def started() -> ev.RunStarted:
    return ev.RunStarted("r1", RunConfig(method="smoke"), "smoke", "1", False, PHASES, T0,
                         "2026-01-01T00:00:00+00:00", 20.0)


def workload(phase: int, *slices: WorkloadInterval) -> ev.WorkloadIntervals:
    return ev.WorkloadIntervals(phase, slices, 1, (Window.OUTSIDE,) * len(slices))
