"""The one way a live curve is made: its cost bounded by the pixels, not the run's length.

A 24 h run holds ~86,000 points per curve. Stroked at full resolution with a wide pen, ten
per-input curves made the run view repaint in 181 ms and the event loop's p99 reach 298 ms
by hour 23.5 (issue 27), while the main plots, made this way, stayed at a few ms. Even
clipped and downsampled, handing pyqtgraph the whole buffer cost ~3 ms a curve a redraw
at hour 24 (its bounds and peak reduction read every point): :func:`draw` hands it only the
view's points, from the series' min/max pyramid (``ui.plots.envelope``).
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable

import pyqtgraph as pg

from ui.plots.envelope import Envelope


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


#: the view width assumed for a curve not laid out yet (pixels)
UNLAID_PX = 800
#: what each curve was last given: (series, its generation and length, view span, pixels)
_DRAWN: weakref.WeakKeyDictionary[pg.PlotDataItem, tuple] = weakref.WeakKeyDictionary()


def draw(curve: pg.PlotDataItem, envelope: Envelope) -> None:
    """Give ``curve`` its series' points for the present view: all of it while the view
    follows the data (x auto-range), else the visible span, at a bounded number of points
    either way (``ui.plots.envelope``). A zoom or pan must be followed by another draw
    (:func:`on_view_change`)."""
    view = curve.getViewBox()
    lo, hi = -math.inf, math.inf
    pixels = UNLAID_PX
    if view is not None:
        if not view.autoRangeEnabled()[0]:
            lo, hi = view.viewRange()[0]
        pixels = int(view.width()) or UNLAID_PX
    series = envelope.series
    drawn = (id(series), series.generation, len(series), lo, hi, pixels)
    if _DRAWN.get(curve) == drawn:
        return  # nothing new to show (an EP curve between intervals, a still view)
    curve.setData(*envelope.points(lo, hi, pixels))
    _DRAWN[curve] = drawn


def on_view_change(plot: pg.PlotItem, changed: Callable[[], None]) -> None:
    """Call ``changed`` when the technician zooms or pans ``plot`` (its curves then need
    the new span's points) or the plot is resized."""
    plot.vb.sigXRangeChanged.connect(lambda *_: changed())
    plot.vb.sigResized.connect(lambda *_: changed())
