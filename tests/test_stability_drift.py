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
from drivers.interfaces import PowerSample
from drivers.sim.meters import SimulatedPowerMeter
from drivers.sim.sut import SimulatedSut
from tests.test_conformance import ProfileClock, metrics, run

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
