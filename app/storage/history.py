"""The history list's filtering: plain Python over the run list's rows (no Qt, testable on
its own). The rows are :class:`~app.storage.stored.RunSummary`, read by
:func:`app.storage.repository.list_runs` — the one run-list query of the station.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from app.records import in_metric_order
from app.storage.stored import RunSummary

#: the history's own status for a run with any INVALID metric (shown beside its RunStatus)
INVALID = "INVALID"


def metric_names(rows: list[RunSummary]) -> list[str]:
    """Every metric name present, the Emerald ones first in report order."""
    return in_metric_order(sorted({m.name for r in rows for m in r.metrics}))


@dataclass(frozen=True)
class HistoryFilter:
    """What the QA engineer narrowed the list to; empty fields match everything.

    ``statuses`` may hold RunStatus values and :data:`INVALID` (any invalid metric); dates are
    inclusive and compared with the run's UTC start date.
    """

    text: str = ""
    date_from: date | None = None
    date_to: date | None = None
    statuses: frozenset[str] = frozenset()
    taxonomy: str = ""
    sut: str = ""
    station: str = ""  # the station that recorded the run (exact name)

    def matches(self, row: RunSummary) -> bool:
        if self.statuses and not (row.status.value in self.statuses
                                  or (INVALID in self.statuses and row.any_invalid)):
            return False
        day = row.started_wall[:10]
        if self.date_from is not None and day < self.date_from.isoformat():
            return False
        if self.date_to is not None and day > self.date_to.isoformat():
            return False
        if self.taxonomy and row.taxonomy != self.taxonomy:
            return False
        if self.sut and self.sut.lower() not in row.sut.lower():
            return False
        if self.station and row.station != self.station:
            return False
        return all(word in row.haystack for word in self.text.lower().split())

    def mask(self, rows: list[RunSummary]) -> list[bool]:
        return [self.matches(r) for r in rows]
