"""The SUT a lab keeps and names (issue 24 item 6): one description file the command line takes
(``--sut FILE``) and the wizard saves and loads, checked by the same rules as the wizard's
fields; nothing of the simulated SUT outside the simulated labs; one capacity rounding."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.cli.cmd_run import config_from_args
from app.cli.main import build_parser
from app.core.records import PowerSupplies, SutDescription
from app.station.sut_file import SutFileError, load_sut_file, save_sut_file
from app.station.run_entries import EntryError, RunEntries, check_sut, parse_capacity

LAB_SUT = {"vendor": "Acme", "model": "StoreMax 9000", "serial": "SM9-000123",
           "firmware": "4.2.1", "raw_capacity": "7.3 TB", "drives": 24, "drive_type": "SSD",
           "raid": "RAID 10", "coms_on": ["thin-provisioning"], "coms_off": [],
           "supply": "1P-200-240", "ashrae_class": "A2",
           "power_supplies": {"count": 2, "redundancy": "1+1", "nameplate_w": 1600},
           "power_inputs": {"psu-a": 1, "psu-b": 2}}


def write(tmp_path: Path, **changes) -> Path:
    path = tmp_path / "array.json"
    path.write_text(json.dumps({**LAB_SUT, **changes}), encoding="utf-8")
    return path


def test_a_lab_file_describes_the_sut_and_round_trips(tmp_path: Path) -> None:
    sut = load_sut_file(write(tmp_path))
    assert (sut.vendor, sut.serial, sut.firmware, sut.raw_capacity_bytes, sut.drive_count,
            sut.raid) == ("Acme", "SM9-000123", "4.2.1", 7_300_000_000_000, 24, "RAID 10")
    assert sut.power_supplies == PowerSupplies(2, "1+1", 1600.0)
    assert sut.input_supplies == (("psu-a", 1), ("psu-b", 2))
    again = tmp_path / "saved.json"
    save_sut_file(again, sut)
    assert load_sut_file(again) == sut


@pytest.mark.parametrize(("changes", "message"), [
    ({"serial": ""}, "serial: String should have at least 1 character"),
    ({"colour": "red"}, "colour: Extra inputs are not permitted"),
    ({"power_supplies": {"count": 2, "redundancy": "2+1", "nameplate_w": 1600}},
     "redundancy 2+1 names 3 supplies, count says 2"),
    ({"power_inputs": {"psu-a": 3}}, "power input 'psu-a' is mapped to supply 3"),
    ({"raw_capacity": "lots"}, "raw_capacity: 'lots' is not a number"),
])
def test_a_bad_file_is_refused_naming_the_field(tmp_path: Path, changes: dict,
                                                message: str) -> None:
    with pytest.raises(SutFileError, match="SUT file .*array.json: ") as info:
        load_sut_file(write(tmp_path, **changes))
    assert message in str(info.value)


def test_the_cli_takes_the_file_and_typed_options_override_it(tmp_path: Path) -> None:
    args = build_parser().parse_args(["run", "--lab", "local-fio", "--sut",
                                      str(write(tmp_path)), "--target", str(tmp_path / "x"),
                                      "--target-size", "1M",
                                      "--firmware", "4.2.2"])
    sut = config_from_args(args).sut
    assert (sut.vendor, sut.model, sut.firmware, sut.coms_on_during_test) == \
        ("Acme", "StoreMax 9000", "4.2.2", ("thin-provisioning",))


def test_a_real_lab_never_gets_the_simulated_suts_identity(tmp_path: Path) -> None:
    argv = ["run", "--lab", "local-fio", "--target", str(tmp_path / "x"), "--target-size",
            "1M", "--capacity-gb", "1.001",
            "--supply", "1P-200-240", "--ashrae-class", "A2", "--drives", "2", "--raid",
            "RAID 1"]
    with pytest.raises(ValueError, match="needs --sut FILE .the SUT description. or --vendor, "
                       "--model, --serial:"):  # named, as in the wizard: never the simulated SUT
        config_from_args(build_parser().parse_args(argv))
    args = build_parser().parse_args([*argv, "--vendor", "Acme", "--model", "M1", "--serial",
                                      "S1"])
    sut = config_from_args(args).sut
    simulated = SutDescription()
    assert (sut.vendor, sut.model, sut.serial) == ("Acme", "M1", "S1")
    assert sut.drive_type != simulated.drive_type or sut.drive_type == ""
    # one rounding: the command line and the wizard store the same bytes for 1.001 GB
    assert sut.raw_capacity_bytes == parse_capacity("1.001", "GB") == 1_001_000_000


def test_the_cli_refuses_inputs_the_file_does_not_know(tmp_path: Path) -> None:
    args = build_parser().parse_args(["run", "--lab", "sim-direct", "--sut",
                                      str(write(tmp_path)), "--power-input",
                                      "name=psu-a,driver=sim", "--power-input",
                                      "name=psu-c,driver=sim"])
    with pytest.raises(ValueError, match="maps power input.s. psu-b to a supply"):
        config_from_args(args)


def test_the_wizard_checks_supplies_by_the_files_rule() -> None:
    base = RunEntries(vendor="Acme", model="M", serial="S", capacity="1", psu_count=2,
                         psu_nameplate_w="1600")
    with pytest.raises(EntryError) as info:
        check_sut(base.__class__(**{**base.__dict__, "psu_redundancy": "2+1"}))
    assert info.value.field == "psu_count" and "names 3 supplies, count says 2" in \
        info.value.message
    ok = check_sut(base.__class__(**{**base.__dict__, "psu_redundancy": "1+1"}))
    assert ok.power_supplies == PowerSupplies(2, "1+1", 1600.0)


@pytest.mark.parametrize(("change", "field", "words"), [
    ({"psu_nameplate_w": "0"}, "psu_nameplate_w",
     "Power supplies: nameplate rating (W, from the label) must be more than 0."),
    ({"psu_nameplate_w": "lots"}, "psu_nameplate_w", "Power supplies: nameplate rating:"),
    ({"psu_redundancy": ""}, "psu_redundancy",
     "Power supplies: redundancy is missing (N+M, e.g. 1+1)."),
    ({"psu_count": 2000, "psu_redundancy": "1999+1"}, "psu_count",
     "Power supplies: count must be at most 1000."),
])
def test_a_supplies_entry_is_refused_in_the_forms_words_at_its_field(change, field: str,
                                                                     words: str) -> None:
    """Issue 41: the wizard showed pydantic's "Input should be greater than 0." with the focus
    on the supply count, though the nameplate rating was wrong."""
    base = RunEntries(vendor="Acme", model="M", serial="S", capacity="1", psu_count=2,
                      psu_redundancy="1+1", psu_nameplate_w="1600")
    with pytest.raises(EntryError) as info:
        check_sut(base.__class__(**{**base.__dict__, **change}))
    assert info.value.field == field and info.value.message.startswith(words)
    assert "Input should" not in info.value.message


def test_the_wizard_focuses_the_supplies_field_that_is_wrong(qtbot, tmp_path: Path) -> None:
    from ui.wizard.profiles import SutProfileStore
    from ui.wizard.sut_page import SutPage

    page = SutPage(SutProfileStore(tmp_path / "profiles.json"))
    qtbot.addWidget(page)
    page.show()
    page.show_error("x", "psu_nameplate_w")
    assert page.psu_nameplate.hasFocus() or page.focusWidget() is page.psu_nameplate


def test_the_wizard_page_saves_and_loads_the_file(qtbot, tmp_path: Path) -> None:
    from ui.wizard.profiles import SutProfileStore
    from ui.wizard.sut_page import SutPage

    page = SutPage(SutProfileStore(tmp_path / "profiles.json"))
    qtbot.addWidget(page)
    assert page.load_file(write(tmp_path))
    assert (page.vendor.text(), page.firmware.text(), page.psu_count.value(),
            page.psu_redundancy.text()) == ("Acme", "4.2.1", 2, "1+1")
    saved = tmp_path / "from-wizard.json"
    assert page.save_file(saved)
    assert load_sut_file(saved) == load_sut_file(write(tmp_path))
    assert not page.load_file(write(tmp_path, drives=0))
    assert "drives" in page.error.text()
