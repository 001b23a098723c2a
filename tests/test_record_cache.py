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
    db_path = tmp_path / "r.db"
    recorded = record_run(db_path)
    db, run_id = recorded.database, recorded.run_id
    approve(db, load_run(db, run_id), "Q. Auditor", "Reviewed.", confirm=DEMO)
    [(_, _, facts, record)] = _stored(db_path)
    # the record changed behind StorWatt's back, and the stored hash re-keyed to the new basis
    with sqlite3.connect(db_path) as conn:
        conn.execute("UPDATE workload_intervals SET read_ios = read_ios + 1 WHERE id = "
                     "(SELECT min(id) FROM workload_intervals)")
    tampered = load_run(db, run_id)
    with sqlite3.connect(db_path) as conn:
        conn.execute("UPDATE record_hashes SET basis_sha256 = ?", (facts_basis(tampered),))
    tampered = load_run(db, run_id)

    shown = sign_off(tampered)  # a view trusts the stored hash: the old one
    assert shown.current.sha256 == record and shown.approval is not None

    checked, check = check_record(tampered)  # the approval check rebuilds it
    assert not check.matches and check.stored == record and check.rebuilt != record
    assert checked.approval is None
    assert checked.approvals[0].describe().endswith("no longer hashes to that value: NOT VALID")
    with pytest.raises(AuditError, match="no longer hashes to the SHA-256 stored for it"):
        approve(db, tampered, "Q. Auditor", "Again.", confirm=DEMO)

    # without the forged row a view sees the change too: another basis, the hash rebuilt
    with sqlite3.connect(db_path) as conn:
        conn.execute("DELETE FROM record_hashes")
    assert sign_off(load_run(db, run_id)).approval is None
