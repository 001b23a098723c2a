"""The real path, end to end through the GUI (issue 24): a technician fills the new-run
wizard as a lab would — Removable Media answered on the classification page, the named SUT
description file loaded, the method file at its largest sample period browsed to, two power
inputs on a 2-channel PTDaemon that identifies as the real daemon, each with its calibration
date and certificate, a DAQ970A reading a steady 22.4 °C inlet with its own — passes the
connection test, starts the run on the station's fake clock, and it ends COMPLIANT. QA then
approves it on the station's database, ``db copy`` takes it to a throw-away PostgreSQL, the
report printed from each side is the same bytes, and the approval reads valid on the copy.

As in the CLI variant (tests/test_real_bench_e2e.py), the SUT's IO is the simulated engine
naming itself a stand-in (real IO cannot run a day-long sequence on a fake clock); the
instruments, drivers over TCP, sequencer, storage, verdict and reports are the shipped ones.
"""

from __future__ import annotations

import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QFileDialog, QWizard

from app.core.records import RunStatus
from app.storage.opening import open_database
from tests.support import pg_server
from tests.support.clocks import HoldingClock
from tests.support.compliant_bench import (CALIBRATED, MAX_DRIVES, SUT, TAXONOMY,
                                           approve_copy_and_compare, lab_files, unmet_criteria)
from tests.support.gui import RUN_TIMEOUT_MS, click_next
from tests.support.real_bench import RealPtd, StandInSut, real_daq970a
from ui.shell.main_window import MainWindow
from ui.wizard import power_inputs_table as table_columns
from app.storage.repository import load_run

#: verdict lines a reverted real-bench fix turns NOT MET (each must be there, and MET):
#: "Calibration" (the thermometer's and each input's date), "Metrics valid" (the supply judged
#: without PTDaemon's frequency, the inlet resolution from the DAQ's digits, the 5 s grid),
#: "Real instruments" (real identities, the stand-in SUT named), "Classification" (the
#: wizard's answers), "Inlet thermometer", "Sample period" (5 s is the method's largest)
MUST_BE_MET = ("Calibration", "Metrics valid", "Real instruments", "Classification",
               "Inlet thermometer", "Sample period")
#: Removable Media's metrics (its plan runs SW and SR, then ready idle)
METRICS = {"EP_SW", "EP_SR", "EP_RI"}


def _fill_inputs(wizard, ptd: RealPtd) -> None:
    """Two rows of the power-inputs table, one per PTDaemon channel, as typed."""
    table = wizard.instruments_page.power_inputs
    for row, (name, element) in enumerate((("psu-a", 1), ("psu-b", 2))):
        table.add_button.click()
        table.table.cellWidget(row, table_columns.DRIVER).setCurrentText("ptd")
        for column, text in ((table_columns.NAME, name), (table_columns.RESOURCE, ptd.resource),
                             (table_columns.ELEMENT, str(element)),
                             (table_columns.CALIBRATION, CALIBRATED),
                             (table_columns.CERTIFICATE, f"PTD-{element}")):
            table.table.item(row, column).setText(text)


