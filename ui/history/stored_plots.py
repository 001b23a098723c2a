"""Show a stored run in the run view's plot widget (:class:`ui.plots.LivePlots`).

The history shows the same four plots the technician watched live, so a QA engineer reads
them the same way. Rather than replaying 86,400 sample events, the stored arrays go straight
into the widget's series buffers (one numpy copy per curve); the few interval, workload and
histogram records go through the widget's normal ``ingest`` so units, WMA band and confidence
levels are drawn by its own code.
"""

from __future__ import annotations

import math

import numpy as np

from app.method.model import Method
from app.sequencer import events as ev
from app.storage.stored import StoredPhase, StoredRun
from ui.plots import LivePlots


def run_started(run: StoredRun) -> ev.RunStarted:
    """The RunStarted the plots need (stored times are run-relative, as live events are)."""
    return ev.RunStarted(run.run_id, run.config, run.method_name, run.method_version,
                         run.method_compliant, tuple(p.info for p in run.phases), 0.0,
                         run.started_wall, run.planned_s)


def phase_span(run: StoredRun, phases: list[StoredPhase]) -> tuple[float, float] | None:
    """Run-relative (start, end) covering these phases' last attempts."""
    starts = [p.t_start for p in phases if p.t_start is not None]
    if not starts:
        return None
    ends = [p.t_end if p.t_end is not None else (run.duration_s or p.t_start) for p in phases
            if p.t_start is not None]
    return min(starts), max(max(ends), min(starts) + 1.0)


def _extend_with_gaps(series, t: np.ndarray, y: np.ndarray, phase: np.ndarray) -> None:
    """Append samples, with a NaN between phases so curves never bridge two phases."""
    if not len(t):
        return
    cuts = np.flatnonzero(np.diff(phase)) + 1
    for part_t, part_y in zip(np.split(t, cuts), np.split(y, cuts)):
        series.extend(part_t, part_y)
        series.break_line(float(part_t[-1]))


def show_stored(plots: LivePlots, run: StoredRun, method: Method | None,
                phase_index: int | None = None) -> None:
    """Fill ``plots`` with one phase of ``run`` (``None``: the whole run) and fit the views."""
    plots.start_run(run_started(run), method)
    phases = [p for p in run.phases if phase_index is None or p.index == phase_index]
    wanted = {p.index for p in phases}
    power, temperature = run.power, run.temperature
    keep = np.isin(power.phase_index, list(wanted))
    watts = np.where(power.usable, power.watts, math.nan)  # flagged samples are never drawn
    _extend_with_gaps(plots.series["power"], power.t[keep], watts[keep], power.phase_index[keep])
    keep_t = np.isin(temperature.phase_index, list(wanted))
    celsius = np.where(temperature.usable, temperature.celsius, math.nan)
    _extend_with_gaps(plots.series["temperature"], temperature.t[keep_t], celsius[keep_t],
                      temperature.phase_index[keep_t])
    batch: list[ev.RunEvent] = []
    for phase in phases:
        stored = [w for w in run.workload if w.phase_index == phase.index]
        for attempt in sorted({w.attempt for w in stored}):
            mine = [w for w in stored if w.attempt == attempt]
            batch.append(ev.WorkloadIntervals(phase.index, tuple(w.interval for w in mine),
                                              attempt, tuple(w.window for w in mine)))
        batch.extend(ev.IntervalClosed(r) for r in run.attempt_intervals(phase.index))
    batch.extend(h for h in run.histograms if h.phase_index in wanted)
    plots.ingest(batch)
    plots.redraw()
    _fit(plots, phase_span(run, phases))


def _fit(plots: LivePlots, span: tuple[float, float] | None) -> None:
    """Show exactly the chosen span (the live widget only ever widens its x range)."""
    for dual in (plots.power_right, plots.ops_right):
        dual.follow = False
        dual.item.vb.enableAutoRange(axis="y")
        dual.right.enableAutoRange(axis="y")
    plots.ep_widget.getPlotItem().enableAutoRange(axis="y")
    if span is None:
        return
    lo, hi = span
    for widget in (plots.power_widget, plots.ops_widget, plots.ep_widget):
        widget.getPlotItem().setXRange(lo, hi, padding=0.02)
