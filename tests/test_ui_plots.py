"""Live plots and the event bridge: data reaches the curves (asserted on curve data, never on
pixels), buffers grow without copying per sample, and the bridge crosses threads in batches."""

from __future__ import annotations

import math
import threading

import numpy as np
import pytest

pytest.importorskip("pytestqt")

from app.method.loader import load_method
from app.core.records import IntervalRecord, PhaseInfo, PhaseKind, RunStatus
from app.storage.synthetic import outside
from app.sequencer import events as ev
from app.storage.repository import load_run
from drivers.interfaces import PowerSample, TemperatureSample, WorkloadInterval
from ui.run.bridge import RunBridge
from ui.plots.live import LivePlots, phase_units
from ui.plots.series import GrowableSeries
from tests.support.plot_events import PHASES, started, workload
from tests.support.time_budget import budget_ms


def power(phase: int, samples: tuple) -> ev.PowerSamples:
    return ev.PowerSamples(phase, samples, outside(len(samples)))


def interval(phase: int, i: int, ep: float, wma: float) -> ev.IntervalClosed:
    return ev.IntervalClosed(IntervalRecord(phase, "RR", i, i, i + 1.0, 500.0, 4, 1000.0,
                                            "IOPS", 2.0, ep, wma, True, True))


def test_growable_series_keeps_order_across_growth() -> None:
    s = GrowableSeries(capacity=2)
    s.append(0, 1)
    s.extend(np.arange(1, 100), np.arange(1, 100) * 2.0)
    x, y = s.view()
    assert len(s) == 100 and s.capacity >= 100
    assert x[-1] == 99 and y[-1] == 198 and y[0] == 1
    s.break_line(100)
    s.break_line(101)  # a second gap in a row adds nothing
    assert len(s) == 101 and math.isnan(s.view()[1][-1])
    with pytest.raises(ValueError):
        s.extend([1, 2], [1])


def test_units_follow_the_profile_pattern() -> None:
    units = phase_units(load_method("smoke"), PHASES + (
        PhaseInfo(2, PhaseKind.PREFILL, "Pre-fill", "PREFILL", 1.0),))
    assert units == {0: "IOPS", 1: "MiB/s", 2: "MiB/s"}


def test_events_reach_every_curve(qtbot) -> None:
    plots = LivePlots(redraw_ms=10_000)
    qtbot.addWidget(plots)
    plots.start_run(started(), load_method("smoke"))
    samples = tuple(PowerSample(float(i), 590.0 + i) for i in range(5))
    plots.ingest([
        power(0, samples),
        ev.TemperatureSamples(0, (TemperatureSample(1.0, 22.5),), outside(1)),
        workload(0, WorkloadInterval(0.0, 1.0, 700, 300, 0, 0, 2.0, 5.0)),
        workload(1, WorkloadInterval(10.0, 11.0, 0, 40, 0, 40 * 2**20, 2.0,
                                                  5.0)),
        interval(0, 0, 2.0, 2.0), interval(0, 1, 2.2, 2.1),
        ev.HistogramReady(0, "RR", {1_000_000: 10_000, 2_000_000: 500, 50_000_000: 20},
                          {99.0: 2.0, 99.9: 50.0}, 30.0, 20),
    ])
    plots.redraw()
    x, y = plots.curve_data("power")
    assert list(x) == [0, 1, 2, 3, 4] and list(y) == [590, 591, 592, 593, 594]
    assert plots.curve_data("temperature")[1].tolist() == [22.5]
    assert plots.curve_data("iops")[1][0] == pytest.approx(1000.0)
    mibs = plots.curve_data("mibs")[1]
    assert mibs[-1] == pytest.approx(40.0)
    assert math.isnan(plots.curve_data("iops")[1][-1])  # gap: SW is not an IOPS phase
    assert plots.curve_data("ep")[1].tolist() == [2.0, 2.2]
    hi, lo = plots.curve_data("band_hi")[1], plots.curve_data("band_lo")[1]
    assert hi[-1] == pytest.approx(2.1 * 1.05) and lo[-1] == pytest.approx(2.1 * 0.95)
    hx, hy = plots.curve_data("histogram")
    assert hx.tolist() == [1.0, 2.0, 50.0] and hy.tolist() == [10_000, 500, 20]
    positions = sorted(round(10 ** line.value(), 6) for line in plots.hist_lines)
    assert positions == [2.0, 30.0, 50.0]  # 99 %, ceiling, 99.9 % (log10 view coordinates)


