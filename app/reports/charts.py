"""The report's charts: per-phase power/temperature, operations rate, periodic efficiency with
its weighted moving average and tolerance band (method-notes §4), and response-time histograms
with confidence levels and ceiling (method-notes §5). All data comes from the stored run.
"""

from __future__ import annotations

import numpy as np
from reportlab.graphics.shapes import Drawing
from reportlab.lib import colors

from app.reports.plot import DASHED_BLUE, SOLID_BLACK, Chart, Style
from app.reports.text import pdf_safe
from app.sequencer.events import HistogramReady
from app.storage.stored import StoredAttempt, StoredPhase, StoredRun

BAND_FILL = colors.HexColor("#e4e4e4")
BAR_FILL = colors.HexColor("#9db3d6")
LEVEL_STYLES = (Style(colors.HexColor("#1f4e9c"), 0.9, (4, 2)),
                Style(colors.HexColor("#2e7d32"), 0.9, (1, 1.5)),
                Style(colors.HexColor("#c25400"), 0.9, (6, 2, 1, 2)),
                Style(colors.HexColor("#6a1b9a"), 0.9, (8, 2, 1, 2, 1, 2)))
CEILING_STYLE = Style(colors.black, 1.8)
WINDOW_STYLE = Style(colors.HexColor("#444444"), 0.8, (2, 2))


def time_unit(span_s: float) -> tuple[float, str]:
    """Divisor and label for a time axis of this span."""
    if span_s > 3 * 3600:
        return 3600.0, "h"
    if span_s > 600:
        return 60.0, "min"
    return 1.0, "s"


def _phase_origin(phase: StoredPhase, attempt: StoredAttempt | None) -> float:
    """Run-relative start of the phase's last attempt."""
    if attempt is not None:
        return attempt.t_start
    return phase.t_start or 0.0


def _phase_span(run: StoredRun, phase: StoredPhase, origin: float) -> float:
    end = phase.t_end if phase.t_end is not None else (run.duration_s or origin)
    return max(1.0, end - origin)


def _last(attempts: np.ndarray, attempt: StoredAttempt | None) -> np.ndarray:
    """Mask of the entries tagged with the phase's last attempt."""
    return attempts == (attempt.attempt if attempt is not None else 1)


def _mark_window(chart: Chart, attempt: StoredAttempt | None, origin: float,
                 div: float) -> None:
    if attempt is None or not attempt.has_window:
        return
    chart.vline((attempt.window_start_s - origin) / div, "measurement window", WINDOW_STYLE)
    chart.vline((attempt.window_end_s - origin) / div, "", WINDOW_STYLE)


def power_chart(run: StoredRun, phase: StoredPhase, attempt: StoredAttempt | None,
                width: float, height: float) -> Drawing:
    """Usable power samples and inlet temperature of the phase's last attempt."""
    origin = _phase_origin(phase, attempt)
    div, unit = time_unit(_phase_span(run, phase, origin))
    power = run.power.for_phase(phase.index)
    keep = _last(power.attempt, attempt)
    usable = power.usable[keep]
    t = (power.t[keep] - origin) / div
    watts = np.where(usable, power.watts[keep], np.nan)
    chart = Chart(width, height, pdf_safe(f"{phase.info.name}: input power and inlet temperature"),
                  f"time since phase start ({unit})", "power (W)", "inlet temperature (°C)")
    chart.line(t, watts, "power (usable samples)", SOLID_BLACK)
    flagged = ~usable
    if flagged.any():
        chart.line(t[flagged], np.full(int(flagged.sum()), np.nanmin(watts) if np.isfinite(
            watts).any() else 0.0), f"excluded sample ({int(flagged.sum())})",
            Style(colors.HexColor("#b00020"), 0.0, None, "cross"))
    temp = run.temperature
    mask = (temp.phase_index == phase.index) & _last(temp.attempt, attempt)
    if mask.any():
        celsius = np.where(temp.usable[mask], temp.celsius[mask], np.nan)
        chart.line((temp.t[mask] - origin) / div, celsius, "inlet temperature", DASHED_BLUE,
                   right=True)
    _mark_window(chart, attempt, origin, div)
    return chart.drawing()


#: dash patterns of the engine's report lines, one per load host
HOST_DASHES = ((1, 1), (3, 1.5), (1, 2.5), (4, 1, 1, 1))


