"""A confidence level is shown only when the IO count supports it (issue 14, item 13).

99.999 % needs N ≥ 1/(1 − p) = 100,000 IOs. The demo run on the simulated lab stores
histograms of 14k–96k IOs, so its 99.999 % level is "not supported" end to end: the sequencer
records None, storage keeps it, and every view — the PDF text and chart, the workbook, the
live plot and the history comparison — says "n/a (N IOs)" the same way and draws no line.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from openpyxl import load_workbook
from pypdf import PdfReader
from reportlab.graphics.shapes import Group, String

from app.metrics.formatting import format_figure
from app.reports import charts
from app.reports.export import export_run
from app.reports.xlsx import LEVEL_COLUMNS, LEVEL_FIRST_COL
from tests.support.documents import sheet_rows
from app.storage.repository import load_run
@pytest.fixture(scope="module")
def recorded(tmp_path_factory, recorded_demo):
    folder = tmp_path_factory.mktemp("levels")
    rec = recorded_demo
    run = load_run(rec.database, rec.run_id)
    return rec, run, export_run(rec.database, rec.run_id, folder)


def na_text(hist) -> str:
    return f"99.999 %: n/a ({sum(hist.bins.values()):,} IOs)"


def test_the_stored_record_carries_not_supported(recorded) -> None:
    _, run, _ = recorded
    assert run.histograms
    for hist in run.histograms:
        assert 0 < hist.ios < 100_000
        assert hist.confidence_ms[99.999] is None  # stored as "not supported", not a number
        assert all(hist.confidence_ms[lvl] > 0 for lvl in (99.0, 99.9, 99.99))
        assert [lvl.value_text() for lvl in hist.levels()][-1] == f"n/a ({hist.ios:,} IOs)"


def test_pdf_says_n_a_with_the_io_count(recorded) -> None:
    _, run, paths = recorded
    text = re.sub(r"\s+", " ", " ".join(p.extract_text() for p in PdfReader(paths["pdf"]).pages))
    for hist in run.histograms:
        assert na_text(hist) in text, hist.profile
        assert f"99 %: {format_figure(hist.confidence_ms[99.0])} ms" in text


def _strings(node) -> list[str]:
    if isinstance(node, String):
        return [node.text]
    return [s for child in getattr(node, "contents", []) for s in _strings(child)] \
        if isinstance(node, Group) or hasattr(node, "contents") else []


def test_pdf_chart_draws_only_supported_levels(recorded) -> None:
    _, run, _ = recorded
    hist = run.histograms[0]
    labels = _strings(charts.histogram_chart(hist, "t", 400, 200))
    assert any(s.startswith("99.99 %:") for s in labels)
    assert not any("99.999" in s for s in labels)  # no line at an unsupported level


def test_workbook_leaves_the_value_empty_and_says_why(recorded) -> None:
    _, run, paths = recorded
    rows = sheet_rows(load_workbook(paths["xlsx"], read_only=True), "Histograms", LEVEL_COLUMNS,
                      first_col=LEVEL_FIRST_COL)
    for hist in run.histograms:
        row = next(r for r in rows if r["profile"] == hist.profile and r["level_pct"] == 99.999)
        assert row["response_ms"] is None
        assert row["shown_as"] == f"n/a ({hist.ios:,} IOs)" and row["total_ios"] == hist.ios
        row99 = next(r for r in rows if r["profile"] == hist.profile and r["level_pct"] == 99.0)
        assert row99["response_ms"] == pytest.approx(hist.confidence_ms[99.0])


@pytest.mark.gui
def test_live_plot_note_and_lines(recorded, qtbot) -> None:
    pytest.importorskip("pytestqt")
    from ui.plots.live import LivePlots

    _, run, _ = recorded
    hist = run.histograms[0]
    plots = LivePlots(redraw_ms=10_000)
    qtbot.addWidget(plots)
    plots.ingest([hist])
    assert na_text(hist) in plots.hist_note.text()
    positions = sorted(round(10 ** line.value(), 3) for line in plots.hist_lines)
    assert positions == sorted(round(v, 3) for v in (hist.confidence_ms[99.0],
                                                     hist.confidence_ms[99.9],
                                                     hist.confidence_ms[99.99],
                                                     hist.ceiling_ms))


@pytest.mark.gui
def test_history_comparison_note(recorded, qtbot, tmp_path: Path) -> None:
    pytest.importorskip("pytestqt")
    from ui.history.compare import CompareView

    rec, run, _ = recorded
    view = CompareView(rec.database, [rec.run_id, rec.run_id])
    qtbot.addWidget(view)
    view.show_profile(run.histograms[0].profile)
    assert na_text(run.histograms[0]) in view.hist_note.text()
    lines = [i for i in view.hist_plot.getPlotItem().items
             if i.__class__.__name__ == "InfiniteLine"]
    assert len(lines) == 2 * 3  # three supported levels per run, none at 99.999 %
