"""The per-input plots cost what the pixels cost, not what the run holds (issue 27): a day of
four inputs is stroked as a few points per pixel with thin pens, every reading still kept."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pytestqt")

from ui.plots.input_plots import TOTAL
from ui.plots.live import LivePlots

DAY_S = 86_400
INPUTS = ("psu-a", "psu-b", "psu-c", "psu-d")


def test_a_day_of_four_inputs_is_drawn_at_a_bounded_number_of_points(qtbot) -> None:
    plots = LivePlots(redraw_ms=10_000)
    qtbot.addWidget(plots)
    plots.resize(1200, 900)
    plots.show()
    t = np.arange(DAY_S, dtype=float)
    watts = 150 + np.sin(t / 600)
    for name in (*INPUTS, TOTAL):
        plots.inputs.add_series(name, t, watts, np.full(DAY_S, 0.5))
    plots.inputs.redraw()
    qtbot.waitExposed(plots)
    plots.inputs.power_widget.getPlotItem().vb.autoRange()
    qtbot.wait(50)
    for (kind, name), curve in plots.inputs.curves.items():
        assert len(plots.inputs.curve_data(kind, name)[1]) == DAY_S  # every reading kept
        shown_x, _ = curve.getData()  # what is stroked: clipped and peak-downsampled
        assert len(shown_x) < DAY_S / 20, f"{kind} {name}: {len(shown_x)} points stroked"
        assert curve.opts["pen"].width() <= 1 and curve.opts["clipToView"]
        assert curve.opts["downsampleMethod"] == "peak"


def test_what_a_redraw_hands_each_curve_does_not_grow_with_the_run(qtbot) -> None:
    """Every live curve, main and per input, is given its view's points from the series'
    min/max pyramid (ui/plots/envelope.py): a day and an hour of samples give it as many, so a
    redraw's cost does not grow with the run; zoomed in, it gets every sample in view."""
    plots = LivePlots(redraw_ms=10_000)
    qtbot.addWidget(plots)
    plots.resize(1200, 900)
    plots.show()
    qtbot.waitExposed(plots)
    handed: dict[int, int] = {}
    for seconds in (3_600, DAY_S):
        plots.reset()
        t = np.arange(seconds, dtype=float)
        wave = 100 + np.sin(t / 600)
        for name in plots.curves:
            plots.series[name].extend(t, wave)
        for name in (*INPUTS, TOTAL):
            plots.inputs.add_series(name, t, wave, np.full(seconds, 0.5))
        plots.redraw()
        curves = [*plots.curves.values(), *plots.inputs.curves.values()]
        handed[seconds] = max(len(c.getOriginalDataset()[0]) for c in curves)
    assert handed[DAY_S] <= 2 * handed[3_600] and handed[DAY_S] < 10_000, handed
    given = plots.curves["ep"].getOriginalDataset()[0]
    plots.redraw()  # nothing new: no curve is handed its points again
    assert plots.curves["ep"].getOriginalDataset()[0] is given
    assert len(plots.curve_data("power")[1]) == DAY_S  # every reading kept
    plots.show_span(40_000, 40_600)  # a zoom into ten minutes: full detail
    plots.redraw()
    x, _ = plots.curves["power"].getOriginalDataset()
    assert 600 <= len(x) <= 700 and np.all(np.diff(x) == 1), (len(x), x[:3])
