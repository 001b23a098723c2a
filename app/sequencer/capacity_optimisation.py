"""Capacity-optimisation (COM) heuristic checks, run after ready idle (method-notes §2 phase 4).

Data-reduction COMs (deduplication, compression) are verified by writing a data set with a
known reducible share and comparing the logical bytes written with the physical capacity the
SUT reports using (seed green-grid-coms-poms.txt: savings shown as before/after capacity). The
other COMs (snapshots, thin provisioning, parity RAID) need the array's management interface;
when the lab cannot observe capacity, the result says "not verified" instead of guessing.
"""

from __future__ import annotations

import math
from app.records import MetricResult, PhaseInfo

DATA_REDUCTION_COMS = ("deduplication", "compression")
#: a reduction ratio above this counts as "the COM is on and working"
MIN_REDUCTION_RATIO = 1.05


def com_result(phase: PhaseInfo, com: str, written_bytes: int,
               before: tuple[int, int] | None, after: tuple[int, int] | None) -> MetricResult:
    """The heuristic outcome of one COM check as a metric row named ``COM_<id>``.

    ``before``/``after`` are the SUT's (logical, physical) used bytes around the check's data
    set (None when the lab cannot observe them). Value: logical/physical ratio of the data set.
    """
    name = f"COM_{com}"
    if com not in DATA_REDUCTION_COMS:
        return MetricResult(name, math.nan, "ratio", False,
                            "not verified: needs the array's management interface "
                            "(record the heuristic result by hand)", phase.planned_s,
                            phase_index=phase.index)
    if before is None or after is None:
        return MetricResult(name, math.nan, "ratio", False,
                            "not verified: this lab cannot observe the SUT's used capacity",
                            phase.planned_s, phase_index=phase.index)
    logical, physical = after[0] - before[0], after[1] - before[1]
    ratio = logical / physical if physical > 0 else math.nan
    ok = ratio == ratio and ratio >= MIN_REDUCTION_RATIO and written_bytes > 0
    reason = "" if ok else (f"no data reduction observed (ratio {ratio:.3f} after "
                            f"{written_bytes / 1e9:.3f} GB written)")
    return MetricResult(name, ratio, "ratio", ok, reason, phase.planned_s,
                        ops_rate=written_bytes / 1e9, ops_unit="GB written",
                        phase_index=phase.index)
