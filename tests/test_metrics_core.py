"""The measurement core against the seed's numbers, hand computations and real fio output."""

from __future__ import annotations

import math

import numpy as np
import pytest

from app.metrics.efficiency import (active_metric, periodic_efficiency, ready_idle_metric,
                                    stability, weighted_moving_average)
from app.metrics.errors import (EmptySamplesError, LengthMismatchError, MetricsError,
                                NonFiniteError, NonPositivePowerError)
from app.metrics.formatting import format_figure
from app.metrics.steady_state import steady_state

WEIGHTS = (10, 9, 8, 7, 6, 5, 4, 3, 2, 1)


# --- seed numbers (method-notes §4) ------------------------------------------------------------

def test_ready_idle_metric_of_the_seed_sample_report() -> None:
    value = ready_idle_metric(7_300_000_000_000, 592.692)
    assert value == pytest.approx(12.317, abs=5e-4)
    assert format_figure(value) == "12.317"


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
    with pytest.raises(LengthMismatchError):
        periodic_efficiency(np.ones(2), np.ones(3))


def test_empty_inputs() -> None:
    with pytest.raises(EmptySamplesError):
        stability(np.array([]), WEIGHTS, 5.0)
    with pytest.raises(EmptySamplesError):
        steady_state([])


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


def test_negative_values_keep_the_report_digits() -> None:
    assert format_figure(-12.317) == "-12.317" and format_figure(-0.001234) == "-0.00123"
