"""A meter that stops answering, on the real clock through the production WT300 driver and the
loopback WT310 simulator: the phase fails at the method's silence limit (not after minutes),
a meter that comes back within it only leaves a gap, and an Abort acts within a second even
while a read or a reconnect back-off is in progress. Every sample taken before is stored."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from pydantic import ValidationError

from app.method.loader import load_method
from app.method.model import SamplingSettings
from drivers.interfaces import DEFAULT_SILENCE_LIMIT_S
from app.core.records import InstrumentConfig, PhaseStatus, RunConfig, RunStatus
from app.sequencer import events as ev
from app.station.session import open_session
from app.storage.repository import load_run
from drivers.interfaces import InstrumentError, PowerSample
from drivers.meters.registry import open_power_meter
from drivers.simulators import MeterSimulator, ThermometerSimulator

LIMIT_S = 4.0


@dataclass
class Timeline:
    """When things happened (monotonic s) and what was published, for one run."""

    marks: dict[str, float] = field(default_factory=dict)
    power_published: int = 0
    finished: ev.RunFinished | None = None
    phases: list[ev.PhaseFinished] = field(default_factory=list)
    logs: list[str] = field(default_factory=list)

    def mark(self, name: str) -> None:
        self.marks.setdefault(name, time.monotonic())

    def since(self, start: str, end: str) -> float:
        return self.marks[end] - self.marks[start]


def _run_with_fault(tmp_path: Path, sim: MeterSimulator | ThermometerSimulator,
                    fault: Callable[[Timeline], None], limit_s: float = LIMIT_S,
                    on_fault: Callable[[Timeline, object], None] | None = None):
    """Run the smoke method on the ``sim`` lab reading ``sim`` (the power meter, or the
    thermometer) with the driver's default timeout and back-off; ``fault`` is applied when
    MW1 starts."""
    method = load_method("smoke")
    method = method.model_copy(update={"sampling": SamplingSettings(
        meter_silence_limit_s=limit_s)})
    if isinstance(sim, ThermometerSimulator):
        config = RunConfig(method="smoke", taxonomy="online-2", lab="sim",
                           temperature_meter=InstrumentConfig("daq970a", sim.resource, {}))
    else:
        config = RunConfig(method="smoke", taxonomy="online-2", lab="sim",
                           power_meter=InstrumentConfig("wt300", sim.resource, {}))
    line = Timeline()
    holder: dict[str, object] = {}

    def listen(event: ev.RunEvent) -> None:
        if isinstance(event, ev.PowerSamples) and "fault" not in line.marks:
            line.power_published += len(event.samples)
        if isinstance(event, ev.PhaseStarted) and event.phase.name == "MW1" \
                and "fault" not in line.marks:
            fault(line)
            line.mark("fault")
            if on_fault:
                on_fault(line, holder["session"])
        if isinstance(event, ev.PhaseFinished):
            line.phases.append(event)
        if isinstance(event, ev.LogMessage):
            line.logs.append(event.message)
        if isinstance(event, ev.RunFinished):
            line.mark("finished")
            line.finished = event

    session = open_session(config, db_url=f"sqlite:///{tmp_path / 'runs.db'}",
                           listeners=[listen], method=method)
    holder["session"] = session
    session.run()
    return line, load_run(session.database, session.run_id)


def _abort_after(delay_s: float) -> Callable[[Timeline, object], None]:
    def start(line: Timeline, session) -> None:
        def later() -> None:
            time.sleep(delay_s)
            line.mark("abort")
            session.sequencer.abort("operator pressed Abort")
        threading.Thread(target=later, daemon=True).start()
    return start


@pytest.mark.realtime("the meter's real read timeout and the 4 s silence limit on the real clock")
def test_a_silent_meter_fails_the_phase_at_the_silence_limit_and_keeps_its_samples(
        tmp_path: Path) -> None:
    with MeterSimulator("wt310") as sim:
        line, stored = _run_with_fault(
            tmp_path, sim, lambda _: sim.faults.inject("silent", count=None))
    assert line.finished is not None and line.finished.status is RunStatus.FAILED
    detect = line.since("fault", "finished")
    print(f"silent meter: detected after {detect:.2f} s (limit {LIMIT_S:g} s)")
    # before: 57 s (five failures, each a 2 s read and an 11 s reconnect)
    assert LIMIT_S - 0.5 <= detect <= LIMIT_S + 1.0, detect
    assert "power meter silent for" in line.finished.error
    assert f"(limit [sampling] meter_silence_limit_s = {LIMIT_S:g} s)" in line.finished.error
    assert "did not answer within 2 s" in line.finished.error  # the first error, named
    assert line.phases[-1].status is PhaseStatus.FAILED
    assert line.phases[-1].error == line.finished.error
    assert stored.status is RunStatus.FAILED
    assert line.power_published > 0
    assert len(stored.power.t) >= line.power_published  # nothing before the silence lost
    assert any("sample gap" in m and "did not answer" in m for m in line.logs)


@pytest.mark.realtime("a real 1 s outage of a loopback meter inside a 10 s limit, then the "
                       "run's end")
def test_a_meter_gone_and_back_within_the_limit_leaves_a_gap_and_the_run_completes(
        tmp_path: Path) -> None:
    sim = MeterSimulator("wt310")
    port = sim.start()
    replacement: list[MeterSimulator] = []

    def drop_for_a_second(line: Timeline) -> None:
        sim.stop()  # connection refused, as a meter switched off or unplugged

        def back() -> None:
            time.sleep(1.0)
            line.mark("back")
            replacement.append(MeterSimulator("wt310", port=port))
            replacement[0].start()
        threading.Thread(target=back, daemon=True).start()

    try:
        line, stored = _run_with_fault(tmp_path, sim, drop_for_a_second, limit_s=10.0)
    finally:
        for server in replacement:
            server.stop()
    assert line.finished is not None and line.finished.status is RunStatus.COMPLETED, \
        line.finished
    assert any("power meter: reconnected" in m for m in line.logs), line.logs
    assert any("sample gap" in m and "power meter" in m for m in line.logs)
    assert stored.status is RunStatus.COMPLETED
    print(f"meter back after 1 s: {len(stored.power.t)} samples stored, gaps: "
          + "; ".join(m for m in line.logs if "sample gap" in m and "power" in m))


@pytest.mark.realtime("a closed meter socket, reconnect back-off and the 4 s silence limit "
                       "on the real clock")
def test_a_meter_gone_for_good_fails_at_the_limit(tmp_path: Path) -> None:
    sim = MeterSimulator("wt310")
    sim.start()
    line, stored = _run_with_fault(tmp_path, sim, lambda _: sim.stop())
    assert line.finished is not None and line.finished.status is RunStatus.FAILED
    detect = line.since("fault", "finished")
    print(f"meter gone: detected after {detect:.2f} s (limit {LIMIT_S:g} s)")
    assert LIMIT_S - 0.5 <= detect <= LIMIT_S + 1.0
    assert "power meter silent for" in line.finished.error
    assert len(stored.power.t) >= line.power_published


@pytest.mark.realtime("a silent loopback thermometer and the 4 s silence limit on the real clock")
def test_a_lost_thermometer_fails_at_the_limit_and_keeps_the_power_samples(
        tmp_path: Path) -> None:
    with ThermometerSimulator("daq970a") as sim:
        line, stored = _run_with_fault(
            tmp_path, sim, lambda _: sim.faults.inject("silent", count=None))
    assert line.finished is not None and line.finished.status is RunStatus.FAILED
    detect = line.since("fault", "finished")
    print(f"thermometer silent: detected after {detect:.2f} s (limit {LIMIT_S:g} s)")
    assert LIMIT_S - 1.0 <= detect <= LIMIT_S + 1.0, detect  # its period is 1 s
    assert line.finished.error.startswith("thermometer silent for")
    assert len(stored.power.t) >= line.power_published


@pytest.mark.realtime("an abort inside a real read timeout or reconnect back-off")
@pytest.mark.parametrize("delay_s,during", [(0.8, "the read"), (2.6, "the reconnect")])
def test_abort_while_the_meter_is_silent_stops_within_a_second(
        tmp_path: Path, delay_s: float, during: str) -> None:
    with MeterSimulator("wt310") as sim:
        line, stored = _run_with_fault(
            tmp_path, sim, lambda _: sim.faults.inject("silent", count=None), limit_s=30.0,
            on_fault=_abort_after(delay_s))
    assert line.finished is not None and line.finished.status is RunStatus.ABORTED
    stop = line.since("abort", "finished")
    print(f"abort during {during}: stopped after {stop:.3f} s")
    assert stop < 1.0, f"abort during {during} took {stop:.2f} s"  # before: ~10 s
    assert line.finished.error == "operator pressed Abort"
    assert stored.status is RunStatus.ABORTED
    assert len(stored.power.t) >= line.power_published


def test_the_default_limit_outlasts_one_full_reconnect_and_is_validated() -> None:
    meter = open_power_meter("wt300", "TCPIP::127.0.0.1::1::SOCKET")  # defaults, not opened
    assert meter.reconnect_span_s() == pytest.approx(11.4)  # 2 + 4 × 2 + 0.2 + 0.4 + 0.8
    assert load_method("smoke").sampling.meter_silence_limit_s == DEFAULT_SILENCE_LIMIT_S
    assert DEFAULT_SILENCE_LIMIT_S > meter.reconnect_span_s()
    for bad in (0.0, 0.5, -3.0, float("inf"), float("nan"), 1e9):
        with pytest.raises(ValidationError, match="meter_silence_limit_s"):
            SamplingSettings(meter_silence_limit_s=bad)
    smoke = load_method("smoke")
    data = smoke.model_dump()
    data["sampling"] = {"meter_silence_limit_s": 1.0}  # = the thermometer's 1 s period
    with pytest.raises(ValidationError, match="sampling.meter_silence_limit_s"):
        type(smoke).model_validate(data)


def test_a_long_pause_is_not_counted_as_silence() -> None:
    """A healthy meter, then a new phase attempt after a pause longer than the limit: one
    failed read there is a gap, not a meter silent for the whole pause."""
    from app.sequencer.sampler import MeterSampler

    class OneFailure:
        def __init__(self) -> None:
            self.calls = 0

        def read(self, t: float) -> PowerSample:
            self.calls += 1
            if self.calls == 3:
                raise InstrumentError("one dropped reply")
            return PowerSample(t=t, watts=100.0)

        def reconnect(self):
            raise InstrumentError("still away")

        def interrupt(self) -> None: ...

        def end_waits_after(self, seconds: float | None) -> None: ...

    now = [0.0]
    sampler = MeterSampler(OneFailure(), 1.0, "power meter", 20.0, lambda: now[0])
    assert sampler.poll(0.0) and sampler.poll(1.0)
    now[0] = 3600.0  # an hour's pause, then the phase restarts
    sampler.restart(3600.0)
    assert sampler.poll(3600.0) == []  # the dropped reply: a gap, the run goes on
