"""The PDF as a lab archives it (issue 28): an outline (a bookmark per section and per
subsection or phase) and a creation date taken from the record — the revision's time, never
the export's — so two exports of one revision stay byte-identical."""

from __future__ import annotations

from datetime import datetime, timezone

from pypdf import PdfReader

from app.reports.export import export_run
from app.storage.opening import open_database
from tests.support.recorded_runs import record_smoke_run
from app.storage.repository import load_run


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
        finished = load_run(database, run_id).finished_wall
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
    assert _fonts_not_embedded(reader) == []  # a reader in 20 years draws the same glyphs
    assert _fonts_not_embedded(PdfReader(_savings_pdf(tmp_path))) == []


def _fonts_not_embedded(reader: PdfReader) -> list[str]:
    """Each font a page uses (drawings' forms included) whose descriptor carries no font
    program — what ``pdffonts`` lists as ``emb no`` (the standard Helvetica has none)."""
    missing = []
    for page in reader.pages:
        for font in page["/Resources"]["/Font"].values():
            font = font.get_object()
            descriptor = font.get("/FontDescriptor")
            descriptor = descriptor.get_object() if descriptor is not None else {}
            if not any(k in descriptor for k in ("/FontFile", "/FontFile2", "/FontFile3")):
                missing.append(str(font["/BaseFont"]))
    return sorted(set(missing))


def _savings_pdf(folder):
    """The COM-savings one-pager, the station's other PDF (the seed's parity RAID example)."""
    from app.metrics.com_savings import ComSavings, ConfigFigures
    from app.reports.com_savings_report import write_savings_pdf

    savings = ComSavings(ConfigFigures("RAID 1", 36_000, 2360, 3134, 36_010, 160, 2),
                         ConfigFigures("RAID 5 (3+1)", 36_000, 1564, 2200, 17_040, 107, 0))
    return write_savings_pdf(savings, folder / "savings.pdf")
