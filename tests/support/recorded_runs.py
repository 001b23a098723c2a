"""Stored runs recorded by the real sequencer on a fake clock, for the report, history and
compliance tests.

The runs go through the same code as a station run (simulated SUT, in-process simulated
meters, sequencer, RunWriter, SQLite), only time is simulated, so a demo plan takes a second.
A run that many tests only read is recorded once per session (``recorded_demo`` in
``tests/conftest.py``); a test that changes its run records its own.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from app.labs.simulated import simulated_sut
from app.method.loader import load_method
from app.core.records import PhaseKind, RunConfig, RunStatus, SutDescription
from app.sequencer import events as ev
from app.sequencer.equipment import Lab
from app.sequencer.sequencer import Sequencer
from app.station.session import open_session
from tests.support.verdict_runs import run_stored
from app.storage.db import Database
from drivers.clock import FakeClock
from drivers.interfaces import FLAG_UNCERTAINTY_HIGH, PowerSample, WorkloadInterval
from drivers.simulators.engine import SimulatedWorkloadEngine
from drivers.simulators.direct_meters import SimulatedPowerMeter, SimulatedThermometer

Hook = Callable[[Sequencer, ev.RunEvent], None]


class DegradingMeter:
    """A simulated meter whose samples carry FLAG_UNCERTAINTY_HIGH while ``bad`` is set
    (a meter on too high a range): the phase running then must come out INVALID."""

    def __init__(self, inner: SimulatedPowerMeter) -> None:
        self.inner = inner
        self.bad = False

    def open(self):
        return self.inner.open()

    def close(self) -> None:
        self.inner.close()

    def identify(self):
        return self.inner.identify()

    def reconnect(self):
        return self.inner.reconnect()

    def interrupt(self) -> None:
        self.inner.interrupt()

    def end_waits_after(self, seconds: float | None) -> None:
        self.inner.end_waits_after(seconds)

    @property
    def ranges(self):
        return self.inner.ranges

    @property
    def accuracy(self):
        return self.inner.accuracy

    # ranged like the meter it wraps (the method's ranging pass, method-notes §3)
    @property
    def volt_ranges(self):
        return self.inner.volt_ranges

    @property
    def amp_ranges(self):
        return self.inner.amp_ranges

    @property
    def crest_factor(self):
        return self.inner.crest_factor

    def auto_range(self) -> None:
        self.inner.auto_range()

    def set_ranges(self, volts: float, amps: float) -> None:
        self.inner.set_ranges(volts, amps)

    def peaks(self):
        return self.inner.peaks()

    def read(self, t: float) -> PowerSample:
        sample = self.inner.read(t)
        if self.bad:
            return replace(sample, flags=sample.flags | {FLAG_UNCERTAINTY_HIGH},
                           uncertainty_pct=2.5)
        return sample


@dataclass
class RecordedRun:
    database: Database
    run_id: str
    status: RunStatus
    sequencer: Sequencer


def record_run(db_path: Path, method: str = "demo", taxonomy: str = "online-3",
               coms: tuple[str, ...] = ("deduplication",), hook: Hook | None = None,
               meter: Callable[[SimulatedPowerMeter], object] | None = None,
               start: float = 1000.0, capacity_probe: bool = True,
               sut: SutDescription | None = None,
               answers: dict | None = None,
               engine: Callable[[SimulatedWorkloadEngine], object] | None = None,
               workload_latency_s: float = 0.0) -> RecordedRun:
    """Run ``method`` on the simulated SUT (fake clock) and store it in ``db_path``;
    ``capacity_probe=False``: a lab that cannot observe the SUT's used capacity, as local-fio
    and a real SUT without a management interface; ``sut`` replaces the SUT description (its
    declared COMs then come from it); ``answers`` the classification answers recorded;
    ``engine`` wraps the simulated workload engine, which then reports
    ``workload_latency_s`` late at most."""
    clock = FakeClock(start)
    config = RunConfig(method=method, taxonomy=taxonomy, lab="sim-direct", station="bench-7",
                       operator="R. Tester",
                       classification_reason="integrated controller, storage protection, "
                                             "24 drives (>= 12): Online 3",
                       classification_answers=answers or {},
                       sut=sut or SutDescription(coms_declared=coms, coms_on_during_test=coms))
    sut = simulated_sut(config)
    power = SimulatedPowerMeter(sut)
    workload = SimulatedWorkloadEngine(sut, clock)
    lab = Lab(meter(power) if meter else power, engine(workload) if engine else workload,
              SimulatedThermometer(sut), sut.used_capacity_bytes if capacity_probe else None,
              workload_latency_s, "simulated SUT")
    database, sequencer, status = run_stored(db_path, load_method(method), config, lab, clock,
                                             hook)
    return RecordedRun(database, sequencer.run_id, status, sequencer)


def pause_once_in(profile: str, after_intervals: int = 2) -> Hook:
    """A hook pausing the run once inside ``profile``; a timer lets 5 s of station time pass
    and resumes it. The phase restarts and its metric must come from the second attempt only."""
    done = threading.Event()

    def resume(seq: Sequencer) -> None:
        seq.station_clock.advance(5.0)
        seq.resume()

    def hook(seq: Sequencer, event: ev.RunEvent) -> None:
        if (isinstance(event, ev.IntervalClosed) and event.interval.profile == profile
                and event.interval.index == after_intervals and not done.is_set()):
            done.set()
            seq.pause()
            threading.Timer(0.05, resume, (seq,)).start()
    return hook


def abort_at(kind: PhaseKind) -> Hook:
    def hook(seq: Sequencer, event: ev.RunEvent) -> None:
        if isinstance(event, ev.PhaseStarted) and event.phase.kind is kind:
            seq.abort("aborted by the test operator")
    return hook




def record_smoke_run(url: str) -> tuple[str, list[ev.RunEvent]]:
    """One completed smoke run on the in-process simulated lab: (run id, its events)."""
    events: list[ev.RunEvent] = []
    session = open_session(RunConfig(method="smoke", lab="sim-direct"), db_url=url,
                           clock=FakeClock(), listeners=[events.append])
    session.sequencer.run()
    session.writer.close()
    return session.run_id, events


class OffsetGridEngine:
    """The simulated engine reporting on its own grid, offset from the station's: after a
    profile's first slice, every two consecutive slices are handed over as one (fio's status
    interval starts when fio does, so its slices straddle the station's interval boundaries).
    A slice is held back one poll at most: give the lab a workload latency of a poll or more."""

    def __init__(self, inner: SimulatedWorkloadEngine) -> None:
        self.inner = inner
        self.held: WorkloadInterval | None = None
        self.first = True

    live = True

    def __getattr__(self, name: str):
        return getattr(self.inner, name)

    def start(self, profile) -> None:
        self.held, self.first = None, True
        self.inner.start(profile)

    def poll(self) -> list[WorkloadInterval]:
        out = []
        for s in self.inner.poll():
            if self.first:
                self.first = False
                out.append(s)
            elif self.held is None:
                self.held = s
            else:
                out.append(_merged(self.held, s))
                self.held = None
        return out

    def stop(self):
        self.held = None
        return self.inner.stop()


def _merged(a: WorkloadInterval, b: WorkloadInterval) -> WorkloadInterval:
    a_ios, b_ios = a.read_ios + a.write_ios, b.read_ios + b.write_ios
    ios = a_ios + b_ios
    resp = (a.avg_resp_ms * a_ios + b.avg_resp_ms * b_ios) / ios if ios else a.avg_resp_ms
    bins = dict(a.latency_bins)
    for k, v in b.latency_bins.items():
        bins[k] = bins.get(k, 0) + v
    return WorkloadInterval(a.t_start, b.t_end, a.read_ios + b.read_ios, a.write_ios + b.write_ios,
                            a.read_bytes + b.read_bytes, a.write_bytes + b.write_bytes, resp,
                            max(a.max_resp_ms, b.max_resp_ms), bins, a.host)
