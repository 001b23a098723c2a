"""QA's disposition and the complete event log are in the PDF and the xlsx (issue 17, item 13):
the reports used to print only the stored log messages (6 rows against ~30 in the GUI) and no
disposition at all."""

from __future__ import annotations

from pathlib import Path

import openpyxl
import pytest
from pypdf import PdfReader

from app.core.records import PhaseStatus
from app.reports.export import export_run
from app.storage.audit import add_audit_entry
from app.storage.opening import open_database
from app.storage.repository import load_run
from app.storage.synthetic import full_run
from app.storage.writer import RunWriter


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> tuple:
    folder = tmp_path_factory.mktemp("qa")
    database = open_database(f"sqlite:///{folder / 'qa.db'}")
    writer = RunWriter(database)
    events = list(full_run())
    for e in events:
        writer(e)
    assert writer.flush(10)
    writer.close()
    run_id = events[0].run_id
    add_audit_entry(database, run_id, "note", "fans were noisy", "A. Note")
    add_audit_entry(database, run_id, "disposition", "figures checked against the meter log",
                    "Q. Engineer", "accepted")
    run = load_run(database, run_id)
    paths = export_run(database, run_id, folder / "out")
    yield run, paths
    database.close()


def test_the_pdf_carries_the_disposition_and_every_phase_in_its_event_log(exported) -> None:
    run, paths = exported
    text = " ".join(" ".join(page.extract_text().split())
                    for page in PdfReader(paths["pdf"]).pages)
    assert "QA disposition ACCEPTED by Q. Engineer" in text
    assert "figures checked against the meter log" in text and "fans were noisy" in text
    for phase in run.phases:
        if phase.status is not PhaseStatus.PENDING:
            assert f"phase {phase.info.name} started" in text, phase.info.name
    assert f"run {run.status.value}" in text and "restarted from its beginning" in text


def test_the_xlsx_has_the_complete_log_and_the_audit_sheet(exported) -> None:
    run, paths = exported
    book = openpyxl.load_workbook(paths["xlsx"], read_only=True)
    messages = [r[3] for r in book["Events"].iter_rows(min_row=2, values_only=True) if r[3]]
    started = [p for p in run.phases if p.t_start is not None]
    assert len(messages) >= len(run.events) + 2 * len(started) + len(run.metrics) + 2
    assert messages[0].startswith("run started") and messages[-1].startswith("run ")
    times = [r[0] for r in book["Events"].iter_rows(min_row=2, values_only=True) if r[3]]
    assert times == sorted(times)
    audit = list(book["QA audit"].iter_rows(min_row=2, values_only=True))
    assert [(r[1], r[2] or "", r[3]) for r in audit] == [("note", "", "A. Note"),
                                                         ("disposition", "accepted", "Q. Engineer")]
    info = {r[0]: r[1] for r in book["Test Data Report"].iter_rows(values_only=True) if r[0]}
    assert info["QA disposition"].startswith("ACCEPTED by Q. Engineer")


def test_a_run_without_review_says_so(tmp_path: Path) -> None:
    from app.reports.content import build_content

    database = open_database(f"sqlite:///{tmp_path / 'n.db'}")
    writer = RunWriter(database)
    events = list(full_run())
    for e in events:
        writer(e)
    assert writer.flush(10)
    writer.close()
    content = build_content(load_run(database, events[0].run_id))
    database.close()
    assert content.disposition is None and content.disposition_text == "not yet reviewed by QA"


def test_the_pdf_says_the_ceiling_is_informational(exported) -> None:
    """Issue 17, item 7: IOs above the ceiling next to a VALID metric need the rule beside it."""
    _, paths = exported
    text = " ".join(" ".join(page.extract_text().split())
                    for page in PdfReader(paths["pdf"]).pages)
    assert "ceiling is informational" in text
    assert "AVERAGE response time of the measurement interval" in text
