"""The new-run wizard driven like a technician would: keyboard and clicks, invalid entries
blocking Next with a visible message, Back keeping entries, live instrument test."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from app.core.records import InstrumentConfig, RunConfig
from drivers.simulators.meter import MeterSimulator
from ui.wizard.instruments_page import NOT_TESTED
from ui.wizard.connection import ConnectionReport, check_lab_instruments
from app.station.run_entries import RunEntries, config_from_entries, entries_from_config
from ui.wizard.profiles import SutProfileStore
from ui.wizard.wizard import NewRunWizard
from tests.support.gui import click_next, fill_sut
from tests.support.time_budget import budget_ms

pytestmark = pytest.mark.usefixtures("data_dir")  # the data dir inside tmp_path


def test_negative_capacity_and_empty_serial_block_next_with_a_message(qtbot, wizard) -> None:
    click_next(qtbot, wizard)
    assert wizard.currentPage() is wizard.sut_page
    fill_sut(qtbot, wizard, capacity="-3")
    click_next(qtbot, wizard)
    assert wizard.currentPage() is wizard.sut_page
    assert wizard.sut_page.error.isVisible()
    assert "greater than zero" in wizard.sut_page.error.text()
    assert wizard.sut_page.capacity.hasFocus()  # the field to fix has the focus
    wizard.sut_page.capacity.setText("7.3")
    wizard.sut_page.serial.clear()
    click_next(qtbot, wizard)
    assert wizard.currentPage() is wizard.sut_page
    assert "serial" in wizard.sut_page.error.text()
    qtbot.keyClicks(wizard.sut_page.serial, "AC-1")
    click_next(qtbot, wizard)
    assert wizard.currentPage() is wizard.workload_page
    assert not wizard.sut_page.error.isVisible()


def test_local_fio_without_a_target_blocks_next(qtbot, wizard, tmp_path: Path) -> None:
    click_next(qtbot, wizard)
    fill_sut(qtbot, wizard)
    click_next(qtbot, wizard)
    page = wizard.workload_page
    page.mode_buttons["local-fio"].click()
    click_next(qtbot, wizard)
    assert wizard.currentPage() is page
    assert page.error.isVisible() and "target" in page.error.text()
    qtbot.keyClicks(page.target_entry, str(tmp_path / "scratch.bin"))
    qtbot.keyClick(page.target_entry, Qt.Key.Key_Return)
    assert page.targets.count() == 1
    assert "give a scratch size" in page.safety.text()  # no size: nothing is created
    assert "--target-size" not in page.safety.text()  # the field is beside it, not the CLI
    qtbot.keyClicks(page.target_size, "64M")
    assert "will be created" in page.safety.text()  # the fio driver's own safety check
    click_next(qtbot, wizard)
    assert wizard.currentPage() is wizard.instruments_page
    assert wizard.entries().targets == (str(tmp_path / "scratch.bin"),)


def test_back_never_loses_entries_and_review_shows_the_plan(qtbot, wizard) -> None:
    click_next(qtbot, wizard)
    fill_sut(qtbot, wizard)
    wizard.sut_page.capacity_unit.setCurrentText("GB")
    wizard.sut_page.coms.rows["deduplication"].on.setChecked(True)
    click_next(qtbot, wizard)
    click_next(qtbot, wizard)
    click_next(qtbot, wizard)
    assert wizard.currentPage() is wizard.review_page
    review = wizard.review_page
    names = [review.table.item(r, 0).text() for r in range(review.table.rowCount())]
    assert names[:2] == ["Pre-fill", "Intensity search"]
    assert "COM deduplication" in names and "Ready idle" in names
    assert "NON-COMPLIANT" in review.summary.text()
    assert "7 GB" in review.summary.text() or "7 GB" in review.summary.text().replace(",", "")
    for _ in range(3):
        wizard.back()
    assert wizard.currentPage() is wizard.sut_page
    assert wizard.sut_page.vendor.text() == "Acme"
    assert wizard.sut_page.capacity.text() == "7.3"
    assert wizard.sut_page.capacity_unit.currentText() == "GB"
    config = wizard.run_config()
    assert config.sut.raw_capacity_bytes == 7_300_000_000  # 7.3 GB, decimal
    assert config.sut.coms_declared == ("deduplication",)
    assert config.lab == "sim-direct" and config.method == "smoke"


def press_enter(qtbot, wizard: NewRunWizard) -> None:
    """Enter presses the wizard's default button (Next, then Start) from any line field."""
    qtbot.keyClick(wizard.focusWidget() or wizard, Qt.Key.Key_Return)


