"""COM savings of two stored runs: the first chosen is the baseline, the second the optimised
configuration (docs/method-notes.md §6).

The prices and enclosure counts are editable (the OPEX rate is a site's figure; the seed's
$5,320 per month per 10 kW is only the default) and the tables recompute at once; the figures
come from :class:`app.metrics.com_savings.ComSavings`, the same as the CLI, xlsx and PDF, which
the "Export…" button writes.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QComboBox, QDoubleSpinBox, QFileDialog, QFormLayout, QGridLayout,
                               QHeaderView, QLabel, QPushButton, QSpinBox,
                               QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget)

from app.reports.com_savings_runs import savings_of_runs
from app.metrics.com_savings import (DEFAULT_ACTIVE_METRIC, SEED_DRIVE_USD, SEED_ENCLOSURE_USD,
                                     SEED_OPEX_PER_10KW_MONTH_USD, ComSavings, CostRates)
from app.rules.comparability import comparison_caveats
from app.metrics.errors import MetricsError
from app.reports.com_savings_report import write_savings_pdf, write_savings_xlsx
from app.storage.stored import StoredRun


def _money(value: float, maximum: float = 1e9) -> QDoubleSpinBox:
    box = QDoubleSpinBox()
    box.setRange(0, maximum)
    box.setDecimals(0)
    box.setPrefix("$")
    box.setGroupSeparatorShown(True)
    box.setValue(value)
    return box


def _count() -> QSpinBox:
    box = QSpinBox()
    box.setRange(0, 10_000)
    return box


class ComSavingsView(QWidget):
    """Editable rates on the left, the before/after and CAPEX/OPEX tables on the right."""

    def __init__(self, baseline: StoredRun, optimised: StoredRun,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.runs = (baseline, optimised)
        self.savings: ComSavings | None = None
        self.opex = _money(SEED_OPEX_PER_10KW_MONTH_USD)
        self.opex.setAccessibleName("OPEX per month per 10 kW")
        self.drive_cost = _money(SEED_DRIVE_USD)
        self.enclosure_cost = _money(SEED_ENCLOSURE_USD)
        self.base_enclosures, self.opt_enclosures = _count(), _count()
        self.active_metric = QComboBox()
        self.active_metric.setAccessibleName("Active metric")
        names = sorted({m.name for r in self.runs for m in r.metrics
                        if m.ops_unit == "IOPS"}) or [DEFAULT_ACTIVE_METRIC]
        self.active_metric.addItems(names)
        if DEFAULT_ACTIVE_METRIC in names:
            self.active_metric.setCurrentText(DEFAULT_ACTIVE_METRIC)
        form = QFormLayout()
        form.addRow("OPEX per month per 10 kW", self.opex)
        form.addRow("Price per drive", self.drive_cost)
        form.addRow("Price per enclosure", self.enclosure_cost)
        form.addRow("Enclosures, baseline", self.base_enclosures)
        form.addRow("Enclosures, optimised", self.opt_enclosures)
        form.addRow("Active workload (IO/W)", self.active_metric)
        self.swap_button = QPushButton("S&wap baseline and optimised")
        self.swap_button.clicked.connect(self.swap)
        self.export_button = QPushButton("E&xport xlsx + PDF…")
        self.export_button.clicked.connect(self._export_dialog)
        form.addRow(self.swap_button)
        form.addRow(self.export_button)

        self.table = QTableWidget(0, 4)
        self.table.setAccessibleName("COM savings")
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.costs = QTableWidget(0, 2)
        self.costs.setAccessibleName("CAPEX and OPEX")
        self.costs.setHorizontalHeaderLabels(["Savings", "Value"])
        self.costs.verticalHeader().setVisible(False)
        self.costs.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.costs.horizontalHeader().setStretchLastSection(True)
        self.problem = QLabel("")
        self.problem.setWordWrap(True)
        self.problem.setStyleSheet("color: #b00020; font-weight: bold;")
        self.title = QLabel("")
        self.title.setWordWrap(True)
        #: why these runs' savings are weak, the same words as the CLI and the exported files
        self.caveats = QLabel("")
        self.caveats.setWordWrap(True)
        self.caveats.setAccessibleName("Savings caveats")
        self.caveats.setStyleSheet("color: #8a5a00; font-weight: bold;")

        grid = QGridLayout()
        grid.addLayout(form, 0, 0, Qt.AlignmentFlag.AlignTop)
        tables = QVBoxLayout()
        tables.addWidget(self.table, 3)
        tables.addWidget(self.costs, 2)
        grid.addLayout(tables, 0, 1)
        grid.setColumnStretch(1, 1)
        layout = QVBoxLayout(self)
        layout.addWidget(self.title)
        layout.addWidget(self.caveats)
        layout.addWidget(self.problem)
        layout.addLayout(grid, 1)
        for box in (self.opex, self.drive_cost, self.enclosure_cost):
            box.valueChanged.connect(self.recompute)
        for count in (self.base_enclosures, self.opt_enclosures):
            count.valueChanged.connect(self.recompute)
        self.active_metric.currentTextChanged.connect(self.recompute)
        self.recompute()

    def swap(self) -> None:
        """The other run becomes the baseline (the history list orders runs newest first)."""
        self.runs = (self.runs[1], self.runs[0])
        self.recompute()

    def recompute(self, *_args) -> None:
        """Rebuild both tables from the runs and the rates now entered."""
        base_run, opt_run = self.runs
        self.title.setText(f"<b>COM savings</b> — baseline {base_run.run_id[:8]} → optimised "
                           f"{opt_run.run_id[:8]} (GB/W from ready idle, IO/W from the "
                           "active workload; docs/method-notes.md §6)")
        try:
            rates = CostRates(self.drive_cost.value(), self.enclosure_cost.value(),
                              self.opex.value())
            self.savings = savings_of_runs(base_run, opt_run, rates,
                                           self.active_metric.currentText(),
                                           self.base_enclosures.value(),
                                           self.opt_enclosures.value())
        except MetricsError as exc:
            self.savings = None
            self.problem.setText(f"cannot compute the savings: {exc}")
        caveats = comparison_caveats(self.runs)
        self.caveats.setText("\n".join(caveats))
        self.caveats.setVisible(bool(caveats))
        self.problem.setVisible(self.savings is None)
        self.export_button.setEnabled(self.savings is not None)
        self._fill()

    def _fill(self) -> None:
        rows = [r.texts() for r in self.savings.rows()] if self.savings else []
        costs = [c.texts() for c in self.savings.cost_rows()] if self.savings else []
        labels = (self.savings.baseline.label, self.savings.optimised.label) if self.savings \
            else ("Baseline", "Optimised")
        self.table.setHorizontalHeaderLabels(["Figure", *labels, "Change"])
        for table, content in ((self.table, rows), (self.costs, costs)):
            table.setRowCount(len(content))
            for i, row in enumerate(content):
                for j, text in enumerate(row):
                    item = QTableWidgetItem(text)
                    item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEditable)
                    if j and table is self.table:
                        item.setTextAlignment(Qt.AlignmentFlag.AlignRight
                                              | Qt.AlignmentFlag.AlignVCenter)
                    table.setItem(i, j, item)

    def rows(self) -> list[tuple[str, ...]]:
        """Both tables as text (tests and screenshots assert on them)."""
        return [tuple(t.item(i, j).text() for j in range(t.columnCount()))
                for t in (self.table, self.costs) for i in range(t.rowCount())]

    def export(self, folder: Path) -> tuple[Path, Path]:
        """Write the table as xlsx and PDF into ``folder``."""
        assert self.savings is not None, "export is disabled while the savings are invalid"
        stem = f"storwatt-com-savings-{self.runs[0].run_id[:8]}-{self.runs[1].run_id[:8]}"
        return (write_savings_xlsx(self.savings, folder / f"{stem}.xlsx"),
                write_savings_pdf(self.savings, folder / f"{stem}.pdf"))

    def _export_dialog(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Export COM savings to folder")
        if folder:
            xlsx, pdf = self.export(Path(folder))
            self.problem.setStyleSheet("")
            self.problem.setText(f"wrote {xlsx.name} and {pdf.name} in {folder}")
            self.problem.setVisible(True)
