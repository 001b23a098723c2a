"""The per-input plots cost what the pixels cost, not what the run holds (issue 27): a day of
four inputs is stroked as a few points per pixel with thin pens, every reading still kept."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pytestqt")

from ui.input_plots import TOTAL  # noqa: E402
from ui.plots import LivePlots  # noqa: E402

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
