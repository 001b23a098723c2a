"""The measurement core against the seed's numbers, hand computations and real fio output."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.metrics.efficiency import (active_metric, periodic_efficiency, ready_idle_metric,
                                    stability, weighted_moving_average)
from app.metrics.errors import (EmptySamplesError, LengthMismatchError, MetricsError,
                                NonFiniteError, NonMonotonicError, NonPositivePowerError,
                                UnitMixError)
from app.metrics.formatting import (bytes_to_gb, bytes_to_gib, format_capacity, format_quantity,
                                    format_figure)
from app.metrics.intervals import interval_means
from app.metrics.steady_state import steady_state

WEIGHTS = (10, 9, 8, 7, 6, 5, 4, 3, 2, 1)


# --- seed numbers (method-notes §4) ------------------------------------------------------------

def test_ready_idle_metric_of_the_seed_sample_report() -> None:
    value = ready_idle_metric(7_300_000_000_000, 592.692)
    assert value == pytest.approx(12.317, abs=5e-4)
    assert format_figure(value) == "12.317"


def test_units_never_mix_gb_and_gib() -> None:
    assert format_capacity(7_300_000_000_000, "GB") == "7300.000 GB"
    assert format_capacity(2**30, "GiB") == "1.000 GiB"
    with pytest.raises(ValueError):
        format_quantity(1.0, "GB/GiB")
    with pytest.raises(ValueError):
        format_capacity(1, "gigs")


# --- stability, by hand ----------------------------------------------------------------------

def test_wma_uses_the_leading_weights_for_early_intervals() -> None:
    ep = np.array([10.0, 12.0, 11.0])
    # i=0: 10; i=1: (10·12 + 9·10)/19 = 210/19; i=2: (10·11 + 9·12 + 8·10)/27 = 298/27
    assert weighted_moving_average(ep, WEIGHTS) == pytest.approx([10.0, 210 / 19, 298 / 27])


def test_a_hand_computed_stable_phase() -> None:
    # 10 stabilisation-free intervals alternating 100 and 102: the WMA at interval 10 is
    # (10·102 + 9·100 + 8·102 + 7·100 + 6·102 + 5·100 + 4·102 + 3·100 + 2·102 + 1·100)/55
    # = (102·30 + 100·25)/55 = 5560/55 = 101.0909…; every EP stays within ±5 % of its WMA.
    ep = np.array([100.0, 102.0] * 5)
    verdict = stability(ep, WEIGHTS, 5.0)
    assert verdict.stable and verdict.reason == ""
    assert verdict.wma[-1] == pytest.approx(5560 / 55)
    assert np.max(np.abs(verdict.deviation_pct)) < 2.0


def test_a_hand_computed_unstable_phase() -> None:
    # 9 intervals at 100 then one at 110: WMA_10 = (10·110 + 45·100)/55 = 5600/55 = 101.818…
    # deviation = (110 − 101.818)/101.818 = +8.04 % > 5 %: not stable, interval 10 named.
    ep = np.array([100.0] * 9 + [110.0])
    verdict = stability(ep, WEIGHTS, 5.0)
    assert not verdict.stable and verdict.worst_index == 9
    assert verdict.deviation_pct[9] == pytest.approx((110 - 5600 / 55) / (5600 / 55) * 100)
    assert "interval 10 deviates +8.0 %" in verdict.reason


def test_stabilisation_intervals_do_not_count_but_feed_the_wma() -> None:
    ep = np.array([50.0, 100.0, 100.0, 100.0])
    assert not stability(ep, WEIGHTS, 5.0, measurement_start=0).stable
    late = stability(ep, WEIGHTS, 5.0, measurement_start=3)
    # WMA_3 = (10·100 + 9·100 + 8·100 + 7·50)/34 = 3050/34 = 89.71 → EP 100 is +11.5 %
    assert not late.stable and late.wma[3] == pytest.approx(3050 / 34)
    assert "interval 4 deviates +11.5 %" in late.reason


def test_a_missing_efficiency_in_the_measurement_window_is_not_stable() -> None:
    verdict = stability(np.array([100.0, np.nan, 100.0]), WEIGHTS, 5.0)
    assert not verdict.stable and "no efficiency" in verdict.reason


# --- active metric and bad input -------------------------------------------------------------

def test_active_metric_is_rate_over_power() -> None:
    assert active_metric(1_800_000, 1800, 100.0) == pytest.approx(10.0)


@pytest.mark.parametrize("ops,dur,watts,error", [
    (100, 60, 0.0, NonPositivePowerError), (100, 60, -5.0, NonPositivePowerError),
    (100, 60, float("nan"), NonFiniteError), (float("inf"), 60, 100, NonFiniteError),
    (100, 0, 100, MetricsError)])
def test_bad_inputs_raise_typed_errors(ops, dur, watts, error) -> None:
    with pytest.raises(error):
        active_metric(ops, dur, watts)


def test_periodic_efficiency_is_nan_not_a_number_for_bad_power() -> None:
    ep = periodic_efficiency(np.array([10.0, 10.0, 10.0]), np.array([5.0, 0.0, np.nan]))
    assert ep[0] == 2.0 and math.isnan(ep[1]) and math.isnan(ep[2])


def test_interval_means_skip_unusable_and_nonfinite_samples_and_show_gaps() -> None:
    t = np.array([0.0, 0.5, 1.0, 1.5, 3.5])
    w = np.array([100.0, np.inf, 102.0, 104.0, 99.0])
    usable = np.array([True, True, True, False, True])
    means, counts = interval_means(t, w, usable, 0.0, 1.0, 4)
    assert means[0] == 100.0 and means[1] == 102.0 and math.isnan(means[2]) and means[3] == 99
    assert list(counts) == [1, 1, 0, 1]


@pytest.mark.parametrize("t,w,error", [
    (np.array([1.0, 0.5]), np.array([1.0, 1.0]), NonMonotonicError),
    (np.array([0.0, 1.0]), np.array([1.0]), LengthMismatchError)])
def test_interval_means_reject_bad_input(t, w, error) -> None:
    with pytest.raises(error):
        interval_means(t, w, None, 0.0, 1.0, 2)


def test_empty_inputs() -> None:
    means, counts = interval_means(np.array([]), np.array([]), None, 0.0, 60.0, 2)
    assert np.isnan(means).all() and not counts.any()
    with pytest.raises(EmptySamplesError):
        stability(np.array([]), WEIGHTS, 5.0)
    with pytest.raises(EmptySamplesError):
        steady_state([])


# --- interval averages: ordering is the caller's concern ------------------------------------

@given(st.lists(st.tuples(st.floats(0, 600, allow_nan=False), st.floats(1, 2000)),
                min_size=1, max_size=200), st.randoms())
@settings(max_examples=60, deadline=None)
def test_interval_averages_do_not_depend_on_sample_order(samples, rnd) -> None:
    shuffled = list(samples)
    rnd.shuffle(shuffled)
    t, w = map(np.array, zip(*shuffled))
    order = np.argsort(t, kind="stable")  # sorting by time is the caller's job
    means, counts = interval_means(t[order], w[order], None, 0.0, 60.0, 10)
    # reference by definition, from the unsorted samples: mean of the values in [60i, 60i+60)
    for i in range(10):
        inside = [v for tv, v in samples if 60 * i <= tv < 60 * (i + 1)]
        assert counts[i] == len(inside)
        if inside:
            assert means[i] == pytest.approx(sum(inside) / len(inside), rel=1e-12)
        else:
            assert math.isnan(means[i])
    if np.any(np.diff(t) < 0):
        with pytest.raises(NonMonotonicError):
            interval_means(t, w, None, 0.0, 60.0, 10)


# --- PTS steady state (method-notes §5) --------------------------------------------------------

def test_pts_steady_state_window() -> None:
    # rounds 3–7 (900, 1010, 1005, 995, 1002): average 982.4, range 110 = 11.2 % ≤ 20 %,
    # least-squares slope × 4 rounds = 7.7 % ≤ 10 % → steady at round index 6
    steady = steady_state([1000, 1400, 900, 1010, 1005, 995, 1002, 998])
    assert steady.steady and steady.round_index == 6
    assert steady.range_pct == pytest.approx(110 / 982.4 * 100)
    drifting = steady_state([1000 + 60 * i for i in range(25)])
    assert not drifting.steady and drifting.gave_up and "25 rounds" in drifting.reason


def test_pts_steady_state_bad_rounds_and_parameters() -> None:
    with pytest.raises(NonFiniteError, match="round 2"):
        steady_state([1000, float("nan"), 1000, 1000, 1000])
    with pytest.raises(MetricsError):
        steady_state([1000] * 5, window=1)
    with pytest.raises(MetricsError):
        steady_state([1000] * 5, max_range_pct=0)
    early = steady_state([1000, 1500, 700])
    assert not early.steady and not early.gave_up and "in 3 rounds so far" in early.reason


def test_pts_steady_state_gives_up_at_the_configured_round() -> None:
    # steady only from round 8 on; with max_rounds=6 the tool must give up first
    rounds = [100, 300, 100, 300, 100, 300, 100, 100, 100, 100, 100, 100]
    assert steady_state(rounds).round_index == 10
    verdict = steady_state(rounds, max_rounds=6)
    assert not verdict.steady and verdict.gave_up and "within 6 rounds" in verdict.reason


@pytest.mark.parametrize("capacity", [0, -1, 1.5, float("nan"), True, "7300.000 GB"])
def test_ready_idle_metric_refuses_a_bad_capacity(capacity) -> None:
    with pytest.raises(MetricsError, match="capacity"):
        ready_idle_metric(capacity, 592.692)


def test_ready_idle_metric_refuses_bad_power() -> None:
    with pytest.raises(NonPositivePowerError):
        ready_idle_metric(7_300_000_000_000, 0.0)
    with pytest.raises(NonFiniteError):
        ready_idle_metric(7_300_000_000_000, float("nan"))
    assert ready_idle_metric(7.3e12, 592.692) == pytest.approx(12.317, abs=5e-4)


@pytest.mark.parametrize("unit", ["GB/GiB", "TB/GiB", "MiB/s per MB", "MB·MiB"])
def test_mixed_unit_families_are_refused(unit: str) -> None:
    with pytest.raises(UnitMixError):
        format_quantity(1.0, unit)


def test_single_family_units_format_with_three_digits() -> None:
    assert format_quantity(12.317, "GB/W") == "12.317 GB/W"
    assert format_quantity(3.0149, "MiB/s/W") == "3.015 MiB/s/W"
    assert format_quantity(592.692, "W") == "592.692 W"
    assert format_quantity(-12.317, "GB/W") == "-12.317 GB/W"
    assert bytes_to_gb(7_300_000_000_000) == 7300.0 and bytes_to_gib(2**31) == 2.0