def test_the_wizard_is_usable_from_the_keyboard(qtbot, wizard) -> None:
    wizard.taxonomy_page.category.setFocus()
    press_enter(qtbot, wizard)
    assert wizard.currentPage() is wizard.sut_page
    wizard.sut_page.vendor.setFocus()
    for text in ("Acme", "Array 9", "AC-1", "4.2.1", "12"):
        qtbot.keyClicks(wizard.focusWidget(), text)
        qtbot.keyClick(wizard.focusWidget(), Qt.Key.Key_Tab)
    assert (wizard.sut_page.vendor.text(), wizard.sut_page.model.text(),
            wizard.sut_page.serial.text(), wizard.sut_page.firmware.text(),
            wizard.sut_page.capacity.text()) == ("Acme", "Array 9", "AC-1", "4.2.1", "12")
    wizard.sut_page.serial.setFocus()
    press_enter(qtbot, wizard)
    assert wizard.currentPage() is wizard.workload_page


def test_untestable_categories_are_shown_disabled_with_the_reason(qtbot, wizard) -> None:
    page = wizard.taxonomy_page
    model = page.category.model()
    texts = {model.item(r).text(): model.item(r).isEnabled() for r in range(model.rowCount())}
    untestable = [t for t, enabled in texts.items() if not enabled]
    assert any("Adjunct" in t for t in untestable)
    assert any("Interconnect" in t for t in untestable)
    assert all("not testable" in t for t in untestable)
    assert page.derived is not None and page.derived.taxonomy.startswith(page.category_id())


def test_sut_profiles_are_saved_and_reloaded_in_the_page(qtbot, wizard) -> None:
    click_next(qtbot, wizard)
    fill_sut(qtbot, wizard)
    page = wizard.sut_page
    page.profile_name.setText("lab array")
    qtbot.mouseClick(page.save_button, Qt.MouseButton.LeftButton)
    assert page.profile_choice.findText("lab array") >= 0
    page.vendor.clear()
    page.capacity.setText("1")
    qtbot.mouseClick(page.load_button, Qt.MouseButton.LeftButton)
    assert page.vendor.text() == "Acme" and page.capacity.text() == "7.3"


def test_connection_test_reads_the_simulated_lab(qtbot, wizard) -> None:
    click_next(qtbot, wizard)
    fill_sut(qtbot, wizard)
    for _ in range(2):
        click_next(qtbot, wizard)
    page = wizard.instruments_page
    assert page.meter_driver.findText("wt300") >= 0  # the registry's drivers are offered
    qtbot.mouseClick(page.test_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: page.test_button.isEnabled(), timeout=budget_ms(5000))
    text = page.result.text()
    assert "SIM-PM" in text and " W ± " in text and "range 300 V" in text
    assert "inlet" in text and "°C" in text
    # issue 28: a power input added after a passed test makes the result stale on screen too
    # (it said "passed" beside the error "it must pass")
    page.power_inputs.add_row()
    assert page.result.text() == NOT_TESTED and page.verdict() == ""
    # issue 28: the models a driver speaks to are on the page, not only an id ("wt300")
    page.meter_driver.setCurrentText("wt300")
    assert "speaks to: WT310" in page.meter_models.text()
    assert page.meter_models.isVisibleTo(page)
    page.meter_resource.setText("TCPIP::10.0.0.7::INST0")
    page.meter_driver.setCurrentText("sim")  # switched back: the old address goes nowhere
    assert not page.meter_models.isVisibleTo(page)
    assert wizard.entries().meter_resource == ""  # never "sim TCPIP::…" on the review


def test_connection_test_speaks_to_a_wire_level_meter() -> None:
    with MeterSimulator("wt310") as sim:
        sim.set_state(123.4, 230.0)
        report = power_check(InstrumentConfig("wt300", sim.resource))
    assert report.ok, report.text
    assert "WT310" in report.text and "123.4" in report.text
    dead = power_check(InstrumentConfig("wt300", "TCPIP::127.0.0.1::1::SOCKET",
                                        {"timeout_s": 0.3, "reconnect_attempts": 0}))
    assert not dead.ok and "wt300" in dead.text


def power_check(meter: InstrumentConfig) -> ConnectionReport:
    """The wizard's connection test of a sim lab whose power meter is ``meter``."""
    return check_lab_instruments(RunConfig(power_meter=meter))[0]


