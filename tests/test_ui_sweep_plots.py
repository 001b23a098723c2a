"""The run view's live sweep plots (docs/method-notes.md §6): the BSU sweep's five plots and
the demand-intensity curve with the steady-state rounds, fed the event stream of simulated
runs exactly as the bridge feeds it live."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

from app.method.record import method_from_record
from app.metrics.steady_state import SteadyStateVerdict
from app.sequencer import events as ev
from tests.support.recorded_runs import record_run
from ui.plots.sweep_plots import DemandIntensityPlot, SweepPlots


def _events(tmp_path: Path, method: str) -> list[ev.RunEvent]:
    events: list[ev.RunEvent] = []
    record_run(tmp_path / f"{method}.db", method=method, coms=(),
               hook=lambda _seq, e: events.append(e))
    return events


def _feed(widget, events: list[ev.RunEvent]) -> None:
    started = next(e for e in events if isinstance(e, ev.RunStarted))
    widget.start_run(started, method_from_record(started.method_json))
    for k in range(0, len(events), 50):  # in batches, as the bridge delivers them
        widget.ingest(events[k:k + 50])


def test_sweep_plots_add_a_point_per_finished_step(qtbot, tmp_path: Path) -> None:
    events = _events(tmp_path, "spc1-like-demo")
    plots, di = SweepPlots(), DemandIntensityPlot()
    qtbot.addWidget(plots)
    qtbot.addWidget(di)
    _feed(plots, events)
    _feed(di, events)
    steps = [e.metric for e in events if isinstance(e, ev.MetricComputed)
             and e.metric.name.startswith("SPC1_BSU_")]
    assert not plots.isHidden() and di.isHidden()  # a sweep, no DI matrix
    assert [p.units for p in plots.points] == [int(m.name.rsplit("_", 1)[1]) for m in steps]
    x, y = plots._curves[4].getData()  # W per drive, from the SUT description's 50 drives
    assert list(y) == pytest.approx([m.avg_power_w / 50 for m in steps])


def test_demand_intensity_plot_draws_each_loop_and_the_steady_state_rounds(
        qtbot, tmp_path: Path) -> None:
    events = _events(tmp_path, "pts-di-demo")
    di = DemandIntensityPlot()
    qtbot.addWidget(di)
    _feed(di, events)
    assert not di.isHidden() and sorted(di.cells) == [2, 4, 8, 16]
    assert all(len(cells) == 6 for cells in di.cells.values())
    assert 5 <= len(di.rounds) < 25
    judged = [e for e in events if isinstance(e, ev.SteadyStateJudged)]
    assert judged and di.verdict == judged[-1].verdict and di.verdict.steady
    assert f"reached at round {len(di.rounds)}" in di.steady.getPlotItem().titleLabel.text
    # the plot formats the sequencer's verdict, it does not judge the rounds: a deliberately
    # different verdict is what it shows
    di.ingest([ev.SteadyStateJudged(judged[-1].phase_index, 1,
                                    SteadyStateVerdict(False, None, 900.0, 33.3, 4.4, True,
                                                       "no window"))])
    title = di.steady.getPlotItem().titleLabel.text
    assert "not reached<br>range 33.3 % (≤ 20 %), slope 4.4 % (≤ 10 %)" in title
    x, y = di._window[0].getData()
    assert list(y) == [900.0] * 5 and list(x) == list(range(len(di.rounds) - 4,
                                                            len(di.rounds) + 1))
