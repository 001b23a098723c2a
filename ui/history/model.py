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
from app.core.records import IDLE_METRIC
from app.sequencer.capacity_optimisation import is_com_metric
from app.storage.stored import KeyMetric, RunSummary
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


def method_badge(row: RunSummary) -> str:
    """The method's relation to the registry in a word or two (the full text is the
    tooltip and the detail's): ``registered``, ``variant, 14 keys``, ``unregistered``."""
    identity = row.compliance.identity
    if identity is None:
        return "not held"
    if identity.registered:
        return "registered"
    if identity.entry is None:
        return "unregistered"
    n = len(identity.differences)
    return f"variant, {n} {'key' if n == 1 else 'keys'}"


def _method(row: RunSummary) -> str:
    """Name, version and badge: the whole relation is the tooltip (``_tip``)."""
    return f"{row.method_name} {row.method_version} · {method_badge(row)}"


def verdict_word(row: RunSummary) -> str:
    """The run's derived compliance in one word: SIMULATED (a simulated instrument or SUT
    took part), COMPLIANT or NON-COMPLIANT — never the method file's claim."""
    compliance = row.compliance
    return "SIMULATED" if compliance.simulated else compliance.label


def status_in_brief(row: RunSummary) -> str:
    """``COMPLETED · 1 INVALID · 2 COM``: the status and what needs a look, counted; the whole
    words (``1 metric INVALID, 2 COMs NOT VERIFIED``) are the cell's tooltip, so the list's
    columns fit a laptop screen (issue 41)."""
    word, _, detail = row.status_text.partition(" — ")
    if not detail:
        return word
    brief = []
    for part in detail.split(", "):
        count, _, what = part.partition(" ")
        brief.append(f"{count} INVALID" if what.endswith("INVALID") else
                     f"{count} COM" if what.startswith("COM") else part)
    return " · ".join([word, *brief])


def _qa(row: RunSummary) -> str:
    if not row.disposition:
        return "—"
    return f"{row.disposition} ({row.disposition_author})"


def best_active(row: RunSummary) -> KeyMetric | None:
    """The run's highest VALID active-workload EP (no ready idle, no COM check)."""
    active = [m for m in row.metrics if m.valid and math.isfinite(m.value)
              and m.name != IDLE_METRIC and not is_com_metric(m.name)]
    return max(active, key=lambda m: m.value, default=None)


def _figure(m: KeyMetric | None) -> str:
    if m is None:
        return "—"
    value = format_figure(m.value)
    return value if m.valid else f"({value})"


def _headline(row: RunSummary) -> str:
    """EP_RI (every category has it) and the best active EP, named."""
    best = best_active(row)
    idle = f"{IDLE_METRIC} {_figure(row.metric(IDLE_METRIC))}"
    return idle + (f" · {best.name} {_figure(best)}" if best is not None else "")


def _metric_column(name: str, unit: str) -> Column:
    def text(row: RunSummary) -> str:
        m = row.metric(name)
        if m is None or not math.isfinite(m.value):
            return "—" if m is None or m.valid else "INVALID"
        value = format_figure(m.value)
        return value if m.valid else f"({value}) INVALID"

    # one column per metric on demand (right-click the header): the headline shows the two
    # a QA engineer reads first, so the list fits a 1366 px laptop without scrolling sideways
    return Column(f"{name} ({unit})" if unit else name, text, "metric",
                  f"{name}; a bracketed value is INVALID (hover for the reason)", metric=name,
                  visible=False)


