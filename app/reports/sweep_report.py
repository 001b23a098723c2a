"""What the reports show of a stepped-intensity sweep (docs/method-notes.md §6).

Built from the stored record only: the steps are the run's stored ``<name>_<unit>_<n>``
metrics (``app.metrics.sweep.stored_points``), the drive count is the SUT description's, and
why the sweep ended is the stored error of its first skipped step (or "every step ran"). The
PDF section, the xlsx sheet and the run view's plots all read these rows.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.method.model import Sweep
from app.metrics.sweep import SweepPoint, stored_points
from app.core.records import PhaseKind, PhaseStatus
from app.storage.stored import StoredRun

#: the table's columns (PDF and xlsx), each with the figure it shows
COLUMNS = ("units", "asked IOPS", "IOPS", "avg response (ms)", "avg power (W)", "IOPS/W",
           "mW/IOPS", "W per drive", "valid")


@dataclass(frozen=True)
class SweepTable:
    sweep: Sweep
    points: tuple[SweepPoint, ...]
    ended: str  # why the sweep ended
    limit_ms: float

    @property
    def title(self) -> str:
        return f"{self.sweep.name} sweep ({self.sweep.unit} = {self.sweep.unit_iops:g} IOPS)"

    def rows(self) -> list[list]:
        """One row per step, numbers as numbers (NaN where not measured)."""
        return [[p.units, p.asked_iops, p.iops, p.avg_response_ms, p.watts, p.ep,
                 p.mw_per_iops, p.w_per_drive, "VALID" if p.valid else "INVALID"]
                for p in self.points]


def sweep_table(run: StoredRun) -> SweepTable | None:
    """The run's sweep, or None when its plan has none (or the record holds no method)."""
    method = run.method
    if method is None:
        return None
    try:
        sweep = method.plan_for(run.config.category).sweep
    except KeyError:
        return None
    if sweep is None:
        return None
    points = stored_points(run.metrics, sweep.name, sweep.unit, sweep.unit_iops,
                           run.config.sut.drive_count)
    skipped = [p.error for p in run.phases
               if p.info.kind is PhaseKind.SWEEP and p.status is PhaseStatus.SKIPPED]
    cut = [p for p in run.phases if p.info.kind is PhaseKind.SWEEP and p.status.cut_short]
    ended = (skipped[0] if skipped else f"{cut[0].info.name} {cut[0].status.value}" if cut
             else "every planned step ran")
    return SweepTable(sweep, tuple(points), ended, method.response_time.max_avg_ms)
