"""The one way a live curve is made: its cost bounded by the pixels, not the run's length.

A 24 h run holds ~86,000 points per curve. Stroked at full resolution with a wide pen, ten
per-input curves made the run view repaint in 181 ms and the event loop's p99 reach 298 ms
by hour 23.5 (issue 27), while the main plots, made this way, stayed at a few ms.
"""

from __future__ import annotations

import pyqtgraph as pg


def live_curve(plot: pg.PlotItem | pg.ViewBox, colour: str, name: str = "", width: float = 1,
               style=None) -> pg.PlotDataItem:
    """A live curve: width-1 cosmetic pen (Qt strokes wider pens far slower), gaps at NaN,
    clipped to the visible range and peak-downsampled to the pixel width."""
    pen = pg.mkPen(colour, width=width, style=style) if style else pg.mkPen(colour, width=width)
    item = pg.PlotDataItem(pen=pen, name=name or None, connect="finite", skipFiniteCheck=True)
    plot.addItem(item)  # first: clip/downsample settings need the item's view box
    item.setClipToView(True)
    item.setDownsampling(auto=True, method="peak")
    # ~1.5 samples per pixel: the peak method keeps each pixel's min/max envelope, so nothing
    # visible is lost, and a 24 h curve costs the same to stroke as a 20 min one.
    item.opts["autoDownsampleFactor"] = 1.5
    return item
