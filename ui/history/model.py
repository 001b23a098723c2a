"""The runs table of the history view: a table model over :class:`RunSummary` and a proxy
that filters it.

Why not Qt's own sorting and regexp filtering: with 10,000 runs every comparison or filter
test would call back into Python through ``data()`` (hundreds of thousands of calls per
click). Here sorting is one Python ``sorted`` over precomputed keys inside the model, and the
proxy filters with a mask computed once per filter change by
:meth:`app.storage.history.HistoryFilter.mask`, so a filter change costs one pass over the
rows plus one boolean look-up per row.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QSortFilterProxyModel, Qt
from PySide6.QtGui import QBrush, QColor

from app.metrics.formatting import format_duration
from app.metrics.formatting import format_figure
from app.run_verdict import Tone
from app.storage.history import HistoryFilter, metric_names
from app.storage.stored import RunSummary
from ui.status_style import TONE_COLOURS, verdict_colour

RUN_ID_ROLE = Qt.ItemDataRole.UserRole + 1
INVALID_COLOUR = QColor(200, 50, 50)
ACCEPTED_COLOUR = QColor(40, 150, 70)
NON_COMPLIANT_COLOUR = TONE_COLOURS[Tone.WARNING]


@dataclass(frozen=True)
class Column:
    """A column: its header, how a row shows in it, and how rows sort by it."""

    title: str
    text: Callable[[RunSummary], str]
    key: Callable[[RunSummary], Any]  # None: no value, sorted last in both directions
    tip: str = ""
    visible: bool = True


def _duration(row: RunSummary) -> str:
    return format_duration(row.duration_s)


def _method(row: RunSummary) -> str:
    """The method and the run's derived verdict (never the method file's claim)."""
    return row.compliance.method_label(row.method_name, row.method_version)


def _qa(row: RunSummary) -> str:
    if not row.disposition:
        return "—"
    return f"{row.disposition} ({row.disposition_author})"


def _metric_column(name: str, unit: str) -> Column:
    def text(row: RunSummary) -> str:
        m = row.metric(name)
        if m is None or not math.isfinite(m.value):
            return "—" if m is None or m.valid else "INVALID"
        value = format_figure(m.value)
        return value if m.valid else f"({value}) INVALID"

    def key(row: RunSummary) -> float | None:
        m = row.metric(name)
        return m.value if m is not None and math.isfinite(m.value) else None

    return Column(f"{name} ({unit})" if unit else name, text, key,
                  f"{name}; a bracketed value is INVALID (hover for the reason)")


BASE_COLUMNS = (
    Column("Run", lambda r: r.run_id[:8], lambda r: r.run_id, "run id (first 8 characters)"),
    Column("Started (UTC)", lambda r: r.started_wall[:16].replace("T", " "),
           lambda r: r.started_wall),
    Column("SUT", lambda r: r.sut, lambda r: r.sut.lower()),
    Column("Taxonomy", lambda r: r.taxonomy, lambda r: r.taxonomy),
    Column("Method", _method, _method, "method and version; NON-COMPLIANT: the run's compliance "
           "verdict, derived from its record (hover for the criteria not met)"),
    Column("Station", lambda r: r.station, lambda r: r.station.lower()),
    Column("Operator", lambda r: r.operator, lambda r: r.operator.lower()),
    Column("Duration", _duration, lambda r: r.duration_s if r.duration_s is not None else -1),
    Column("Status", lambda r: r.status_text, lambda r: r.status_text,
           "run status; INVALID: at least one metric is invalid"),
    Column("QA", _qa, _qa, "latest QA disposition (accepted / rejected) and who decided"),
    Column("Lab", lambda r: r.lab, lambda r: r.lab, visible=False),
)


def columns_for(rows: Sequence[RunSummary]) -> tuple[Column, ...]:
    """The base columns and one column per metric present (unit from the first run)."""
    units: dict[str, str] = {}
    for row in rows:
        for m in row.metrics:
            units.setdefault(m.name, m.unit)
    return BASE_COLUMNS + tuple(_metric_column(n, units[n]) for n in metric_names(list(rows)))


class RunsTableModel(QAbstractTableModel):
    """Read-only table of runs; ``sort`` reorders the rows in place."""

    def __init__(self, rows: Sequence[RunSummary] = (), parent=None) -> None:
        super().__init__(parent)
        self.rows: list[RunSummary] = list(rows)
        self.columns = columns_for(self.rows)

    def set_rows(self, rows: Sequence[RunSummary]) -> None:
        self.beginResetModel()
        self.rows = list(rows)
        self.columns = columns_for(self.rows)
        self.endResetModel()

    def column_index(self, title: str) -> int:
        return next(i for i, c in enumerate(self.columns) if c.title == title
                    or c.title.split(" (")[0] == title)

    def rowCount(self, parent: QModelIndex = QModelIndex()) -> int:  # noqa: N802
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: QModelIndex = QModelIndex()) -> int:  # noqa: N802
        return 0 if parent.isValid() else len(self.columns)

    def headerData(self, section: int, orientation, role=Qt.ItemDataRole.DisplayRole):  # noqa: N802
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < len(self.columns):
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return self.columns[section].title
        if role == Qt.ItemDataRole.ToolTipRole:
            return self.columns[section].tip or None
        return None

    def data(self, index: QModelIndex, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        row, column = self.rows[index.row()], self.columns[index.column()]
        if role == Qt.ItemDataRole.DisplayRole:
            return column.text(row)
        if role == RUN_ID_ROLE:
            return row.run_id
        if role == Qt.ItemDataRole.ForegroundRole:
            return self._colour(row, column)
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tip(row, column)
        return None

    def _colour(self, row: RunSummary, column: Column) -> QBrush | None:
        if column.title == "Status":
            return QBrush(verdict_colour(row.verdict))
        if column.title == "QA" and row.disposition:
            return QBrush(ACCEPTED_COLOUR if row.disposition == "accepted" else INVALID_COLOUR)
        if column.title == "Method" and not row.compliance.compliant:
            return QBrush(NON_COMPLIANT_COLOUR)
        name = column.title.split(" (")[0]
        metric = row.metric(name)
        if metric is not None and not metric.valid:
            return QBrush(INVALID_COLOUR)
        return None

    def _tip(self, row: RunSummary, column: Column) -> str | None:
        if column.title == "Status":
            bad = [f"{m.name} INVALID: {m.reason}" for m in row.metrics if not m.valid]
            return "\n".join(filter(None, [row.status.value, row.error, *bad]))
        if column.title == "Method":
            return row.compliance.summary()
        metric = row.metric(column.title.split(" (")[0])
        if metric is not None:
            return "VALID" if metric.valid else f"INVALID: {metric.reason}"
        return column.text(row) or None

    def sort(self, column: int, order=Qt.SortOrder.AscendingOrder) -> None:
        if not 0 <= column < len(self.columns):
            return
        self.layoutAboutToBeChanged.emit()
        old = {id(r): i for i, r in enumerate(self.rows)}
        before = self.rows
        key = self.columns[column].key
        keyed = [(key(r), r) for r in self.rows]
        present = [pair for pair in keyed if pair[0] is not None]
        present.sort(key=lambda pair: pair[0], reverse=order == Qt.SortOrder.DescendingOrder)
        # rows without a value (no such metric) stay last whichever way the column sorts
        self.rows = [r for _, r in present] + [r for k, r in keyed if k is None]
        moved = {old[id(r)]: i for i, r in enumerate(self.rows)}
        persistent = self.persistentIndexList()
        self.changePersistentIndexList(persistent, [
            self.index(moved[p.row()], p.column()) if p.row() < len(before) else QModelIndex()
            for p in persistent])
        self.layoutChanged.emit()


class RunsFilterProxy(QSortFilterProxyModel):
    """Filters by the set of run ids the filter accepts; sorting is delegated to the source
    model (the accepted set does not depend on row order, so a sort needs no re-filter)."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.filter = HistoryFilter()
        self._accepted: set[str] = set()
        self.setDynamicSortFilter(False)

    def setSourceModel(self, model: RunsTableModel) -> None:  # noqa: N802
        self._source = model
        model.modelAboutToBeReset.connect(self._forget)
        model.modelReset.connect(self._recompute)
        super().setSourceModel(model)
        self._recompute()

    def set_filter(self, wanted: HistoryFilter) -> None:
        self.filter = wanted
        self._recompute()

    def _forget(self) -> None:
        self._accepted = set()

    def _recompute(self) -> None:
        rows = self._source.rows
        if hasattr(self, "beginFilterChange"):  # Qt ≥ 6.9; invalidateFilter is deprecated
            self.beginFilterChange()
            self._accepted = {r.run_id for r, ok in zip(rows, self.filter.mask(rows)) if ok}
            self.endFilterChange(QSortFilterProxyModel.Direction.Rows)
        else:
            self._accepted = {r.run_id for r, ok in zip(rows, self.filter.mask(rows)) if ok}
            self.invalidateFilter()

    def filterAcceptsRow(self, source_row: int, _parent: QModelIndex) -> bool:  # noqa: N802
        rows = self._source.rows
        return source_row < len(rows) and rows[source_row].run_id in self._accepted

    def sort(self, column: int, order=Qt.SortOrder.AscendingOrder) -> None:
        self._source.sort(column, order)

    def run_id(self, proxy_row: int) -> str:
        return self.index(proxy_row, 0).data(RUN_ID_ROLE)

    def visible_run_ids(self) -> list[str]:
        return [self.run_id(r) for r in range(self.rowCount())]
