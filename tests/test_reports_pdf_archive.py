"""The PDF as a lab archives it (issue 28): an outline (a bookmark per section and per
subsection or phase) and a creation date taken from the record — the revision's time, never
the export's — so two exports of one revision stay byte-identical."""

from __future__ import annotations

from datetime import datetime, timezone

from pypdf import PdfReader

from app.reports.export import export_run
from app.storage.db import open_database
from tests.support.recorded_runs import record_smoke_run


def _outline(items, level: int = 0) -> list[tuple[int, str]]:
    out = []
    for item in items:
        if isinstance(item, list):
            out += _outline(item, level + 1)
        else:
            out.append((level, item.title))
    return out


def test_the_pdf_has_an_outline_and_the_records_creation_date(tmp_path) -> None:
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    run_id, _ = record_smoke_run(url)
    database = open_database(url)
    try:
        first = export_run(database, run_id, tmp_path / "a")["pdf"]
        second = export_run(database, run_id, tmp_path / "b")["pdf"]
        finished = database.load_run(run_id).finished_wall
    finally:
        database.close()
    assert first.read_bytes() == second.read_bytes()
    reader = PdfReader(first)
    created = reader.metadata["/CreationDate"]
    expected = datetime.fromisoformat(finished).astimezone(timezone.utc)
    assert created.startswith(f"D:{expected:%Y%m%d%H%M%S}"), (created, finished)
    assert not created.startswith("D:2000")  # reportlab's invariant date
    outline = _outline(reader.outline)
    tops = [title for level, title in outline if level == 0]
    assert {"Test Data Report — metrics", "Instruments", "Phase charts"} <= set(tops)
    nested = [title for level, title in outline if level == 1]
    assert "Active power tests" in nested
    assert any(title.startswith(("MW1", "2. MW1", "MW1 ")) or "MW1" in title
               for title in nested)  # a bookmark per phase
