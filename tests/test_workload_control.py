"""Meter polling never waits for workload control (issue 27): an engine whose start and stop
block (fio with load hosts: ~1.5 s each) is started and stopped beside the sampling loop."""

from __future__ import annotations

import statistics
import threading
import time

import pytest

from app.method.loader import load_method
from app.core.records import RunConfig, SutDescription
from app.sequencer import events as ev
from app.sequencer.sampler import MeterSampler
from app.sequencer.workload_control import WorkloadControl
from app.station.session import open_session
from drivers.clock import FakeClock
from drivers.interfaces import WorkloadError, WorkloadProfile

PROFILE = WorkloadProfile("RR", 4096, 100, True, 4096, duration_s=1.0)
#: how long a blocked call waits for the samples it expects before giving up
PATIENCE_S = 2.0


class _Blocking:
    """An engine whose start and stop wait for the test to release them."""

    def __init__(self, fail_start: bool = False) -> None:
        self.release = threading.Event()
        self.calls: list[str] = []
        self.fail_start = fail_start

    def control_blocks(self) -> bool:
        return True

    def start(self, profile: WorkloadProfile) -> None:
        self.release.wait(PATIENCE_S)
        self.calls.append("start")
        if self.fail_start:
            raise WorkloadError("fio rejected the job file")

    def stop(self):
        self.calls.append("stop")
        return "stopped"


def test_a_blocking_start_runs_beside_the_caller_and_the_stop_after_it() -> None:
    engine, wake = _Blocking(), threading.Event()
    control = WorkloadControl(engine, wake)
    control.start(PROFILE)
    assert not control.started  # the caller goes on sampling meanwhile
    stopping = control.stop()
    assert not stopping.done() and engine.calls == []
    engine.release.set()
    assert stopping.result(PATIENCE_S) == "stopped" and engine.calls == ["start", "stop"]
    assert control.started and wake.is_set()


def test_a_failed_start_is_raised_to_the_caller_and_nothing_is_stopped() -> None:
    engine = _Blocking(fail_start=True)
    engine.release.set()
    control = WorkloadControl(engine, threading.Event())
    control.start(PROFILE)
    stopping = control.stop()
    assert stopping.result(PATIENCE_S) is None and engine.calls == ["start"]
    with pytest.raises(WorkloadError, match="rejected"):
        assert control.started


def test_an_engine_that_does_not_block_is_called_inline() -> None:
    calls: list[str] = []

    class Inline:
        def start(self, profile):
            calls.append("start")

        def stop(self):
            calls.append("stop")
            return "stopped"

    control = WorkloadControl(Inline(), threading.Event())
    control.start(PROFILE)
    assert calls == ["start"] and control.started
    assert control.stop().result(0) == "stopped"


def test_the_meters_are_polled_while_the_engine_starts_and_stops(tmp_path) -> None:
    """Each engine start and stop waits until the sequencer has published three more power
    samples: a sequencer that waited for them would publish none, and the call give up."""
    published = threading.Semaphore(0)
    waited: list[bool] = []

    def listener(event) -> None:
        if isinstance(event, ev.PowerSamples):
            for _ in event.samples:
                published.release()

    def three_samples() -> bool:
        return all(published.acquire(timeout=PATIENCE_S) for _ in range(3))

    method = load_method("smoke")
    plans = tuple(p.model_copy(update={"prefill": False, "active": p.active[:1]})
                  for p in method.plans)
    config = RunConfig(method="smoke", lab="sim-direct", sut=SutDescription())
    session = open_session(config, db_url=f"sqlite:///{tmp_path}/runs.db", clock=FakeClock(),
                           method=method.model_copy(update={"plans": plans}),
                           listeners=[listener])
    engine = session.lab.engine
    start, stop = engine.start, engine.stop

    def slow_start(profile):
        while published.acquire(blocking=False):
            pass  # count only the samples taken while this start runs
        waited.append(three_samples())
        start(profile)

    def slow_stop():
        while published.acquire(blocking=False):
            pass
        waited.append(three_samples())
        return stop()

    engine.control_blocks = lambda: True
    engine.start, engine.stop = slow_start, slow_stop
    session.sequencer.run()
    session.writer.close()
    session.database.close()
    assert waited and all(waited), f"samples during each start and stop: {waited}"


@pytest.mark.realtime("a poll's lateness is real time: the generator check blocks 1 s")
def test_the_meters_stay_on_their_grid_during_a_generator_check(tmp_path, monkeypatch) -> None:
    """The load generator's null-engine check (seconds of fio) runs on a helper thread; the
    sequencer used to wait 50 ms for it before every sample, so each poll of a check came
    50 ms late. Now the helper's end wakes the loop and the polls keep their grid."""
    lateness: list = []  # seconds, then "checked" when the timed check ended
    poll = MeterSampler.poll

    def timed_poll(sampler, now):
        if now >= sampler.next_due and sampler.name == "power meter":
            lateness.append(now - sampler.next_due)
        return poll(sampler, now)

    monkeypatch.setattr(MeterSampler, "poll", timed_poll)
    method = load_method("smoke")
    config = RunConfig(method="smoke", lab="sim-direct", sut=SutDescription())
    session = open_session(config, db_url=f"sqlite:///{tmp_path}/runs.db", method=method)
    engine = session.lab.engine
    ceiling = engine.generator_ceiling

    def slow_check(profile, step):
        if "checked" not in lateness:
            lateness.clear()  # only the polls taken while the first check runs
            time.sleep(1.0)
            lateness.append("checked")
            session.sequencer.abort("enough: one check timed")
        return ceiling(profile, step)

    engine.control_blocks = lambda: True
    engine.generator_ceiling = slow_check
    session.sequencer.run()
    session.writer.close()
    session.database.close()
    timed = lateness[:lateness.index("checked")]
    assert len(timed) >= 3, lateness
    assert statistics.median(timed) < 0.02, f"poll lateness (s): {timed}"
