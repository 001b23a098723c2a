"""The SUT's maximum power: the highest single usable power sample, per phase and overall.

A project reading pending EN 303 804's text (method-notes §10, "Maximum power"): the standard
asks for a storage system's maximum power beside its supplies' rating, and until its text is
at hand StorWatt states the plainest measured figure — the highest single sample the method's
rules let into an average (no flagged or excluded sample), with the run time it was read at —
and prints it beside the nameplate power the SUT description declares. It is a disclosure, not
a metric: no figure of the method depends on it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class PeakSample:
    """One highest usable sample: where (a phase name, or "overall"), its watts and time."""

    where: str
    watts: float
    t_s: float  # run-relative seconds


def maximum_power(t: np.ndarray, watts: np.ndarray, usable: np.ndarray,
                  phase_index: np.ndarray, phase_names: Mapping[int, str]
                  ) -> tuple[PeakSample | None, tuple[PeakSample, ...]]:
    """(overall peak or None without a usable sample, the peak of each phase that has one,
    in phase order)."""
    ok = usable & np.isfinite(watts)
    if not ok.any():
        return None, ()
    per_phase = []
    for index in sorted({int(i) for i in phase_index[ok]}):
        mask = ok & (phase_index == index)
        k = int(np.flatnonzero(mask)[int(np.argmax(watts[mask]))])
        per_phase.append(PeakSample(phase_names.get(index, f"phase {index}"),
                                    float(watts[k]), float(t[k])))
    best = max(per_phase, key=lambda p: p.watts)
    return PeakSample("overall", best.watts, best.t_s), tuple(per_phase)