def ops_chart(run: StoredRun, phase: StoredPhase, attempt: StoredAttempt | None,
              width: float, height: float) -> Drawing | None:
    """Operations rate per interval (the metric's basis) over the engine's own slices."""
    intervals = run.attempt_intervals(phase.index)
    if not intervals or not intervals[0].ops_unit:
        return None
    origin = _phase_origin(phase, attempt)
    div, unit = time_unit(_phase_span(run, phase, origin))
    ops_unit = intervals[0].ops_unit
    chart = Chart(width, height, pdf_safe(f"{phase.info.name}: operations rate"),
                  f"time since phase start ({unit})", ops_unit, y_min=0.0)
    slices = [w.interval for w in run.workload if w.phase_index == phase.index
              and w.attempt == (attempt.attempt if attempt is not None else 1)]
    by_host: dict[str, list] = {}  # load hosts report apart: one line each, never zig-zagged
    for s in slices:
        by_host.setdefault(s.host, []).append(s)
    for i, (host, mine) in enumerate(by_host.items()):
        mid = np.array([(s.t_start + s.t_end) / 2 - origin for s in mine]) / div
        rate = np.array([s.iops if ops_unit == "IOPS" else s.mib_per_s for s in mine])
        chart.line(mid, rate, pdf_safe(f"engine reports, {host}") if host else "engine reports",
                   Style(colors.HexColor("#8a8a8a"), 0.6, HOST_DASHES[i % len(HOST_DASHES)]))
    mid = np.array([(r.start_s + r.end_s) / 2 - origin for r in intervals]) / div
    chart.line(mid, [r.ops_rate for r in intervals], "per interval", Style(colors.black, 1.0,
                                                                           None, "circle"))
    _mark_window(chart, attempt, origin, div)
    return chart.drawing()


def efficiency_chart(run: StoredRun, phase: StoredPhase, attempt: StoredAttempt | None,
                     tolerance_pct: float | None, width: float, height: float) -> Drawing | None:
    """Periodic efficiency EP_i, its weighted moving average and the ±tolerance band around
    the WMA over the measurement intervals (the stability rule, method-notes §4)."""
    intervals = run.attempt_intervals(phase.index)
    if not intervals or not intervals[0].ops_unit:
        return None
    origin = _phase_origin(phase, attempt)
    div, unit = time_unit(_phase_span(run, phase, origin))
    mid = np.array([(r.start_s + r.end_s) / 2 - origin for r in intervals]) / div
    ep = np.array([r.ep for r in intervals])
    wma = np.array([r.wma for r in intervals])
    chart = Chart(width, height, pdf_safe(f"{phase.info.name}: periodic power efficiency"),
                  f"time since phase start ({unit})", f"{intervals[0].ops_unit}/W")
    if tolerance_pct is not None:
        meas = np.array([r.in_measurement for r in intervals])
        band_x = mid[meas]
        chart.band(band_x, wma[meas] * (1 - tolerance_pct / 100),
                   wma[meas] * (1 + tolerance_pct / 100), f"WMA ±{tolerance_pct:g} %",
                   Style(colors.HexColor("#555555"), 0.6, (1, 1.5)), BAND_FILL)
    chart.line(mid, ep, "EP per interval", Style(colors.black, 1.0, None, "circle"))
    chart.line(mid, wma, "weighted moving average", Style(colors.HexColor("#c25400"), 1.2,
                                                          (4, 2), "square"))
    _mark_window(chart, attempt, origin, div)
    return chart.drawing()


def bin_edges_ms(midpoints_ns: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Bar edges around fio's bucket midpoints: geometric means of neighbours (log axis)."""
    ms = midpoints_ns / 1e6
    if len(ms) == 1:
        return ms / 1.05, ms * 1.05
    inner = np.sqrt(ms[1:] * ms[:-1])
    first = ms[0] ** 2 / inner[0]
    last = ms[-1] ** 2 / inner[-1]
    edges = np.r_[first, inner, last]
    return edges[:-1], edges[1:]


def histogram_chart(hist: HistogramReady, title: str, width: float, height: float) -> Drawing:
    ns = np.array(sorted(hist.bins), dtype=float)
    counts = np.array([hist.bins[int(k)] for k in ns], dtype=float)
    chart = Chart(width, height, pdf_safe(title), "response time, total latency (ms, log scale)",
                  "IO count (log scale)", log_x=True, log_y=True)
    if len(ns):
        lo, hi = bin_edges_ms(ns)
        chart.bars(lo, hi, counts, "IOs per latency bucket", Style(colors.HexColor("#1f3b66"),
                                                                   0.3), BAR_FILL)
    for style, lvl in zip(LEVEL_STYLES * 2, hist.levels()):
        if (ms := lvl.shown_ms) is not None and ms > 0:
            chart.vline(ms, pdf_safe(lvl.text()), style)
    if hist.ceiling_ms == hist.ceiling_ms and hist.ceiling_ms > 0:
        chart.vline(hist.ceiling_ms, f"ceiling {hist.ceiling_ms:g} ms ({hist.above_ceiling} "
                                     "IOs above)", CEILING_STYLE)
    return chart.drawing()


def stability_tolerance(method) -> float | None:
    return None if method is None else float(method.stability.tolerance_pct)

