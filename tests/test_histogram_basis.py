"""A run on load hosts says its histograms are completion latency, everywhere they are shown
(fio's client returns only a completion-latency histogram log; docs/fio.md "Final figures of a
load host"); a local run says total latency."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import openpyxl
import pytest

from app.metrics.histogram_basis import COMPLETION_LATENCY, TOTAL_LATENCY, histogram_basis
from app.core.records import RunConfig, SutDescription
from app.reports.export import export_run
from app.station.session import open_session
from drivers.clock import FakeClock
from app.storage.repository import load_run

HOSTS = ("10.0.0.5:8765", "10.0.0.6:8765")


def _reports(out: Path, load_hosts: tuple[str, ...]) -> tuple[dict[str, Path], object]:
    config = RunConfig(method="smoke", lab="sim-direct", sut=SutDescription(load_hosts=load_hosts))
    session = open_session(config, db_url=f"sqlite:///{out}/runs.db", clock=FakeClock())
    session.sequencer.run()
    session.writer.close()
    run = load_run(session.database, session.sequencer.run_id)
    assert run.histograms, "the smoke run stores histograms"
    return export_run(session.database, session.sequencer.run_id, out), run


@pytest.fixture(scope="module", params=[(), HOSTS], ids=["local", "load-hosts"])
def exported(request, tmp_path_factory):
    out = tmp_path_factory.mktemp("basis")
    paths, run = _reports(out, request.param)
    return request.param, paths, run


def test_the_basis_follows_the_runs_load_hosts() -> None:
    assert histogram_basis(RunConfig(sut=SutDescription(load_hosts=HOSTS))) is COMPLETION_LATENCY
    assert histogram_basis(RunConfig()) is TOTAL_LATENCY
    assert "submission time" in COMPLETION_LATENCY.note and TOTAL_LATENCY.note == ""


@pytest.mark.process
@pytest.mark.skipif(shutil.which("pdftotext") is None, reason="poppler not installed")
def test_the_pdf_names_the_latency_its_histograms_count(exported) -> None:
    hosts, paths, _ = exported
    text = " ".join(subprocess.run(["pdftotext", str(paths["pdf"]), "-"], check=True,
                                   capture_output=True, text=True).stdout.split())
    wanted, wrong = ("completion latency", "total latency, fio lat_ns") if hosts else \
        ("total latency, fio lat_ns", "completion latency")
    assert f"Response-time ({wanted}" in text and wrong not in text
    assert f"response time, {wanted.split(',')[0]} (ms, log scale)" in text  # chart axis


def test_the_xlsx_names_the_latency_its_histograms_count(exported) -> None:
    hosts, paths, _ = exported
    sheet = openpyxl.load_workbook(paths["xlsx"]).worksheets[0]
    rows = {r[0].value: r[1].value for r in sheet.iter_rows(max_col=2) if r[0].value}
    assert rows["Histogram latency"] == (COMPLETION_LATENCY if hosts else TOTAL_LATENCY).describe()


def test_the_run_views_histogram_axis_names_the_latency(qtbot, exported) -> None:
    from ui.history.stored_plots import show_stored
    from ui.plots.live import LivePlots

    hosts, _, run = exported
    plots = LivePlots()
    qtbot.addWidget(plots)
    show_stored(plots, run, None)
    label = plots.hist_widget.getPlotItem().getAxis("bottom").labelText
    assert label.startswith(f"response time, {'completion' if hosts else 'total'} latency")
