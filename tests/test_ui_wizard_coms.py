"""The wizard declares each COM's "Available in SUT?" and "On during test?" separately (issue 14
item 11), as ``storwatt run --com`` / ``--com-off`` do: the page's coupled checkboxes, the
RunConfig, the stored run's disclosure, a repeated run and a saved SUT profile."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWizard

from app.rules.com_verdict import com_verdicts
from app.reports.export import export_run
from app.core.records import RunConfig, SutDescription
from tests.support.documents import pdf_text
from tests.support.recorded_runs import record_run
from tests.support.gui import fill_sut
from tests.support.gui import GOOD
from app.station.run_entries import EntryError, config_from_entries, entries_from_config
from ui.wizard.profiles import SutProfileStore
from ui.wizard.wizard import NewRunWizard
from app.storage.repository import load_run

pytestmark = pytest.mark.usefixtures("data_dir")  # the data dir inside tmp_path


ON_AND_OFF = replace(GOOD, coms=("deduplication",), coms_off=("thin-provisioning",))


def test_available_and_on_are_declared_as_the_cli_does() -> None:
    sut = config_from_entries(ON_AND_OFF).sut
    assert sut.coms_declared == ("deduplication", "thin-provisioning")
    assert sut.coms_on_during_test == ("deduplication",)


def test_a_com_the_method_does_not_offer_is_refused_naming_it() -> None:
    with pytest.raises(EntryError) as err:
        config_from_entries(replace(GOOD, coms_off=("dedupe",)))
    assert err.value.field == "coms"
    assert "unknown COM id dedupe: the method knows snapshot-ro" in err.value.message


def test_repeating_a_run_restores_available_and_on() -> None:
    original = config_from_entries(ON_AND_OFF)
    entries = entries_from_config(original)
    assert (entries.coms, entries.coms_off) == (("deduplication",), ("thin-provisioning",))
    assert config_from_entries(entries) == original


def test_a_saved_profile_keeps_available_and_on(tmp_path: Path) -> None:
    store = SutProfileStore(tmp_path / "profiles.json")
    sut = config_from_entries(ON_AND_OFF).sut
    store.save("lab array", sut)
    assert store.load_all()["lab array"] == sut


def test_a_profile_without_the_on_list_loads_its_coms_as_on(tmp_path: Path) -> None:
    """The wizard always meant a ticked COM as available and on; a profile file that lacks
    ``coms_on_during_test`` (hand-written, or cut down) keeps that meaning."""
    path = tmp_path / "profiles.json"
    path.write_text(json.dumps({"old": {"vendor": "V", "coms_declared": ["compression"]}}))
    old = SutProfileStore(path).load_all()["old"]
    assert old.coms_declared == old.coms_on_during_test == ("compression",)


def test_on_during_test_implies_available(qtbot, wizard) -> None:
    rows = wizard.sut_page.coms.rows
    dedup = rows["deduplication"]
    dedup.on.setChecked(True)
    assert dedup.available.isChecked()
    dedup.available.setChecked(False)
    assert not dedup.on.isChecked()
    thin = rows["thin-provisioning"]
    thin.available.setChecked(True)
    assert thin.available.isChecked() and not thin.on.isChecked()  # available, off
    assert "not on during the active test" in thin.on.toolTip()
    assert "method-notes.md §2" in thin.available.toolTip()


def test_the_sut_page_fits_the_768_px_screen(qtbot, wizard) -> None:
    """1366 × 768 less a 40 px task bar: the two checkbox rows must not push Next off it."""
    qtbot.mouseClick(wizard.button(QWizard.WizardButton.NextButton), Qt.MouseButton.LeftButton)
    assert wizard.currentPage() is wizard.sut_page
    assert wizard.sizeHint().height() <= 728, wizard.sizeHint()


@pytest.mark.process
def test_the_wizard_stores_one_com_on_and_one_off_and_the_report_discloses_both(
        qtbot, wizard, tmp_path: Path) -> None:
    qtbot.mouseClick(wizard.button(QWizard.WizardButton.NextButton), Qt.MouseButton.LeftButton)
    fill_sut(qtbot, wizard)
    page = wizard.sut_page
    page.raid.setCurrentText("RAID 10")  # no parity RAID: only the two COMs below
    qtbot.mouseClick(page.coms.rows["deduplication"].on, Qt.MouseButton.LeftButton)
    qtbot.mouseClick(page.coms.rows["thin-provisioning"].available, Qt.MouseButton.LeftButton)
    wizard.review_page.initializePage()
    summary = wizard.review_page.summary.text()
    assert ("Available in SUT:</b> deduplication, thin-provisioning; <b>On during test:</b> "
            "deduplication") in summary
    sut = wizard.run_config().sut
    assert sut.coms_declared == ("deduplication", "thin-provisioning")
    assert sut.coms_on_during_test == ("deduplication",)

    recorded = record_run(tmp_path / "r.db", method="smoke", sut=sut)
    run = load_run(recorded.database, recorded.run_id)
    assert run.config.sut == sut
    thin = {v.com_id: v for v in com_verdicts(run)}["thin-provisioning"]
    assert thin.available and not thin.on_during_test
    text = pdf_text(export_run(recorded.database, run.run_id, tmp_path)["pdf"])
    assert "Thin provisioning YES NO NOT VERIFIED" in text
    assert "Deduplication YES YES PASSED" in text


def test_a_repeated_run_and_a_profile_refill_both_checkboxes(qtbot, tmp_path: Path) -> None:
    config = RunConfig(method="smoke", taxonomy="online-2", lab="sim-direct",
                       sut=SutDescription(vendor="V", model="M", serial="S", raid="RAID 10",
                                          coms_declared=("compression", "snapshot-ro"),
                                          coms_on_during_test=("compression",)))
    store = SutProfileStore(tmp_path / "profiles.json")
    w = NewRunWizard(entries=entries_from_config(config), simulated_lab="sim-direct",
                     store=store)
    qtbot.addWidget(w)
    page = w.sut_page
    checked = {c: (r.available.isChecked(), r.on.isChecked()) for c, r in page.coms.rows.items()}
    assert checked["compression"] == (True, True)
    assert checked["snapshot-ro"] == (True, False)
    assert checked["deduplication"] == (False, False)

    store.save("array", config.sut)
    for row in page.coms.rows.values():
        row.available.setChecked(False)
    page.refresh_profiles()
    page.profile_choice.setCurrentText("array")
    page.load_selected_profile()
    assert page.coms.rows["snapshot-ro"].available.isChecked()
    assert not page.coms.rows["snapshot-ro"].on.isChecked()
    assert page.coms.rows["compression"].on.isChecked()


def test_an_earlier_com_no_method_offers_is_named_not_dropped_silently(qtbot, tmp_path) -> None:
    entries = replace(GOOD, coms=("deduplication", "dedupe"))
    w = NewRunWizard(entries=entries, simulated_lab="sim-direct",
                     store=SutProfileStore(tmp_path / "profiles.json"))
    qtbot.addWidget(w)
    assert "dedupe" in w.sut_page.error.text()
    assert not w.sut_page.error.isHidden()


def test_parity_raid_ticked_on_a_raid_without_parity_blocks_next_naming_it(qtbot,
                                                                           wizard) -> None:
    qtbot.mouseClick(wizard.button(QWizard.WizardButton.NextButton), Qt.MouseButton.LeftButton)
    fill_sut(qtbot, wizard)
    page = wizard.sut_page
    page.raid.setCurrentText("RAID 10")
    parity = page.coms.rows["parity-raid"]
    assert "follows the RAID level" in parity.available.toolTip()
    parity.available.setChecked(True)
    qtbot.mouseClick(wizard.button(QWizard.WizardButton.NextButton), Qt.MouseButton.LeftButton)
    assert wizard.currentPage() is page
    assert ("COM parity-raid is declared but the SUT's RAID level 'RAID 10' keeps no parity"
            in page.error.text())
    parity.available.setChecked(False)
    qtbot.mouseClick(wizard.button(QWizard.WizardButton.NextButton), Qt.MouseButton.LeftButton)
    assert wizard.currentPage() is wizard.workload_page


def test_a_raid_level_the_station_cannot_read_blocks_next_at_the_raid_field(qtbot,
                                                                            wizard) -> None:
    """Issue 28: "banana" was accepted; "RAID 6 (8+2)" with parity ticked was refused."""
    qtbot.mouseClick(wizard.button(QWizard.WizardButton.NextButton), Qt.MouseButton.LeftButton)
    fill_sut(qtbot, wizard)
    page = wizard.sut_page
    page.raid.setCurrentText("banana")
    qtbot.mouseClick(wizard.button(QWizard.WizardButton.NextButton), Qt.MouseButton.LeftButton)
    assert wizard.currentPage() is page
    assert "RAID level 'banana' not understood" in page.error.text()
    assert page.raid.hasFocus() or page.raid.lineEdit().hasFocus()
    page.raid.setCurrentText("RAID 6 (8+2)")
    page.coms.rows["parity-raid"].available.setChecked(True)
    qtbot.mouseClick(wizard.button(QWizard.WizardButton.NextButton), Qt.MouseButton.LeftButton)
    assert wizard.currentPage() is wizard.workload_page
