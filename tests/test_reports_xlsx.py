"""The xlsx export read back with openpyxl: every EP figure recomputed from the Intervals
sheet and from the Samples sheet agrees with the Test Data Report sheet (docs/export-format.md
describes the recomputation QA scripts do)."""

from __future__ import annotations

import math
import re
from collections import defaultdict
from pathlib import Path

import openpyxl
import pytest
from xlsxwriter.worksheet import Worksheet

from app.reports.export import export_run
from app.reports.xlsx import (AUDIT_COLUMNS, BIN_COLUMNS, EVENT_COLUMNS, INTERVAL_COLUMNS,
                              LEVEL_COLUMNS, LEVEL_FIRST_COL, PHASE_COLUMNS, SAMPLE_COLUMNS,
                              SEARCH_COLUMNS, TEMPERATURE_COLUMNS)
from tests.support.documents import metric_rows, sheet_rows
from app.storage.repository import load_run
REL = 1e-9


@pytest.fixture(scope="module")
def exported(tmp_path_factory, recorded_demo_paused) -> tuple:
    folder = tmp_path_factory.mktemp("xlsx")
    recorded = recorded_demo_paused
    paths = export_run(recorded.database, recorded.run_id[:10], folder / "out")
    book = openpyxl.load_workbook(paths["xlsx"], read_only=True)
    return recorded, paths, book


def test_file_names_carry_run_id_prefix_and_method(exported) -> None:
    recorded, paths, _ = exported
    assert set(paths) == {"pdf", "xlsx"}
    for path in paths.values():
        assert path.exists() and recorded.run_id[:8] in path.name and "demo" in path.name


def test_every_ep_recomputes_from_intervals_and_from_samples(exported) -> None:
    _, _, book = exported
    metrics = metric_rows(book)
    intervals = sheet_rows(book, "Intervals", INTERVAL_COLUMNS)
    samples = sheet_rows(book, "Samples", SAMPLE_COLUMNS)
    eps = {k: v for k, v in metrics.items() if k.startswith("EP_")}
    assert set(eps) == {"EP_RI", "EP_RR", "EP_RW", "EP_SR", "EP_SW", "EP_MW1", "EP_MW2"}
    for name, m in eps.items():
        assert m["validity"] == "VALID", (name, m["reason"])
        counted = [r for r in intervals if r["phase"] == m["phase"] and r["in_window"]]
        power_n = sum(r["n_power_samples"] for r in counted)
        from_intervals = sum(r["avg_power_w"] * r["n_power_samples"] for r in counted) / power_n
        window = [s["watts"] for s in samples if s["phase"] == m["phase"] and s["in_window"]
                  and not s["excluded"]]
        from_samples = math.fsum(window) / len(window)
        assert len(window) == power_n
        if name == "EP_RI":
            expected = (m["ops_rate"] / from_intervals, m["ops_rate"] / from_samples)
        else:
            rate = sum(r["ops"] for r in counted) / m["run_length_s"]
            expected = (rate / from_intervals, rate / from_samples)
            assert m["ops_rate"] == pytest.approx(rate, rel=REL)
        assert len(counted) == round(m["run_length_s"] / (counted[0]["end_s"]
                                                          - counted[0]["start_s"]))
        for value in expected:
            assert value == pytest.approx(m["value"], rel=REL), name
        assert m["avg_power_w"] == pytest.approx(from_samples, rel=REL)


def test_sample_assignment_reproduces_the_recorders_interval_counts(exported) -> None:
    _, _, book = exported
    intervals = sheet_rows(book, "Intervals", INTERVAL_COLUMNS)
    samples = sheet_rows(book, "Samples", SAMPLE_COLUMNS)
    counts: dict[tuple, int] = defaultdict(int)
    for s in samples:  # ``interval`` is set for samples of a phase's last attempt only
        if s["interval"] is not None and not s["excluded"]:
            counts[(s["phase"], s["interval"])] += 1
    checked = 0
    for r in intervals:
        if r["attempt"] == max(i["attempt"] for i in intervals if i["phase"] == r["phase"]):
            assert counts[(r["phase"], r["interval"])] == r["n_power_samples"], r
            checked += 1
    assert checked > 50


def test_restarted_phase_counts_only_its_last_attempt(exported) -> None:
    _, _, book = exported
    metrics = metric_rows(book)
    intervals = sheet_rows(book, "Intervals", INTERVAL_COLUMNS)
    rw = metrics["EP_RW"]["phase"]
    attempts = {r["attempt"] for r in intervals if r["phase"] == rw}
    assert attempts == {1, 2}
    assert not any(r["in_window"] for r in intervals if r["phase"] == rw and r["attempt"] == 1)


def test_histograms_and_samples_sheets_hold_full_data(exported) -> None:
    recorded, _, book = exported
    run = load_run(recorded.database, recorded.run_id)
    samples = sheet_rows(book, "Samples", SAMPLE_COLUMNS)
    assert len(samples) == len(run.power)
    # XlsxWriter writes 16 significant digits: below any meter's resolution by far
    assert [s["watts"] for s in samples[:50]] == pytest.approx(run.power.watts[:50].tolist(),
                                                               rel=1e-15)
    assert all(s["temp_c"] is not None for s in samples[-20:])
    rows = list(book["Histograms"].iter_rows(values_only=True))
    profiles = {r[1] for r in rows[1:] if r[1]}
    assert profiles == {"MW1", "MW2", "RW", "RR", "SW", "SR"}
    for hist in run.histograms:
        counts = [r[4] for r in rows[1:] if r[1] == hist.profile and r[0] == hist.phase_index]
        assert sum(counts) == sum(hist.bins.values())
    levels = sheet_rows(book, "Histograms", LEVEL_COLUMNS, first_col=LEVEL_FIRST_COL)
    assert {(r["profile"], r["level_pct"]) for r in levels} == {
        (h.profile, lvl) for h in run.histograms for lvl in (99.0, 99.9, 99.99, 99.999)}
    for r in levels:
        hist = next(h for h in run.histograms if h.profile == r["profile"])
        ms = hist.confidence_ms[r["level_pct"]]  # None: the IO count cannot support it
        assert r["response_ms"] == (None if ms is None else pytest.approx(ms, rel=1e-15))
        assert r["total_ios"] == sum(hist.bins.values())


