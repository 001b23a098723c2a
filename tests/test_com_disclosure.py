"""COM disclosure (issue 14 item 11): "Available in SUT?" and "On during test?" per COM, parity
RAID from the RAID level, the technician's audited heuristic result, NOT VERIFIED (not NOT
PASSED) where the lab has no capacity probe (on real fio: tests/test_fio_run.py, beside the one
local-fio run it reads), and an unknown ``--com`` refused."""

from __future__ import annotations

import argparse

import pytest

from app.cli.cmd_run import config_from_args, register
from app.cli.main import main
from app.rules.com_verdict import ComState, com_verdicts
from app.signoff.revisions import record_com_result
from app.core.records import SutDescription
from app.reports.export import export_run
from app.sequencer.capacity_optimisation import (available_coms, check_declared_coms,
                                                 on_during_test, parity_raid)
from app.storage.audit import AuditError
from tests.support.recorded_runs import record_run
from tests.support.documents import pdf_text
from app.storage.repository import load_run
KNOWN = ("snapshot-ro", "snapshot-rw", "thin-provisioning", "deduplication", "compression",
         "parity-raid")


def verdicts(run) -> dict:
    return {v.com_id: v for v in com_verdicts(run)}


def test_unknown_com_is_refused_in_one_line_listing_the_known_ids(tmp_path, capsys) -> None:
    db = f"sqlite:///{tmp_path / 'x.db'}"
    assert main(["run", "--method", "smoke", "--com", "dedupe", "--db", db]) == 1
    err = capsys.readouterr().err
    assert err == ("storwatt run: unknown COM id dedupe: the method knows "
                   f"{', '.join(KNOWN)}\n")
    assert not (tmp_path / "x.db").exists()  # refused before anything is stored


def test_parity_raid_follows_the_raid_level() -> None:
    assert [parity_raid(r) for r in ("RAID 5", "RAID 6", "raid-60", "RAID 1", "RAID 10",
                                     "RAID 0", "")] == [True, True, True, False, False, False,
                                                        False]
    six = SutDescription(raid="RAID 6")
    assert available_coms(six) == ("parity-raid",) and on_during_test(six, "parity-raid")
    ten = SutDescription(raid="RAID 10")
    assert available_coms(ten) == () and not on_during_test(ten, "parity-raid")
    with pytest.raises(ValueError, match="declared but the SUT's RAID level 'RAID 10' keeps no "
                                         "parity"):
        check_declared_coms(KNOWN, SutDescription(raid="RAID 10", coms_declared=("parity-raid",)))


def test_available_and_on_during_test_are_declared_separately() -> None:
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    args = parser.parse_args(["run", "--com", "deduplication", "--com-off", "thin-provisioning",
                              "--raid", "RAID 10"])
    sut = config_from_args(args).sut
    assert sut.coms_declared == ("deduplication", "thin-provisioning")
    assert sut.coms_on_during_test == ("deduplication",)
    assert available_coms(sut) == ("deduplication", "thin-provisioning")  # no parity: RAID 10
    with pytest.raises(ValueError, match="COM compression is on during the test but not "
                                         "declared available"):
        check_declared_coms(KNOWN, SutDescription(coms_on_during_test=("compression",)))


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    folder = tmp_path_factory.mktemp("com")
    return record_run(folder / "r.db", coms=("deduplication", "snapshot-ro"))


@pytest.mark.process
def test_a_technicians_entry_settles_a_com_and_the_report_names_it(recorded, tmp_path) -> None:
    db = recorded.database
    run = load_run(db, recorded.run_id)
    before = verdicts(run)
    assert before["deduplication"].state is ComState.PASSED  # measured by the station
    assert before["parity-raid"].state is ComState.NOT_VERIFIED  # RAID 6, no station check
    assert before["snapshot-ro"].state is ComState.NOT_VERIFIED
    assert "record the heuristic result with its evidence" in before["snapshot-ro"].detail
    assert not before["compression"].available and not before["compression"].on_during_test
    entry = record_com_result(db, run, "parity-raid", "passed",
                              "array GUI: pool P1 is RAID 6 (8+2)", "T. Technician")
    after = verdicts(load_run(db, run.run_id))
    assert after["parity-raid"].state is ComState.PASSED
    assert after["parity-raid"].entry == entry
    assert after["snapshot-ro"].state is ComState.NOT_VERIFIED  # untouched
    text = pdf_text(export_run(db, run.run_id, tmp_path)["pdf"])
    assert (f"Parity RAID YES YES PASSED recorded by T. Technician on {entry.when} (audit entry "
            f"#{entry.entry_id}): array GUI: pool P1 is RAID 6 (8+2)") in text
    assert "Read-only delta snapshots YES YES NOT VERIFIED" in text


