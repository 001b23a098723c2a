"""Rules can change without breaking signatures (issue 22), and a sign-off of a run that is not
clean says why (item 9).

The record hash (storwatt-record/2) covers the record's facts, not the derived verdict: a run
approved under rules 2 keeps a valid approval when the rules change, and the approval shows
the verdict QA saw beside today's. An approval given before this change (storwatt-record/1,
whose hash held the verdict derived under rules 1) is checked in its old form and still shows
what it attested. ``db copy`` to another SQLite file keeps the hash and the approval (it
reordered a run's metric rows, issue 24 item 8).
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

import pytest

import app.rules.compliance as compliance
from app.cli.main import main
from app.rules.compliance import Criterion, assess_compliance
from app.signoff.revisions import accept, approve, sign_off
from app.storage.audit import AuditError, add_approval
from app.storage.db import Database
from app.storage.opening import open_database
from app.storage.record_hash import record_sha256_v1
from app.storage.transfer import copy_runs
from tests.support.verdict_runs import record
from app.storage.repository import load_run


@dataclass(frozen=True)
class Recorded:
    db: Path
    clean: str  # COMPLIANT under rules 2 and 3
    no_thermometer: str  # COMPLIANT under rules 1, NON-COMPLIANT under rules 2 and 3


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> Recorded:
    db = tmp_path_factory.mktemp("rules") / "runs.db"
    clean = record(db).run_id
    return Recorded(db, clean, record(db, thermometer=False).run_id)


@pytest.fixture()
def database(recorded, tmp_path) -> Database:
    """A copy of the recorded runs for one test (audit entries are append-only), taken through
    SQLite's backup: a copy of the file alone missed what was still in its WAL (a run's end,
    so the run read as still running when this test ran first)."""
    copy = tmp_path / "runs.db"
    with closing(sqlite3.connect(recorded.db)) as source, \
            closing(sqlite3.connect(copy)) as target:
        source.backup(target)
    db = open_database(f"sqlite:///{copy}")
    yield db
    db.close()


def test_an_approval_survives_a_rules_upgrade_and_shows_both_verdicts(recorded, database,
                                                                     monkeypatch):
    run = load_run(database, recorded.clean)
    assert run.compliance.compliant, [c for c in run.compliance.criteria if not c.met]
    approve(database, run, "Q. Auditor", "Figures reviewed.")
    before = sign_off(load_run(database, recorded.clean)).approvals[0]
    assert before.intact and before.describe().endswith(
        "storwatt-record/2) — approved under rules 3 as COMPLIANT")

    # rules 4 add a criterion this run fails: the facts (and the hash) are unchanged
    original = compliance._validity_criteria
    monkeypatch.setattr(compliance, "RULES_VERSION", 4)
    monkeypatch.setattr(compliance, "_validity_criteria", lambda r, m: [
        *original(r, m), Criterion("Inlet below 20 °C", False, "inlet 22.0 °C > 20 °C")])
    after = sign_off(load_run(database, recorded.clean))
    approval = after.approvals[0]
    assert approval.intact and after.approval is approval  # never silently invalidated
    assert approval.sha256 == before.sha256
    assert approval.describe().endswith(
        "approved under rules 3 as COMPLIANT; rules 4: NON-COMPLIANT because not met: "
        "Inlet below 20 °C")


def test_an_approval_given_before_this_change_still_shows_what_it_attested(recorded,
                                                                          database):
    """The old station hashed the verdict it derived under rules 1 (storwatt-record/1, no
    format, verdict or rules stored with the approval); a run COMPLIANT then and NON-COMPLIANT
    now (no inlet thermometer) shows both, and the approval stays intact."""
    run = load_run(database, recorded.no_thermometer)
    old = assess_compliance(run, rules=1)
    assert old.compliant and not run.compliance.compliant
    add_approval(database, run.run_id, "Reviewed on the old station.", "Q. Old", 1,
                 record_sha256_v1(run, old))
    approval = sign_off(load_run(database, run.run_id)).approvals[0]
    assert approval.intact and approval.hash_format == "storwatt-record/1"
    assert approval.describe().endswith(
        "storwatt-record/1) — approved under rules 1 as COMPLIANT; rules 3: NON-COMPLIANT "
        "because not met: Inlet thermometer, Metric EP_SW, Metric EP_SR, Metric EP_RI")


def test_db_copy_keeps_the_hash_and_the_approval(recorded, database, tmp_path):
    approve(database, load_run(database, recorded.clean), "Q. Auditor", "Reviewed.")
    source = sign_off(load_run(database, recorded.clean))
    target = open_database(f"sqlite:///{tmp_path / 'copy.db'}")
    try:  # another run first, so every row of the approved one gets other ids
        copy_runs(database, target, [recorded.no_thermometer])
        copy_runs(database, target)
        copied = sign_off(load_run(target, recorded.clean))
    finally:
        target.close()
    assert copied.current.sha256 == source.current.sha256
    assert copied.approval is not None and copied.approval.intact


def test_approving_or_accepting_a_non_compliant_run_needs_a_confirmation(recorded, database,
                                                                        tmp_path, capsys):
    run = load_run(database, recorded.no_thermometer)
    with pytest.raises(AuditError, match=r"the run is NON-COMPLIANT \(not met: inlet "
                                         r"thermometer.*\): approving it needs a confirmation"):
        approve(database, run, "Q. Auditor", "Reviewed.")
    with pytest.raises(AuditError, match="accepting it needs a confirmation"):
        accept(database, run, "Q. Auditor", "Figures fine.")
    url = str(database.url)
    assert main(["audit", "add", run.run_id[:8], "--accept", "--reason", "fine",
                 "--author", "Q", "--db", url]) == 1
    assert "accepting it needs a confirmation" in capsys.readouterr().err
    assert main(["runs", "approve", run.run_id[:8], "--by", "Q. Auditor", "--statement",
                 "Reviewed.", "--confirm", "engineering record; thermometer repaired since",
                 "--db", url]) == 0
    shown = sign_off(load_run(database, run.run_id)).approvals[0].describe()
    assert shown.endswith("; confirmed: approving although NON-COMPLIANT (not met: inlet "
                          "thermometer, metric EP_SW, metric EP_SR, metric EP_RI): engineering "
                          "record; thermometer repaired since")
    entry = accept(database, load_run(database, run.run_id), "Q. Auditor", "Figures fine.",
                   "kept as an engineering reference")
    assert entry.describe().endswith("(confirmed: accepting although NON-COMPLIANT (not met: "
                                     "inlet thermometer, metric EP_SW, metric EP_SR, metric "
                                     "EP_RI): kept as an engineering reference)")
    # a clean run needs none
    approve(database, load_run(database, recorded.clean), "Q. Auditor", "Reviewed.")


def test_the_report_prints_the_confirmation_with_the_approval(recorded, database, tmp_path):
    from app.reports.export import export_run
    from tests.support.verdict_runs import pdf_pages

    run = load_run(database, recorded.no_thermometer)
    approve(database, run, "Q. Auditor", "Reviewed.", "engineering record only")
    text = " ".join(pdf_pages(export_run(database, run.run_id, tmp_path)["pdf"]))
    assert "confirmed: approving although NON-COMPLIANT" in text
    assert "engineering record only" in text
