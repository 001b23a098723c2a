"""The workloads beyond the six end to end (docs/method-notes.md §2, §6): hot band, the
application mixes and a trace replay, on the simulated lab and on real fio against a scratch
file, stored, published live, and in the PDF and the xlsx."""

from __future__ import annotations

import shutil
from pathlib import Path

import openpyxl
import pytest
from pypdf import PdfReader

from app.core.records import PhaseKind, RunStatus
from app.reports.export import export_run
from app.sequencer import events as ev
from tests.support.bundles import assert_verifies
from tests.support.short_fio_run import run_short_variant
from tests.support.recorded_runs import record_run
from app.storage.repository import load_run
WORKLOADS = ("HOTBAND", "OLTP", "VOD", "LOG", "DSS", "MAIL", "PAGING", "REPLAY")


def _report_texts(paths: dict[str, Path]) -> tuple[str, set[str]]:
    pdf = " ".join(page.extract_text() for page in PdfReader(paths["pdf"]).pages)
    book = openpyxl.load_workbook(paths["xlsx"], read_only=True)
    cells = {str(c) for row in book["Test Data Report"].iter_rows(values_only=True)
             for c in row if c is not None}
    return pdf, cells


def test_simulated_lab_runs_every_workload_live_stored_and_reported(tmp_path: Path) -> None:
    live: set[str] = set()

    def watch(_seq, event) -> None:
        if isinstance(event, ev.IntervalClosed) and event.interval.ops_rate > 0:
            live.add(event.interval.profile)

    recorded = record_run(tmp_path / "w.db", method="demo-workloads", coms=(), hook=watch)
    assert recorded.status is RunStatus.COMPLETED
    run = load_run(recorded.database, recorded.run_id)
    active = [p.info.profile for p in run.phases if p.info.kind is PhaseKind.ACTIVE]
    assert tuple(active) == WORKLOADS and live >= set(WORKLOADS)
    metrics = {m.name: m for m in run.metrics}
    assert all(metrics[f"EP_{w}"].valid for w in WORKLOADS), metrics
    pdf, cells = _report_texts(export_run(recorded.database, recorded.run_id, tmp_path))
    for name in WORKLOADS:
        assert f"EP_{name}" in pdf and f"EP_{name}" in cells


@pytest.mark.realtime("workloads on real fio, real clock")
@pytest.mark.fio
@pytest.mark.slow  # about a minute: four workloads with real fio on a 64 MiB scratch file
@pytest.mark.skipif(shutil.which("fio") is None, reason="fio not installed")
def test_real_fio_runs_hot_band_mixes_and_replay_into_the_reports(tmp_path: Path,
                                                                  capsys) -> None:
    # each profile's first second is a stabilisation interval, as a compliant method's are: on a
    # loaded CI machine fio took over a second to start VOD and REPLAY, whose first measured
    # interval then held no IO ("not stable: ... weighted moving average of zero")
    database, run = run_short_variant(
        tmp_path, capsys, "demo-workloads.toml", "workloads-short",
        "hot band, two mixes and a replay, shortest", """[search]
probe_s = 1.0
queue_depths = [4]
jobs = 1

[[plans]]
name = "online"
categories = ["online", "near-online"]
prefill = false
conditioning_profile = "HOTBAND"
conditioning_intervals = 2
ready_idle_intervals = 2
com_check_intervals = 1
active = [
  { profile = "HOTBAND", stabilisation_intervals = 1, measurement_intervals = 2 },
  { profile = "OLTP", stabilisation_intervals = 1, measurement_intervals = 2 },
  { profile = "VOD", stabilisation_intervals = 1, measurement_intervals = 2 },
  { profile = "REPLAY", stabilisation_intervals = 1, measurement_intervals = 2 },
]

[stability]  # a stabilisation that never extends: the run keeps its length
max_stabilisation_intervals = 1
""")
    jobs = "\n".join(run.job_files.values())
    # the search's step 4 asks 4 × 1000 IOPS in all; hot1 takes 28 %, 70/30, its reads and
    # writes each in a section with the reference in-band curve (method-notes §2)
    hot1 = jobs.split("[HOTBAND-hot1-read]", 1)[1]
    assert "rate_iops=784,0" in hot1.split("\n[", 1)[0] and "flow=" not in jobs
    assert "random_distribution=zoned_abs:" in hot1.split("\n[", 1)[0]
    assert f"offset={64 * 2**20 * 10 // 100 // 8192 * 8192 + 8192}" in hot1  # whole blocks
    assert "read_iolog=" in jobs and "replay_redirect=" in jobs
    rates = {m.name: m.ops_rate for m in run.metrics}
    assert all(rates[f"EP_{w}"] > 0 for w in ("HOTBAND", "OLTP", "VOD", "REPLAY")), (
        rates, [e.message for e in run.events if e.level != "INFO"],
        [(m.name, m.reason) for m in run.metrics])
    pdf, cells = _report_texts(export_run(database, run.run_id, tmp_path))
    for name in ("EP_HOTBAND", "EP_OLTP", "EP_VOD", "EP_REPLAY"):
        assert name in pdf and name in cells
    # its bundle: the hot band's streams on real fio re-derived by the standalone verifier
    assert "[x] EP_HOTBAND: " in assert_verifies(run, tmp_path / "workloads.zip")
