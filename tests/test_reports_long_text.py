"""A pasted 10 KB operator, SUT vendor/model or event message must not lose the reports
(issue 15, docs/reliability.md): table cells clip long text with an ellipsis, and the xlsx is
written even when the PDF fails."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import openpyxl
import pytest

from app.reports import export
from app.reports.export import ReportError, export_run
from app.sequencer import events as ev
from app.storage.opening import open_database
from app.storage.synthetic import full_run
from app.storage.writer import RunWriter
from tests.support.documents import text_of
LONG = "Long name " * 1024  # 10 KB, words: wraps until clipped
WORD = "x" * 10_240  # 10 KB without a space: reportlab must split the word


def store_long_text_run(db_url: str, run_id: str) -> None:
    database = open_database(db_url)
    writer = RunWriter(database)
    for event in full_run(run_id=run_id):
        if isinstance(event, ev.RunStarted):
            sut = dataclasses.replace(event.config.sut, vendor=LONG, model=WORD, notes=LONG,
                                      serial=WORD)
            event = dataclasses.replace(event, config=dataclasses.replace(
                event.config, operator=WORD, sut=sut))
            writer(event)
            writer(ev.LogMessage("ERROR", LONG, 1.0, None))
            writer(ev.LogMessage("WARNING", WORD, 2.0, None))
            continue
        writer(event)
    writer.close()
    database.close()


def test_ten_kilobyte_names_and_messages_still_give_both_reports(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'r.db'}"
    store_long_text_run(url, "long-text-run")
    paths = export_run(open_database(url), "long-text", tmp_path)
    text = text_of(paths["pdf"])
    assert "Long name Long name" in text and "characters; the xlsx has all" in text
    assert len(text) < 200_000  # clipped, not 6 × 10 KB
    book = openpyxl.load_workbook(paths["xlsx"], read_only=True)
    cells = [c for ws in book.worksheets for row in ws.iter_rows(values_only=True)
             for c in row if isinstance(c, str)]
    assert any(c == LONG for c in cells), "the xlsx keeps the whole text"


def test_a_failing_pdf_still_writes_the_xlsx_and_names_the_error(tmp_path: Path,
                                                                 monkeypatch) -> None:
    url = f"sqlite:///{tmp_path / 'r.db'}"
    store_long_text_run(url, "pdf-fails-run")

    def broken_pdf(content, path):
        raise RuntimeError("reportlab gave up")

    monkeypatch.setattr(export, "build_pdf", broken_pdf)
    with pytest.raises(ReportError, match="PDF .*reportlab gave up.*xlsx .* written") as exc:
        export_run(open_database(url), "pdf-fails", tmp_path)
    assert exc.value.written["xlsx"].exists()
    assert not list(tmp_path.glob("*.pdf*"))