@pytest.mark.slow  # ~13 h of method time at 5 s over TCP on the fake clock, then PostgreSQL
@pytest.mark.skipif(bool(pg_server.available()), reason=pg_server.available())
def test_a_wizard_configured_bench_ends_compliant_and_its_approval_survives_the_copy(
        qtbot, tmp_path, monkeypatch) -> None:
    files = lab_files(tmp_path)
    db = f"sqlite:///{tmp_path / 'station.db'}"
    monkeypatch.setattr("app.labs.builder.simulated_engine",
                        lambda sut, config, clock: StandInSut(sut, clock))
    clock = HoldingClock()  # the station's clock, free-running: the run goes to its end
    window = MainWindow(lab="sim", db_url=db, settings=QSettings(
        str(tmp_path / "ui.ini"), QSettings.Format.IniFormat), confirm=lambda *_: True,
        clock=clock)
    qtbot.addWidget(window)
    window.show()
    with RealPtd() as ptd, real_daq970a() as daq:
        wizard = window.new_run()
        # classification: Removable Media without robotics, as many drives as the SUT has
        page = wizard.taxonomy_page
        page.category.setCurrentIndex(page.category.findData("removable", 256))
        page.set_answer("max_drive_count", MAX_DRIVES)
        click_next(qtbot, wizard)
        # the SUT: its description file, as the file dialog hands it over
        monkeypatch.setattr(QFileDialog, "getOpenFileName",
                            staticmethod(lambda *_a, **_k: (str(files.sut), "")))
        qtbot.mouseClick(wizard.sut_page.file_load_button, Qt.MouseButton.LeftButton)
        assert wizard.sut_page.serial.text() == SUT["serial"], wizard.sut_page.error.text()
        click_next(qtbot, wizard)
        # the workload: the simulated lab's IO (the stand-in), the lab's method file
        monkeypatch.setattr(QFileDialog, "getOpenFileName",
                            staticmethod(lambda *_a, **_k: (str(files.method), "")))
        qtbot.mouseClick(wizard.workload_page.browse_button, Qt.MouseButton.LeftButton)
        click_next(qtbot, wizard)
        # the instruments: two PTDaemon channels and the DAQ970A, each with its calibration
        instruments = wizard.instruments_page
        _fill_inputs(wizard, ptd)
        instruments.thermo_driver.setCurrentText("daq970a")
        for field, text in ((instruments.thermo_resource, daq.resource),
                            (instruments.thermo_calibration, CALIBRATED),
                            (instruments.thermo_certificate, "KS-1187")):
            field.clear()
            qtbot.keyClicks(field, text)
        click_next(qtbot, wizard)  # after a passed connection test (it reads both)
        assert wizard.currentPage() is wizard.review_page, instruments.error.text()
        qtbot.keyClicks(wizard.review_page.operator, "tech-1")
        with qtbot.waitSignal(window.run_view.ended, timeout=RUN_TIMEOUT_MS) as ended:
            qtbot.mouseClick(wizard.button(QWizard.WizardButton.FinishButton),
                             Qt.MouseButton.LeftButton)
    assert ended.args[0].status is RunStatus.COMPLETED, ended.args[0].error
    run_id = window.run_view.session.run_id
    database = open_database(db)
    try:
        run = load_run(database, run_id)
    finally:
        database.close()
    verdict = run.compliance.as_json()
    failures = unmet_criteria(verdict)
    assert not failures, (failures, [(m.name, m.reason) for m in run.metrics if not m.valid])
    met = {c["name"] for c in verdict["criteria"] if c["verdict"] == "MET"}
    assert set(MUST_BE_MET) <= met, met
    assert {m.name for m in run.metrics if m.valid} >= METRICS, run.metrics
    assert verdict["compliant"] is True
    assert run.config.taxonomy == TAXONOMY and run.config.method == str(files.method)
    assert (run.config.sut.vendor, run.config.sut.serial) == (SUT["vendor"], SUT["serial"])
    assert dict(run.config.sut.input_supplies) == SUT["power_inputs"]
    assert [(i.name, i.calibration_date) for i in run.config.power_inputs] == \
        [("psu-a", CALIBRATED), ("psu-b", CALIBRATED)]
    assert run.config.temperature_meter.calibration_date == CALIBRATED
    assert run.config.instrument_check.startswith("passed")
    assert "PTDaemon" in run.power_meter.model and not run.power_meter.simulated
    assert "DAQ970A" in run.temperature_meter.model
    window.show_start_page()
    assert "NON-COMPLIANT" not in window.start_page.runs.item(0, 2).text()

    shown = approve_copy_and_compare(db, run_id, tmp_path)
    assert shown["sign_off"].endswith("approved by qa-anna"), shown["sign_off"]
