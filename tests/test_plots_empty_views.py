"""Before any data, no live plot reads a negative time or a negative figure (issue 41, seen 5:
the EPᵢ plot read −0:30 … 0:30 and −0.5 … 0.5 until its first interval); once data comes,
each view follows it."""

from __future__ import annotations

from PySide6.QtWidgets import QApplication

from app.core.records import IntervalRecord
from ui.plots.live import LivePlots


def ranges(plots: LivePlots) -> dict[str, list[list[float]]]:
    return {name: getattr(plots, name).getPlotItem().vb.viewRange()
            for name in ("power_widget", "ops_widget", "ep_widget")}


def test_empty_plots_start_at_zero_and_follow_their_data(qtbot) -> None:
    plots = LivePlots()
    qtbot.addWidget(plots)
    plots.resize(1200, 700)
    plots.show()
    qtbot.waitExposed(plots)
    QApplication.processEvents()  # the views' deferred auto-range runs here
    for name, (x, y) in ranges(plots).items():
        assert x[0] >= 0 and y[0] >= 0, (name, x, y)
    plots.add_intervals([IntervalRecord(3, "RR", k, 600.0 + 60 * k, 660.0 + 60 * k, 500.0, 60,
                                        10_000.0 + 200 * k, "IOPS", 4.0, 20.0 + 0.4 * k,
                                        20.0 + 0.2 * k, True, None) for k in range(5)])
    plots.redraw()
    qtbot.wait(10)
    (x0, x1), (y0, y1) = ranges(plots)["ep_widget"]
    assert x0 <= 660 and x1 >= 900 and y0 <= 20.0 and y1 >= 21.6