def test_workload_page_refuses_station_files_and_needs_a_typed_path(qtbot, tmp_path: Path) -> None:
    db = tmp_path / "station.db"
    db.write_bytes(b"SQLite format 3\0")
    notes = tmp_path / "notes.txt"
    notes.write_text("a lab's notes")
    w = NewRunWizard(entries=RunEntries(method="smoke"), simulated_lab="sim-direct",
                     store=SutProfileStore(tmp_path / "profiles.json"), protected=(str(db),))
    qtbot.addWidget(w)
    w.show()
    qtbot.waitExposed(w)
    click_next(qtbot, w)
    fill_sut(qtbot, w)
    click_next(qtbot, w)
    page = w.workload_page
    page.mode_buttons["local-fio"].click()
    for target in (db, notes):
        qtbot.keyClicks(page.target_entry, str(target))
        qtbot.keyClick(page.target_entry, Qt.Key.Key_Return)
    page.targets.setCurrentRow(0)
    qtbot.keyClicks(page.confirm_device, str(db))  # typing the database's path changes nothing
    assert page.safety.text().startswith("✘") and "belongs to the station" in page.safety.text()
    page.confirm_device.clear()
    page.targets.setCurrentRow(1)
    assert "✘" in page.safety.text() and f"type the path ({notes})" in page.safety.text()
    page.targets.setCurrentRow(0)
    page.remove_target()
    click_next(qtbot, w)  # the unconfirmed existing file blocks Next
    assert w.currentPage() is page and "type the path" in page.error.text()
    qtbot.keyClicks(page.confirm_device, str(notes))
    page.targets.setCurrentRow(0)
    assert page.safety.text().startswith("✔") and "confirmed" in page.safety.text()
    click_next(qtbot, w)
    assert w.currentPage() is w.instruments_page
    assert w.run_config().confirm_device == str(notes)
    assert notes.read_text() == "a lab's notes" and db.read_bytes() == b"SQLite format 3\0"


def test_the_sut_declares_its_supply_and_ashrae_class(qtbot, wizard) -> None:
    """Every sample is checked against the declared supply and class, so the wizard asks for
    them (choices from the method) and the run gets exactly what was chosen."""
    click_next(qtbot, wizard)
    fill_sut(qtbot, wizard)
    page = wizard.sut_page
    assert page.supply.findData("1P-100-120") >= 0 and page.ashrae_class.findData("A4") >= 0
    page.supply.setCurrentIndex(page.supply.findData("1P-100-120"))
    page.ashrae_class.setCurrentIndex(page.ashrae_class.findData("A4"))
    entries = page.collect(wizard.entries())
    sut = config_from_entries(entries).sut
    assert (sut.supply, sut.ashrae_class) == ("1P-100-120", "A4")
    again = entries_from_config(config_from_entries(entries))
    assert (again.supply, again.ashrae_class) == ("1P-100-120", "A4")  # Repeat keeps them


def test_the_workload_page_takes_a_method_file_and_names_a_bad_one(qtbot, wizard, tmp_path,
                                                                   monkeypatch) -> None:
    """Browse… loads a lab variant (``base = "emerald-block-v3"``, claiming compliance with
    1 s intervals) with the run's loader: offered with its derived verdict and passed to the
    run as its path; a broken file is refused naming the file, key and reason (issue 14
    item 8; old code: no way to choose a file)."""
    from PySide6.QtWidgets import QFileDialog

    good = tmp_path / "lab-fast.toml"
    good.write_text('base = "emerald-block-v3"\nname = "lab-fast"\ncompliant = true\n'
                    'interval_s = 1.0\n')
    bad = tmp_path / "lab-bad.toml"
    bad.write_text('base = "emerald-block-v3"\nname = "lab-bad"\ncompliant = false\n'
                   'interval_s = 0.5\n')
    click_next(qtbot, wizard)
    fill_sut(qtbot, wizard)
    click_next(qtbot, wizard)
    page = wizard.workload_page
    assert wizard.currentPage() is page
    chosen = iter([str(bad), str(good)])
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (next(chosen), ""))
    qtbot.mouseClick(page.browse_button, Qt.MouseButton.LeftButton)
    note = page.method_note.text()
    assert "cannot be used" in note and "lab-bad.toml" in note and "key 'interval_s'" in note
    assert page.method.findData(str(bad)) < 0
    qtbot.mouseClick(page.browse_button, Qt.MouseButton.LeftButton)
    assert page.method.currentData() == str(good)
    assert "lab-fast" in page.method.currentText()
    assert "method numbers NON-COMPLIANT" in page.method.currentText()
    assert page.method_note.text().startswith("NON-COMPLIANT")
    click_next(qtbot, wizard)
    click_next(qtbot, wizard)
    assert wizard.currentPage() is wizard.review_page
    assert "NON-COMPLIANT" in wizard.review_page.summary.text()
    assert wizard.run_config().method == str(good)


def test_every_label_with_an_accelerator_has_a_buddy(qtbot, wizard) -> None:
    """Issue 28: "&Method:" showed a literal & and Alt+M did nothing (a form row holding a
    layout gets no buddy)."""
    from PySide6.QtWidgets import QLabel

    for page in (wizard.taxonomy_page, wizard.sut_page, wizard.workload_page,
                 wizard.instruments_page, wizard.review_page):
        for label in page.findChildren(QLabel):
            text = label.text().replace("&&", "")
            if "&" in text and not text.lstrip().startswith("<") and "&nbsp;" not in text:
                assert label.buddy() is not None, f"{label.text()!r} has no buddy"
    method = [label for label in wizard.workload_page.findChildren(QLabel)
              if label.text() == "&Method:"]
    assert method and method[0].buddy() is wizard.workload_page.method


