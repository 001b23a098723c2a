"""``storwatt --self-test`` in-process: every step passes on a good install, and a broken
install names the step that failed (what a technician reads to support over the phone)."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest

import app.core.paths
import app.reports.export
from app.cli.main import main
from app.cli.selftest import SelfTestError, _verify_report, run_self_test
from drivers.clock import FakeClock


def _run(tmp_path: Path, **kwargs) -> tuple[int, str]:
    out = io.StringIO()
    code = run_self_test(out=out, work_dir=tmp_path, clock=FakeClock(), **kwargs)
    return code, out.getvalue()


def test_self_test_runs_every_step_on_the_wire_simulated_lab(tmp_path):
    code, text = _run(tmp_path)
    assert code == 0, text
    for step in ("methods", "database", "run", "reports"):
        assert f"self-test ok   {step}" in text
    assert "on lab 'sim' COMPLETED, 7/7 metrics valid" in text
    assert text.rstrip().splitlines()[-1].startswith("self-test passed: 4 steps")
    pdf, = (tmp_path / "reports").glob("*.pdf")
    xlsx, = (tmp_path / "reports").glob("*.xlsx")
    assert pdf.read_bytes().startswith(b"%PDF-") and xlsx.read_bytes().startswith(b"PK")
    assert (tmp_path / "selftest.db").stat().st_size > 0


def test_missing_smoke_method_fails_the_methods_step(tmp_path, monkeypatch):
    methods = tmp_path / "resources" / "methods"
    methods.mkdir(parents=True)
    for name in ("emerald-block-v3.toml", "taxonomy-emerald-v3.toml"):
        shutil.copy(app.core.paths.methods_dir() / name, methods / name)
    # the compliant method's REPLAY profile names a shipped trace (resources/ ships whole)
    shutil.copytree(app.core.paths.traces_dir(), tmp_path / "resources" / "traces")
    monkeypatch.setattr(app.core.paths, "resources_dir", lambda: tmp_path / "resources")
    code, text = _run(tmp_path / "work")
    assert code == 1
    assert "self-test FAIL methods" in text
    assert "FAILED at step 'methods': method 'smoke' is missing" in text
    assert "database" not in text  # stops at the first failure


def test_an_empty_report_fails_the_reports_step(tmp_path, monkeypatch):
    real_export = app.reports.export.export_run

    def truncating_export(database, run_id, out_dir):
        written = real_export(database, run_id, out_dir)
        written["xlsx"].write_bytes(b"")
        return written

    monkeypatch.setattr(app.reports.export, "export_run", truncating_export)
    code, text = _run(tmp_path)
    assert code == 1
    assert "self-test ok   run" in text
    assert "FAILED at step 'reports': xlsx report" in text and "missing or empty" in text


def test_an_unexpected_exception_is_reported_with_its_type(tmp_path):
    code, text = _run(tmp_path, lab="no-such-lab")
    assert code == 1
    assert "FAILED at step 'run': LabError: unknown lab 'no-such-lab'" in text


def test_a_report_that_is_not_a_pdf_is_rejected(tmp_path):
    fake = tmp_path / "r.pdf"
    fake.write_bytes(b"<html>not a pdf</html>")
    with pytest.raises(SelfTestError, match="not a valid pdf"):
        _verify_report(fake, "pdf", b"%PDF-")
    with pytest.raises(SelfTestError, match="wrote no xlsx"):
        _verify_report(None, "xlsx", b"PK")


def test_cli_flag_reaches_the_self_test(monkeypatch, capsys):
    calls = []
    monkeypatch.setattr("app.cli.selftest.run_self_test", lambda: calls.append(1) or 1)
    assert main(["--self-test"]) == 1 and calls == [1]
