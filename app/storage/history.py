"""The history list: every run with its key metrics and QA disposition, in three queries.

``list_runs`` reads one run's row at a time with its configuration JSON; the history view
needs 10,000 runs at once with their metrics, so this module reads only the list's columns
(no configuration, no samples) and the metrics of all listed runs in one query, and the
filtering the view applies is plain Python over these rows (no Qt, testable on its own).
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date
from typing import NamedTuple

import sqlalchemy as sa

from app.records import RunStatus, in_metric_order
from app.run_verdict import RunVerdict, run_verdict
from app.storage import schema as s
from app.storage.audit import latest_dispositions_query
from app.storage.db import Database

#: the history's own status for a run with any INVALID metric (shown beside its RunStatus)
INVALID = "INVALID"


class KeyMetric(NamedTuple):
    """A stored metric as the list shows it (a tuple: 70,000 of them are built per load)."""

    name: str
    value: float  # NaN when not computed
    unit: str
    valid: bool
    reason: str


@dataclass(frozen=True)
class HistoryRow:
    """One run of the history list (no samples, no configuration JSON)."""

    run_id: str
    status: RunStatus
    method_name: str
    method_version: str
    method_compliant: bool
    taxonomy: str
    lab: str
    operator: str
    station: str
    sut: str  # "vendor model s/n serial"
    started_wall: str  # ISO 8601 UTC
    duration_s: float | None
    error: str
    metrics: tuple[KeyMetric, ...] = ()
    disposition: str = ""  # latest QA disposition ("accepted"/"rejected") or ""
    disposition_author: str = ""
    any_invalid: bool = False  # some metric is INVALID
    haystack: str = field(default="", compare=False, repr=False)  # lower-case search text

    @property
    def verdict(self) -> RunVerdict:
        """The same wording and tone as the start page and the run header."""
        return run_verdict(self.status, sum(not m.valid for m in self.metrics))

    @property
    def status_text(self) -> str:
        return self.verdict.text

    def metric(self, name: str) -> KeyMetric | None:
        return next((m for m in self.metrics if m.name == name), None)


def history_rows(database: Database) -> list[HistoryRow]:
    """All runs, newest first, with their metrics and latest disposition."""
    runs = (sa.select(s.Run.id, s.Run.uuid, s.Run.status, s.Run.method_name,
                      s.Run.method_version, s.Run.method_compliant, s.Run.taxonomy, s.Run.lab,
                      s.Run.operator, s.Station.name.label("station"), s.Sut.vendor,
                      s.Sut.model, s.Sut.serial, s.Run.started_wall, s.Run.duration_s,
                      s.Run.error)
            .outerjoin(s.Station, s.Run.station_id == s.Station.id)
            .outerjoin(s.Sut, s.Run.sut_id == s.Sut.id)
            .order_by(s.Run.started_wall.desc(), s.Run.id.desc()))
    metrics = sa.select(s.MetricRow.run_id, s.MetricRow.name, s.MetricRow.value,
                        s.MetricRow.unit, s.MetricRow.valid, s.MetricRow.reason
                        )  # no ORDER BY: columns are by name, and sorting 70k rows costs
    with database.read() as conn:
        run_rows = conn.execute(runs).all()
        by_run: dict[int, list[KeyMetric]] = defaultdict(list)
        for pk, name, value, unit, valid, reason in conn.execute(metrics).all():
            by_run[pk].append(KeyMetric(name, math.nan if value is None else value, unit,
                                        bool(valid), reason or ""))
        decided = {pk: (d, a) for pk, d, a in conn.execute(latest_dispositions_query())}
    return [_row(r, tuple(by_run.get(r.id, ())), *decided.get(r.id, ("", "")))
            for r in run_rows]


def _row(r: sa.Row, metrics: tuple[KeyMetric, ...], disposition: str,
         author: str) -> HistoryRow:
    sut = " ".join(filter(None, (r.vendor, r.model, r.serial and f"s/n {r.serial}")))
    row = HistoryRow(r.uuid, RunStatus(r.status), r.method_name, r.method_version,
                     bool(r.method_compliant), r.taxonomy, r.lab, r.operator or "",
                     r.station or "", sut, r.started_wall, r.duration_s, r.error or "",
                     metrics, disposition or "", author or "",
                     any(not m.valid for m in metrics))
    text = " ".join((row.run_id, row.sut, row.method_name, row.method_version, row.taxonomy,
                     row.lab, row.operator, row.station, row.status_text, row.disposition,
                     row.error))
    object.__setattr__(row, "haystack", text.lower())  # derived once, never compared
    return row


def metric_names(rows: list[HistoryRow]) -> list[str]:
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

    def matches(self, row: HistoryRow) -> bool:
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
        return all(word in row.haystack for word in self.text.lower().split())

    def mask(self, rows: list[HistoryRow]) -> list[bool]:
        return [self.matches(r) for r in rows]


def invalid_metric_counts(database: Database, run_ids: list[str]) -> dict[str, int]:
    """run id → how many of its stored metrics are INVALID (runs with none are absent).

    The start page lists runs from ``list_runs`` (no metrics); this one grouped query lets it
    show "COMPLETED — 2 metrics INVALID" like the history does, without loading the runs."""
    if not run_ids:
        return {}
    query = (sa.select(s.Run.uuid, sa.func.count())
             .join(s.MetricRow, s.MetricRow.run_id == s.Run.id)
             .where(s.Run.uuid.in_(run_ids), s.MetricRow.valid.is_(False))
             .group_by(s.Run.uuid))
    with database.read() as conn:
        return {uuid: int(n) for uuid, n in conn.execute(query)}
