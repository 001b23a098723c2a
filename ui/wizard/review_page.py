"""Review page: the whole plan before anything starts — configuration, every phase with its
planned duration, the total and the expected end time; an abbreviated variant is flagged
NON-COMPLIANT here as everywhere."""

from __future__ import annotations

import html
from datetime import datetime, timedelta

from collections.abc import Callable

from PySide6.QtWidgets import (QAbstractItemView, QCheckBox, QFormLayout, QHeaderView, QLabel,
                               QLineEdit, QTableWidget, QTableWidgetItem, QVBoxLayout)

from app.metrics.formatting import format_duration
from app.rules.compliance import ComplianceVerdict, assess_method
from app.method.loader import MethodError, load_method
from app.core.records import InstrumentConfig, RunConfig
from app.sequencer.capacity_optimisation import available_coms, on_during_test
from app.sequencer.plan import build_phases, latest_extension_s
from app.storage.range_advisor import AdvisedPlan
from app.station.forecast import forecast, forecast_evidence, forecast_text
from ui.widgets.confirm import Confirm, ask_yes_no
from ui.wizard.base import EntryPage, with_changes
from app.station.run_entries import EntryError, RunEntries, config_from_entries

GB = 10**9


def plan_rows(config: RunConfig) -> tuple[list[tuple[str, str, str, str]], float, float, bool]:
    """(phase, kind, planned, intervals) rows, total planned seconds, the latest total if every
    stabilisation extends to the method's limit (method-notes §4), and whether the method's
    numbers meet its minimums (derived, app.rules.compliance.assess_method; never the file's
    claim)."""
    method = load_method(config.method)
    phases = build_phases(method, config)
    rows = []
    for p in phases:
        planned = format_duration(p.planned_s) if p.planned_s else "until the target is full"
        extension = latest_extension_s(method, p)
        if extension:
            planned += f" (latest {format_duration(p.planned_s + extension)})"
        intervals = ""
        if p.measurement_intervals:
            intervals = f"{p.measurement_intervals} measurement intervals"
            if p.stabilisation_intervals:
                intervals = f"{p.stabilisation_intervals} stabilisation + " + intervals
        rows.append((p.name, p.kind.value.replace("_", " "), planned, intervals))
    total = sum(p.planned_s for p in phases)
    return rows, total, total + sum(latest_extension_s(method, p) for p in phases), \
        assess_method(method).compliant


def summary_text(config: RunConfig, compliant: bool) -> str:
    sut = config.sut
    available = available_coms(sut)  # parity RAID follows the RAID level, as in the report
    on = [c for c in available if on_during_test(sut, c)]
    lines = [
        f"<b>Method:</b> {config.method}"
        + ("" if compliant else " <span style='color:#c03030'><b>NON-COMPLIANT: the method's "
                                "numbers do not meet its minimums</b></span>"),
        f"<b>Classification:</b> {config.taxonomy}"
        + (f" — {config.classification_reason}" if config.classification_reason else ""),
        f"<b>SUT:</b> {sut.vendor} {sut.model}, s/n {sut.serial}, raw capacity "
        f"{sut.raw_capacity_bytes / GB:,.0f} GB ({sut.raw_capacity_bytes:,} bytes), "
        f"{sut.drive_count} × {sut.drive_type}, {sut.raid}",
        f"<b>Available in SUT:</b> {', '.join(available) or 'none'}; "
        f"<b>On during test:</b> {', '.join(on) or 'none'}",
        f"<b>Lab:</b> {config.lab}"
        + (f"; targets {', '.join(sut.targets)}" if sut.targets else "")
        + (f"; load hosts {', '.join(sut.load_hosts)}" if sut.load_hosts else ""),
        f"<b>Supply:</b> {html.escape(sut.supply)}; <b>ASHRAE class:</b> "
        f"{html.escape(sut.ashrae_class)}",
        _meters(config),
        f"<b>Connection test:</b> {html.escape(config.instrument_check or 'not run')}",
    ]
    if sut.notes.strip():
        lines.append(f"<b>Notes:</b> {html.escape(sut.notes.strip())}")
    return "<br>".join(lines)


