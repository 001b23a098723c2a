"""The PDF report's text (pypdf): metrics with three significant digits and their validity,
page furniture on every page, and what a damaged run's report says."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from app.metrics.formatting import format_duration, format_figure
from app.core.records import PhaseKind, RunStatus
from app.reports.export import export_run
from app.signoff.revisions import sign_off
from tests.support.recorded_runs import DegradingMeter, abort_at, record_run
from tests.support.documents import pdf_pages
from app.storage.repository import load_run
@pytest.fixture(scope="module")
def good(tmp_path_factory, recorded_demo):
    folder = tmp_path_factory.mktemp("pdf")
    recorded = recorded_demo
    paths = export_run(recorded.database, recorded.run_id, folder)
    return recorded, pdf_pages(paths["pdf"])


def test_every_page_has_hash_page_number_and_non_compliant_banner(good) -> None:
    recorded, pages = good
    run = load_run(recorded.database, recorded.run_id)
    assert len(pages) >= 8
    for number, text in enumerate(pages, start=1):
        assert f"Page {number} of {len(pages)}" in text
        # the record's hash covers the samples' (app.storage.record_hash)
        assert f"Revision 1 — record SHA-256 {sign_off(run).current.sha256}" in text
        assert "NON-COMPLIANT" in text


def test_metrics_page_shows_each_metric_with_three_significant_digits(good) -> None:
    recorded, pages = good
    run = load_run(recorded.database, recorded.run_id)
    metrics_page = next(p for p in pages if "Active power tests" in p)
    for name in ("EP_RI", "EP_RR", "EP_RW", "EP_SR", "EP_SW", "EP_MW1", "EP_MW2"):
        metric = run.metric(name)
        assert metric is not None and metric.valid
        assert re.search(rf"{name} {re.escape(format_figure(metric.value))}\b", metrics_page), \
            name
    assert metrics_page.count("VALID") >= 7 and "INVALID:" not in metrics_page
    idle = run.metric("EP_RI")
    assert f"{format_figure(idle.avg_power_w)} W" in metrics_page
    assert "7300 GB" in metrics_page
    assert "Deduplication YES YES PASSED" in metrics_page
    # each run length in one form, as ready idle's (issue 41: "0.167" minutes beside "2 min 47 s")
    assert "(min)" not in metrics_page
    for name in ("EP_RR", "EP_SW"):
        length = format_duration(run.metric(name).run_length_s)
        assert re.search(rf"{name} \S+ \S+ {re.escape(length)}", metrics_page), name


def test_cover_names_product_classification_method_and_people(good) -> None:
    _, pages = good
    cover = pages[0]
    for text in ("StorWatt Simulated array", "online-3", "Online 3", "demo 3.0.0-sw1-demo1",
                 "bench-7", "R. Tester", "COMPLETED"):
        assert text in cover, text


def test_sections_present(good) -> None:
    _, pages = good
    whole = " ".join(pages)
    for text in ("Instruments", "Calibration date", "Worst uncertainty", "Intensity search",
                 "periodic power efficiency", "weighted moving average", "Response-time "
                 "histograms", "99.999 %", "ceiling 30 ms", "Event log",
                 "Appendix — workload job files"):
        assert text in whole, text


def test_invalid_phase_is_reported_invalid_with_reason(tmp_path: Path) -> None:
    def hook(seq, event) -> None:
        from app.sequencer import events as ev
        if isinstance(event, ev.PhaseStarted):
            meter.bad = event.phase.profile == "SW" and event.phase.kind is PhaseKind.ACTIVE

    meter: DegradingMeter | None = None

    def make(inner):
        nonlocal meter
        meter = DegradingMeter(inner)
        return meter

    recorded = record_run(tmp_path / "r.db", hook=hook, meter=make)
    run = load_run(recorded.database, recorded.run_id)
    sw = run.metric("EP_SW")
    assert not sw.valid and "uncertainty" in sw.reason
    text = " ".join(pdf_pages(export_run(recorded.database, recorded.run_id, tmp_path)["pdf"]))
    value = f"({format_figure(sw.value)})"
    assert re.search(rf"EP_SW {re.escape(value)} MiB/s/W .*INVALID: \d+ power sample", text)
    assert f"EP_SW {format_figure(sw.value)} " not in text  # never printed as if valid
    assert "EP_SR" in text and run.metric("EP_SR").valid


def test_aborted_run_says_what_was_not_measured(tmp_path: Path) -> None:
    recorded = record_run(tmp_path / "r.db", hook=abort_at(PhaseKind.READY_IDLE))
    assert recorded.status is RunStatus.ABORTED
    paths = export_run(recorded.database, recorded.run_id, tmp_path)
    text = " ".join(pdf_pages(paths["pdf"]))
    assert "run ABORTED: aborted by the test operator" in text
    assert re.search(r"EP_RI — NOT MEASURED: phase Ready idle ABORTED", text) or \
        "EP_RI NOT MEASURED: phase Ready idle ABORTED" in text
    assert "COM Deduplication: NOT TESTED: phase COM deduplication never started" in text
