"""A small chart builder on reportlab graphics (the report must not need matplotlib).

Charts stay readable in greyscale: every series has its own dash pattern and, when sparse,
its own marker shape, not only a colour. Dense series are reduced to a min/max envelope per
horizontal pixel column so an 8-hour phase draws as fast as a 1-minute one and keeps its
spikes. Margins are sized from the measured width of the tick labels, so no text is clipped.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from reportlab.graphics.shapes import Circle, Drawing, Group, Line, PolyLine, Polygon, Rect, String
from reportlab.lib import colors
from reportlab.pdfbase.pdfmetrics import stringWidth

from app.reports.fonts import SANS, SANS_BOLD

FONT, FONT_BOLD, FONT_SIZE = SANS, SANS_BOLD, 7  # embedded (app.reports.fonts)
MAX_MARKERS = 90  # more points than this: no markers (they would merge into a smear)


@dataclass(frozen=True)
class Style:
    color: colors.Color = colors.black
    width: float = 1.0
    dash: tuple[float, ...] | None = None
    marker: str = ""  # "" | circle | square | triangle | cross


# Distinct in greyscale: luminance steps plus dash/marker differences.
SOLID_BLACK = Style(colors.black, 1.0)
DASHED_BLUE = Style(colors.HexColor("#1f4e9c"), 1.0, (4, 2))


@dataclass
class _Layer:
    kind: str  # line | band | vline | hline | bars
    x: np.ndarray
    y: np.ndarray
    y2: np.ndarray | None
    label: str
    style: Style
    right: bool = False
    fill: colors.Color | None = None


def nice_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """Round tick values from at or below ``lo`` to at or above ``hi`` (steps of 1, 2 or 5 ×
    10^n), so an axis starts and ends on a labelled tick."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return [lo] if math.isfinite(lo) else []
    raw = (hi - lo) / max(1, count)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    first = math.floor(lo / step + 1e-9)
    last = math.ceil(hi / step - 1e-9)
    return [0.0 if k == 0 else k * step for k in range(first, last + 1)]


def tick_label(value: float, ticks: list[float]) -> str:
    step = abs(ticks[1] - ticks[0]) if len(ticks) > 1 else abs(value) or 1.0
    decimals = max(0, -math.floor(math.log10(step))) if step < 1 else 0
    return f"{value:,.{decimals}f}"


def envelope(x: np.ndarray, y: np.ndarray, columns: int) -> tuple[np.ndarray, np.ndarray]:
    """Min/max per column of ``x`` in time order: keeps extremes, bounds the point count.
    NaN (an excluded sample) is ignored beside usable samples of its column, so it cannot take
    a spike with it; a column holding only NaN stays NaN and draws as a gap."""
    if len(x) <= 2 * columns:
        return x, y
    edges = np.linspace(x[0], x[-1], columns + 1)
    bucket = np.clip(np.searchsorted(edges, x, side="right") - 1, 0, columns - 1)
    starts = np.flatnonzero(np.r_[True, bucket[1:] != bucket[:-1]])
    with np.errstate(invalid="ignore"):
        lo = np.fmin.reduceat(y, starts)
        hi = np.fmax.reduceat(y, starts)
    xs = x[starts]
    out_x = np.repeat(xs, 2)
    out_y = np.column_stack((lo, hi)).ravel()
    return out_x, out_y


