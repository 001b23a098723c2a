"""SNIA PTS steady-state check (method-notes §5, seed pts-synthetic-workload-tutorial.txt).

A tracked variable (IOPS, say) is at steady state when, over a window of 5 rounds, its range
(max − min) is within 20 % of the window average and the least-squares line across the window
moves by at most 10 % of the average (the slope times the window's span, PTS's "slope
excursion"); tools give up after 25 rounds by default. All four numbers are parameters so the
method file, not this code, owns them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from app.metrics.efficiency import drift_pct
from app.metrics.errors import EmptySamplesError, MetricsError, NonFiniteError


@dataclass(frozen=True)
class SteadyStateVerdict:
    """Outcome of the PTS steady-state rule (method-notes §5) over the rounds seen so far."""

    steady: bool
    round_index: int | None  # last round (0-based) of the first steady window
    window_average: float  # of the steady window, or of the last window judged
    range_pct: float  # (max − min) / average × 100
    slope_excursion_pct: float  # |slope × (window − 1)| / average × 100
    gave_up: bool  # max_rounds reached without a steady window
    reason: str  # why not steady ("" when steady)


def _window_figures(w: np.ndarray) -> tuple[float, float, float]:
    """(average, range %, slope excursion %) of one window; the §5 measures."""
    avg = float(w.mean())
    rng = float(w.max() - w.min()) / abs(avg) * 100
    return avg, rng, abs(drift_pct(w))


def steady_state(values: Sequence[float], window: int = 5, max_range_pct: float = 20.0,
                 max_slope_pct: float = 10.0, max_rounds: int = 25) -> SteadyStateVerdict:
    """First window (ending at round i) meeting both PTS criteria (§5), or why none did.

    Rounds after ``max_rounds`` are ignored: PTS gives up there. A NaN round is an error —
    a missing round must be re-run, not skipped, or the window would span a gap.
    """
    if window < 2 or max_rounds < window:
        raise MetricsError(f"need 2 ≤ window ≤ max_rounds, got window {window}, "
                           f"max_rounds {max_rounds}")
    if not (max_range_pct > 0 and max_slope_pct > 0):
        raise MetricsError("steady-state limits must be positive percentages")
    x = np.asarray(values, dtype=float)[:max_rounds]
    if x.size == 0:
        raise EmptySamplesError("no rounds to judge steady state on")
    if not np.all(np.isfinite(x)):
        bad = int(np.flatnonzero(~np.isfinite(x))[0])
        raise NonFiniteError(f"round {bad + 1} has no value (NaN or infinity); re-run it")
    last = (float("nan"),) * 3
    for end in range(window, x.size + 1):
        w = x[end - window:end]
        if w.mean() <= 0:
            continue  # a zero or negative average has no percentage: not steady
        last = _window_figures(w)
        if last[1] <= max_range_pct and last[2] <= max_slope_pct:
            return SteadyStateVerdict(True, end - 1, *last, False, "")
    gave_up = x.size >= max_rounds
    reason = (f"no {window}-round window met range ≤ {max_range_pct:g} % and slope ≤ "
              f"{max_slope_pct:g} % " + (f"within {max_rounds} rounds" if gave_up
                                         else f"in {x.size} rounds so far"))
    return SteadyStateVerdict(False, None, *last, gave_up, reason)