def test_each_load_host_has_its_own_io_series(qtbot) -> None:
    """fio client mode reports each load host's slices apart (host set on every slice): they
    are drawn one series per host, never zig-zagged into one IOPS line, and a new run drops
    the hosts of the last one."""
    plots = LivePlots(redraw_ms=10_000)
    qtbot.addWidget(plots)
    plots.start_run(started(), load_method("smoke"))
    a, b = "10.0.0.1:8765", "10.0.0.2:8765"
    plots.ingest([workload(0, *(WorkloadInterval(t, t + 1.0, n, 0, n * 4096, 0, 1.0, 2.0,
                                                 host=h)
                                for t in (0.0, 1.0) for h, n in ((a, 700), (b, 2000))))])
    plots.redraw()
    assert plots.curve_data(f"iops@{a}")[1].tolist() == [700, 700]
    assert plots.curve_data(f"iops@{b}")[1].tolist() == [2000, 2000]
    assert plots.curve_data("iops")[1].size == 0  # no local fio in this run
    assert a in plots.ops_widget.getPlotItem().titleLabel.text
    plots.start_run(started(), load_method("smoke"))
    with pytest.raises(KeyError):
        plots.curve_data(f"iops@{a}")
    assert not [c for c in plots.ops_widget.getPlotItem().listDataItems() if a in (c.name() or "")]
    assert plots.ops_widget.getPlotItem().titleLabel.text == "IO rate"


def test_flagged_samples_are_gaps_not_values(qtbot) -> None:
    plots = LivePlots(redraw_ms=10_000)
    qtbot.addWidget(plots)
    plots.start_run(started(), None)
    plots.ingest([power(0, (PowerSample(0.0, 100.0),
                            PowerSample(1.0, 1e9, flags=frozenset({"overrange"}))))])
    plots.redraw()
    assert plots.curve_data("power")[1][0] == 100.0
    assert math.isnan(plots.curve_data("power")[1][1])


def test_bridge_carries_events_from_a_worker_thread_in_order(qtbot) -> None:
    bridge = RunBridge(interval_ms=5)
    got: list = []
    bridge.events.connect(got.extend)

    def worker() -> None:
        for i in range(2000):
            bridge(ev.LogMessage("INFO", str(i), float(i)))
        bridge(ev.RunFinished(RunStatus.COMPLETED, 1.0))

    with qtbot.waitSignal(bridge.finished, timeout=budget_ms(5000)) as finished:
        threading.Thread(target=worker).start()
    assert finished.args[0].status is RunStatus.COMPLETED
    assert [e.message for e in got[:-1]] == [str(i) for i in range(2000)]
    assert bridge.received == 2001


def test_plots_follow_a_switch_to_a_dark_palette(qtbot) -> None:
    from PySide6.QtGui import QColor, QPalette

    plots = LivePlots(dark=False, redraw_ms=10_000)
    qtbot.addWidget(plots)
    assert plots.colours.background == "#ffffff"
    dark = QPalette()
    dark.setColor(QPalette.ColorRole.Window, QColor(30, 30, 30))
    plots.setPalette(dark)
    assert plots.colours.background == "#1e1e1e"
    assert plots.power_widget.backgroundBrush().color().name() == "#1e1e1e"


def test_the_io_plot_shows_both_axes_data_until_zoomed_by_hand(qtbot) -> None:
    plots = LivePlots(redraw_ms=10_000)
    qtbot.addWidget(plots)
    plots.start_run(started(), load_method("smoke"))
    plots.ingest([
        workload(0, WorkloadInterval(0.0, 1.0, 700, 300, 0, 0, 2.0, 5.0)),
        workload(1, WorkloadInterval(30.0, 31.0, 0, 40, 0, 40 * 2**20,
                                                  2.0, 5.0)),
    ])
    plots.redraw()
    lo, hi = plots.ops_right.item.vb.viewRange()[0]
    assert lo <= 1 and hi >= 31  # the MiB/s point at 31 s is not cut off
    plots.ops_right.item.vb.sigRangeChangedManually.emit([True, True])
    plots.ingest([workload(1, WorkloadInterval(90.0, 91.0, 0, 40, 0,
                                               40 * 2**20, 2.0, 5.0))])
    plots.redraw()
    assert plots.ops_right.item.vb.viewRange()[0][1] < 91  # the technician's zoom is kept


def test_a_stored_run_goes_in_through_the_data_interface(qtbot, monkeypatch,
                                                        recorded_demo_paused) -> None:
    """History reads data, not made-up events: no event reaches the widget, and a paused
    phase's restart is marked from the stored attempts."""
    from ui.history.stored_plots import show_stored

    recorded = recorded_demo_paused
    run = load_run(recorded.database, recorded.run_id)

    def no_events(self, batch) -> None:
        raise AssertionError("the history fed the plots an event")

    monkeypatch.setattr(LivePlots, "ingest", no_events)
    plots = LivePlots(redraw_ms=10_000)
    qtbot.addWidget(plots)
    show_stored(plots, run, run.method)
    assert len(plots.restart_markers) == 1  # RW's second attempt
    drawn = plots.curve_data("power")[1]
    assert np.isfinite(drawn).sum() == int(run.power.usable.sum())
    assert set(plots.histograms) == {h.profile for h in run.histograms}