def _meters(config: RunConfig) -> str:
    """The power meter (or each power input with its meter, element, wiring and calibration)
    and the thermometer: the review is the whole configuration, not its first meter."""
    thermometer = _instrument(config.temperature_meter)
    if not config.power_inputs:
        meter = config.power_meter
        return (f"<b>Power meter:</b> {_instrument(meter)}{_calibrated(meter.calibration_date)};"
                f" <b>thermometer:</b> {thermometer}"
                f"{_calibrated(config.temperature_meter.calibration_date)}")
    rows = "".join(
        f"<br>&nbsp;&nbsp;• {html.escape(i.name)}: "
        f"{_instrument(InstrumentConfig(i.driver, i.resource))}"
        + (f", element {i.element}" if i.element is not None else "")
        + f", {html.escape(i.wiring)}{_calibrated(i.calibration_date)}"
        for i in config.power_inputs)
    return (f"<b>Power inputs ({len(config.power_inputs)}, summed):</b>{rows}<br>"
            f"<b>Thermometer:</b> {thermometer}"
            f"{_calibrated(config.temperature_meter.calibration_date)}")


def _calibrated(when: str) -> str:
    return f" (calibrated {html.escape(when)})" if when else ""


#: the range advisor as the wizard sees it: a plan of an earlier run of this SUT, or None
RangeAdvice = Callable[[RunConfig], AdvisedPlan | None]


