"""Every run list and comparison shows the derived verdict, never the method file's claim
(issue 14 items 7, 8). The run is a lab variant anywhere on disk, ``base = "emerald-block-v3"``,
claiming ``compliant = true`` with 1 s intervals, on instruments that identify as real: the
old views showed it as compliant (no NON-COMPLIANT tag) because the file said so.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sqlalchemy as sa

from app.cli.main import main
from app.core.paths import methods_dir
from app.storage import schema as s
from tests.support.compliance_runs import record
from tests.support.tamper import guards_lifted
from ui.history.compare import CompareView, method_variant
from ui.history.model import RunsTableModel


def claiming_variant(folder: Path, whole_copy: bool) -> Path:
    """``lab-fast 1``: 1 s intervals, ``compliant = true``; a variant on the shipped method,
    or a whole copy of it (which the old loader took too, so the old views are caught)."""
    path = folder / "lab-fast.toml"
    if whole_copy:
        text = (methods_dir() / "emerald-block-v3.toml").read_text(encoding="utf-8")
        text = text.replace('name = "emerald-block-v3"', 'name = "lab-fast"', 1)
        text = text.replace('version = "3.0.0-sw1"', 'version = "1"', 1)
        path.write_text(text.replace("interval_s = 60.0          #",
                                     "interval_s = 1.0          #", 1), encoding="utf-8")
    else:
        path.write_text('base = "emerald-block-v3"\nname = "lab-fast"\nversion = "1"\n'
                        'compliant = true\ninterval_s = 1.0\n', encoding="utf-8")
    return path


@pytest.fixture(params=["variant", "whole copy"])
def stored(tmp_path, monkeypatch, request):
    method = claiming_variant(tmp_path, request.param == "whole copy")
    run = record(tmp_path, monkeypatch, method=str(method))
    assert run.method_compliant  # the claim is stored as a claim
    return tmp_path / "r.db", run


def test_runs_list_shows_the_derived_verdict(stored, capsys) -> None:
    db, run = stored
    assert main(["runs", "list", "--db", f"sqlite:///{db}"]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines()
               if line.startswith(run.run_id[:8]))
    assert "lab-fast 1" in row and "NON-COMPLIANT" in row
    assert main(["runs", "list", "--json", "--db", f"sqlite:///{db}"]) == 0
    listed = json.loads(capsys.readouterr().out)[0]
    assert listed["method_claims_compliant"] is True
    assert listed["compliance"]["compliant"] is False
    failed = {c["name"]: c["evidence"] for c in listed["compliance"]["criteria"]
              if c["verdict"] == "NOT MET"}
    assert failed["Interval length"] == "interval 1 s < 60 s"
    assert main(["runs", "show", run.run_id, "--db", f"sqlite:///{db}"]) == 0
    shown = capsys.readouterr().out
    assert "Method   lab-fast 1  NON-COMPLIANT (derived" in shown
    assert "claims" not in shown


def test_history_model_and_compare_show_the_derived_verdict(stored, qtbot) -> None:
    db, run = stored
    from app.storage.opening import open_database

    database = open_database(f"sqlite:///{db}")
    try:
        model = RunsTableModel(database)
        column = model.column_index("Method")
        index = model.index(0, column)
        # the list shows name, version and a short badge (issue 41); the whole relation to the
        # registry is its tooltip, the failed criteria the verdict's, and compare's legend keeps it
        shown = model.data(index)
        assert shown == "lab-fast 1 · variant, 1 key"
        whole = method_variant(run)
        assert whole.startswith("lab-fast 1 [variant of emerald-block-v3 3.0.0-sw1: ")
        assert whole.endswith("] (NON-COMPLIANT)")
        assert model.data(index, 3) == whole  # ToolTipRole
        verdict = model.index(0, model.column_index("Verdict"))
        assert model.data(verdict) == "NON-COMPLIANT"
        assert "interval 1 s < 60 s" in model.data(verdict, 3)  # the failed criterion
        view = CompareView(database, [run.run_id, run.run_id])
        qtbot.addWidget(view)
        # the run's one-line outcome as its header words it (its COM states included)
        assert run.verdict.text.startswith("COMPLETED")
        assert f"({run.verdict.text}, {whole})" in view.legend.text()
    finally:
        database.close()


def test_an_old_run_without_its_method_record_shows_why_it_is_not_compliant(stored,
                                                                            capsys) -> None:
    """A run stored before the record kept its method: the list derives NON-COMPLIANT with
    the reason, never the stored claim (``compliant = true``)."""
    db, run = stored
    engine = sa.create_engine(f"sqlite:///{db}")
    with engine.begin() as conn, guards_lifted(conn):
        conn.execute(sa.update(s.Run).values(method_json=None, method_sha256=None))
    engine.dispose()
    assert main(["runs", "list", "--json", "--db", f"sqlite:///{db}"]) == 0
    listed = json.loads(capsys.readouterr().out)[0]
    assert listed["method_claims_compliant"] is True
    assert listed["compliance"]["criteria"][0] == {
        "name": "Method minimums", "verdict": "NOT MET",
        "evidence": "the record does not hold the method it ran (stored before the station "
                    "kept it), so its numbers cannot be judged"}


def test_a_run_of_a_variant_built_on_smoke_is_non_compliant_naming_the_interval(
        tmp_path, monkeypatch) -> None:
    """``base = "smoke"`` resolves to the shipped smoke variant (old code: refused), and its
    run is judged by the compliant method's minimums that smoke inherits."""
    path = tmp_path / "quick.toml"
    path.write_text('base = "smoke"\nname = "quick"\nversion = "q1"\ncompliant = false\n',
                    encoding="utf-8")
    run = record(tmp_path, monkeypatch, method=str(path))
    failed = {c.name: c.evidence for c in run.compliance.failures}
    assert failed["Interval length"] == "interval 1 s < 60 s"
    assert run.compliance.summary().startswith("NON-COMPLIANT: interval 1 s < 60 s")


@pytest.mark.process
def test_the_report_shows_the_derived_verdict_and_never_quotes_the_claim(stored,
                                                                         tmp_path) -> None:
    from app.reports.export import export_run
    from app.storage.opening import open_database
    from tests.support.documents import pdf_text
    db, run = stored
    database = open_database(f"sqlite:///{db}")
    try:
        written = export_run(database, run.run_id, tmp_path / "out")
    finally:
        database.close()
    text = pdf_text(written["pdf"])
    assert ("Compliance NON-COMPLIANT (derived from the record under rules 3: every criterion "
            "below)") in text
    assert "claims" not in text  # neither the cover nor the run log quotes the method file
