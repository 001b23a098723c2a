"""Sign-off (issue 14 item 15): the report carries the record's SHA-256 and revision; an
audited entry that changes a verdict makes a new revision listing the change; QA's approval is
shown on the report, bound to the revision and hash it approved."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import openpyxl
import pytest

from app.cli.main import main
from app.signoff.revisions import record_com_result
from app.reports.export import export_run
from app.signoff.revisions import approve, sign_off
from app.core.station_settings import station_name
from app.storage.audit import AuditError, add_audit_entry
from app.storage.record_hash import canonical_json, facts_sha256
from tests.support.documents import pdf_text
from tests.support.tamper import tamper
from tests.support.recorded_runs import record_run
from app.storage.repository import load_run
HASH = re.compile(r"Record SHA-256 \(revision (\d+)\) ([0-9a-f]{64})")
#: the runs here are simulated demo runs: approving one needs a confirmation naming why
DEMO = "simulated demo run, approved to test the sign-off"


def tdr_info(path: Path) -> dict:
    book = openpyxl.load_workbook(path, read_only=True)
    return {r[0]: r[1] for r in book["Test Data Report"].iter_rows(values_only=True)}


def signoff_rows(path: Path) -> list[tuple]:
    book = openpyxl.load_workbook(path, read_only=True)
    return [r[:8] for r in book["Sign-off"].iter_rows(values_only=True)][1:]


@pytest.fixture()
def recorded(tmp_path):
    return record_run(tmp_path / "r.db", coms=("deduplication",))


@pytest.mark.process
def test_hash_is_stable_across_exports_and_changes_when_a_sample_changes(recorded,
                                                                         tmp_path) -> None:
    db = recorded.database
    first = export_run(db, recorded.run_id, tmp_path / "a")
    second = export_run(db, recorded.run_id, tmp_path / "b")
    printed = [HASH.search(pdf_text(p["pdf"])).groups() for p in (first, second)]
    assert printed[0] == printed[1] and printed[0][0] == "1"
    assert tdr_info(first["xlsx"])["Record SHA-256"] == printed[0][1]
    assert tdr_info(second["xlsx"])["Record SHA-256"] == printed[0][1]
    assert sign_off(load_run(db, recorded.run_id)).current.sha256 == printed[0][1]  # re-opened
    tamper(tmp_path / "r.db", "UPDATE power_samples SET watts = watts + 0.001 WHERE id = "
           "(SELECT min(id) FROM power_samples)")  # one sample, one milliwatt
    changed = sign_off(load_run(db, recorded.run_id))
    assert changed.current.number == 1 and changed.current.sha256 != printed[0][1]


def test_canonical_form_spells_each_value_once() -> None:
    assert canonical_json({"b": float("nan"), "a": (1, 2.5, float("inf")), 3: {99.9: True}}) == \
        b'{"3":{"99.9":true},"a":[1,2.5,"inf"],"b":null}'


def test_a_field_added_to_a_record_leaves_older_runs_hashes_alone() -> None:
    """A search result's measured access pattern (revision 0014) is left out of the canonical
    form while it is empty, so a run stored before it hashes as it did; once measured, it
    is part of the facts (app/core/records.py::ADDED_FIELD)."""
    from app.sequencer.events import SearchResult
    from drivers.interfaces import MeasuredPattern
    older = SearchResult("MW1", 16, 1, 1000.0, "IOPS", 9.5, None, ((16, 1000.0, 9.5),), "")
    assert canonical_json(older) == (
        b'{"avg_response_ms":9.5,"generator":[],"jobs":1,"note":"","ops_rate":1000.0,'
        b'"ops_unit":"IOPS","probes":[[16,1000.0,9.5]],"profile":"MW1","queue_depth":16,'
        b'"rate_iops":null}')
    pattern = MeasuredPattern("MW1", 20000, 0.5, 70.1, 0.0, True, 0.4, 0.0, 100.0)
    measured = canonical_json(SearchResult("MW1", 16, 1, 1000.0, "IOPS", 9.5, pattern=pattern))
    assert b'"pattern":{"aligned":true,"high_pct":100.0,"ios":20000,' in measured


@pytest.mark.process
def test_a_com_entry_makes_revision_2_listing_the_change(recorded, tmp_path, capsys) -> None:
    db = recorded.database
    run = load_run(db, recorded.run_id)
    original = sign_off(run).current.sha256
    add_audit_entry(db, run.run_id, "note", "a note changes no verdict", "QA")
    assert sign_off(load_run(db, run.run_id)).current.sha256 == original  # still revision 1
    entry = record_com_result(db, run, "parity-raid", "passed", "array GUI: RAID 6", "T. Tech")
    after = sign_off(load_run(db, run.run_id))
    assert [r.number for r in after.revisions] == [1, 2]
    assert after.revisions[0].sha256 == original  # revision 1 still hashes as it did
    assert after.current.sha256 != original
    assert after.current.entry == entry
    assert after.current.changes == (f"COM parity-raid: NOT VERIFIED → PASSED (audit entry "
                                     f"#{entry.entry_id})",)
    paths = export_run(db, run.run_id, tmp_path)
    text = pdf_text(paths["pdf"])
    assert HASH.search(text).groups() == ("2", after.current.sha256)
    # the PDF font's →; the cell wraps, so the next column's text may fall between the words
    assert re.search(r"COM parity-raid: NOT VERIFIED -> PASSED \(audit .{0,120}?entry "
                     rf"#{entry.entry_id}\)", text)
    rows = signoff_rows(paths["xlsx"])
    assert [(r[0], r[1], r[2]) for r in rows] == [("revision", 1, original),
                                                  ("revision", 2, after.current.sha256)]
    assert rows[1][6] == after.current.summary
    # issue 26: on which database each revision was made, in every view
    database_id = sqlite3.connect(recorded.database.url.removeprefix("sqlite:///")).execute(
        "SELECT id FROM database_identity").fetchone()[0]
    made = f"station {station_name()}, r.db (database {database_id[:8]})"  # this PC's name
    assert entry.made_on == made
    assert [r.made_on for r in after.revisions] == [
        f"station {run.config.station}, as measured", made]
    assert [r[8] for r in openpyxl.load_workbook(paths["xlsx"], read_only=True)["Sign-off"]
            .iter_rows(min_row=2, values_only=True)] == [r.made_on for r in after.revisions]
    flat = " ".join(text.split())
    # the header cell wraps: the next column's "(UTC)" may fall between its words
    assert re.search(r"By, on .{0,40}?database", flat) and f"(database {database_id[:8]})" in flat
    capsys.readouterr()
    assert main(["runs", "show", run.run_id, "--db", recorded.database.url]) == 0
    shown = capsys.readouterr().out
    assert f"   2  {made}: COM parity-raid" in shown
    assert f"   1  station {run.config.station}, as measured: as recorded" in shown


@pytest.mark.process
def test_approval_appears_on_the_report_bound_to_the_revision_it_approved(recorded,
                                                                          tmp_path) -> None:
    db = recorded.database
    run = load_run(db, recorded.run_id)
    record_com_result(db, run, "parity-raid", "passed", "array GUI: RAID 6", "T. Tech")
    approved = sign_off(load_run(db, run.run_id)).current
    approve(db, load_run(db, run.run_id), "Q. Auditor", "Figures and disclosures reviewed.",
            confirm=DEMO)
    now = sign_off(load_run(db, run.run_id))
    assert now.approval is not None and now.status == "Revision 2 — approved by Q. Auditor"
    paths = export_run(db, run.run_id, tmp_path / "r2")
    text = pdf_text(paths["pdf"])
    line = (f"QA approval: Approved by Q. Auditor on {now.approvals[0].entry.when}: Figures and "
            f"disclosures reviewed. — applies to revision 2 (SHA-256 {approved.sha256}, "
            "storwatt-record/2) — approved under rules 3 as NON-COMPLIANT because ")
    assert line in text and "not to the later revision" not in text
    info = tdr_info(paths["xlsx"])
    assert info["Sign-off"] == "Revision 2 — approved by Q. Auditor"
    assert info["QA approval"] == now.approvals[0].describe()
    assert signoff_rows(paths["xlsx"])[-1][:3] == ("approval", 2, approved.sha256)

    # a later verdict entry: revision 3, and the approval stays with revision 2
    record_com_result(db, run, "parity-raid", "not-passed",
                      "second look: pool P2 is RAID 10", "T. Tech")
    later = sign_off(load_run(db, run.run_id))
    assert later.current.number == 3 and later.approval is None
    assert later.status == "Revision 3 — not approved (the last approval applies to revision 2)"
    text = pdf_text(export_run(db, run.run_id, tmp_path / "r3")["pdf"])
    assert f"applies to revision 2 (SHA-256 {approved.sha256}, storwatt-record/2), not to the " \
           "later revision " \
           "shown here" in text
    assert HASH.search(text).group(1) == "3"


def test_approval_of_a_revision_no_longer_current_is_refused(recorded) -> None:
    db = recorded.database
    seen = load_run(db, recorded.run_id)  # QA reviews revision 1 ...
    record_com_result(db, seen, "parity-raid", "passed", "array GUI", "T. Tech")  # ... meanwhile
    with pytest.raises(AuditError, match="is at revision 2 now, not 1"):
        approve(db, seen, "Q. Auditor", "Reviewed.", confirm=DEMO)
    with pytest.raises(AuditError, match="needs its statement"):
        approve(db, load_run(db, recorded.run_id), "Q. Auditor", " ", confirm=DEMO)


def test_cli_records_a_com_result_and_an_approval(recorded, tmp_path, capsys) -> None:
    url = str(recorded.database.url)
    rid = recorded.run_id[:8]
    assert main(["runs", "com", rid, "--com", "parity-raid", "--result", "passed",
                 "--evidence", "array GUI: RAID 6", "--by", "T. Tech", "--db", url]) == 0
    out = capsys.readouterr().out
    assert "COM parity-raid PASSED by T. Tech: array GUI: RAID 6" in out
    assert out.rstrip().endswith("Revision 2 — not approved by QA")
    assert main(["runs", "com", rid, "--com", "raid", "--result", "passed", "--evidence", "x",
                 "--by", "T", "--db", url]) == 1
    assert "unknown COM id 'raid': the method knows" in capsys.readouterr().err
    assert main(["runs", "approve", rid, "--by", "Q. Auditor", "--statement", "Reviewed.",
                 "--confirm", DEMO, "--db", url]) == 0
    assert "APPROVED revision 2 by Q. Auditor: Reviewed." in capsys.readouterr().out
    assert main(["runs", "show", rid, "--db", url]) == 0
    assert "Sign-off        Revision 2 — approved by Q. Auditor" in capsys.readouterr().out


def test_facts_hash_does_not_depend_on_the_trail(recorded) -> None:
    db = recorded.database
    run = load_run(db, recorded.run_id)
    record_com_result(db, run, "parity-raid", "passed", "array GUI", "T. Tech")
    assert facts_sha256(load_run(db, run.run_id)) == facts_sha256(run)


def test_an_approval_of_a_record_changed_afterwards_is_not_valid(recorded, tmp_path) -> None:
    db = recorded.database
    approve(db, load_run(db, recorded.run_id), "Q. Auditor", "Reviewed.", confirm=DEMO)
    # the record edited behind StorWatt's back
    tamper(tmp_path / "r.db", "UPDATE metrics SET value = value * 1.1 WHERE name = 'EP_RI'")
    after = sign_off(load_run(db, recorded.run_id))
    assert after.approval is None
    assert after.approvals[0].describe().endswith("which no longer hashes to that value: NOT "
                                                  "VALID")
