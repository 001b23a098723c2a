"""Maximum power defined by its window (issue 42; method-notes §10): the highest 1 s window
average and the highest phase average, each naming its window and sampling period, beside the
highest single reading, kept and labelled as such."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from app.metrics.max_power import (MaximumPower, PeakSample, PhaseAverage, WindowPeak,
                                   maximum_power, readings_per_window, sampling_period)
from app.core.records import PowerSupplies, RunConfig, SutDescription
from app.reports.content import build_content
from app.station.session import open_session
from drivers.clock import FakeClock
from drivers.interfaces import WorkloadProfile
from drivers.simulators.sut import SimulatedSut
from app.storage.repository import load_run


def test_each_maximum_over_its_own_window() -> None:
    t = np.arange(1.0, 9.0) * 0.5  # 0.5 s readings: a 1 s window is two of them
    watts = np.array([500.0, 900.0, 610.0, 650.0, np.nan, 700.0, 720.0, 100.0])
    usable = np.array([True, False, True, True, False, True, True, True])  # 900 W was flagged
    phase = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    m = maximum_power(t, watts, usable, phase, {0: "MW1", 1: "Ready idle"})
    assert (m.period_s, m.readings_per_window) == (0.5, 2)
    assert m.single == PeakSample("overall", 720.0, 3.5)
    assert m.single_per_phase == (PeakSample("MW1", 650.0, 2.0), PeakSample("Ready idle",
                                                                            720.0, 3.5))
    # a window never takes a flagged reading (500+900) and never crosses a phase (650+700)
    assert m.window_per_phase == (WindowPeak("MW1", 630.0, 1.5, 2.0, 2),
                                  WindowPeak("Ready idle", 710.0, 3.0, 3.5, 2))
    assert m.window == WindowPeak("overall", 710.0, 3.0, 3.5, 2)
    assert m.phase_averages == (PhaseAverage("MW1", 1760.0 / 3, 3, 0.5, 2.0),
                                PhaseAverage("Ready idle", 1520.0 / 3, 3, 3.0, 4.0))
    assert m.phase_average == m.phase_averages[0]
    assert m.window_label == "1 s window (2 readings of 0.5 s)"


def test_a_gap_breaks_a_window_and_a_long_period_names_itself() -> None:
    t = np.array([0.5, 1.0, 5.0, 5.5])  # 4 s without a reading between the 2nd and 3rd
    watts = np.array([100.0, 100.0, 900.0, 100.0])
    m = maximum_power(t, watts, np.ones(4, bool), np.zeros(4, int), {0: "SR"})
    assert m.window is not None and m.window.watts == 500.0  # 1.0 → 5.0 is no window
    assert readings_per_window(1.0, 5.0) == 1
    slow = maximum_power(t * 10, watts, np.ones(4, bool), np.zeros(4, int), {0: "SR"})
    assert slow.window_label.startswith("one reading of 5 s (the sampling period is longer")
    empty = maximum_power(t, watts, np.zeros(4, bool), np.zeros(4, int), {})
    assert (empty.single, empty.window, empty.phase_average) == (None, None, None)
    assert np.isnan(sampling_period(np.array([1.0])))


def _meter_readings(power: np.ndarray, base_s: float, period_s: float) -> tuple[np.ndarray,
                                                                                 np.ndarray]:
    """What an analyzer updating every ``period_s`` reports of the SUT's power drawn every
    ``base_s``: each reading the average over its update period (as a WT300-class meter's
    normal mode does), stamped at the period's end."""
    k = round(period_s / base_s)
    blocks = power[: len(power) // k * k].reshape(-1, k).mean(axis=1)
    return np.arange(1, len(blocks) + 1) * period_s, blocks


@pytest.fixture(scope="module")
def loaded_phase() -> np.ndarray:
    """40 minutes of the simulated SUT's input power under MW1, drawn every 10 ms (its
    ±0.3 % ripple is what a fast meter resolves and a slow one averages away)."""
    sut = SimulatedSut(seed=42)
    sut.apply(WorkloadProfile("MW1", 8192, 70, True, 8192))
    return np.array([sut.power_w() for _ in range(240_000)])


def _maxima(power: np.ndarray, period_s: float) -> MaximumPower:
    t, watts = _meter_readings(power, 0.01, period_s)
    return maximum_power(t, watts, np.ones(len(t), bool), np.zeros(len(t), int), {0: "MW1"})


def test_the_windowed_figures_do_not_move_with_the_sampling_rate(loaded_phase) -> None:
    """On the simulator, from a 1 s to a 50 ms update period: the highest single reading
    climbs over the phase's mean as the period shortens (the definition issue 24 printed),
    while the highest 1 s window average and the highest phase average stay put."""
    mean = float(loaded_phase.mean())
    fast = {p: _maxima(loaded_phase, p) for p in (0.05, 0.1, 0.2, 0.5, 1.0)}
    over = {p: (m.single.watts / mean - 1) * 100 for p, m in fast.items()}
    windowed = {p: (m.window.watts / mean - 1) * 100 for p, m in fast.items()}
    assert over[0.05] > 2.5 * over[1.0]  # the single reading moves with the rate …
    assert max(windowed.values()) - min(windowed.values()) < 0.03  # … the 1 s window does not
    assert all(m.effective_window_s == pytest.approx(1.0) for m in fast.values())
    averages = [m.phase_average.watts for m in fast.values()]
    assert max(averages) - min(averages) < 1e-9 * mean
    slow = _maxima(loaded_phase, 5.0)  # a 5 s meter cannot resolve 1 s: it says so
    assert slow.effective_window_s == 5.0 and "longer than the 1 s window" in slow.window_label


def test_the_report_prints_each_figure_with_its_window(tmp_path) -> None:
    sut = replace(SutDescription(), power_supplies=PowerSupplies(2, "1+1", 1600.0))
    session = open_session(RunConfig(method="smoke", lab="sim-direct", sut=sut),
                           db_url=f"sqlite:///{tmp_path}/runs.db", clock=FakeClock())
    session.sequencer.run()
    session.writer.close()
    run = load_run(session.database, session.sequencer.run_id)
    content = build_content(run)
    power = run.power
    ok = power.usable & np.isfinite(power.watts)
    assert content.max_power is run.max_power  # computed once, in the record
    assert content.max_power.single.watts == float(power.watts[ok].max())
    assert content.max_power.window.watts <= content.max_power.single.watts
    assert content.peak_line.endswith("; supplies 2 × 1600 W nameplate (1+1) = 3200 W")
    labels = [label for label, _ in content.max_power_rows]
    assert labels[:3] == ["Highest 1 s window average", "Highest phase average",
                          "Highest single reading"]
    assert " window (" in content.peak_line and "of " in content.peak_line
    assert {p.where for p in content.max_power.window_per_phase} <= {p.info.name
                                                                     for p in run.phases}