def test_reexport_gives_same_figures_and_hash(exported, tmp_path: Path) -> None:
    recorded, paths, book = exported
    again = export_run(recorded.database, recorded.run_id, tmp_path)
    second = openpyxl.load_workbook(again["xlsx"], read_only=True)
    assert metric_rows(second) == metric_rows(book)
    tdr = {r[0]: r[1] for r in book["Test Data Report"].iter_rows(values_only=True)}
    tdr2 = {r[0]: r[1] for r in second["Test Data Report"].iter_rows(values_only=True)}
    assert tdr["Samples SHA-256"] == tdr2["Samples SHA-256"]
    assert tdr["Samples SHA-256"] == load_run(recorded.database, recorded.run_id).samples_sha256
    assert again["pdf"].read_bytes() == paths["pdf"].read_bytes()


def test_data_sheets_are_not_written_cell_by_cell(exported, tmp_path: Path,
                                                  monkeypatch) -> None:
    """XlsxWriter costs ~8 µs per cell written through its API: the data sheets (Samples: every
    sample × 12 columns) go in as one block each, so an 8 h run exports in seconds (issue 17);
    only the header rows and the Test Data Report sheet are written cell by cell."""
    recorded, _, _ = exported
    n_samples = len(load_run(recorded.database, recorded.run_id).power)
    calls = []
    original = Worksheet._write_cell
    monkeypatch.setattr(Worksheet, "_write_cell",
                        lambda self, *args: (calls.append(self.name), original(self, *args)))
    paths = export_run(recorded.database, recorded.run_id, tmp_path)
    assert calls.count("Samples") == len(SAMPLE_COLUMNS)  # the header row only
    assert calls.count("Intervals") == len(INTERVAL_COLUMNS)
    headers = {"Phases": PHASE_COLUMNS, "Temperature": TEMPERATURE_COLUMNS,
               "Histograms": BIN_COLUMNS + LEVEL_COLUMNS, "Search": SEARCH_COLUMNS,
               "Events": EVENT_COLUMNS, "QA audit": AUDIT_COLUMNS}
    assert {name: calls.count(name) for name in headers} == {
        name: len(columns) for name, columns in headers.items()}
    samples = sheet_rows(openpyxl.load_workbook(paths["xlsx"], read_only=True), "Samples",
                         SAMPLE_COLUMNS)
    assert len(samples) == n_samples


def test_the_test_data_report_freezes_only_its_title_row_and_names(exported) -> None:
    """Issue 28: the sheet froze every row down to the metrics header (37 on a run with a
    banner and its info block), more than a laptop's window shows, so nothing scrolled."""
    paths = exported[1]
    book = openpyxl.load_workbook(paths["xlsx"])  # not read-only: the panes are sheet views
    pane = book["Test Data Report"].sheet_view.pane
    assert pane is not None and pane.ySplit == 1 and pane.xSplit == 1


def test_every_sheet_prints_one_page_wide_with_its_header_on_each_page(exported) -> None:
    """Issue 41, seen 5: a demo run's workbook printed as 223 pages, each column past the
    first page's width on pages of its own."""
    book = openpyxl.load_workbook(exported[1]["xlsx"])
    for sheet in book.worksheets:
        setup = sheet.page_setup
        assert sheet.sheet_properties.pageSetUpPr.fitToPage, sheet.title
        # fitToWidth 1 is the file format's default, left out of the XML
        assert (setup.fitToWidth or 1, setup.fitToHeight) == (1, 0), sheet.title
        assert setup.orientation == "landscape" and setup.paperSize == 9, sheet.title
        if sheet.title != "Test Data Report":  # a data sheet: its header row on every page
            assert sheet.print_title_rows.replace("$", "") == "1:1", sheet.title


@pytest.mark.process  # pdftotext
def test_the_run_length_is_worded_alike_in_the_xlsx_the_pdf_and_runs_show(exported,
                                                                          capsys) -> None:
    """Issue 28: the PDF said "2.361 min" and the ready idle's "55.7 s" where the GUI and the
    CLI say "2 min 22 s": one formatter (``format_duration``) for every view."""
    from app.cli.main import main
    from app.metrics.formatting import format_duration
    from tests.support.documents import pdf_text

    recorded, paths, book = exported
    run = load_run(recorded.database, recorded.run_id)
    duration = format_duration(run.duration_s)
    assert " min " in duration and duration.endswith(" s")  # a demo run takes minutes
    info = {row[0]: row[1] for row in book["Test Data Report"].iter_rows(max_col=2,
                                                                        values_only=True)}
    assert info["Duration"] == duration
    text = pdf_text(paths["pdf"])
    assert f"Duration {duration}" in text
    assert not re.search(r"\d\.\d+ min\b", text)  # no decimal minutes left
    # the PDF names the GUI's way first, not only a command to type
    assert "none recorded (Approve revision in the run's history, or storwatt runs approve)" \
        in text
    assert main(["runs", "show", run.run_id, "--db", recorded.database.url]) == 0
    shown = capsys.readouterr().out
    assert f"duration {duration} of {format_duration(run.planned_s)} planned" in shown