def test_an_entry_is_refused_for_an_unknown_unavailable_or_measured_com(recorded) -> None:
    db = recorded.database
    run = load_run(db, recorded.run_id)
    with pytest.raises(AuditError, match="unknown COM id 'snapshot': the method knows "
                                         + ", ".join(KNOWN)):
        record_com_result(db, run, "snapshot", "passed", "seen", "T")
    with pytest.raises(AuditError, match="COM compression is not available in this run's SUT"):
        record_com_result(db, run, "compression", "passed", "seen", "T")
    with pytest.raises(AuditError, match="COM deduplication was measured by the station"):
        record_com_result(db, run, "deduplication", "not-passed", "seen", "T")
    with pytest.raises(AuditError, match="needs its evidence"):
        record_com_result(db, run, "snapshot-ro", "passed", "  ", "T")


@pytest.mark.process
def test_without_a_capacity_probe_a_com_is_not_verified_not_not_passed(tmp_path) -> None:
    recorded = record_run(tmp_path / "r.db", coms=("deduplication",), capacity_probe=False)
    run = load_run(recorded.database, recorded.run_id)
    dedup = verdicts(run)["deduplication"]
    assert dedup.state is ComState.NOT_VERIFIED
    assert dedup.detail.startswith("this lab has no capacity probe")
    text = pdf_text(export_run(recorded.database, run.run_id, tmp_path)["pdf"])
    assert "Deduplication YES YES NOT VERIFIED this lab has no capacity probe" in text
    assert "COM_deduplication NOT VERIFIED: this lab has no capacity probe" in text  # the log
    assert "NOT PASSED" not in text and "COM_deduplication INVALID" not in text


def test_the_run_summary_says_not_verified_for_an_unobserved_com() -> None:
    from app.cli.console import metrics_table
    from app.core.records import MetricResult

    table = metrics_table([MetricResult("COM_snapshot-ro", float("nan"), "ratio", False,
                                        "needs the array's management interface"),
                           MetricResult("COM_compression", 1.01, "ratio", False, "ratio low")])
    assert "NOT VERIFIED: needs the array's management interface" in table
    assert "INVALID: ratio low" in table


def test_a_raid_layout_with_its_group_in_brackets_is_read_and_nonsense_refused() -> None:
    """Issue 28: "RAID 6 (8+2)" with parity was refused as keeping no parity; "banana" was
    accepted as a RAID level."""
    from app.sequencer.capacity_optimisation import raid_level

    assert [raid_level(r) for r in ("RAID 6 (8+2)", "raid-60 (2×(8+2))", "RAID6", "JBOD",
                                    "RAID 10", "banana", "RAID 7", "RAID 6 8+2")] == \
        ["6", "60", "6", "JBOD", "10", None, None, None]
    check_declared_coms(KNOWN, SutDescription(raid="RAID 6 (8+2)",
                                              coms_declared=("parity-raid",)))
    with pytest.raises(ValueError, match="RAID level 'banana' not understood"):
        check_declared_coms(KNOWN, SutDescription(raid="banana"))


def test_the_log_tells_the_data_sets_reducibility_from_the_coms_ratio(recorded) -> None:
    """Issue 28: "deduplication data set not measured" was followed by "COM_deduplication =
    1.333 ratio VALID": the two are different figures, and the log now says which is which."""
    run = load_run(recorded.database, recorded.run_id)
    dedup = run.metric("COM_deduplication")
    assert dedup is not None and dedup.valid  # the simulated SUT reports its savings
    (line,) = [e.message for e in run.events if e.message.startswith("deduplication data set")]
    assert "own reducibility not measured on the host" in line
    assert line.endswith("is the SUT's savings, from its reported used capacity before and after")
    assert "data set not measured:" not in line
