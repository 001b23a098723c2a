"""The report's charts: per-phase power/temperature, operations rate, periodic efficiency with
its weighted moving average and tolerance band (method-notes §4), and response-time histograms
with confidence levels and ceiling (method-notes §5). All data comes from the stored run.
"""

from __future__ import annotations

import numpy as np
from reportlab.graphics.shapes import Drawing
from reportlab.lib import colors

from app.metrics.histogram_basis import TOTAL_LATENCY, HistogramBasis
from app.reports.plot import DASHED_BLUE, SOLID_BLACK, Chart, Style
from app.reports.text import pdf_safe
from app.sequencer.events import HistogramReady
from app.reports.di_report import DiReport
from app.reports.sweep_report import SweepTable
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
    index, last = phase.index, (attempt.attempt if attempt is not None else 1)
    slices = [w.interval for w in run.workload if w.phase_index == index and w.attempt == last]
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


def histogram_chart(hist: HistogramReady, title: str, width: float, height: float,
                    basis: HistogramBasis = TOTAL_LATENCY) -> Drawing:
    ns = np.array(sorted(hist.bins), dtype=float)
    counts = np.array([hist.bins[int(k)] for k in ns], dtype=float)
    chart = Chart(width, height, pdf_safe(title), basis.axis,
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


def sweep_charts(table: SweepTable, width: float, height: float) -> list[Drawing]:
    """The seed's plots against the unit count (method-notes §6): IOPS with the average
    response time and its limit, watts with W per drive, and mW/IOPS."""
    units = np.array([p.units for p in table.points], float)
    x_label = f"{table.sweep.unit}s ({table.sweep.unit_iops:g} IOPS each)"
    name = pdf_safe(table.sweep.name)
    perf = Chart(width, height, f"{name}: IOPS and average response time", x_label, "IOPS",
                 "avg response time (ms)", y_min=0.0)
    perf.line(units, [p.asked_iops for p in table.points], "IOPS asked", WINDOW_STYLE)
    perf.line(units, [p.iops for p in table.points], "IOPS measured",
              Style(colors.black, 1.0, None, "circle"))
    perf.line(units, [p.avg_response_ms for p in table.points], "avg response time (ms)",
              Style(colors.HexColor("#c25400"), 1.0, (4, 2), "square"), right=True)
    perf.line(units, [table.limit_ms] * len(units), f"limit {table.limit_ms:g} ms",
              CEILING_STYLE, right=True)
    power = Chart(width, height, f"{name}: power", x_label, "W", "W per drive")
    power.line(units, [p.watts for p in table.points], "average power (W)",
               Style(colors.black, 1.0, None, "circle"))
    power.line(units, [p.w_per_drive for p in table.points], "W per drive",
               DASHED_BLUE, right=True)
    cost = Chart(width, height, f"{name}: power per IO", x_label, "mW/IOPS", y_min=0.0)
    cost.line(units, [p.mw_per_iops for p in table.points], "mW/IOPS",
              Style(colors.black, 1.0, None, "triangle"))
    return [perf.drawing(), power.drawing(), cost.drawing()]


LOOP_STYLES = (Style(colors.black, 1.0, None, "circle"),
               Style(colors.HexColor("#1f4e9c"), 1.0, (4, 2), "square"),
               Style(colors.HexColor("#2e7d32"), 1.0, (1, 1.5), "triangle"),
               Style(colors.HexColor("#c25400"), 1.0, (6, 2, 1, 2), "cross"))


#: one look per queue depth of a loop, distinct in colour and in greyscale (dash)
DEPTH_STYLES = tuple(Style(colors.HexColor(c), 0.9, d) for c, d in (
    ("#7f7f7f", (1, 1.5)), ("#2e7d32", (4, 2)), ("#1f4e9c", None), ("#c25400", (6, 2, 1, 2)),
    ("#6a1b9a", (2, 2)), ("#000000", None), ("#b8860b", (8, 2))))


def di_curve_chart(report: DiReport, width: float, height: float) -> Drawing:
    """IOPS against average response time, one line per thread loop (queue depth rising
    along it), each loop's saturation point marked (method-notes §6)."""
    chart = Chart(width, height, pdf_safe(f"{report.title}: IOPS v average response time"),
                  "average response time (ms)", "IOPS", y_min=0.0)
    for k, (threads, loop) in enumerate(report.loops().items()):
        chart.line([c.avg_response_ms for c in loop], [c.iops for c in loop],
                   f"T{threads} (Q{loop[0].queue_depth}-Q{loop[-1].queue_depth})",
                   LOOP_STYLES[k % len(LOOP_STYLES)])
        point = report.saturated.get(threads)
        if point is not None:
            chart.line([point.avg_response_ms], [point.iops], f"saturation {point.label}",
                       Style(colors.HexColor("#d03030"), 2.0, None, "square"))
    return chart.drawing()


def steady_state_chart(report: DiReport, width: float, height: float) -> Drawing | None:
    """The preconditioning rounds' IOPS with the stored verdict's window average and its
    ± half-range limits (method-notes §5)."""
    if not report.rounds:
        return None
    m = report.matrix
    rounds = np.arange(1, len(report.rounds) + 1, dtype=float)
    chart = Chart(width, height, pdf_safe(f"{m.name}: workload preconditioning to PTS steady "
                                          "state"), "round", "IOPS", y_min=0.0)
    chart.line(rounds, report.rounds, "IOPS per round", Style(colors.black, 1.0, None, "circle"))
    v = report.steady  # the stored verdict; a round without a figure leaves no window to draw
    if v is not None and np.isfinite(v.window_average):
        last = (v.round_index + 1) if v.steady else len(report.rounds)
        window = rounds[last - m.steady_state_window:last]
        half = m.steady_state_range_pct / 200 * v.window_average
        for y, label, style in ((v.window_average, "window average", DASHED_BLUE),
                                (v.window_average + half, f"±{m.steady_state_range_pct / 2:g} %",
                                 WINDOW_STYLE),
                                (v.window_average - half, "", WINDOW_STYLE)):
            chart.line(window, [y] * len(window), label, style)
    return chart.drawing()


def di_histogram_charts(report: DiReport, width: float, height: float,
                        basis: HistogramBasis = TOTAL_LATENCY) -> list[Drawing]:
    """Per thread loop, each queue depth's response-time histogram on one plot with the
    response-time ceiling (the seed's "QD Histogram Compare")."""
    drawings = []
    for threads, loop in report.loops().items():
        chart = Chart(width, height, pdf_safe(f"{report.matrix.name} T{threads}: response-time "
                                              "histograms by queue depth"),
                      basis.axis, "IO count (log scale)",
                      log_x=True, log_y=True)
        for k, cell in enumerate(loop):
            hist = report.histograms.get(cell.phase_index) if cell.phase_index is not None \
                else None
            if hist is None or not hist.bins:
                continue
            ns = np.array(sorted(hist.bins), dtype=float)
            chart.line(ns / 1e6, [hist.bins[int(b)] for b in ns], f"Q{cell.queue_depth}",
                       DEPTH_STYLES[k % len(DEPTH_STYLES)])
        chart.vline(report.ceiling_ms, f"ceiling {report.ceiling_ms:g} ms", CEILING_STYLE)
        drawings.append(chart.drawing())
    return drawings


def stability_tolerance(method) -> float | None:
    return None if method is None else float(method.stability.tolerance_pct)

