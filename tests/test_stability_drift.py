"""Stability must catch drift (issue 14 item 9, method-notes §4).

Each EP_i is compared with a 10-point WMA that already contains it, so a steady drift lags the
WMA by ~3 intervals and passes the ±5 % test for ever. The project's reading adds a bound on
the drift across the measurement window (``stability.max_drift_pct``): the simulated lab on a
fake clock, with the SUT's power creeping up 1 % per interval while SW runs (its efficiency
falls ~1 % per interval), must end EP_SW INVALID naming the rule and the evidence; the SR
profile of the same run, which does not drift, stays VALID.
"""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np
import pytest

from app.method.loader import load_method
from app.method.model import Method
from app.metrics.efficiency import drift_pct, stability
from app.core.records import PhaseKind, Window
from app.sequencer import events as ev
from drivers.interfaces import PowerSample
from drivers.simulators.direct_meters import SimulatedPowerMeter
from drivers.simulators.sut import SimulatedSut
from tests.support.sequencer_runs import ProfileClock, metrics, run_short_sequence as run
from tests.support.recorded_runs import record_run
from app.storage.repository import load_run
WEIGHTS = (10, 9, 8, 7, 6, 5, 4, 3, 2, 1)


def long_windows(stabilisation: int = 10, measurement: int = 30) -> Method:
    """The demo method with the compliant shape of an active profile (10 + 30 intervals)."""
    demo = load_method("demo")
    plans = tuple(p.model_copy(update={"active": tuple(
        s.model_copy(update={"stabilisation_intervals": stabilisation,
                             "measurement_intervals": measurement}) for s in p.active)})
        for p in demo.plans)
    return demo.model_copy(update={"plans": plans})


class DriftingPowerMeter(SimulatedPowerMeter):
    """The SUT's power creeps up ``pct_per_interval`` % per interval while ``profile`` runs,
    so its efficiency falls steadily (a warming enclosure, a fan curve)."""

    def __init__(self, sut: SimulatedSut, profile: str, pct_per_interval: float,
                 interval_s: float) -> None:
        super().__init__(sut)
        self.since, self.rate, self.interval_s = ProfileClock(sut, profile), pct_per_interval, \
            interval_s

    def read(self, t: float) -> PowerSample:
        sample = super().read(t)
        since = self.since(t)
        if since is None:
            return sample
        return replace(sample, watts=sample.watts * (1 + self.rate / 100 * since / self.interval_s))


def test_a_one_percent_per_interval_drift_passes_the_wma_test_alone() -> None:
    """The defect: the WMA test alone calls this drift stable."""
    ep = 100 / (1 + 0.01 * np.arange(40))
    assert stability(ep, WEIGHTS, 5.0, measurement_start=10).stable
    verdict = stability(ep, WEIGHTS, 5.0, measurement_start=10, max_drift_pct=5.0)
    assert not verdict.stable
    assert re.search(r"EP drifted -2\d\.\d % across the measurement window \(30 intervals",
                     verdict.reason)


def test_drift_is_the_least_squares_change_in_percent_of_the_mean() -> None:
    assert drift_pct(np.array([10.0, 10.5, 11.0])) == pytest.approx(100 * 1.0 / 10.5)
    assert drift_pct(np.array([5.0])) == 0.0
    noisy_flat = 100 + np.array([0, 3, -3, 0, 3, -3, 0, 3, -3, 0.0])
    assert abs(drift_pct(noisy_flat)) < 5.0  # noise is not drift


def test_a_drifting_sut_makes_the_profile_invalid_naming_the_drift_and_its_evidence() -> None:
    method = long_windows()
    seq, _ = run(method, power=lambda sut: DriftingPowerMeter(sut, "SW", 1.0,
                                                               method.interval_s))
    sw, sr = metrics(seq)["EP_SW"], metrics(seq)["EP_SR"]
    assert not sw.valid
    found = re.search(r"not stable: EP drifted (-\d+\.\d) % across the measurement window "
                      r"\(30 intervals, least-squares line; limit ±5 %, "
                      r"stability.max_drift_pct\)", sw.reason)
    assert found, sw.reason
    assert -30 < float(found.group(1)) < -20
    assert sr.valid, sr.reason


def test_a_stable_run_with_compliant_windows_stays_valid() -> None:
    seq, _ = run(long_windows())
    bad = [(m.name, m.reason) for m in seq.metrics if not m.valid]
    assert not bad, bad


# --- stabilisation extends until the WMA criterion holds (method-notes §4) ---------------------

