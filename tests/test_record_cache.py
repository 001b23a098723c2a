"""The record hash stored per revision (issue 27): an export or a view prints the stored hash
without rebuilding it; approving rebuilds it from the record, so a tampered record is caught
even when the stored hash (and its basis) were made to look current."""

from __future__ import annotations

import sqlite3

import pytest

import app.signoff.revisions as signoff
from app.signoff.revisions import record_com_result
from app.reports.export import export_run
from app.signoff.revisions import approve, check_record, sign_off
from app.storage.audit import AuditError
from app.storage.record_hash import facts_basis, facts_sha256
from tests.support.tamper import tamper
from tests.support.recorded_runs import record_run
from app.storage.repository import load_run

DEMO = "simulated demo run, approved to test the stored record hash"


def _stored(path) -> list[tuple]:
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT revision, basis_sha256, facts_sha256, record_sha256 "
                            "FROM record_hashes ORDER BY id").fetchall()


@pytest.fixture()
def counted(monkeypatch) -> list[int]:
    """Every call of the facts hash the sign-off makes, counted."""
    calls: list[int] = []

    def counting(run):
        calls.append(1)
        return facts_sha256(run)

    monkeypatch.setattr(signoff, "facts_sha256", counting)
    return calls


def test_an_export_prints_the_stored_hash_and_approving_rebuilds_it(tmp_path, counted) -> None:
    db_path = tmp_path / "r.db"
    recorded = record_run(db_path)
    db, run_id = recorded.database, recorded.run_id
    first = export_run(db, run_id, tmp_path / "a")  # the first need computes and stores it
    assert len(counted) == 1
    [(revision, basis, facts, record)] = _stored(db_path)
    run = load_run(db, run_id)
    assert (revision, basis, facts) == (1, facts_basis(run), facts_sha256(run))

    counted.clear()
    second = export_run(db, run_id, tmp_path / "b")
    assert counted == []  # the export printed the stored hash, it did not rebuild it
    for kind in ("pdf", "xlsx"):
        assert second[kind].read_bytes() == first[kind].read_bytes()
    assert sign_off(load_run(db, run_id)).current.sha256 == record

    # a COM result records revision 2: its hash is stored with it, on the same facts hash
    record_com_result(db, load_run(db, run_id), "parity-raid", "passed", "array GUI", "T. Tech")
    signoff.remember_record_hashes(db, load_run(db, run_id))
    assert [(r, f) for r, _, f, _ in _stored(db_path)] == [(1, facts), (2, facts)]

    counted.clear()
    approve(db, load_run(db, run_id), "Q. Auditor", "Reviewed.", confirm=DEMO)
    assert counted == [1]  # approving rebuilt it from the record
    assert sign_off(load_run(db, run_id)).approval is not None


def test_a_tampered_record_is_caught_although_the_stored_hash_looks_current(tmp_path) -> None:
    """Issue 39 attack 1: a stored row re-keyed (or added) to the tampered record's basis is
    data any database writer can write; without this PC's seal a view does not trust it."""
    db_path = tmp_path / "r.db"
    recorded = record_run(db_path)
    db, run_id = recorded.database, recorded.run_id
    approve(db, load_run(db, run_id), "Q. Auditor", "Reviewed.", confirm=DEMO)
    [(_, _, facts, record)] = _stored(db_path)
    # the record changed behind StorWatt's back, and the stored hash re-keyed to the new basis
    tamper(db_path, "UPDATE workload_intervals SET read_ios = read_ios + 1 WHERE id = "
                    "(SELECT min(id) FROM workload_intervals)")
    tampered = load_run(db, run_id)
    tamper(db_path, ("UPDATE record_hashes SET basis_sha256 = ?", (facts_basis(tampered),)))
    tampered = load_run(db, run_id)

    shown = sign_off(tampered)  # the forged row's seal does not hold: the hash is rebuilt
    assert shown.current.sha256 != record and shown.approval is None
    assert shown.status == ("Revision 1 — not approved: the record changed after revision 1 "
                            "was approved")

    checked, check = check_record(tampered)  # the approval check rebuilds it
    assert check.rebuilt != record and checked.approval is None
    assert checked.approvals[0].describe().endswith("no longer hashes to that value: NOT VALID")
    with pytest.raises(AuditError, match="changed outside StorWatt after it was approved"):
        approve(db, tampered, "Q. Auditor", "Again.", confirm=DEMO)