#: the sort key of a column the database cannot order by (derived when a row is shown)
UNSORTED = ""
BASE_COLUMNS = (
    Column("Run", lambda r: r.run_id[:8], "run", "run id (first 8 characters)"),
    Column("Status", status_in_brief, "status",
           "run status; N INVALID: metrics found invalid; N COM: COMs not verified, not "
           "passed or not tested (hover a row for the whole text)"),
    Column("Verdict", verdict_word, UNSORTED,
           "compliance derived from the run's record: COMPLIANT, NON-COMPLIANT, or SIMULATED "
           "(a simulated instrument or SUT took part; never reportable) — hover a row for the "
           "criteria not met"),
    Column("QA (as recorded)", _qa, "qa", "latest QA disposition (accepted / rejected) and "
           "who decided — as recorded, checked when opened (the run's detail checks it "
           "against the record)"),
    Column("SUT", lambda r: r.sut, "sut", "sorts by vendor, model, serial"),
    Column("Station", lambda r: r.station, "station"),
    Column("Started (UTC)", lambda r: r.started_wall[:16].replace("T", " "), "started"),
    Column("Headline", _headline, "metric", f"{IDLE_METRIC} (every category) and the run's "
           "best VALID active EP; a bracketed value is INVALID; sorts by "
           f"{IDLE_METRIC}", metric=IDLE_METRIC),
    Column("Method", _method, "method", "method, version and its relation to the registry "
           "(hover a row for the whole text); sorts by method and version"),
    Column("Taxonomy", lambda r: r.taxonomy, "taxonomy", visible=False),
    Column("Operator", lambda r: r.operator, "operator", visible=False),
    Column("Duration", _duration, "duration", visible=False),
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
        column = self.columns[section]
        if role == Qt.ItemDataRole.DisplayRole:
            return column.title + self.sort_arrow(column)
        if role == Qt.ItemDataRole.ToolTipRole:
            tip = column.tip or column.title
            return tip if column.sort else f"{tip} (shown, not sortable: derived as it is shown)"
        return None

    def sort_arrow(self, column: Column) -> str:
        """▼ on the column the rows are ordered by, descending (newest, largest first); ▲
        ascending. Drawn here, from the order the database was asked for, because a style's
        own indicator is drawn from the header's state and Fusion draws descending as ▲."""
        if column.sort != self.order.key or column.metric != self.order.metric:
            return ""
        return " ▼" if self.order.descending else " ▲"

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
        if column.sort == "qa" and row.disposition:
            return QBrush(ACCEPTED_COLOUR if row.disposition == "accepted" else INVALID_COLOUR)
        if column.title == "Verdict" and not row.compliance.compliant:
            return QBrush(NON_COMPLIANT_COLOUR)
        metric = row.metric(column.metric) if column.sort == "metric" else None
        if metric is not None and not metric.valid:
            return QBrush(INVALID_COLOUR)
        return None

    def _tip(self, row: RunSummary, column: Column) -> str | None:
        if column.title == "Status":
            bad = [f"{m.name} INVALID: {m.reason}" for m in row.metrics if not m.valid]
            return "\n".join(filter(None, [row.status_text, row.error, *bad]))
        if column.title == "Verdict":
            return row.compliance.summary()
        if column.title == "Method":
            return row.compliance.method_label(row.method_name, row.method_version)
        if column.title == "Headline":
            shown = [m for m in (row.metric(IDLE_METRIC), best_active(row)) if m is not None]
            return "\n".join(f"{m.name} {format_figure(m.value)} {m.unit} "
                              + ("VALID" if m.valid else f"INVALID: {m.reason}")
                              for m in shown) or None
        metric = row.metric(column.metric) if column.sort == "metric" else None
        if metric is not None:
            return "VALID" if metric.valid else f"INVALID: {metric.reason}"
        return column.text(row) or None

    def sort(self, column: int, order=Qt.SortOrder.AscendingOrder) -> None:
        """Sort by ``column``: the database orders the rows; the view re-reads its page."""
        if not 0 <= column < len(self.columns) or not self.columns[column].sort:
            self.headerDataChanged.emit(Qt.Orientation.Horizontal, 0, len(self.columns) - 1)
            return  # the rows keep their order, and the arrow stays where that order is
        self.beginResetModel()
        self.order = self.columns[column].order(order == Qt.SortOrder.DescendingOrder)
        self._pages = OrderedDict()
        self.endResetModel()
        self.headerDataChanged.emit(Qt.Orientation.Horizontal, 0, len(self.columns) - 1)
