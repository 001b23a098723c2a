"""Fuzzed wizard entries (issue 15, docs/reliability.md): whatever a technician types or pastes
into the wizard's text fields, each page either accepts it or refuses it with an
:class:`EntryError` whose ``field`` is a widget of the wizard (the one the page focuses) and a
short message; never another exception.

Entries go through the widgets (``wizard.load`` then ``wizard.entries``), so the conversions
the pages do are fuzzed too; choices are picked from the widgets' own lists.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tests.support.fuzz_limits import memory_cap
from app.station.run_entries import (CAPACITY_UNITS, DRIVE_TYPES, RAID_LEVELS, WORKLOAD_MODES,
                                     EntryError, RunEntries, parse_capacity)
from ui.wizard.profiles import SutProfileStore
from ui.wizard.wizard import NewRunWizard

TEXT = st.one_of(
    st.text(max_size=40),
    st.sampled_from(["", " ", "7.3", "7,3", "7300 GB", "1e400", "nan", "inf", "-1", "0",
                     "0.0000000001", "9" * 40, "1e30 TB", "7.3 TiB", "/dev/sda", "/proc/x",
                     "/tmp", "host:99999", "[::1]:8765", "TCPIP::127.0.0.1::1::SOCKET",
                     "a\nb", "\x00", "é", "💾"]),
    st.builds(lambda n: "x" * n, st.integers(0, 10_000)))
LINES = st.lists(TEXT, max_size=3).map(tuple)
FIELDS = ("vendor", "model", "serial", "capacity", "notes", "target_size", "confirm_device",
          "meter_resource", "thermo_resource", "operator")


@pytest.fixture(scope="module")
def wizard(tmp_path_factory):
    from PySide6.QtWidgets import QApplication

    _app = QApplication.instance() or QApplication([])
    root = tmp_path_factory.mktemp("wizard-fuzz")
    w = NewRunWizard(entries=RunEntries(method="smoke"), simulated_lab="sim-direct",
                     store=SutProfileStore(root / "profiles.json"))
    yield w
    w.deleteLater()


@st.composite
def entries(draw, wizard: NewRunWizard) -> RunEntries:
    texts = {"vendor": "Acme", "model": "A1", "serial": "S1", "capacity": "7.3"}
    texts |= {name: draw(TEXT) for name in draw(st.lists(st.sampled_from(FIELDS), min_size=1,
                                                         max_size=4, unique=True))}
    methods = [wizard.workload_page.method.itemData(i)
               for i in range(wizard.workload_page.method.count())]
    spin = wizard.sut_page.drive_count
    return RunEntries(
        **texts, capacity_unit=draw(st.sampled_from(sorted(CAPACITY_UNITS))),
        decimal_point=draw(st.sampled_from([".", ","])),
        drive_count=draw(st.integers(spin.minimum(), spin.maximum())),
        drive_type=draw(st.sampled_from(DRIVE_TYPES)), raid=draw(st.sampled_from(RAID_LEVELS)),
        workload_mode=draw(st.sampled_from(sorted(WORKLOAD_MODES))),
        targets=draw(LINES), load_hosts=draw(LINES), method=draw(st.sampled_from(methods)),
        meter_driver=draw(st.sampled_from(["sim", "wt300", "ptd"])),
        thermo_driver=draw(st.sampled_from(["sim", "none", "daq970a"])),
        instrument_check=draw(st.sampled_from(["", "passed: fuzz"])))


@pytest.mark.slow
@pytest.mark.gui
@pytest.mark.timeout(240)
@settings(max_examples=1000, deadline=None, database=None, report_multiple_bugs=False,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                 HealthCheck.data_too_large])
@given(data=st.data())
def test_wizard_pages_refuse_fuzzed_entries_naming_the_field(data, wizard, tmp_path: Path,
                                                             monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)  # relative target paths are looked up here
    wizard.load(data.draw(entries(wizard)))
    typed = wizard.entries()
    widgets = {name for page in wizard.pages for name in page.widgets}
    with memory_cap():
        for page in wizard.pages[1:]:  # the taxonomy page has no typed field
            try:
                page.check(typed)
            except EntryError as exc:
                assert exc.field in widgets, (type(page).__name__, exc.field, exc.message)
                assert exc.message.strip() and len(exc.message) < 2_000, exc.message[:200]
                event(f"refused: {exc.field}")
                break
        else:
            event("accepted by every page")


def test_a_pasted_value_is_quoted_as_its_start_and_length() -> None:
    """Found by the fuzzer: a 10 KB paste into the capacity field became a 10 KB message."""
    with pytest.raises(EntryError) as exc:
        parse_capacity("x" * 10_000, "TB")
    assert exc.value.field == "capacity"
    assert "(10000 characters)" in exc.value.message and len(exc.value.message) < 600