def _segments(x: np.ndarray, y: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """Split at NaN so a gap in the data shows as a gap in the line."""
    ok = np.isfinite(x) & np.isfinite(y)
    if ok.all():
        return [(x, y)]
    edges = np.flatnonzero(np.diff(np.r_[0, ok.astype(np.int8), 0]))
    return [(x[a:b], y[a:b]) for a, b in zip(edges[::2], edges[1::2])]


@dataclass
class Chart:
    """One plot area with an x axis, a left y axis and an optional right y axis."""

    width: float
    height: float
    title: str
    x_label: str
    y_label: str
    y2_label: str = ""
    log_x: bool = False
    log_y: bool = False
    y_min: float | None = None  # force the left axis to include this value (e.g. 0)
    layers: list[_Layer] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    # --- adding data -------------------------------------------------------------------------
    def line(self, x, y, label: str, style: Style, right: bool = False) -> None:
        self.layers.append(_Layer("line", np.asarray(x, float), np.asarray(y, float), None,
                                  label, style, right))

    def band(self, x, lo, hi, label: str, style: Style, fill: colors.Color) -> None:
        self.layers.append(_Layer("band", np.asarray(x, float), np.asarray(lo, float),
                                  np.asarray(hi, float), label, style, False, fill))

    def vline(self, x: float, label: str, style: Style) -> None:
        self.layers.append(_Layer("vline", np.array([x], float), np.array([]), None, label,
                                  style))

    def bars(self, x_lo, x_hi, y, label: str, style: Style, fill: colors.Color) -> None:
        self.layers.append(_Layer("bars", np.asarray(x_lo, float), np.asarray(y, float),
                                  np.asarray(x_hi, float), label, style, False, fill))

    # --- scales --------------------------------------------------------------------------------
    def _tx(self, v: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.log10(v) if self.log_x else v

    def _ty(self, v: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.log10(v) if self.log_y else v

    def _x_range(self) -> tuple[float, float]:
        values = [self._tx(layer.x) for layer in self.layers]
        values += [self._tx(layer.y2) for layer in self.layers
                   if layer.kind == "bars" and layer.y2 is not None]  # (a bar has both edges)
        return _span(values)

    def _y_range(self, right: bool) -> tuple[float, float]:
        values = []
        for layer in self.layers:
            if layer.right != right or layer.kind == "vline":
                continue
            values.append(self._ty(layer.y) if not right else layer.y)
            if layer.kind == "band" and layer.y2 is not None:
                values.append(self._ty(layer.y2))
        if not right and self.y_min is not None:
            values.append(np.array([self._ty(np.array([self.y_min]))[0]]))
        if not right and any(layer.kind == "bars" for layer in self.layers) and not self.log_y:
            values.append(np.array([0.0]))
        return _span(values)

    def _ticks(self, lo: float, hi: float, log: bool) -> list[float]:
        if log:
            return [float(d) for d in range(math.floor(lo), math.ceil(hi) + 1)]
        return nice_ticks(lo, hi)

    # --- drawing -------------------------------------------------------------------------------
    def drawing(self) -> Drawing:
        d = Drawing(self.width, self.height, initialFontName=FONT)  # not standard Helvetica
        x_lo, x_hi = self._x_range()
        y_lo, y_hi = self._y_range(False)
        has_right = any(layer.right for layer in self.layers)
        y2_lo, y2_hi = self._y_range(True) if has_right else (0.0, 1.0)
        x_ticks = self._ticks(x_lo, x_hi, self.log_x)
        y_ticks = self._ticks(y_lo, y_hi, self.log_y)
        y2_ticks = nice_ticks(y2_lo, y2_hi) if has_right else []
        x_lo, x_hi = _extend(x_lo, x_hi, x_ticks)
        y_lo, y_hi = _extend(y_lo, y_hi, y_ticks)
        y2_lo, y2_hi = _extend(y2_lo, y2_hi, y2_ticks)
        y_labels = [self._label(v, y_ticks, self.log_y) for v in y_ticks]
        y2_labels = [tick_label(v, y2_ticks) for v in y2_ticks]
        left = 14 + max((stringWidth(s, FONT, FONT_SIZE) for s in y_labels), default=0) + 4
        right = (14 + max((stringWidth(s, FONT, FONT_SIZE) for s in y2_labels), default=0) + 4
                 if has_right else 8)
        legend_rows = self._legend_rows(self.width - left - right)
        bottom = 24 + 10 * len(legend_rows)
        top = 14
        box = (left, bottom, self.width - left - right, self.height - bottom - top)
        px, py, pw, ph = box

        def mx(v: np.ndarray) -> np.ndarray:
            return px + (self._tx(v) - x_lo) / (x_hi - x_lo) * pw

        def my(v: np.ndarray, on_right: bool = False) -> np.ndarray:
            if on_right:
                return py + (v - y2_lo) / (y2_hi - y2_lo) * ph
            return py + (self._ty(v) - y_lo) / (y_hi - y_lo) * ph

        d.add(String(px, self.height - 10, self.title, fontName=FONT_BOLD, fontSize=8))
        d.add(Rect(px, py, pw, ph, strokeColor=colors.black, strokeWidth=0.5,
                   fillColor=None))
        self._grid(d, box, x_ticks, x_lo, x_hi, y_ticks, y_lo, y_hi, y_labels, y2_ticks,
                   y2_lo, y2_hi, y2_labels)
        clip = Group()
        for layer in self.layers:
            self._draw_layer(clip, layer, mx, my, box)
        d.add(clip)
        d.add(String(px + pw / 2, 4 + 10 * len(legend_rows) + 4, self.x_label,
                     fontName=FONT, fontSize=FONT_SIZE, textAnchor="middle"))
        label = String(0, 0, self.y_label, fontName=FONT, fontSize=FONT_SIZE,
                       textAnchor="middle")
        d.add(Group(label, transform=(0, 1, -1, 0, 7, py + ph / 2)))
        if has_right:
            label2 = String(0, 0, self.y2_label, fontName=FONT, fontSize=FONT_SIZE,
                            textAnchor="middle")
            d.add(Group(label2, transform=(0, -1, 1, 0, self.width - 5, py + ph / 2)))
        self._legend(d, legend_rows, left)
        return d

    def _label(self, value: float, ticks: list[float], log: bool) -> str:
        if log:
            real = 10 ** value
            return f"{real:g}" if 1e-3 <= real < 1e6 else f"1e{int(value)}"
        return tick_label(value, ticks)

    def _grid(self, d: Drawing, box, x_ticks, x_lo, x_hi, y_ticks, y_lo, y_hi, y_labels,
              y2_ticks, y2_lo, y2_hi, y2_labels) -> None:
        px, py, pw, ph = box
        grid = colors.HexColor("#d0d0d0")
        for value in x_ticks:
            x = px + (value - x_lo) / (x_hi - x_lo) * pw
            d.add(Line(x, py, x, py + ph, strokeColor=grid, strokeWidth=0.3))
            d.add(Line(x, py, x, py - 2, strokeColor=colors.black, strokeWidth=0.5))
            d.add(String(x, py - 9, self._label(value, x_ticks, self.log_x), fontName=FONT,
                         fontSize=FONT_SIZE, textAnchor="middle"))
        for value, text in zip(y_ticks, y_labels):
            y = py + (value - y_lo) / (y_hi - y_lo) * ph
            d.add(Line(px, y, px + pw, y, strokeColor=grid, strokeWidth=0.3))
            d.add(String(px - 3, y - 2.5, text, fontName=FONT, fontSize=FONT_SIZE,
                         textAnchor="end"))
        for value, text in zip(y2_ticks, y2_labels):
            y = py + (value - y2_lo) / (y2_hi - y2_lo) * ph
            d.add(Line(px + pw, y, px + pw + 2, y, strokeColor=colors.black, strokeWidth=0.5))
            d.add(String(px + pw + 4, y - 2.5, text, fontName=FONT, fontSize=FONT_SIZE))

    def _draw_layer(self, g: Group, layer: _Layer, mx, my, box) -> None:
        px, py, pw, ph = box
        s = layer.style
        if layer.kind == "vline":
            at = float(mx(layer.x)[0])
            if px <= at <= px + pw:
                g.add(Line(at, py, at, py + ph, strokeColor=s.color, strokeWidth=s.width,
                           strokeDashArray=s.dash))
            return
        if layer.kind == "bars":
            x0, x1, top = mx(layer.x), mx(layer.y2), my(layer.y)
            base = py
            for a, b, t in zip(x0, x1, top):
                if np.isfinite(t):  # a bar of count 1 on a log axis still shows
                    g.add(Rect(a, base, max(0.4, b - a), max(0.8, min(t, py + ph) - base),
                               fillColor=layer.fill, strokeColor=s.color, strokeWidth=0.3))
            return
        if layer.kind == "band":
            assert layer.y2 is not None  # a band has its upper edge (Chart.band)
            for (xs, lo), (_, hi) in zip(_segments(layer.x, layer.y),
                                         _segments(layer.x, layer.y2)):
                points = list(zip(mx(xs), my(lo))) + list(zip(mx(xs[::-1]), my(hi[::-1])))
                if len(points) >= 3:
                    g.add(Polygon([c for p in points for c in p], fillColor=layer.fill,
                                  strokeColor=None))
                for edge in (lo, hi):
                    g.add(PolyLine([c for p in zip(mx(xs), my(edge)) for c in p],
                                   strokeColor=s.color, strokeWidth=s.width,
                                   strokeDashArray=s.dash))
            return
        x, y = layer.x, layer.y
        dense = len(x) > MAX_MARKERS
        if dense:
            x, y = envelope(x, y, int(pw / 2))  # min+max per 2 pt: one vertex per point
        for xs, ys in _segments(x, y):
            X, Y = mx(xs), my(ys, layer.right)
            if len(X) > 1:
                g.add(PolyLine([c for p in zip(X, Y) for c in p], strokeColor=s.color,
                               strokeWidth=s.width, strokeDashArray=s.dash))
            if s.marker and not dense:
                for a, b in zip(X, Y):
                    g.add(_marker(s.marker, float(a), float(b), s.color))

    def _legend_rows(self, width: float) -> list[list[_Layer]]:
        rows: list[list[_Layer]] = [[]]
        used = 0.0
        for layer in self.layers:
            if not layer.label:
                continue
            need = 26 + stringWidth(layer.label, FONT, FONT_SIZE) + 10
            if rows[-1] and used + need > width:
                rows.append([])
                used = 0.0
            rows[-1].append(layer)
            used += need
        return [r for r in rows if r]

    def _legend(self, d: Drawing, rows: list[list[_Layer]], left: float) -> None:
        for i, row in enumerate(rows):
            y = 4 + 10 * (len(rows) - 1 - i)
            x = left
            for layer in row:
                s = layer.style
                if layer.kind in ("bars", "band"):
                    d.add(Rect(x, y, 18, 6, fillColor=layer.fill, strokeColor=s.color,
                               strokeWidth=0.5, strokeDashArray=s.dash))
                else:
                    d.add(Line(x, y + 3, x + 18, y + 3, strokeColor=s.color,
                               strokeWidth=s.width, strokeDashArray=s.dash))
                    if s.marker:
                        d.add(_marker(s.marker, x + 9, y + 3, s.color))
                d.add(String(x + 22, y + 0.5, layer.label, fontName=FONT, fontSize=FONT_SIZE))
                x += 26 + stringWidth(layer.label, FONT, FONT_SIZE) + 10


def _marker(kind: str, x: float, y: float, color: colors.Color):
    r = 1.8
    if kind == "circle":
        return Circle(x, y, r, fillColor=colors.white, strokeColor=color, strokeWidth=0.7)
    if kind == "square":
        return Rect(x - r, y - r, 2 * r, 2 * r, fillColor=color, strokeColor=color)
    if kind == "triangle":
        return Polygon([x - r, y - r, x + r, y - r, x, y + r], fillColor=color, strokeColor=color)
    return Group(Line(x - r, y - r, x + r, y + r, strokeColor=color, strokeWidth=0.7),
                 Line(x - r, y + r, x + r, y - r, strokeColor=color, strokeWidth=0.7))


def _span(arrays: list[np.ndarray]) -> tuple[float, float]:
    finite = [a[np.isfinite(a)] for a in arrays if a is not None and len(a)]
    finite = [a for a in finite if len(a)]
    if not finite:
        return 0.0, 1.0
    lo = float(min(a.min() for a in finite))
    hi = float(max(a.max() for a in finite))
    if hi <= lo:
        pad = abs(lo) * 0.05 or 1.0
        return lo - pad, hi + pad
    return lo, hi


def _extend(lo: float, hi: float, ticks: list[float]) -> tuple[float, float]:
    """Widen the range to the outer ticks so the axis starts and ends on a label."""
    if ticks:
        lo, hi = min(lo, ticks[0]), max(hi, ticks[-1])
    return (lo, hi) if hi > lo else (lo - 1.0, hi + 1.0)
