"""Where a resumed run picks up: what the sequencer needs to continue an INTERRUPTED run.

:mod:`app.station.resume` decides it from the stored record (which phase to restart at, which
attempt
each phase runs as, the stored intensity search); the sequencer only follows it. The
continuation writes into the same run, so its run time continues the stored one: run time is
the wall time since the run first started (the gap while the station was down is real time
and shows as such), never earlier than the last time the record holds.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone

from app.sequencer import events as ev
from app.sequencer.range_plan import RangePlan


@dataclass(frozen=True)
class Continuation:
    number: int  # which resumption of the run this is (1 = first)
    restart_phase: int  # index of the first phase this continuation runs
    cut_phase: int | None
    carried: tuple[int, ...]  # phases whose stored results stand
    redone: tuple[int, ...]  # completed phases run again (the active sequence restarts whole)
    interruption: str
    #: (phase index, attempt number) of every phase this continuation runs: the attempt after
    #: the last one stored, so earlier attempts stay distinct evidence
    attempts: tuple[tuple[int, int], ...]
    search: tuple[ev.SearchResult, ...]  # the stored intensity search the active phases use
    started_wall_iso: str  # when the run first started
    last_t: float  # the latest run time the record holds
    after_seq: int  # the last event number the record holds
    #: the ranges the interrupted run's testing pass held (None: it had not ranged yet); a
    #: continuation that skips the ranging pass holds them instead of ranging afresh
    range_plan: RangePlan | None = None
    wall: Callable[[], float] = field(default=time.time, compare=False, repr=False)

    def offset_s(self) -> float:
        """Run time at which the continuation begins (see the module docstring)."""
        elapsed = self.wall() - datetime.fromisoformat(self.started_wall_iso).timestamp()
        return max(elapsed, math.nextafter(self.last_t, math.inf))

    def attempt(self, phase_index: int) -> int:
        return dict(self.attempts).get(phase_index, 1)

    def announce(self, started: ev.RunStarted, t: float) -> ev.RunResumed:
        """The event that opens the continuation in place of ``started``."""
        now = datetime.fromtimestamp(self.wall(), timezone.utc).isoformat(timespec="seconds")
        resumption = ev.Resumption(self.number, t, now, self.restart_phase, self.cut_phase,
                                   self.carried, self.redone, self.interruption)
        return ev.RunResumed(replace(started, wall_start_iso=self.started_wall_iso),
                             resumption, self.after_seq)
