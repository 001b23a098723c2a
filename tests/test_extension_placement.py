"""Samples held while a stabilisation's end is undecided count in the interval they are placed
in once it is decided (app/sequencer/recorder.py, ``release_held``).

On a loaded test machine fio's status came late, so the last stabilisation interval closed
seconds after its end (the recorder waits for the workload, ``close_due``'s hold); meanwhile
samples arrived for a time past the planned phase (no interval then). The stabilisation was
extended, the held samples were stored in the extension interval — but the interval's own
average still left them out: the standalone verifier counted 5 samples where the station's
figure used 3 (MW2 interval 4 of a real-fio smoke run).
"""

from __future__ import annotations

import pytest

from app.method.loader import load_method
from app.core.records import PhaseInfo, PhaseKind, SutDescription
from app.sequencer.conformance import SiteRules
from app.sequencer.recorder import PhaseRecorder
from drivers.interfaces import PowerSample, WorkloadInterval

PERIOD_S = 0.2  # the smoke method's sample period: 5 samples a 1 s interval


def test_samples_held_past_the_planned_end_count_in_the_extension_interval() -> None:
    smoke = load_method("smoke")  # 1 s intervals; a ±25 % WMA criterion, so one extension
    method = smoke.model_copy(update={"stability": smoke.stability.model_copy(
        update={"tolerance_pct": 25.0})})
    phase = PhaseInfo(0, PhaseKind.ACTIVE, "MW2", "MW2", 4.0, 2, 2)  # 2 + 2 intervals
    rec = PhaseRecorder(phase, method, SiteRules.declared(method, SutDescription()), 0.0, 1,
                        "IOPS", live=True)
    # the meters ran on: 5 s of samples before the stabilisation's last interval could close
    samples = [PowerSample(t=round(k * PERIOD_S, 9), watts=200.0 + 10 * (k * PERIOD_S >= 4.0))
               for k in range(25)]
    rec.add_power(samples)
    # interval 1 moved IO in its second half only: 32 % off the WMA, so the stabilisation
    # extends by one interval; interval 2 is 20 % off, which ends it
    rec.add_workload([WorkloadInterval(t, t + 1.0, 1000, 0, 0, 0, 1.0, 1.0)
                      for t in (0.0, 2.0, 3.0, 4.0)]
                     + [WorkloadInterval(1.5, 2.0, 500, 0, 0, 0, 1.0, 1.0)])
    assert [i.index for i in rec.close_due(now=2.0, latency_s=0.0)] == [0, 1]
    assert rec.planned_intervals == 5  # one interval more
    assert rec.release_held() == (((), ()), ((), ()))  # its end is not decided yet
    assert [i.index for i in rec.close_due(now=3.0, latency_s=0.0)] == [2]
    assert rec.planned_intervals == 5 and not rec.may_extend
    (power, placements), _ = rec.release_held()
    assert [p.interval for p in placements].count(4) == 5  # stored in the extension interval
    extension = rec.close_due(now=5.0, latency_s=0.0)[-1]
    assert extension.index == 4
    assert extension.n_power_samples == 5  # its own average counts what is stored with it
    assert extension.avg_power_w == pytest.approx(210.0)
