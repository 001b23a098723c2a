"""The run history window: find runs, open one in detail, compare several.

The first tab lists the runs (:class:`~ui.history.model.RunsTableModel`: a window onto the
database's list, counted, filtered and sorted by the database, no samples loaded); filters act
at once; a right click on the header chooses the columns. A run opens in its own
tab (double-click or Enter), and "Compare" opens the selected runs side by side.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

from PySide6.QtCore import QDate, Qt, Signal
from PySide6.QtGui import QAction, QKeySequence, QShortcut
from PySide6.QtWidgets import (QAbstractItemView, QComboBox, QDateEdit, QHBoxLayout, QLabel,
                               QLineEdit, QMenu, QPushButton, QTableView, QTabWidget,
                               QVBoxLayout, QWidget)

from app.core.records import RunStatus
from app.reports.content import ReportContent, build_content
from app.signoff.revisions import remember_record_hashes
from app.storage.db import Database
from app.storage.errors import StorageError
from app.storage.history import INVALID, HistoryFilter
from app.storage.repository import load_run
from app.storage.stored import StoredRun
from ui.history.best_foot_forward import BestFootForwardView
from ui.history.com_savings_view import ComSavingsView
from ui.history.compare import CompareView
from ui.history.detail import RunDetailView
from ui.history.loader import RunLoadTab
from ui.history.model import RunsTableModel
from ui.history.source import HistorySource, open_source
from ui.widgets.column_fit import FitColumnsToWidth

RESIZE_SAMPLE_ROWS = 60
NO_DATE = QDate(2000, 1, 1)  # the date edits' "any" value
STATUS_CHOICES = ("Any status", *(s.value for s in RunStatus), INVALID)
#: the run list's order as loaded (newest first), which the header's arrow shows at first
DEFAULT_SORT = "Started (UTC)"


def _date(edit: QDateEdit) -> date | None:
    value = edit.date()
    return None if value == NO_DATE else date(value.year(), value.month(), value.day())


class HistoryView(QWidget):
    """The history window. Give it an open ``database``, or a ``url`` to open (with the
    read-only local fallback of :func:`ui.history.source.open_source`)."""

    #: a run's detail tab replaced its loading tab (``load_detail``)
    detail_opened = Signal(object)
    #: an audit entry was added to the run of this id (its verdict may have changed)
    audited = Signal(str)

    def __init__(self, database: Database | None = None, *, url: str | None = None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("StorWatt — run history")
        self.source = (HistorySource(database, database.url, False, "") if database
                       else open_source(url))
        self._url = url
        self._filter_refused = ""  # the refusal of a filter shown in ``problem``, if any
        self.model = RunsTableModel()
        self.model.failed.connect(self._show_problem)
        self._build()
        self.reload()

    @property
    def database(self) -> Database | None:
        return self.source.database

    # --- layout -------------------------------------------------------------------------------
    def _build(self) -> None:
        self.where = QLabel("")
        self.where.setWordWrap(True)
        self.problem = QLabel("")
        self.problem.setWordWrap(True)
        self.problem.setStyleSheet("color: white; background: #b03030; padding: 4px 8px;"
                                   "border-radius: 3px;")
        self.problem.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.reconnect_button = QPushButton("Re&connect")
        self.reconnect_button.clicked.connect(self.reconnect)

        self.search = QLineEdit()
        self.search.setPlaceholderText("Search id, SUT, method, station, operator, status, QA…")
        self.search.setClearButtonEnabled(True)
        self.date_from, self.date_to = QDateEdit(), QDateEdit()
        for edit, tip in ((self.date_from, "from"), (self.date_to, "to")):
            edit.setCalendarPopup(True)
            edit.setMinimumDate(NO_DATE)
            edit.setSpecialValueText("any")
            edit.setDate(NO_DATE)
            edit.setDisplayFormat("yyyy-MM-dd")
            edit.setToolTip(f"started on or after / before this UTC date ({tip}); "
                            "'any' = no limit")
        self.status_choice = QComboBox()
        self.status_choice.addItems(STATUS_CHOICES)
        self.status_choice.setItemData(len(STATUS_CHOICES) - 1,
                                       "runs with at least one INVALID metric",
                                       Qt.ItemDataRole.ToolTipRole)
        self.taxonomy_choice = QComboBox()
        self.sut_choice = QComboBox()
        self.station_choice = QComboBox()
        self.station_choice.setAccessibleName("Station filter")
        self.clear_button = QPushButton("C&lear filters")
        self.clear_button.clicked.connect(self.clear_filters)
        self.count = QLabel("")
        for signal in (self.search.textChanged, self.date_from.dateChanged,
                       self.date_to.dateChanged, self.status_choice.currentIndexChanged,
                       self.taxonomy_choice.currentIndexChanged,
                       self.sut_choice.currentIndexChanged,
                       self.station_choice.currentIndexChanged):
            signal.connect(self._filters_changed)

        self.table = QTableView()
        self.table.setModel(self.model)
        header = self.table.horizontalHeader()
        # the list opens newest first: the indicator says so, and enabling sorting sorts so
        header.setSortIndicator(1, Qt.SortOrder.DescendingOrder)
        self.table.setSortingEnabled(True)
        # the list comes newest first: the arrow says so (Qt's default arrow is on column 0)
        self.table.sortByColumn(self.model.column_index(DEFAULT_SORT),
                                Qt.SortOrder.DescendingOrder)
        # the model draws the arrow from the order the database was asked for (Fusion's own
        # draws descending as ▲, and a derived column that cannot sort would take it)
        header.setSortIndicatorShown(False)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(22)
        self.table.setAlternatingRowColors(True)
        self.table.setAccessibleName("Runs")
        header.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        header.customContextMenuRequested.connect(self._column_menu)
        header.setToolTip("Click to sort; right-click to choose columns")
        # column widths from the first rows only: measuring every run would read them all
        header.setResizeContentsPrecision(RESIZE_SAMPLE_ROWS)
        self.columns_fit = FitColumnsToWidth(self.table)
        self.table.doubleClicked.connect(lambda index: self.load_detail(
            self.model.run_id(index.row())))
        QShortcut(QKeySequence(Qt.Key.Key_Return), self.table, self.open_selected)
        self.table.selectionModel().selectionChanged.connect(self._selection_changed)

        self.open_button = QPushButton("&Open run")
        self.compare_button = QPushButton("Co&mpare selected")
        self.family_button = QPushButton("&Best foot forward")
        self.family_button.setToolTip("Each metric against a product family's drive count, "
                                      "drive type or RAID level, with its peak")
        self.family_button.clicked.connect(self.best_foot_forward)
        self.open_button.clicked.connect(self.open_selected)
        self.compare_button.clicked.connect(self.compare_selected)
        self.savings_button = QPushButton("COM sa&vings")
        self.savings_button.setToolTip("Two runs: the upper row is the baseline, the lower "
                                       "the optimised configuration (the view can swap them)")
        self.savings_button.clicked.connect(self.savings_selected)
        self.hint = QLabel("Select one run to open it, two or more (Ctrl/Shift+click) to "
                           "compare them.")

        top = QHBoxLayout()
        top.addWidget(self.where, 1)
        top.addWidget(self.reconnect_button)
        filters = QHBoxLayout()
        filters.addWidget(self.search, 3)
        for label, widget in (("From", self.date_from), ("to", self.date_to),
                              ("Status", self.status_choice),
                              ("Taxonomy", self.taxonomy_choice), ("SUT", self.sut_choice),
                              ("Station", self.station_choice)):
            filters.addWidget(QLabel(label))
            filters.addWidget(widget, 1 if widget is self.sut_choice else 0)
        filters.addWidget(self.clear_button)
        actions = QHBoxLayout()
        actions.addWidget(self.count)
        actions.addStretch(1)
        actions.addWidget(self.hint)
        actions.addWidget(self.open_button)
        actions.addWidget(self.compare_button)
        actions.addWidget(self.family_button)
        actions.addWidget(self.savings_button)
        runs_page = QWidget()
        page = QVBoxLayout(runs_page)
        page.addLayout(filters)
        page.addWidget(self.table, 1)
        page.addLayout(actions)

        self.tabs = QTabWidget()
        self.tabs.setTabsClosable(True)
        self.tabs.tabCloseRequested.connect(self._close_tab)
        self.tabs.addTab(runs_page, "Runs")
        self.tabs.tabBar().setTabButton(0, self.tabs.tabBar().ButtonPosition.RightSide, None)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.problem)
        layout.addWidget(self.tabs, 1)
        self._selection_changed()

    # --- data ---------------------------------------------------------------------------------
    def reload(self) -> None:
        """Re-read the run list (keeps the filters)."""
        s = self.source
        mode = "read-only fallback" if s.read_only else "read and audit"
        self.where.setText(f"<b>Database:</b> {s.url} ({mode})")
        self.problem.setText(s.problem)
        self.problem.setVisible(bool(s.problem))
        try:
            self.model.load(s.database)
        except StorageError as exc:
            self._show_problem(str(exc))
        choices = self.model.choices
        self._fill_choice(self.taxonomy_choice, "Any taxonomy", choices.taxonomies)
        self._fill_choice(self.sut_choice, "Any SUT", choices.suts)
        self._fill_choice(self.station_choice, "Any station", choices.stations)
        self._hide_default_columns()
        self.columns_fit.fit()
        self._update_count()

    def _sort_shown(self) -> tuple[str, Qt.SortOrder]:
        """The column title and order the header's sort arrow shows."""
        header = self.table.horizontalHeader()
        section = header.sortIndicatorSection()
        if 0 <= section < len(self.model.columns):
            return self.model.columns[section].title, header.sortIndicatorOrder()
        return DEFAULT_SORT, Qt.SortOrder.DescendingOrder

    def reconnect(self) -> None:
        if self.source.database is not None and self._url is None and not self.source.problem:
            self.reload()
            return
        if self.source.database is not None:
            self.source.database.close()
        self.source = open_source(self._url)
        self.reload()

    def _fill_choice(self, combo: QComboBox, any_text: str, values: Sequence[str]) -> None:
        current = combo.currentText()
        combo.blockSignals(True)
        combo.clear()
        combo.addItem(any_text, "")
        for value in sorted(v for v in values if v):
            combo.addItem(value, value)
        combo.setCurrentIndex(max(0, combo.findText(current)))
        combo.blockSignals(False)

    def _hide_default_columns(self) -> None:
        for i, column in enumerate(self.model.columns):
            self.table.setColumnHidden(i, not column.visible)

    # --- filters ------------------------------------------------------------------------------
    def current_filter(self) -> HistoryFilter:
        status = self.status_choice.currentText()
        return HistoryFilter(
            text=self.search.text(), date_from=_date(self.date_from),
            date_to=_date(self.date_to),
            statuses=frozenset() if self.status_choice.currentIndex() == 0 else
            frozenset({status}), taxonomy=self.taxonomy_choice.currentData() or "",
            sut=self.sut_choice.currentData() or "",
            station=self.station_choice.currentData() or "")

    def _filters_changed(self, *_args) -> None:
        wanted = self.current_filter()
        refused = wanted.refusal()
        if refused is not None:  # said where the list's problems are; the list stays as it was
            self._filter_refused = f"Search not applied: {refused}."
            self._show_problem(self._filter_refused)
            return
        if self._filter_refused and self.problem.text() == self._filter_refused:
            self._filter_refused = ""
            self.problem.setText(self.source.problem)
            self.problem.setVisible(bool(self.source.problem))
        self.model.set_filter(wanted)
        self._update_count()

    def apply_filter(self, wanted: HistoryFilter) -> None:
        """Set the filter widgets to ``wanted`` and filter (one re-filter, not six)."""
        widgets = (self.search, self.date_from, self.date_to, self.status_choice,
                   self.taxonomy_choice, self.sut_choice, self.station_choice)
        for w in widgets:
            w.blockSignals(True)
        self.search.setText(wanted.text)
        for edit, value in ((self.date_from, wanted.date_from), (self.date_to, wanted.date_to)):
            edit.setDate(QDate(value.year, value.month, value.day) if value else NO_DATE)
        status = next(iter(wanted.statuses), "")
        self.status_choice.setCurrentIndex(max(0, self.status_choice.findText(status))
                                           if status else 0)
        for combo, value in ((self.taxonomy_choice, wanted.taxonomy),
                             (self.sut_choice, wanted.sut),
                             (self.station_choice, wanted.station)):
            found = combo.findData(value) if value else 0
            if value and found < 0:  # a SUT fragment typed elsewhere: keep it as a choice
                combo.addItem(value, value)
                found = combo.count() - 1
            combo.setCurrentIndex(found)
        for w in widgets:
            w.blockSignals(False)
        self.model.set_filter(wanted)
        self._update_count()

    def clear_filters(self) -> None:
        self.apply_filter(HistoryFilter())

    def _update_count(self) -> None:
        shown, total = self.model.rowCount(), self.model.total
        self.count.setText(f"{shown:,} of {total:,} runs" if shown != total
                           else f"{total:,} runs")

    def sort_by(self, title: str, descending: bool = False) -> None:
        order = Qt.SortOrder.DescendingOrder if descending else Qt.SortOrder.AscendingOrder
        self.table.sortByColumn(self.model.column_index(title), order)

    # --- columns ------------------------------------------------------------------------------
    def column_menu(self) -> QMenu:
        """The column chooser (checkable action per column)."""
        menu = QMenu(self)
        for i, column in enumerate(self.model.columns):
            action = QAction(column.title, menu)
            action.setCheckable(True)
            action.setChecked(not self.table.isColumnHidden(i))
            action.toggled.connect(lambda on, i=i: self._show_column(i, on))
            menu.addAction(action)
        return menu

    def _show_column(self, column: int, shown: bool) -> None:
        self.table.setColumnHidden(column, not shown)
        self.columns_fit.fit()  # the columns share the width again

    def _column_menu(self, pos) -> None:
        self.column_menu().exec(self.table.horizontalHeader().mapToGlobal(pos))

    # --- opening ------------------------------------------------------------------------------
    def selected_run_ids(self) -> list[str]:
        rows = sorted({i.row() for i in self.table.selectionModel().selectedRows()})
        return [self.model.run_id(r) for r in rows]

    def _selection_changed(self, *_args) -> None:
        n = len(self.selected_run_ids())
        self.open_button.setEnabled(n == 1)
        self.compare_button.setEnabled(n >= 2)
        self.savings_button.setEnabled(n == 2)

    def open_selected(self) -> None:
        ids = self.selected_run_ids()
        if len(ids) == 1:
            self.load_detail(ids[0])
        elif len(ids) > 1:
            self.compare(ids)

    def open_detail(self, run_id: str) -> RunDetailView | None:
        """Open a run's detail, loading it on this thread (scripts, screenshots)."""
        try:
            run = remember_record_hashes(self.database, load_run(self.database, run_id))
        except StorageError as exc:
            self._show_problem(f"cannot open run {run_id[:8]}: {exc}")
            return None
        detail = self._detail(run, build_content(run))
        self.tabs.setCurrentIndex(self.tabs.addTab(detail, f"Run {run_id[:8]}"))
        return detail

    def load_detail(self, run_id: str) -> RunLoadTab:
        """Open a run's detail, loading it in the background (a 24 h run takes seconds):
        a tab with a busy bar at once, replaced by the detail when the run is read."""
        database = self.database
        tab = RunLoadTab(run_id, lambda: remember_record_hashes(database,
                                                                load_run(database, run_id)))
        self.tabs.setCurrentIndex(self.tabs.addTab(tab, f"Run {run_id[:8]} …"))
        tab.start(lambda run, content: self._loaded(tab, run, content))
        return tab

    def _loaded(self, tab: RunLoadTab, run: StoredRun, content: ReportContent) -> None:
        index = self.tabs.indexOf(tab)
        if index < 0:
            return  # the tab was closed while the run loaded
        detail = self._detail(run, content)
        self.tabs.removeTab(index)
        self.tabs.insertTab(index, detail, f"Run {run.run_id[:8]}")
        self.tabs.setCurrentIndex(index)
        tab.deleteLater()
        self.detail_opened.emit(detail)

    def _detail(self, run: StoredRun, content: ReportContent) -> RunDetailView:
        detail = RunDetailView(self.database, run.run_id, read_only=self.source.read_only,
                               loaded=(run, content))
        detail.audited.connect(lambda _run_id: self.reload())
        detail.audited.connect(self.audited)
        return detail

    def compare(self, run_ids: Sequence[str]) -> CompareView | None:
        try:
            view = CompareView(self.database, run_ids)
        except (StorageError, ValueError) as exc:
            self._show_problem(f"cannot compare: {exc}")
            return None
        title = "Compare " + " · ".join(r[:8] for r in run_ids[:3])
        self.tabs.setCurrentIndex(self.tabs.addTab(view, title + (" …" if len(run_ids) > 3
                                                                 else "")))
        return view

    def best_foot_forward(self) -> BestFootForwardView | None:
        """A tab with the best-foot-forward view of the stored product families."""
        if self.database is None:
            return None
        try:
            view = BestFootForwardView(self.database)
        except StorageError as exc:
            self._show_problem(f"cannot read the product families: {exc}")
            return None
        self.tabs.setCurrentIndex(self.tabs.addTab(view, "Best foot forward"))
        return view

    def compare_selected(self) -> CompareView | None:
        return self.compare(self.selected_run_ids())

    def savings(self, base_id: str, opt_id: str) -> ComSavingsView | None:
        """COM savings of ``opt_id`` over ``base_id`` in a tab (docs/method-notes.md §6)."""
        try:
            view = ComSavingsView(load_run(self.database, base_id),
                                  load_run(self.database, opt_id))
        except StorageError as exc:
            self._show_problem(f"cannot compute COM savings: {exc}")
            return None
        self.tabs.setCurrentIndex(self.tabs.addTab(view, f"Savings {base_id[:8]} → "
                                                         f"{opt_id[:8]}"))
        return view

    def savings_selected(self) -> ComSavingsView | None:
        ids = self.selected_run_ids()
        return self.savings(*ids) if len(ids) == 2 else None

    def _show_problem(self, text: str) -> None:
        self.problem.setText(text)
        self.problem.setVisible(True)

    def _close_tab(self, index: int) -> None:
        if index > 0:
            widget = self.tabs.widget(index)
            self.tabs.removeTab(index)
            widget.deleteLater()

    def closeEvent(self, event) -> None:  # noqa: N802 (Qt naming)
        if self.source.database is not None and self._url is not None:
            self.source.database.close()  # opened here; a database passed in is the caller's
        super().closeEvent(event)
