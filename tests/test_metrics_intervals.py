"""Phase intervals: power and operations per interval, gaps, the partial tail, EP reasons."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.metrics.efficiency import (efficiency_gaps, periodic_efficiency, stability,
                                    weighted_moving_average)
from app.metrics.errors import (LengthMismatchError, MetricsError, NonFiniteError,
                                NonMonotonicError)
from app.metrics.intervals import (build_intervals, complete_intervals, interval_means,
                                   interval_ops)

MIB = 2**20


def _phase(seconds: int, watts: float = 200.0, iops: float = 1000.0, io_size: int = 8192):
    """1 Hz power samples at t = 0.5, 1.5, … and one-second workload slices ending at 1, 2, …"""
    t = np.arange(seconds) + 0.5
    ends = np.arange(1, seconds + 1, dtype=float)
    return (t, np.full(seconds, watts), None, ends, np.full(seconds, iops),
            np.full(seconds, iops * io_size))


def test_two_full_minutes_of_iops() -> None:
    phase = build_intervals(*_phase(120), 0.0, 120.0, 60.0, "IOPS")
    assert not phase.has_partial and phase.partial_s == 0.0
    assert [(f.start_s, f.end_s) for f in phase.figures] == [(0.0, 60.0), (60.0, 120.0)]
    assert [f.ops_rate for f in phase.figures] == [1000.0, 1000.0]
    assert [f.ep for f in phase.figures] == [5.0, 5.0]  # 1000 IOPS / 200 W
    assert [f.n_power for f in phase.figures] == [60, 60]


def test_sequential_profiles_report_mib_per_second() -> None:
    # 100 IOs of 256 KiB per second = 25 MiB/s; at 250 W that is 0.1 MiB/s/W
    phase = build_intervals(*_phase(60, watts=250.0, iops=100.0, io_size=256 * 1024),
                            0.0, 60.0, 60.0, "MiB/s")
    (fig,) = phase.figures
    assert fig.ops_unit == "MiB/s" and fig.ops_rate == 25.0 and fig.ep == pytest.approx(0.1)


def test_partial_last_interval_is_reported_not_stretched() -> None:
    # 150 s phase: two full minutes, 30 s left out (not scaled up to a minute)
    phase = build_intervals(*_phase(150), 0.0, 150.0, 60.0, "IOPS")
    assert len(phase.figures) == 2 and phase.has_partial
    assert phase.partial_s == pytest.approx(30.0) and phase.partial_power_samples == 30
    assert all(f.ops_rate == 1000.0 for f in phase.figures)


def test_phase_end_a_hair_before_a_boundary_is_not_a_partial_interval() -> None:
    assert complete_intervals(0.0, 1799.9999999, 60.0) == (30, 0.0)
    assert complete_intervals(10.0, 10.0, 60.0) == (0, 0.0)
    with pytest.raises(MetricsError):
        complete_intervals(100.0, 50.0, 60.0)


def test_a_power_gap_stays_a_gap_with_its_reason() -> None:
    t, w, _, ends, ios, nbytes = _phase(180)
    usable = ~((t >= 60) & (t < 120))  # the meter flagged every sample of minute 2
    phase = build_intervals(t, w, usable, ends, ios, nbytes, 0.0, 180.0, 60.0, "IOPS")
    second = phase.figures[1]
    assert math.isnan(second.avg_power_w) and second.n_power == 0 and math.isnan(second.ep)
    assert phase.figures[2].ep == 5.0  # neighbours are not used to fill the gap
    rates = np.array([f.ops_rate for f in phase.figures])
    watts = np.array([f.avg_power_w for f in phase.figures])
    assert efficiency_gaps(rates, watts) == ["", "no usable power sample", ""]


def test_unknown_operations_unit_is_refused() -> None:
    with pytest.raises(MetricsError, match="unknown operations unit"):
        build_intervals(*_phase(60), 0.0, 60.0, 60.0, "MB/s")


def test_efficiency_gaps_name_every_reason() -> None:
    rates = np.array([10.0, 10.0, 10.0, 10.0, np.nan])
    watts = np.array([5.0, 0.0, -3.0, np.nan, 5.0])
    ep = periodic_efficiency(rates, watts)
    assert ep[0] == 2.0 and np.isnan(ep[1:]).all()
    assert efficiency_gaps(rates, watts) == [
        "", "average power 0 W is not positive", "average power -3 W is not positive",
        "no usable power sample", "operations rate nan is not a non-negative number"]
    with pytest.raises(LengthMismatchError):
        periodic_efficiency(np.ones(2), np.ones(3))


def test_slices_belong_to_the_interval_they_close() -> None:
    ios, nbytes = interval_ops(np.array([60.0, 60.5, 119.0, 200.0]), np.array([1.0, 2.0, 4.0, 8.0]),
                               np.array([10.0, 20.0, 40.0, 80.0]), 0, 60, 2)
    assert list(ios) == [1.0, 6.0] and list(nbytes) == [10.0, 60.0]  # 200 s is outside


@pytest.mark.parametrize("args,error", [
    ((np.array([1.0, np.nan]), np.ones(2), np.ones(2)), NonFiniteError),
    ((np.array([2.0, 1.0]), np.ones(2), np.ones(2)), NonMonotonicError),
    ((np.array([1.0, 2.0]), np.array([1.0, np.inf]), np.ones(2)), NonFiniteError),
    ((np.array([1.0, 2.0]), np.array([1.0, -1.0]), np.ones(2)), MetricsError),
    ((np.array([1.0, 2.0]), np.ones(3), np.ones(2)), LengthMismatchError)])
def test_bad_workload_slices(args, error) -> None:
    with pytest.raises(error):
        interval_ops(*args, 0.0, 60.0, 2)


@pytest.mark.parametrize("start,length,count", [(0.0, 0.0, 2), (0.0, -60.0, 2),
                                                (0.0, float("nan"), 2), (float("inf"), 60.0, 2),
                                                (0.0, 60.0, -1)])
def test_bad_interval_grid(start, length, count) -> None:
    with pytest.raises(MetricsError):
        interval_means(np.array([1.0]), np.array([1.0]), None, start, length, count)


def test_nan_time_stamp_is_a_typed_error() -> None:
    with pytest.raises(NonFiniteError):
        interval_means(np.array([0.0, np.nan]), np.ones(2), None, 0.0, 60.0, 1)


def test_all_samples_unusable_gives_nan_not_a_number() -> None:
    means, counts = interval_means(np.array([1.0, 2.0]), np.array([np.nan, np.inf]), None,
                                   0.0, 60.0, 1)
    assert np.isnan(means[0]) and counts[0] == 0


def _wma_by_definition(ep: list[float], weights: list[float]) -> list[float]:
    out = []
    for i in range(len(ep)):
        k = min(i + 1, len(weights))
        num = sum(weights[j] * ep[i - j] for j in range(k))
        out.append(num / sum(weights[:k]))
    return out


@given(st.lists(st.floats(0.1, 1e6), min_size=1, max_size=60),
       st.lists(st.floats(0.5, 20), min_size=1, max_size=12))
@settings(max_examples=80, deadline=None)
def test_wma_matches_its_definition(ep, weights) -> None:
    got = weighted_moving_average(np.array(ep), weights)
    assert np.allclose(got, _wma_by_definition(ep, weights), rtol=1e-9)


@pytest.mark.parametrize("weights", [[], [1, 0], [1, -2], [float("nan")]])
def test_bad_wma_weights(weights) -> None:
    with pytest.raises(MetricsError, match="weights"):
        weighted_moving_average(np.ones(3), weights)


def test_zero_io_phase_is_not_stable_and_says_why() -> None:
    verdict = stability(np.zeros(12), list(range(10, 0, -1)), 5.0, measurement_start=10)
    assert not verdict.stable and "interval 11" in verdict.reason and "no IO" in verdict.reason


def test_stability_before_the_measurement_window_is_not_a_verdict() -> None:
    verdict = stability(np.full(5, 100.0), [10, 9, 8], 5.0, measurement_start=10)
    assert not verdict.stable and "no measurement interval yet" in verdict.reason
    with pytest.raises(MetricsError):
        stability(np.ones(3), [1], 0.0)
