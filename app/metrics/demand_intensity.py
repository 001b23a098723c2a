"""The PTS demand-intensity matrix's figures, saturation points and sweet spots
(docs/method-notes.md §6; pts-synthetic-workload seed: "Determine IOPS & Response Time
Saturation point(s)", "Compare OIO 'sweet spots'").

Each cell's figures are the stored metric ``<name>_T<t>_Q<q>`` of its phase. The two rules,
chosen because the seed shows them on plots without stating a number, and a report must say
how it marked them:

* **Saturation point** of a thread loop: the first queue depth whose next depth raises the
  IOPS by less than ``saturation_gain_pct`` (10 %) — more outstanding IO then buys response
  time, not IOPS ("T4 is not enough OIO to Saturate"; "IOPS Saturation begins at T8Q16").
  A loop whose IOPS still rise at its last depth has none.
* **Sweet spot** under a response-time ceiling: the cell with the highest IOPS whose average
  response time is within the ceiling (the seed's "optimal OIO", one per ceiling).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from app.core.records import MetricResult


@dataclass(frozen=True)
class DiPoint:
    threads: int
    queue_depth: int
    iops: float
    avg_response_ms: float
    watts: float
    ep: float
    valid: bool
    phase_index: int | None

    @property
    def outstanding(self) -> int:
        return self.threads * self.queue_depth

    @property
    def label(self) -> str:
        return f"T{self.threads}Q{self.queue_depth}"


def stored_cells(metrics: Iterable[MetricResult], name: str) -> list[DiPoint]:
    """The cells of matrix ``name`` among a run's stored metrics, loop by loop."""
    pattern = re.compile(rf"^{re.escape(name)}_T(\d+)_Q(\d+)$")
    cells = [DiPoint(int(m_.group(1)), int(m_.group(2)), m.ops_rate, m.avg_response_ms,
                     m.avg_power_w, m.value, m.valid, m.phase_index)
             for m in metrics if (m_ := pattern.match(m.name))]
    return sorted(cells, key=lambda p: (p.threads, p.queue_depth))


def saturation(loop: list[DiPoint], gain_pct: float) -> DiPoint | None:
    """The saturation point of one thread loop (rising queue depths), or None."""
    for here, after in zip(loop, loop[1:]):
        if here.iops > 0 and (after.iops / here.iops - 1) * 100 < gain_pct:
            return here
    return None


def sweet_spot(cells: list[DiPoint], ceiling_ms: float) -> DiPoint | None:
    """The highest-IOPS cell whose average response time is within ``ceiling_ms``."""
    within = [c for c in cells if c.iops > 0 and c.avg_response_ms <= ceiling_ms]
    return max(within, key=lambda c: c.iops, default=None)


def loops(cells: list[DiPoint]) -> dict[int, list[DiPoint]]:
    """Cells per thread count, by rising queue depth."""
    out: dict[int, list[DiPoint]] = {}
    for c in cells:
        out.setdefault(c.threads, []).append(c)
    return out