class SettlingPowerMeter(SimulatedPowerMeter):
    """Power 20 % high for the first two intervals of ``profile`` (a cold enclosure's fans):
    the WMA criterion then fails at the end of intervals 2, 3 and 4 and holds from interval 5
    (weights 10…1, ±5 %), so a 3-interval stabilisation needs exactly 3 more."""

    def __init__(self, inner: SimulatedPowerMeter, profile: str, interval_s: float) -> None:
        super().__init__(inner.sut)
        self.since, self.interval_s = ProfileClock(inner.sut, profile), interval_s

    def read(self, t: float) -> PowerSample:
        sample = super().read(t)
        since = self.since(t)
        if since is None or since >= 2 * self.interval_s:
            return sample
        return replace(sample, watts=sample.watts * 1.2)


def test_a_settling_profile_gets_three_more_stabilisation_intervals_and_is_valid(
        tmp_path) -> None:
    demo = load_method("demo")
    events: list[ev.RunEvent] = []
    recorded = record_run(tmp_path / "run.db",
                          meter=lambda power: SettlingPowerMeter(power, "SW", demo.interval_s),
                          hook=lambda _seq, event: events.append(event))
    run = load_run(recorded.database, recorded.run_id)
    sw_phase = next(p for p in run.phases if p.info.profile == "SW")
    attempt = run.last_attempt(sw_phase.index)
    planned = sw_phase.info.stabilisation_intervals
    assert planned == 3
    # the stored window starts 3 intervals later than planned and keeps its 10 intervals
    assert attempt.window_start_s == pytest.approx(attempt.t_start + 6 * demo.interval_s)
    assert attempt.window_end_s - attempt.window_start_s == pytest.approx(10 * demo.interval_s)
    sw = {m.name: m for m in run.metrics}["EP_SW"]
    assert sw.valid, sw.reason
    assert sw.run_length_s == pytest.approx(10 * demo.interval_s)
    # every stored tag of the phase follows the recorded window, samples of the extension too
    p = run.power
    extension = 0
    for i in range(len(p)):
        if p.phase_index[i] != sw_phase.index:
            continue
        inside = attempt.window_start_s <= p.t[i] < attempt.window_end_s
        assert (p.window[i] == Window.MEASUREMENT) == inside, p.t[i]
        extension += (attempt.t_start + planned * demo.interval_s <= p.t[i]
                      < attempt.window_start_s)
    assert extension >= 3 * demo.interval_s / demo.sample_period_s - 1
    intervals = list(run.attempt_intervals(sw_phase.index))
    assert len(intervals) == 16 and [r.in_measurement for r in intervals].count(True) == 10
    extended = [e for e in events if isinstance(e, ev.StabilisationExtended)]
    assert [e.stabilisation_intervals for e in extended] == [4, 5, 6]


def test_stabilisation_never_extends_beyond_the_method_limit() -> None:
    method = load_method("demo")
    method = method.model_copy(update={"stability": method.stability.model_copy(
        update={"max_stabilisation_intervals": 4})})
    seq, events = run(method, power=lambda sut: SettlingPowerMeter(SimulatedPowerMeter(sut),
                                                                   "SW", method.interval_s))
    extended = [e for e in events if isinstance(e, ev.StabilisationExtended)
                and e.phase_index == next(p.index for p in seq.phases
                                          if p.profile == "SW" and p.kind is PhaseKind.ACTIVE)]
    assert [e.stabilisation_intervals for e in extended] == [4]
    sw = metrics(seq)["EP_SW"]
    assert not sw.valid and "deviates" in sw.reason  # the window started before it settled


def test_conditioning_shows_its_stability() -> None:
    seq, events = run("demo")
    conditioning = next(p.index for p in seq.phases if p.kind is PhaseKind.CONDITIONING)
    intervals = [e.interval for e in events if isinstance(e, ev.IntervalClosed)
                 and e.interval.phase_index == conditioning]
    assert intervals and all(r.ep > 0 and r.wma > 0 and r.stable is not None for r in intervals)


def test_the_review_page_shows_the_planned_and_the_latest_end() -> None:
    from app.core.records import RunConfig
    from ui.wizard.review_page import plan_rows

    rows, total_s, latest_s, _ = plan_rows(RunConfig(method="demo", taxonomy="removable-1"))
    sw = next(r for r in rows if r[0] == "SW")
    # 3 + 10 planned intervals of 1 s; stabilisation may grow to 30: 27 s more at most
    assert sw[2] == "13 s (latest 40 s)"
    assert latest_s == total_s + 2 * 27.0
