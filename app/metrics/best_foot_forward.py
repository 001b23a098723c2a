"""Best foot forward: where a product family's efficiency metrics peak (issue 18 §6).

The Emerald training (seed emerald-measurement-spec-training, "Finding the Best Foot Forward")
lets a vendor test one or a few configurations of a product family instead of all of them: the
"sweet spot", the configuration at which each active metric (and EP_RI) peaks, found by varying
one range variable — drive count, drive type, RAID level — with the rest fixed. Its rules that
this module follows:

* each metric may peak at a different configuration ("you may have from 1 to 7 possible
  different optimized configurations");
* only measured, VALID figures count (an unstable phase "has not reached stability; stability
  is required in order to have a valid metric measurement");
* "no requirement to test beyond the peak point" — so a peak at the largest tested drive count
  is not known to be the peak: the disclosure says the roll-off was not reached.

The figures come from stored runs as they are; nothing is recomputed here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from app.metrics.formatting import format_figure
from app.core.records import in_metric_order

#: the range variables a family can be swept over: key in the SUT description → label
RANGE_VARIABLES = {"drive_count": "drive count", "drive_type": "drive type",
                   "raid": "RAID level"}


@dataclass(frozen=True)
class FamilyPoint:
    """One stored run of the family: its setting of the range variable and its metrics
    (name → (value, unit, valid))."""

    run_id: str
    setting: int | str
    metrics: Mapping[str, tuple[float, str, bool]]


@dataclass(frozen=True)
class FamilyRun:
    """A stored COMPLETED run of a product family: its range variables and its metrics."""

    run_id: str
    settings: Mapping[str, int | str]  # RANGE_VARIABLES key → the run's value
    metrics: Mapping[str, tuple[float, str, bool]]


def sweeps(runs: Sequence[FamilyRun], variable: str) -> dict[str, list[FamilyPoint]]:
    """The family's runs as sweeps of ``variable``: runs are compared only with runs whose
    other range variables are the same (a RAID 5 and a RAID 10 run are two curves of a drive
    count sweep, never one). Keyed by the fixed settings, e.g. "drive type HDD, RAID level
    RAID 5"."""
    if variable not in RANGE_VARIABLES:
        raise ValueError(f"range variable {variable!r}: choose one of "
                         f"{', '.join(RANGE_VARIABLES)}")
    groups: dict[str, list[FamilyPoint]] = {}
    for run in runs:
        fixed = ", ".join(f"{RANGE_VARIABLES[k]} {run.settings[k]}" for k in RANGE_VARIABLES
                          if k != variable)
        groups.setdefault(fixed, []).append(
            FamilyPoint(run.run_id, run.settings[variable], run.metrics))
    return groups


@dataclass(frozen=True)
class SweetSpot:
    """Where one metric peaks across the family, with the curve it was read from."""

    metric: str
    unit: str
    value: float
    setting: int | str
    run_id: str
    #: "largest" / "smallest" when the peak is at that end of a numeric sweep (the roll-off,
    #: or the rise, was not seen), "" when it lies inside the range or the variable has no order
    edge: str
    #: (setting, value) of every VALID run of this metric, in setting order
    curve: tuple[tuple[int | str, float], ...]


def sweet_spots(points: Sequence[FamilyPoint]) -> tuple[SweetSpot, ...]:
    """The peak of every metric that has at least one VALID figure, in report order.

    A tie keeps the smaller configuration: the seed's point is the cheapest configuration
    that reaches the peak."""
    numeric = all(isinstance(p.setting, int) for p in points)
    ordered = sorted(points, key=lambda p: (p.setting if numeric else str(p.setting)))
    names = in_metric_order({n for p in points for n in p.metrics})
    spots = []
    for name in names:
        valid = [(p, p.metrics[name]) for p in ordered
                 if name in p.metrics and p.metrics[name][2] and math.isfinite(p.metrics[name][0])]
        if not valid:
            continue
        best, (value, unit, _) = max(valid, key=lambda pv: (pv[1][0], -ordered.index(pv[0])))
        edge = ""
        if numeric and len(valid) > 1:
            edge = {valid[-1][0].run_id: "largest", valid[0][0].run_id: "smallest"}.get(
                best.run_id, "")
        spots.append(SweetSpot(name, unit, value, best.setting, best.run_id, edge,
                               tuple((p.setting, m[0]) for p, m in valid)))
    return tuple(spots)


def disclosure(family: str, variable: str, spots: Sequence[SweetSpot]) -> str:
    """The sweet-spot disclosure for the Test Data Report: which configuration each metric
    peaks at, from how many tested configurations, and where the peak is not established."""
    label = RANGE_VARIABLES.get(variable, variable)
    if not spots:
        return (f"Best foot forward for {family}: no VALID metric among the stored runs, so no "
                "sweet spot can be named.")
    lines = [f"Best foot forward for {family}, range variable: {label}."]
    for spot in spots:
        tested = len(spot.curve)
        line = (f"{spot.metric} peaks at {format_figure(spot.value)} {spot.unit} with "
                f"{label} {spot.setting} (run {spot.run_id[:8]}; {tested} VALID configuration"
                f"{'' if tested == 1 else 's'} tested)")
        if tested == 1:
            line += "; one configuration is not a sweep: the peak is not established"
        elif spot.edge == "largest":
            line += ("; the largest configuration tested gave the highest value, so the "
                     "roll-off was not reached: test a larger one to find the peak")
        elif spot.edge == "smallest":
            line += ("; the smallest configuration tested gave the highest value: if the "
                     "family has smaller ones, the peak may lie below it")
        lines.append(line + ".")
    return "\n".join(lines)
