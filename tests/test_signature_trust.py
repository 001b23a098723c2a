"""Issue 39 attack 1: a forged record-hash cache row must not make a tampered record print as
approved. An insider edits a finished, approved run behind the station's back (ready-idle
samples ×0.9, EP_RI ÷0.9) and adds one ``record_hashes`` row mapping the tampered record's
basis (computed with the station's own ``facts_basis``) to the genuine hashes. Every document
that states the approval — the run detail, ``runs show``, the PDF, the xlsx, the bundle and a
``db copy`` — must rebuild the hash (or trust only a row this PC sealed) and say
"not approved: the record changed after revision 1 was approved" (docs/security.md)."""

from __future__ import annotations

import json
import sqlite3
import zipfile

import openpyxl
import pytest

from app.cli.main import main
from app.reports.export import export_run
from app.signoff.revisions import approve, sign_off
from app.storage.record_hash import facts_basis
from app.storage.repository import load_run
from tests.support.documents import pdf_text
from tests.support.recorded_runs import record_run
from tests.support.tamper import tamper

DEMO = "simulated demo run, approved to test a forged record-hash row"
REFUSED = "Revision 1 — not approved: the record changed after revision 1 was approved"


@pytest.fixture()
def forged(tmp_path):
    """(database URL, run id, the genuine record hash) of an approved run, tampered and
    covered by a forged cache row."""
    path = tmp_path / "r.db"
    recorded = record_run(path)
    db, run_id = recorded.database, recorded.run_id
    approve(db, load_run(db, run_id), "Q. Auditor", "Reviewed.", confirm=DEMO)
    export_run(db, run_id, tmp_path / "before")  # the genuine hashes are stored (sealed)
    with sqlite3.connect(path) as conn:
        pk, = conn.execute("SELECT id FROM runs").fetchone()
        genuine = conn.execute("SELECT facts_sha256, record_sha256 FROM record_hashes "
                               "WHERE revision = 1").fetchone()
    tamper(path, "UPDATE power_samples SET watts = watts * 0.9 WHERE phase_index = "
                 "(SELECT idx FROM phases WHERE kind = 'ready_idle' LIMIT 1)",
           "UPDATE metrics SET value = value / 0.9 WHERE name = 'EP_RI'")
    basis = facts_basis(load_run(db, run_id))
    with sqlite3.connect(path) as conn:  # plain data any writer of the database can add
        for seal in (None, "0" * 64):
            conn.execute("INSERT INTO record_hashes (run_id, revision, hash_format, "
                         "basis_sha256, facts_sha256, record_sha256, computed_wall, seal) "
                         "VALUES (?, 1, 'storwatt-record/2', ?, ?, ?, '2026-01-01', ?)",
                         (pk, basis, *genuine, seal))
    return db.url, run_id, genuine[1]


def test_the_view_and_runs_show_say_not_approved(forged, capsys) -> None:
    url, run_id, genuine = forged
    from app.storage.opening import open_for_reading
    database = open_for_reading(url)
    try:
        signed = sign_off(load_run(database, run_id))
    finally:
        database.close()
    assert signed.status == REFUSED and signed.current.sha256 != genuine
    assert main(["runs", "show", run_id, "--db", url]) == 0
    out = capsys.readouterr().out
    assert REFUSED in out and genuine not in out


@pytest.mark.process  # pdftotext reads the PDF
def test_the_pdf_xlsx_and_bundle_say_not_approved(forged, tmp_path) -> None:
    url, run_id, genuine = forged
    pdf, xlsx, bundle = tmp_path / "r.pdf", tmp_path / "r.xlsx", tmp_path / "r.zip"
    assert main(["report", run_id, "--db", url, "--pdf", str(pdf), "--xlsx", str(xlsx),
                 "--bundle", str(bundle)]) == 0
    text = " ".join(pdf_text(pdf).split())
    assert REFUSED in text, text
    cells = [str(c) for row in openpyxl.load_workbook(xlsx).worksheets[0].iter_rows(
        values_only=True) for c in row if c is not None]
    assert any(REFUSED in c for c in cells)
    with zipfile.ZipFile(bundle) as archive:
        manifest = json.loads(archive.read("manifest.json"))
        record = next(json.loads(archive.read(n)) for n in archive.namelist()
                      if n.endswith(".json") and b"approvals" in archive.read(n))
    assert manifest["record_sha256"] != genuine
    assert record["sign_off"] == REFUSED
    assert [a["applies_to_current"] for a in record["approvals"]] == [False]


def test_a_db_copy_says_not_approved(forged, tmp_path, capsys) -> None:
    url, run_id, genuine = forged
    copy = f"sqlite:///{tmp_path / 'copy.db'}"
    assert main(["db", "copy", "--from", url, "--to", copy]) == 0
    capsys.readouterr()
    assert main(["runs", "show", run_id, "--db", copy]) == 0
    assert REFUSED in capsys.readouterr().out


def test_the_run_detail_says_not_approved(forged, qtbot) -> None:
    from app.storage.opening import open_for_reading
    from ui.history.detail import RunDetailView

    url, run_id, _ = forged
    database = open_for_reading(url)
    view = RunDetailView(database, run_id)
    qtbot.addWidget(view)
    assert view.signoff_label.text().startswith(REFUSED)
    database.close()
