"""The runs table of the history view: a window onto the database's run list.

Why a window: a lab's history holds 100,000 runs, and building every row in Python took
seconds at open and a pass over all of them per filter change (issue 27). The database counts,
filters and sorts (:mod:`app.storage.run_pages`); the model fetches the page of rows the view
asks for (``PAGE_ROWS`` at a time, the last ``KEPT_PAGES`` kept), so opening, filtering and
sorting cost a count and one page whatever the history's size. A row's compliance verdict is
derived when it is first shown (``RunSummary.compliance``), from facts read with its page.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt, Signal
from PySide6.QtGui import QBrush, QColor

from app.metrics.formatting import format_duration
from app.metrics.formatting import format_figure
from app.rules.run_outcome import Tone
from app.storage.db import Database
from app.storage.errors import StorageError
from app.storage.history import HistoryFilter, HistoryOrder
from app.storage.run_pages import (HistoryChoices, count_runs, history_choices, run_ids,
                                   run_page)
from app.storage.stored import RunSummary
from ui.widgets.status_style import TONE_COLOURS, verdict_colour

RUN_ID_ROLE = Qt.ItemDataRole.UserRole + 1
INVALID_COLOUR = QColor(200, 50, 50)
ACCEPTED_COLOUR = QColor(40, 150, 70)
NON_COMPLIANT_COLOUR = TONE_COLOURS[Tone.WARNING]


@dataclass(frozen=True)
class Column:
    """A column: its header, how a row shows in it, and how the database sorts by it (a key
    of :class:`app.storage.history.HistoryOrder`, or a metric's name)."""

    title: str
    text: Callable[[RunSummary], str]
    sort: str
    tip: str = ""
    visible: bool = True
    metric: str = ""

    def order(self, descending: bool) -> HistoryOrder:
        return HistoryOrder(self.sort, descending, self.metric)


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

    return Column(f"{name} ({unit})" if unit else name, text, "metric",
                  f"{name}; a bracketed value is INVALID (hover for the reason)", metric=name)


BASE_COLUMNS = (
    Column("Run", lambda r: r.run_id[:8], "run", "run id (first 8 characters)"),
    Column("Started (UTC)", lambda r: r.started_wall[:16].replace("T", " "), "started"),
    Column("SUT", lambda r: r.sut, "sut", "sorts by vendor, model, serial"),
    Column("Taxonomy", lambda r: r.taxonomy, "taxonomy"),
    Column("Method", _method, "method", "method and version; NON-COMPLIANT: the run's "
           "compliance verdict, derived from its record (hover for the criteria not met); "
           "sorts by method and version"),
    Column("Station", lambda r: r.station, "station"),
    Column("Operator", lambda r: r.operator, "operator"),
    Column("Duration", _duration, "duration"),
    Column("Status", lambda r: r.status_text, "status",
           "run status; INVALID: at least one metric is invalid"),
    Column("QA", _qa, "qa", "latest QA disposition (accepted / rejected) and who decided"),
    Column("Lab", lambda r: r.lab, "lab", visible=False),
)
#: rows fetched per query (a screen shows ~40), and how many pages stay in memory
PAGE_ROWS = 60
KEPT_PAGES = 30
NO_CHOICES = HistoryChoices(0, (), (), (), ())


class RunsTableModel(QAbstractTableModel):
    """Read-only table of the runs a filter shows, in the order chosen, read from
    ``database`` a page at a time; ``rowCount`` is the database's count."""

    #: a page could not be read (the reason, to show)
    failed = Signal(str)

    def __init__(self, database: Database | None = None, parent=None) -> None:
        super().__init__(parent)
        self.database = database
        self.filter = HistoryFilter()
        self.order = HistoryOrder()
        self.choices = NO_CHOICES
        self.columns = BASE_COLUMNS
        self.total = self._count = 0
        self._pages: OrderedDict[int, list[RunSummary]] = OrderedDict()
        if database is not None:
            self.load(database)

    def load(self, database: Database | None) -> None:
        """(Re)read the history's size, choices and metric columns from ``database``; keeps
        the filter and the order. Raises StorageError (the model is then empty)."""
        self.beginResetModel()
        self.database, self._pages = database, OrderedDict()
        self.choices, self.total, self._count = NO_CHOICES, 0, 0
        try:
            if database is not None:
                self.choices = history_choices(database)
                self.total = self.choices.runs
                self._count = count_runs(database, self.filter) if self.filter != \
                    HistoryFilter() else self.total
        finally:
            self.columns = BASE_COLUMNS + tuple(_metric_column(n, u)
                                                for n, u in self.choices.metrics)
            self.endResetModel()

    def set_filter(self, wanted: HistoryFilter) -> None:
        """Show the runs ``wanted`` selects (one count; rows are read as they are shown)."""
        self.beginResetModel()
        self.filter, self._pages = wanted, OrderedDict()
        try:
            self._count = 0 if self.database is None else count_runs(self.database, wanted)
        except StorageError as exc:
            self._count = 0
            self.failed.emit(str(exc))
        finally:
            self.endResetModel()

    def row(self, row: int) -> RunSummary | None:
        """The run shown in ``row`` (its page is read on first need); None if unreadable."""
        number = row // PAGE_ROWS
        page = self._pages.get(number)
        if page is None:
            if self.database is None:
                return None
            try:
                page = run_page(self.database, self.filter, self.order, number * PAGE_ROWS,
                                PAGE_ROWS)
            except StorageError as exc:
                page = []  # said once; read again after a reload or filter change
                self.failed.emit(str(exc))
            self._pages[number] = page
            while len(self._pages) > KEPT_PAGES:
                self._pages.popitem(last=False)
        self._pages.move_to_end(number)
        offset = row - number * PAGE_ROWS
        return page[offset] if offset < len(page) else None

    def run_id(self, row: int) -> str:
        found = self.row(row)
        return found.run_id if found is not None else ""

    def visible_run_ids(self) -> list[str]:
        """Every run the filter shows, in order (ids only: no rows are built)."""
        if self.database is None:
            return []
        return run_ids(self.database, self.filter, self.order)

    def column_index(self, title: str) -> int:
        return next(i for i, c in enumerate(self.columns) if c.title == title
                    or c.title.split(" (")[0] == title)

    def rowCount(self, parent: QModelIndex = QModelIndex()) -> int:  # noqa: N802 (Qt naming)
        return 0 if parent.isValid() else self._count

    def columnCount(self, parent: QModelIndex = QModelIndex()) -> int:  # noqa: N802 (Qt naming)
        return 0 if parent.isValid() else len(self.columns)

    def headerData(self, section: int, orientation, role=Qt.ItemDataRole.DisplayRole):  # noqa: N802 (Qt naming)
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
        row, column = self.row(index.row()), self.columns[index.column()]
        if row is None:
            return None
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
        """Sort by ``column``: the database orders the rows; the view re-reads its page."""
        if not 0 <= column < len(self.columns):
            return
        self.beginResetModel()
        self.order = self.columns[column].order(order == Qt.SortOrder.DescendingOrder)
        self._pages = OrderedDict()
        self.endResetModel()
