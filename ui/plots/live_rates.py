"""Load hosts' live IO rates on the run view's IO plot, while their phase runs (issue 16,
item 6; docs/gui.md).

fio's client shows a load host's rates about once a second (``HostRate``: its ETA line,
rounded to 4 digits), but the phase's counted per-second figures arrive only when it ends
(docs/fio.md). Until then each host's display rate is drawn in the host's line style with a
dot per reading, on the same run-time axis as the power; when the host's counted figures
arrive its display points are removed: the engine's intervals replace them.
"""

from __future__ import annotations

import math

import pyqtgraph as pg

from drivers.interfaces import HostRate
from ui.plots.series import GrowableSeries

#: what the IO plot's title says about the dotted curves, on a line of its own (a longer
#: title line would widen the plot past its column)
LIVE_NOTE = "● dots: fio's live display rate until the phase's figures arrive"
#: the IO plot's tooltip while display rates show
LIVE_TIP = ("Curves with dots: each load host's IO rate as fio's client displays it "
            "while the phase runs (rounded to 4 digits, for watching only). When the phase "
            "ends, the counted per-second figures replace them.")


class LiveHostRates:
    """Per host, one IOPS and one MiB/s display-rate curve on the IO plot's two axes."""

    def __init__(self, iops_view: pg.PlotItem, mibs_view: pg.ViewBox) -> None:
        self._views = {"iops": iops_view, "mibs": mibs_view}
        self.series: dict[str, GrowableSeries] = {}
        self.curves: dict[str, pg.PlotDataItem] = {}

    def add(self, rate: HostRate, iops: bool, colours: dict[str, str], style) -> None:
        """One reading, drawn as IOPS or MiB/s by its phase's unit (the other axis breaks)."""
        keep, gap = ("iops", "mibs") if iops else ("mibs", "iops")
        for kind in (keep, gap):
            if f"{kind}@{rate.host}" not in self.series:
                self._make(kind, rate.host, colours[kind], style)
        self.series[f"{keep}@{rate.host}"].append(rate.t, rate.iops if iops else rate.mib_per_s)
        self.series[f"{gap}@{rate.host}"].break_line(rate.t)

    def _make(self, kind: str, host: str, colour: str, style) -> None:
        name = f"{kind}@{host}"
        item = pg.PlotDataItem(pen=pg.mkPen(colour, width=1, style=style), symbol="o",
                               symbolSize=5, symbolBrush=colour, symbolPen=None,
                               connect="finite", name=f"{host} fio display rate")
        self._views[kind].addItem(item)
        self.series[name], self.curves[name] = GrowableSeries(), item

    def replace(self, host: str) -> None:
        """The host's counted figures arrived: its display points go."""
        for kind in self._views:
            series = self.series.get(f"{kind}@{host}")
            if series is not None:
                series.clear()

    @property
    def showing(self) -> bool:
        return any(len(s) and not all(math.isnan(y) for y in s.view()[1])
                   for s in self.series.values())

    def reset(self) -> None:
        """A new run: every curve goes."""
        for name, item in self.curves.items():
            self._views[name.split("@")[0]].removeItem(item)
        self.series.clear()
        self.curves.clear()

    def redraw(self) -> None:
        for name, item in self.curves.items():
            item.setData(*self.series[name].view())
