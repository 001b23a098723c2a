"""The new-run wizard's rules, without Qt: what blocks Next and what RunConfig comes out."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from app.core.records import RunConfig, SutDescription
from app.core.station_settings import station_name
from app.station.run_entries import (EntryError, check_targets, config_from_entries,
                                     entries_from_config, parse_capacity)
from ui.wizard.profiles import ProfileStoreError, SutProfileStore
from tests.support.gui import GOOD




def test_capacity_is_decimal_and_stored_in_bytes() -> None:
    assert parse_capacity("7300", "GB") == 7_300_000_000_000
    assert parse_capacity("7.3", "TB") == 7_300_000_000_000
    assert parse_capacity(" 1,5 ", "GB") == 1_500_000_000


@pytest.mark.parametrize("text", ["-1", "0", "", "abc", "nan", "inf"])
def test_bad_capacity_is_rejected_with_a_message(text: str) -> None:
    with pytest.raises(EntryError) as err:
        config_from_entries(replace(GOOD, capacity=text))
    assert err.value.field == "capacity"
    assert "capacity" in err.value.message.lower()


@pytest.mark.parametrize("field", ["vendor", "model", "serial"])
def test_empty_identity_fields_are_rejected(field: str) -> None:
    with pytest.raises(EntryError) as err:
        config_from_entries(replace(GOOD, **{field: "  "}))
    assert err.value.field == field


def test_local_fio_needs_a_target_and_load_hosts_need_hosts() -> None:
    with pytest.raises(EntryError) as err:
        config_from_entries(replace(GOOD, workload_mode="local-fio", targets=(" ",)))
    assert err.value.field == "targets"
    with pytest.raises(EntryError) as err:
        config_from_entries(replace(GOOD, workload_mode="load-hosts", targets=("/data/f",)))
    assert err.value.field == "load_hosts"
    with pytest.raises(EntryError) as err:  # the hosts need a target path too
        config_from_entries(replace(GOOD, workload_mode="load-hosts", load_hosts=("h1",)))
    assert err.value.field == "targets"
    with pytest.raises(EntryError, match="Not a host"):
        config_from_entries(replace(GOOD, workload_mode="load-hosts", load_hosts=("a b:1",),
                                   targets=("/data/f",)))


def test_hardware_meter_needs_an_address() -> None:
    with pytest.raises(EntryError) as err:
        config_from_entries(replace(GOOD, meter_driver="wt310", meter_resource=""))
    assert err.value.field == "meter_resource"


def test_config_from_entries_carries_every_entry() -> None:
    config = config_from_entries(replace(GOOD, workload_mode="local-fio",
                                        targets=("/tmp/a", ""), notes=" rack 4 ",
                                        target_size="64M"))
    assert config.lab == "local-fio"
    assert config.method == "smoke" and config.taxonomy == "online-2"
    sut = config.sut
    assert (sut.vendor, sut.model, sut.serial) == ("Acme", "Array 9", "AC-1")
    assert sut.raw_capacity_bytes == 7_300_000_000_000
    assert sut.coms_declared == sut.coms_on_during_test == ("deduplication",)
    assert sut.targets == ("/tmp/a",) and sut.notes == "rack 4"
    assert config_from_entries(replace(GOOD, simulated_lab="sim-direct")).lab == "sim-direct"


def test_a_stored_config_round_trips_through_the_wizard_entries() -> None:
    original = RunConfig(method="demo", taxonomy="near-online-2", lab="local-fio",
                         sut=SutDescription(vendor="V", model="M", serial="S",
                                            raw_capacity_bytes=146_000_000_000, drive_count=3,
                                            drive_type="SSD", load_hosts=("h1:8765",),
                                            targets=("/data/scratch.bin",)),
                         target_size="1G", station=station_name())
    again = config_from_entries(entries_from_config(original))
    assert again == original  # a run set up here records this station's name


def test_sut_profiles_are_saved_and_loaded(tmp_path: Path) -> None:
    store = SutProfileStore(tmp_path / "profiles.json")
    sut = config_from_entries(GOOD).sut
    store.save("lab array", sut)
    store.save("other", replace(sut, serial="X"))
    loaded = store.load_all()
    assert loaded["lab array"] == sut and loaded["other"].serial == "X"
    with pytest.raises(ProfileStoreError):
        store.save(" ", sut)
    (tmp_path / "profiles.json").write_text("{broken")
    with pytest.raises(ProfileStoreError, match="profiles.json"):
        store.load_all()


def test_unsafe_targets_are_refused_by_the_fio_safety_check(tmp_path: Path) -> None:
    # the workload page's early look at the file system (the run's lab checks again)
    with pytest.raises(EntryError) as err:  # a directory is neither a file nor a device
        check_targets(replace(GOOD, workload_mode="local-fio", targets=(str(tmp_path),)))
    assert err.value.field == "targets" and "neither a file nor a block device" in str(err.value)
    with pytest.raises(EntryError, match="scratch size"):
        check_targets(replace(GOOD, workload_mode="local-fio",
                              targets=(str(tmp_path / "new.bin"),), target_size="lots"))
    config = config_from_entries(replace(GOOD, workload_mode="local-fio", target_size="16M",
                                        targets=(str(tmp_path / "new.bin"),)))
    assert config.target_size == "16M"  # read by app.labs.local_fio
    assert entries_from_config(config).target_size == "16M"
