"""The run view's per-input power and uncertainty plots (issue 16, items 1 and 3): each input's
watts beside the total, each input's per-sample uncertainty against the 1 % limit, and a
warning naming an input on low current. Asserted on curve data, never on pixels."""

from __future__ import annotations

import math

import pytest

pytest.importorskip("pytestqt")

from app.sequencer import events as ev
from app.sequencer.power_inputs import sum_inputs
from app.storage.synthetic import outside
from app.storage.repository import load_run
from drivers.interfaces import FLAG_LOW_CURRENT, PowerSample
from ui.plots.input_plots import ONE_METER, TOTAL
from ui.plots.live import LivePlots


def _total(t: float, b_amps: float = 0.9) -> PowerSample:
    low = frozenset({FLAG_LOW_CURRENT}) if b_amps < 0.2 else frozenset()
    return sum_inputs(t, [PowerSample(t, 300.0, amps=1.3, uncertainty_pct=0.2, input="psu-a"),
                          PowerSample(t, 40.0, amps=b_amps, uncertainty_pct=1.4, flags=low,
                                      input="psu-b")], 0.5)


def test_each_input_and_the_total_get_a_power_and_an_uncertainty_curve(qtbot) -> None:
    plots = LivePlots(redraw_ms=10_000)
    qtbot.addWidget(plots)
    samples = tuple(_total(float(t)) for t in range(5))
    plots.ingest([ev.PowerSamples(0, samples, outside(len(samples)))])
    plots.redraw()
    inputs = plots.inputs
    assert list(inputs.curve_data("power", "psu-a")[1]) == [300.0] * 5
    assert list(inputs.curve_data("power", "psu-b")[1]) == [40.0] * 5
    assert list(inputs.curve_data("power", TOTAL)[1]) == [340.0] * 5
    assert not inputs.power_widget.isHidden()  # several inputs: each one's power is shown
    # psu-b's own 1.4 % shows above the line; the total's combined (0.6 + 0.56) / 340 W below
    assert list(inputs.curve_data("uncertainty", "psu-b")[1]) == [1.4] * 5
    assert inputs.curve_data("uncertainty", TOTAL)[1][0] == pytest.approx(
        (0.6 + 0.56) / 340 * 100)
    assert inputs.warning.text() == ""


def test_low_current_on_an_input_is_warned_by_name_and_cleared(qtbot) -> None:
    plots = LivePlots(redraw_ms=10_000)
    qtbot.addWidget(plots)
    plots.ingest([ev.PowerSamples(0, (_total(0.0, b_amps=0.15),), outside(1))])
    assert "Low current on psu-b 0.15 A" in plots.inputs.warning.text()
    plots.ingest([ev.PowerSamples(0, (_total(1.0),), outside(1))])
    assert plots.inputs.warning.text() == ""


def test_one_meter_shows_as_its_one_input_and_a_new_run_starts_empty(qtbot) -> None:
    plots = LivePlots(redraw_ms=10_000)
    qtbot.addWidget(plots)
    plots.ingest([ev.PowerSamples(0, (PowerSample(0.0, 200.0, uncertainty_pct=0.3),
                                      PowerSample(1.0, math.nan)), outside(2))])
    plots.redraw()
    x, y = plots.inputs.curve_data("uncertainty", ONE_METER)
    assert list(x) == [0.0, 1.0] and y[0] == 0.3 and math.isnan(y[1])
    assert ("power", TOTAL) not in plots.inputs.curves
    # one meter's power is the total, plotted above: only its uncertainty gets a plot here
    assert plots.inputs.power_widget.isHidden() and not plots.inputs.uncertainty_widget.isHidden()
    plots.reset()
    assert not plots.inputs.curves and not plots.inputs.power


def test_the_history_view_shows_a_stored_runs_inputs(qtbot, tmp_path) -> None:
    from app.core.records import PowerInput, RunConfig
    from app.station.session import open_session
    from drivers.clock import FakeClock
    from ui.history.stored_plots import show_stored

    inputs = (PowerInput("psu-a", "sim"), PowerInput("psu-b", "sim"))
    session = open_session(RunConfig(method="smoke", lab="sim-direct", power_inputs=inputs),
                           db_url=f"sqlite:///{tmp_path}/runs.db", clock=FakeClock())
    session.sequencer.run()
    session.writer.close()
    run = load_run(session.database, session.sequencer.run_id)
    plots = LivePlots(redraw_ms=10_000)
    qtbot.addWidget(plots)
    show_stored(plots, run, None)
    a, b, total = (plots.inputs.curve_data("power", n)[1] for n in ("psu-a", "psu-b", TOTAL))
    assert len(total) == len(run.power) and len(a) == len(b) == len(total)
    assert total == pytest.approx(a + b, rel=1e-12)


def test_the_metrics_table_names_an_unobserved_com_not_verified(qtbot) -> None:
    """As the console, the log and the report do (app.sequencer.capacity_optimisation)."""
    from app.core.records import MetricResult
    from ui.run.metrics_table import MetricsTable

    table = MetricsTable()
    qtbot.addWidget(table)
    table.add_metric(MetricResult("COM_snapshot-ro", math.nan, "ratio", False,
                                  "needs the array's management interface"))
    table.add_metric(MetricResult("EP_RR", 1.0, "IOPS/W", False, "not stable"))
    last = table.columnCount() - 1
    assert table.item(0, last).text().startswith("NOT VERIFIED: needs the array's")
    assert table.item(1, last).text() == "INVALID: not stable"


def test_a_short_uncertainty_strip_keeps_its_labels_apart_and_its_legend_only_when_needed(
        qtbot) -> None:
    """In the 768-px window the strip has about 40 px of data: pyqtgraph's 0.2 % steps stacked
    five labels into one block, and a one-curve legend took half the height."""
    plots = LivePlots(redraw_ms=10_000)
    qtbot.addWidget(plots)
    plots.resize(1070, 540)
    plots.show()
    one = tuple(PowerSample(float(t), 600.0, amps=2.7, uncertainty_pct=0.15) for t in range(9))
    plots.ingest([ev.PowerSamples(0, one, outside(len(one)))])
    plots.redraw()
    strip = plots.inputs.uncertainty_widget.getPlotItem()
    assert not strip.legend.isVisible()  # one meter: its title names it
    axis = strip.getAxis("left")
    for height in (20.0, 40.0, 120.0):
        (step, _), = axis.tickSpacing(0.0, 1.05, height)
        labels = math.floor(1.05 / step) + 1
        assert labels >= 2 and height / (labels - 1) >= axis.MIN_LABEL_PX, (height, step)
    plots.reset()
    two = tuple(_total(float(t)) for t in range(5))
    plots.ingest([ev.PowerSamples(0, two, outside(len(two)))])
    plots.redraw()
    assert strip.legend.isVisible()  # several inputs: the legend tells them apart


def test_the_uncertainty_strip_draws_the_runs_method_limit(qtbot) -> None:
    """The limit line is the method's ``max_uncertainty_pct``, not a fixed 1 % (#22)."""
    from app.method.loader import load_method

    smoke = load_method("smoke")
    strict = smoke.model_copy(update={"instruments": smoke.instruments.model_copy(
        update={"max_uncertainty_pct": 0.5})})
    plots = LivePlots(redraw_ms=10_000)
    qtbot.addWidget(plots)
    plots.configure([], strict)
    strip = plots.inputs
    assert strip.limit_line.value() == pytest.approx(0.5)
    assert "limit 0.5 %" in strip.uncertainty_widget.getPlotItem().titleLabel.text