class ReviewPage(EntryPage):
    def __init__(self, confirm: Confirm = ask_yes_no, advice: RangeAdvice | None = None) -> None:
        super().__init__("Review and start", "Check the plan. Nothing has been started yet; "
                         "click Start run to begin (Enter does not start a run).")
        self.confirm = confirm
        self.total_s = 0.0
        self.compliant = False
        self.summary = QLabel("")
        self.summary.setWordWrap(True)
        # the verdict as far as the set-up decides it (app.station.forecast), before Start
        self.forecast = QLabel("")
        self.forecast.setWordWrap(True)
        self.forecast.setAccessibleName("Verdict forecast")
        self.verdict: ComplianceVerdict | None = None
        self.table = QTableWidget(0, 4)
        self.table.setHorizontalHeaderLabels(("Phase", "Kind", "Planned duration",
                                              "Intervals"))
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setSectionResizeMode(
            QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.total = QLabel("")
        # the range advisor (method-notes §3): offered only when an earlier completed run of
        # this SUT stored a plan; ticking the box is the operator's confirmation
        self.advice = advice
        self.advised: AdvisedPlan | None = None
        self.reuse_ranges = QCheckBox("")
        self.range_plan = QLabel("")
        self.range_plan.setWordWrap(True)
        self.operator = QLineEdit()
        self.operator.setPlaceholderText("your name, as it should appear in the report")
        operator_row = QFormLayout()
        operator_row.addRow("&Operator:", self.operator)
        self.widgets = {"operator": self.operator}
        layout = QVBoxLayout(self)
        layout.addWidget(self.summary)
        layout.addWidget(self.forecast)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.total)
        layout.addWidget(self.reuse_ranges)
        layout.addWidget(self.range_plan)
        layout.addLayout(operator_row)
        layout.addWidget(self.error)
        self.config: RunConfig | None = None

    def collect(self, e: RunEntries) -> RunEntries:
        reuse = self.advised is not None and self.reuse_ranges.isChecked()
        return with_changes(e, operator=self.operator.text(),
                            range_plan_from=self.advised.run_id if reuse and self.advised
                            else "")

    def load(self, e: RunEntries) -> None:
        self.operator.setText(e.operator)

    def initializePage(self) -> None:  # noqa: N802 (Qt naming)
        self.clear_error()
        try:
            config = config_from_entries(self.entries())
            rows, total_s, latest_s, compliant = plan_rows(config)
        except (EntryError, MethodError, KeyError) as exc:
            self.config = None
            self.show_error(getattr(exc, "message", None) or str(exc))
            return
        self.config = config
        self.total_s, self.compliant = total_s, compliant
        self.summary.setText(summary_text(config, compliant))
        self._show_forecast(config)
        self.table.setRowCount(len(rows))
        for r, row in enumerate(rows):
            for c, text in enumerate(row):
                self.table.setItem(r, c, QTableWidgetItem(text))
        end = datetime.now() + timedelta(seconds=total_s)
        latest = datetime.now() + timedelta(seconds=latest_s)
        prefill = " plus the pre-fill (runs until the target is full)" if any(
            row[2].startswith("until") for row in rows) else ""
        self._offer_range_plan(config)
        self.total.setText(f"<b>Total planned:</b> {format_duration(total_s)}{prefill}; "
                           f"expected end about {end:%Y-%m-%d %H:%M} if started now; latest "
                           f"{latest:%Y-%m-%d %H:%M} if every stabilisation extends to the "
                           f"method's limit.")

    def _show_forecast(self, config: RunConfig) -> None:
        method = load_method(config.method)
        self.verdict = forecast(config, method)
        colour = "#287a46" if self.verdict.compliant else "#c03030"
        details = "".join(f"<br>• {html.escape(line)}"
                          for line in forecast_evidence(self.verdict, method))
        self.forecast.setToolTip("\n".join(forecast_evidence(self.verdict)))
        self.forecast.setText(f"<span style='color:{colour}'><b>"
                              f"{html.escape(forecast_text(self.verdict))}</b></span>{details}")

    def _offer_range_plan(self, config: RunConfig) -> None:
        """Show the plan the advisor offers for this SUT, unticked: the ranging pass runs
        unless the operator ticks it."""
        self.advised = self.advice(config) if self.advice else None
        self.reuse_ranges.setVisible(self.advised is not None)
        self.range_plan.setVisible(self.advised is not None)
        if self.advised is None:
            self.reuse_ranges.setChecked(False)
            return
        self.reuse_ranges.setText(f"Use the range plan of run {self.advised.run_id[:8]} "
                                  f"({self.advised.started_wall}) instead of a ranging pass")
        self.range_plan.setText("<br>".join(html.escape(line)
                                            for line in self.advised.plan.describe()))

    def hint_start(self) -> None:
        """Enter was pressed: say how a run is started instead of starting it."""
        self.show_error("Enter does not start a run: click “Start run” when the plan is "
                        "right.")

    def validatePage(self) -> bool:  # noqa: N802 (Qt naming)
        """A compliant run lasts hours: ask once more, naming its length and end time."""
        if not super().validatePage():
            return False
        if not self.compliant:
            return True
        end = datetime.now() + timedelta(seconds=self.total_s)
        verdict = forecast_text(self.verdict) if self.verdict else ""
        return self.confirm(self, "Start the run?",
                            f"This run takes about {format_duration(self.total_s)} and should "
                            f"end about {end:%Y-%m-%d %H:%M} (plus any pre-fill).\n\n{verdict}"
                            "\n\nStart it now?")

    def check(self, e: RunEntries) -> None:
        if not e.operator.strip():
            raise EntryError("operator", "Enter the operator's name: the report and the "
                             "record name who ran the test.")
        config = config_from_entries(e)
        try:
            load_method(config.method).plan_for(config.category)
        except (MethodError, KeyError) as exc:
            raise EntryError("method", str(exc).strip("'\"")) from None


def _instrument(spec: InstrumentConfig) -> str:
    """``driver resource``, without a dangling space when the resource is empty (the simulated
    lab's meters have none)."""
    if spec.driver == "sim" and "::" in spec.resource:
        return "sim (simulated)"  # an address left from a real driver is not used: not shown
    return html.escape(" ".join(part for part in (spec.driver, spec.resource) if part))

