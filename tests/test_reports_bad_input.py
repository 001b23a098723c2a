"""Reports of incomplete runs are still produced and say exactly what is missing; the CLI
reports unknown runs and unwritable folders with a clear message."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import openpyxl
import pytest

from app.cli.main import main
from app.core.records import PhaseKind, RunStatus
from app.reports.export import ReportError, export_run
from app.sequencer import events as ev
from app.storage.opening import open_database
from app.storage.synthetic import PHASES, full_run
from app.storage.writer import RunWriter
from tests.support.recorded_runs import abort_at, record_run
from tests.support.documents import metric_rows
from tests.support.documents import text_of
def store_without_ready_idle(db_url: str, run_id: str) -> None:
    """The storage layer's synthetic run minus its ready-idle phase and EP_RI."""
    database = open_database(db_url)
    writer = RunWriter(database)
    idle = next(p.index for p in PHASES if p.kind is PhaseKind.READY_IDLE)
    for event in full_run(run_id=run_id):
        if isinstance(event, ev.RunStarted):
            event = dataclasses.replace(event, phases=tuple(p for p in PHASES
                                                            if p.index != idle))
        elif idle in (getattr(event, "phase_index", None),
                      getattr(getattr(event, "phase", None), "index", None),
                      getattr(getattr(event, "interval", None), "phase_index", None)):
            continue
        elif isinstance(event, ev.MetricComputed) and event.metric.name == "EP_RI":
            continue
        elif isinstance(event, ev.RunFinished):
            event = dataclasses.replace(event, metrics=tuple(
                m for m in event.metrics if m.name != "EP_RI"))
        writer(event)
    writer.close()
    database.close()


def test_run_without_ready_idle_phase_reports_ep_ri_not_measured(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'r.db'}"
    store_without_ready_idle(url, "no-idle-run")
    database = open_database(url)
    paths = export_run(database, "no-idle", tmp_path)
    text = text_of(paths["pdf"])
    assert "EP_RI NOT MEASURED: the run's plan has no ready-idle phase" in text
    rows = metric_rows(openpyxl.load_workbook(paths["xlsx"], read_only=True))
    assert rows["EP_RI"]["validity"] == "NOT MEASURED" and rows["EP_RI"]["value"] is None
    assert rows["EP_RR"]["validity"] == "VALID"


def test_run_aborted_in_its_first_phase_still_reports(tmp_path: Path) -> None:
    recorded = record_run(tmp_path / "r.db", method="smoke", hook=abort_at(PhaseKind.PREFILL))
    assert recorded.status is RunStatus.ABORTED
    paths = export_run(recorded.database, recorded.run_id, tmp_path)
    text = text_of(paths["pdf"])
    for name in ("EP_RR", "EP_MW1", "EP_RI"):
        assert re.search(rf"{name} NOT MEASURED: phase \S+( \S+)? never started: the run "
                         r"ended ABORTED", text), name
    rows = metric_rows(openpyxl.load_workbook(paths["xlsx"], read_only=True))
    assert {r["validity"] for k, r in rows.items() if k.startswith("EP_")} == {"NOT MEASURED"}


def test_cli_report_writes_both_files_for_an_id_prefix(tmp_path: Path, capsys) -> None:
    url = f"sqlite:///{tmp_path / 'r.db'}"
    store_without_ready_idle(url, "cli-run-0001")
    pdf, xlsx = tmp_path / "a.pdf", tmp_path / "b.xlsx"
    assert main(["report", "cli-run", "--pdf", str(pdf), "--xlsx", str(xlsx),
                 "--db", url]) == 0
    assert pdf.read_bytes().startswith(b"%PDF") and xlsx.stat().st_size > 0
    assert str(pdf) in capsys.readouterr().out


def test_cli_report_unknown_run_is_a_clear_error(tmp_path: Path, capsys) -> None:
    url = f"sqlite:///{tmp_path / 'r.db'}"
    store_without_ready_idle(url, "cli-run-0001")
    assert main(["report", "nope", "--db", url]) == 1
    assert "no stored run with id 'nope'" in capsys.readouterr().err


def test_unwritable_folder_is_a_report_error_and_leaves_no_partial_file(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'r.db'}"
    store_without_ready_idle(url, "cli-run-0001")
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(ReportError, match="cannot create the report folder"):
        export_run(open_database(url), "cli-run", blocker / "sub")


def test_invalid_metric_value_is_parenthesised_in_xlsx_display(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'r.db'}"
    database = open_database(url)
    writer = RunWriter(database)
    for event in full_run(run_id="invalid-rr"):
        if isinstance(event, ev.MetricComputed) and event.metric.name == "EP_RR":
            event = ev.MetricComputed(dataclasses.replace(event.metric, valid=False,
                                                          reason="not stable: EP 7 % off"))
        if isinstance(event, ev.RunFinished):
            event = dataclasses.replace(event, metrics=())
        writer(event)
    writer.close()
    paths = export_run(database, "invalid-rr", tmp_path)
    book = openpyxl.load_workbook(paths["xlsx"])
    sheet = book["Test Data Report"]
    row = next(r for r in sheet.iter_rows() if r[0].value == "EP_RR")
    assert row[1].number_format == "(0.000)" and row[3].value == "INVALID"
    assert row[4].value == "not stable: EP 7 % off"
    assert "EP_RR (29.300) IOPS/W" in text_of(paths["pdf"])


def test_a_report_is_never_renamed_over_a_special_file_or_the_stations_own(tmp_path: Path,
                                                                           capsys) -> None:
    """A report is built beside its destination and renamed over it: the CLI fuzzer's
    `report --pdf /dev/null` replaced the machine's /dev/null with a PDF (a regular file), and
    every later `> /dev/null` wrote into it. Devices, FIFOs, folders and the station's own
    files are refused before anything is written; a regular file is still replaced."""
    import os
    import stat

    url = f"sqlite:///{tmp_path / 'r.db'}"
    store_without_ready_idle(url, "run-dest")
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    folder = tmp_path / "folder"
    folder.mkdir()
    db_before = (tmp_path / "r.db").read_bytes()
    journal = Path(os.environ["STORWATT_DATA_DIR"]) / "journal" / "x.swj"
    for target, said in ((fifo, "is a device or special file, not a file"),
                         (folder, "is a folder, not a file"),
                         (tmp_path / "r.db", "belongs to the station"),
                         (journal, "belongs to the station")):
        assert main(["report", "--db", url, "--pdf", str(target), "run-dest"]) != 0
        assert said in capsys.readouterr().err, target
    assert stat.S_ISFIFO(fifo.stat().st_mode) and folder.is_dir()
    assert (tmp_path / "r.db").read_bytes() == db_before and not journal.exists()
    (tmp_path / "old.pdf").write_bytes(b"an earlier export")
    assert main(["report", "--db", url, "--pdf", str(tmp_path / "old.pdf"), "run-dest"]) == 0
    assert (tmp_path / "old.pdf").read_bytes().startswith(b"%PDF")