def test_a_failed_meter_is_named_once_and_a_passing_thermometer_is_not_red(qtbot,
                                                                          wizard) -> None:
    """Issue 28: "wt300 at TCPIP::…: TCPIP::… did not answer" named the resource twice, and
    the passing thermometer's line was red beside the failed meter's."""
    from ui.wizard.connection import ConnectionReport, failed_report
    from drivers.interfaces import InstrumentError

    resource = "TCPIP::192.0.2.9::10001::SOCKET"
    report = failed_report(f"wt300 at {resource}",
                     InstrumentError(f"{resource} did not answer within 2 s"))
    assert report.text == f"wt300: {resource} did not answer within 2 s"
    assert report.text.count(resource) == 1
    assert failed_report("wt300 at X", InstrumentError("refused")).text == "wt300 at X: refused"
    page = wizard.instruments_page
    page._show_reports(page.settings(), report, ConnectionReport(True, "DAQ970A — inlet 22 °C"))
    lines = page.result.text().split("<br>")
    assert "#c03030" in lines[0] and "✘ Power meter" in lines[0]
    assert "#287a46" in lines[1] and "✔ Thermometer" in lines[1]


def test_removing_a_refused_target_removes_its_refusal(qtbot, wizard) -> None:
    """Issue 28: a /dev/vda refusal stayed on the page after the target was removed."""
    click_next(qtbot, wizard)
    fill_sut(qtbot, wizard)
    click_next(qtbot, wizard)
    page = wizard.workload_page
    page.mode_buttons["local-fio"].setChecked(True)
    page.target_entry.setText("/dev/null")  # a device: refused without its typed name
    page.add_target()
    assert page.safety.isVisible() and page.safety.text()
    click_next(qtbot, wizard)
    assert wizard.currentPage() is page and page.error.isVisible()
    qtbot.mouseClick(page.remove_button, Qt.MouseButton.LeftButton)
    assert page.targets.count() == 0
    assert not page.safety.isVisible() and not page.error.isVisible()


def test_drives_above_the_maximum_configuration_block_next_on_both_pages(qtbot) -> None:
    """Issue 28: 50 drives were accepted against a maximum configuration of 48; and a new
    run on the simulated array (50 drives) started with a maximum configuration of 1."""
    from PySide6.QtWidgets import QWizard

    w = NewRunWizard(entries=entries_from_config(RunConfig(method="smoke")),
                     simulated_lab="sim-direct")
    qtbot.addWidget(w)
    w.show()
    qtbot.waitExposed(w)
    tax, sut = w.taxonomy_page, w.sut_page
    next_button = w.button(QWizard.WizardButton.NextButton)
    # the defaults agree: the unanswered maximum configuration is the SUT's drive count
    assert sut.drive_count.value() == 50 and tax.answers()["max_drive_count"] == 50
    assert next_button.isEnabled() and not tax.conflict.isVisible()
    tax.set_answer("max_drive_count", 48)
    assert tax.conflict.isVisible() and tax.conflict.text() == (
        "The SUT's drive count 50 is more than its maximum configuration of 48 drives (a "
        "classification answer): the product cannot hold more drives than it supports; "
        "correct the drive count or the maximum configuration. (The drive count is on the "
        "next page.)")
    # page 1 says it, page 2 (where the drive count is) blocks until one is corrected
    assert next_button.isEnabled()
    click_next(qtbot, w)
    assert w.currentPage() is sut and sut.conflict.isVisible()
    assert not next_button.isEnabled() and sut.conflict.text().startswith(
        "The SUT's drive count 50 is more than its maximum configuration of 48 drives")
    sut.drive_count.setValue(48)
    assert next_button.isEnabled() and not sut.conflict.isVisible()
    assert not tax.conflict.isVisible()
    w.back()
    tax.set_answer("max_drive_count", 96)
    click_next(qtbot, w)
    sut.drive_count.setValue(97)
    assert not next_button.isEnabled() and sut.conflict.isVisible()
    assert "drive count 97" in sut.conflict.text() and "of 96 drives" in sut.conflict.text()
    with pytest.raises(ValueError, match="drive count 97 is more than its maximum "
                                         "configuration of 96"):
        config_from_entries(w.entries())
    sut.drive_count.setValue(96)
    assert next_button.isEnabled() and not sut.conflict.isVisible()
    # another category starts from the same answers, not from the taxonomy's default of 1
    w.back()
    tax.category.setCurrentIndex(tax.category.findData("removable", 256))
    assert tax.answers()["max_drive_count"] == 96 and next_button.isEnabled()
