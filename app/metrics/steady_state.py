"""SNIA PTS steady-state check (SPEC-NOTES §5, seed pts-synthetic-workload-tutorial.txt).

A tracked variable (IOPS, say) is at steady state when, over a window of 5 rounds, its range
(max − min) is within 20 % of the window average and the least-squares slope across the
window is within 10 % of the average; tools give up after 25 rounds by default.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from app.metrics.errors import EmptySamplesError


@dataclass(frozen=True)
class SteadyStateVerdict:
    steady: bool
    round_index: int | None  # last round of the first steady window
    window_average: float
    range_pct: float
    slope_excursion_pct: float  # |slope × (window − 1)| as % of the average
    gave_up: bool
    reason: str


def steady_state(values: Sequence[float], window: int = 5, max_range_pct: float = 20.0,
                 max_slope_pct: float = 10.0, max_rounds: int = 25) -> SteadyStateVerdict:
    """First window (ending at round i) meeting both PTS criteria, or why none did."""
    x = np.asarray(values, dtype=float)[:max_rounds]
    if x.size == 0:
        raise EmptySamplesError("no rounds to judge steady state on")
    last = (np.nan, np.nan, np.nan)
    for end in range(window, x.size + 1):
        w = x[end - window:end]
        avg = float(w.mean())
        if not np.isfinite(avg) or avg == 0:
            continue
        rng = float(w.max() - w.min()) / abs(avg) * 100
        slope = float(np.polyfit(np.arange(window), w, 1)[0])
        excursion = abs(slope * (window - 1)) / abs(avg) * 100
        last = (avg, rng, excursion)
        if rng <= max_range_pct and excursion <= max_slope_pct:
            return SteadyStateVerdict(True, end - 1, avg, rng, excursion, False, "")
    gave_up = len(values) >= max_rounds
    reason = (f"no {window}-round window met range ≤ {max_range_pct:g} % and slope ≤ "
              f"{max_slope_pct:g} % " + (f"within {max_rounds} rounds" if gave_up else "yet"))
    return SteadyStateVerdict(False, None, *last, gave_up, reason)
