"""Report files are written only into files the station creates (issue 25, item 6 and the
report minors): a ``<report>.partial`` planted as a symbolic link is never written through,
one file is never both reports, and a report that could not be written is never exit 0."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest


from app.cli import cmd_run
from app.cli.main import main
from app.reports import export
from app.reports.export import ReportError, export_run, report_stem
from drivers.clock import FakeClock
from tests.support.stored_runs import store_synthetic_run
from app.storage.repository import load_run

VICTIM_TEXT = "a user's file the station must never write\n" * 100


@pytest.mark.parametrize("kind", ["pdf", "xlsx"])
def test_a_planted_partial_link_is_never_written_through(tmp_path: Path, kind: str) -> None:
    url = f"sqlite:///{tmp_path / 'r.db'}"
    database = store_synthetic_run(url, "link-run-0001")
    out = tmp_path / "out"
    out.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text(VICTIM_TEXT)
    stem = report_stem(load_run(database, "link-run"))
    planted = out / f"{stem}.{kind}.partial"
    planted.symlink_to(victim)

    paths = export_run(database, "link-run", out)

    assert victim.read_text() == VICTIM_TEXT  # before: the victim became the report
    assert planted.is_symlink()  # the planted link is left as it was, never followed
    assert paths["pdf"].read_bytes().startswith(b"%PDF")
    assert paths["xlsx"].read_bytes().startswith(b"PK")
    assert sorted(p.name for p in out.iterdir()) == sorted(
        [planted.name, f"{stem}.pdf", f"{stem}.xlsx"])


def test_a_full_disk_is_one_clear_error_and_leaves_no_partial(tmp_path: Path, monkeypatch,
                                                             capsys) -> None:
    """The report bytes are written by the export itself (the libraries build in memory), so
    ENOSPC is one ReportError saying the disk is full; nothing is left beside the report."""
    url = f"sqlite:///{tmp_path / 'r.db'}"
    database = store_synthetic_run(url, "full-run-0001")
    real_fdopen = os.fdopen

    class FullDisk:
        def __init__(self, fd: int, mode: str) -> None:
            self.file = real_fdopen(fd, mode)

        def __enter__(self):
            return self

        def __exit__(self, *exc) -> None:
            self.file.close()

        def write(self, data) -> int:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def report_files_fill_the_disk(fd: int, mode: str = "r", **kwargs):
        # os is one module: only the reports' binary writes meet the full disk (the record
        # seal's key file, written as text, is another writer's concern)
        return FullDisk(fd, mode) if mode == "wb" else real_fdopen(fd, mode, **kwargs)

    monkeypatch.setattr(export.os, "fdopen", report_files_fill_the_disk)
    with pytest.raises(ReportError, match="the disk is full") as caught:
        export_run(database, "full-run", tmp_path / "out")
    assert "PDF" in str(caught.value) and "XLSX" in str(caught.value)
    assert list((tmp_path / "out").iterdir()) == []
    assert "Traceback" not in capsys.readouterr().err


def test_one_file_named_for_both_reports_is_refused(tmp_path: Path, capsys) -> None:
    url = f"sqlite:///{tmp_path / 'r.db'}"
    store_synthetic_run(url, "same-run-0001")
    both = tmp_path / "report.out"
    code = main(["report", "same-run", "--pdf", str(both), "--xlsx", str(both), "--db", url])
    err = capsys.readouterr().err
    assert code == 1 and not both.exists()  # before: exit 0 and only the xlsx kept
    assert "--pdf and --xlsx name the same file" in err


def test_run_out_exits_non_zero_when_its_reports_could_not_be_written(
        tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setattr(cmd_run, "INJECTED_CLOCK", FakeClock())  # the run in no real time
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the report folder should be")
    code = main(["run", "--lab", "sim-direct", "--method", "smoke",
                 "--db", f"sqlite:///{tmp_path / 'r.db'}", "--out", str(blocker / "reports")])
    err = capsys.readouterr().err
    assert "the run is stored, but its reports could not be written" in err
    assert code == 1  # before: 0, so a script took the missing reports for written
