"""Show a stored run in the run view's plot widget (:class:`ui.plots.live.LivePlots`).

The history shows the same four plots the technician watched live, so a QA engineer reads
them the same way: the stored run goes in through the widget's data interface (the one its
live events use too), never through made-up events or the widget's internals.
"""

from __future__ import annotations

import math

import numpy as np

from app.metrics.histogram_basis import histogram_basis
from app.method.model import Method
from app.storage.stored import StoredPhase, StoredRun
from drivers.interfaces import EXCLUDING_FLAGS
from ui.plots.input_plots import ONE_METER, TOTAL
from ui.plots.live import LivePlots


def phase_span(run: StoredRun, phases: list[StoredPhase]) -> tuple[float, float] | None:
    """Run-relative (start, end) covering these phases' last attempts."""
    starts = [p.t_start for p in phases if p.t_start is not None]
    if not starts:
        return None
    ends = [p.t_end if p.t_end is not None else (run.duration_s or p.t_start) for p in phases
            if p.t_start is not None]
    return min(starts), max(max(ends), min(starts) + 1.0)


STORED_NO_HISTOGRAM = ("This run stored no response-time histogram: none of its active "
                       "profiles completed a measurement interval.")
STORED_NO_PHASE_HISTOGRAM = ("This phase stored no response-time histogram (only an active "
                             "profile's completed measurement interval has one).")


def show_stored(plots: LivePlots, run: StoredRun, method: Method | None,
                phase_index: int | None = None) -> None:
    """Fill ``plots`` with one phase of ``run`` (``None``: the whole run) and fit the views.

    Reads the stored record through the plots' data interface: arrays go in whole (one numpy
    copy per curve, not 86,400 sample events), the few interval, slice and histogram records
    as they are stored."""
    plots.configure(tuple(p.info for p in run.phases), method,
                    histogram_basis(run.config))
    phases = [p for p in run.phases if phase_index is None or p.index == phase_index]
    wanted = list({p.index for p in phases})
    power, temperature = run.power, run.temperature
    keep = np.isin(power.phase_index, wanted)
    watts = np.where(power.usable, power.watts, math.nan)  # flagged samples are never drawn
    plots.add_power(power.t[keep], watts[keep], power.phase_index[keep])
    keep_t = np.isin(temperature.phase_index, wanted)
    celsius = np.where(temperature.usable, temperature.celsius, math.nan)
    plots.add_temperature(temperature.t[keep_t], celsius[keep_t],
                          temperature.phase_index[keep_t])
    for phase in phases:
        stored = [w for w in run.workload if w.phase_index == phase.index]
        for attempt in sorted((a for a in run.attempts if a.phase_index == phase.index),
                              key=lambda a: a.attempt):
            if attempt.attempt > 1:  # drawn apart, as the live view did
                plots.mark_restart(attempt.t_start, phase.info.name)
            plots.add_workload(phase.index, [w.interval for w in stored
                                             if w.attempt == attempt.attempt])
        plots.add_intervals(run.attempt_intervals(phase.index))
    shown = [h for h in run.histograms if h.phase_index in wanted]
    for h in shown:
        plots.add_histogram(h)
    if not shown:  # a stored run will not get one later: never the live "not yet" wording
        plots.hist_note.setText(STORED_NO_HISTOGRAM if phase_index is None
                                else STORED_NO_PHASE_HISTOGRAM)
    span = phase_span(run, phases)
    _show_inputs(plots, run, watts, span)
    plots.redraw()
    if span is not None:
        plots.show_span(*span)


def _show_inputs(plots: LivePlots, run: StoredRun, watts: np.ndarray,
                 span: tuple[float, float] | None) -> None:
    """Each power input's readings inside ``span`` beside the total (a run with one meter:
    that meter, as the live view showed it)."""
    if span is None:
        return
    lo, hi = span
    for i in run.power_inputs:
        usable = np.fromiter((not f & EXCLUDING_FLAGS for f in i.flags), bool, len(i.flags))
        keep = (i.t >= lo) & (i.t <= hi)
        plots.inputs.add_series(i.name, i.t[keep], np.where(usable, i.watts, math.nan)[keep],
                                i.uncertainty_pct[keep])
    power = run.power
    keep = (power.t >= lo) & (power.t <= hi)
    plots.inputs.add_series(TOTAL if run.power_inputs else ONE_METER, power.t[keep],
                            watts[keep], power.uncertainty_pct[keep])