def test_a_new_run_shows_no_trace_of_the_last_runs_stability_band(qtbot) -> None:
    """pyqtgraph keeps an emptied curve's path and fills the band from it: after reset the
    band, its edges and every curve must draw nothing (issue 28: the last run's WMA ± 5 %)."""
    plots = LivePlots(redraw_ms=10_000)
    qtbot.addWidget(plots)
    plots.start_run(started(), load_method("smoke"))
    plots.ingest([power(0, (PowerSample(0.0, 590.0), PowerSample(1.0, 591.0))),
                  interval(0, 0, 2.0, 2.0), interval(0, 1, 2.2, 2.1)])
    plots.redraw()
    assert not plots.band.path().isEmpty()
    plots.start_run(started(), load_method("smoke"))
    assert plots.band.path().isEmpty()
    for name in ("band_hi", "band_lo", "ep", "wma", "power"):
        assert plots.curves[name].curve.getPath().isEmpty(), name
    plots.ingest([interval(0, 0, 3.0, 3.0), interval(0, 1, 3.1, 3.05)])
    plots.redraw()  # the new run's band, from its own intervals only
    band = plots.band.path().boundingRect()
    assert band.top() == pytest.approx(3.0 * 0.95, rel=0.02)


def test_a_pause_is_drawn_as_a_gap_not_a_straight_line(qtbot) -> None:
    """Issue 28: power and temperature joined the last sample before a pause to the first
    after it with a straight line (the IO plot already left a gap)."""
    plots = LivePlots(redraw_ms=10_000)
    qtbot.addWidget(plots)
    plots.start_run(started(), load_method("smoke"))  # 1 s sample period
    before = tuple(PowerSample(float(i), 600.0) for i in range(3))
    after = tuple(PowerSample(float(i), 650.0) for i in range(40, 43))
    plots.ingest([power(0, before)])
    plots.ingest([power(0, after)])  # the same phase, 38 s later: it was paused
    plots.ingest([power(0, (PowerSample(43.0, 651.0), PowerSample(60.0, 652.0)))])
    plots.redraw()
    x, y = plots.curve_data("power")
    gaps = [float(x[i]) for i in np.flatnonzero(np.isnan(y))]
    assert gaps == [2.0, 43.0]  # after the last sample before each silence
    assert np.isfinite(y[:3]).all() and y[4:7].tolist() == [650.0, 650.0, 650.0]
    plots.ingest([power(0, (PowerSample(61.0, 653.0),))])  # steady: no gap
    plots.redraw()
    assert plots.curve_data("power")[1][-1] == 653.0
    assert np.isnan(plots.curve_data("power")[1]).sum() == 2


def test_an_empty_io_plot_reads_0_to_1_and_never_a_negative_rate(qtbot) -> None:
    """Issue 28: "The IO-rate axis runs −2000…+2000 MiB/s before data arrives": a new run
    kept the last run's 0…4000 MiB/s, and pyqtgraph sized the first flat stretch (0 MiB/s
    while the pre-fill starts) by that scale."""
    plots = LivePlots(redraw_ms=10_000)
    qtbot.addWidget(plots)
    plots.show()  # pyqtgraph auto-ranges a shown view, before it paints
    qtbot.waitExposed(plots)
    io = plots.ops_right
    views = {"IOPS": io.item.vb, "MiB/s": io.right}

    def y_ranges() -> dict[str, list[float]]:
        return {unit: [round(v, 6) for v in vb.viewRange()[1]] for unit, vb in views.items()}

    assert y_ranges() == {"IOPS": [0, 1], "MiB/s": [0, 1]}  # the empty plot
    assert io.item.getAxis("right").labelUnits == "MiB/s"
    plots.start_run(started(), load_method("smoke"))
    plots.ingest([workload(1, *(WorkloadInterval(float(t), t + 1.0, 0, 200 * t, 0,
                                                 200 * t * 2**20, 2.0, 5.0)
                                for t in range(21)))])
    plots.redraw()
    qtbot.waitUntil(lambda: io.right.viewRange()[1][1] >= 3800, timeout=budget_ms(2000))
    assert io.right.viewRange()[1][0] >= 0  # main: −220 MiB/s of padding below 0
    plots.start_run(started(), load_method("smoke"))  # a new run: no trace of the last scale
    assert y_ranges() == {"IOPS": [0, 1], "MiB/s": [0, 1]}
    plots.ingest([workload(1, WorkloadInterval(0.0, 1.0, 0, 0, 0, 0, 2.0, 5.0))])
    plots.redraw()
    qtbot.wait(100)  # the auto-range of the first point
    lo, hi = io.right.viewRange()[1]
    assert lo >= 0 and hi <= 1, (lo, hi)  # main: −2220 … +2220 MiB/s
