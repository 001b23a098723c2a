"""The SPC-1-like BSU sweep (issue 18 §2, docs/method-notes.md §6): the method's sweep
section, the stop rule, rate-limited ASU streams in the fio job file, and the sweep end to
end on the simulated lab — stored step metrics, the PDF table and the xlsx sheet."""

from __future__ import annotations

import math
import shutil
import subprocess
from pathlib import Path

import openpyxl
import pytest
from pypdf import PdfReader

from app.reports.sweep_report import sweep_table
from app.rules.compliance import assess_method
from app.method.loader import load_method
from app.method.model import MethodProblems, Sweep
from app.metrics.sweep import SweepPoint, stop_reason
from app.core.records import PhaseKind, PhaseStatus, RunStatus
from app.reports.export import export_run
from app.sequencer import events as ev
from drivers.fio.jobs import JobOptions, job_text
from drivers.simulators.fio_rate import applied_rate, sections
from tests.support.bundles import assert_verifies
from tests.support.recorded_runs import record_run
from tests.support.short_fio_run import run_short_variant
from tests.support.time_budget import budget_s
from app.storage.repository import load_run
ASU_SHARES = {"asu1": 59.6, "asu2": 12.3, "asu3": 28.1}


def _point(units: int, iops: float, ms: float) -> SweepPoint:
    return SweepPoint(units, 50.0 * units, iops, ms, 700.0, 50, iops / 700, True, "")


def test_stop_rule_is_the_response_time_limit_or_less_than_the_minimum_gain() -> None:
    assert stop_reason([_point(10, 500, 5)], 30, 2) is None
    assert stop_reason([_point(10, 500, 5), _point(20, 1000, 8)], 30, 2) is None
    over = stop_reason([_point(10, 500, 5), _point(20, 1000, 30.5)], 30, 2)
    assert over is not None and "30.5 ms" in over and "30 ms limit" in over
    flat = stop_reason([_point(10, 500, 5), _point(20, 509, 8)], 30, 2)
    assert flat is not None and "rose 1.8 %" in flat
    assert stop_reason([_point(10, math.nan, math.nan)], 30, 2) is not None


def test_spc1_profile_holds_the_seed_asu_shares_and_read_share() -> None:
    spc1 = load_method("spc1-like-demo").profile("SPC1")
    by_asu: dict[str, float] = {}
    for s in spc1.streams:
        by_asu[s.name.split("-")[0]] = by_asu.get(s.name.split("-")[0], 0) + s.share_pct
    assert by_asu == pytest.approx(ASU_SHARES)
    ranges = {(s.name.split("-")[0], s.offset_pct, s.size_pct) for s in spc1.streams}
    assert ranges == {("asu1", 0, 45), ("asu2", 45, 45), ("asu3", 90, 10)}
    reads = sum(s.share_pct * s.read_pct / 100 for s in spc1.streams)
    assert reads == pytest.approx(39.4, abs=0.05) and spc1.block_size_kib == 8  # the seed's 39.4 %
    asu3 = [s for s in spc1.streams if s.name.startswith("asu3")]
    assert [(s.pattern, s.read_pct) for s in asu3] == [("sequential", 0.0)]


def test_sweep_steps_rate_and_queue_depth_as_the_seed_scales_them() -> None:
    sweep = Sweep(name="SPC1", profile="SPC1", units=(1, 2, 300), max_queue_depth=256)
    assert [sweep.rate_iops(n) for n in (1, 2, 300)] == [50, 100, 15000]
    assert [sweep.queue_depth(n) for n in (1, 2, 300)] == [2, 4, 256]
    assert sweep.metric(20) == "SPC1_BSU_20"
    with pytest.raises(ValueError, match="rise strictly"):
        Sweep(name="SPC1", profile="SPC1", units=(2, 2))


def test_a_sweep_profile_must_be_a_rate_limitable_random_profile(tmp_path: Path) -> None:
    shipped = Path(__file__).parents[1] / "resources" / "methods"
    bad = tmp_path / "bad.toml"
    bad.write_text(f'base = "{shipped / "spc1-like-demo.toml"}"\n'
                   + (shipped / "spc1-like-demo.toml").read_text().split("base = ", 1)[1]
                   .split("\n", 1)[1].replace('profile = "SPC1"', 'profile = "SW"'))
    with pytest.raises((MethodProblems, ValueError), match="sweep profile SW must be a random"):
        load_method(bad)


def test_spc1_demo_is_non_compliant_by_derivation() -> None:
    verdict = assess_method(load_method("spc1-like-demo"))
    assert not verdict.compliant


def test_rate_limited_streams_each_get_their_share_of_the_rate_and_no_flow() -> None:
    spc1 = load_method("spc1-like-demo").profile("SPC1")
    step = spc1.to_workload(queue_depth=20, rate_iops=(197, 303))  # 10 BSUs: 500 IOPS
    for hosts in (1, 2):
        files = [job_text(step, JobOptions(("/tmp/x",), host=h, hosts=hosts))
                 for h in range(hosts)]
        jobs = [job for text in files for job in sections(text)]
        assert not any("flow" in job for job in jobs)
        read, write = applied_rate(files)
        assert read + write == pytest.approx(500, abs=3 * hosts)
        assert read == pytest.approx(500 * 0.394, abs=3 * hosts)
    log = sections(job_text(step, JobOptions(("/tmp/x",))))[-1]
    assert log["rw"] == "write" and log["rate_iops"] == "0,140"  # 28.1 % of 500


def test_sim_sweep_stops_at_the_rule_stores_steps_and_reports_them(tmp_path: Path) -> None:
    live: list[str] = []

    def watch(_seq, event) -> None:
        if isinstance(event, ev.MetricComputed) and event.metric.name.startswith("SPC1_BSU_"):
            live.append(event.metric.name)

    recorded = record_run(tmp_path / "s.db", method="spc1-like-demo", coms=(), hook=watch)
    assert recorded.status is RunStatus.COMPLETED
    run = load_run(recorded.database, recorded.run_id)
    steps = [p for p in run.phases if p.info.kind is PhaseKind.SWEEP]
    ran = [p for p in steps if p.status is PhaseStatus.COMPLETED]
    skipped = [p for p in steps if p.status is PhaseStatus.SKIPPED]
    assert ran and skipped and steps == ran + skipped  # the rule stopped it before the end
    assert all("sweep stopped before" in p.error for p in skipped)
    metrics = {m.name: m for m in run.metrics}
    units = [int(p.info.name.rsplit(" ", 1)[1]) for p in ran]
    assert live == [f"SPC1_BSU_{n}" for n in units]
    iops = [metrics[f"SPC1_BSU_{n}"].ops_rate for n in units]
    resp = [metrics[f"SPC1_BSU_{n}"].avg_response_ms for n in units]
    assert iops[0] == pytest.approx(50 * units[0], rel=0.05)  # the SUT keeps up at first
    assert all(b > a for a, b in zip(resp, resp[1:]))  # response time rises step by step
    last_gain = (iops[-1] / iops[-2] - 1) * 100
    assert resp[-1] > 30 or last_gain < 2  # the step that tripped the rule
    assert all(r <= 30 for r in resp[:-1])  # and no step before it did
    assert all(metrics[f"SPC1_BSU_{n}"].unit == "IOPS/W" for n in units)
    paths = export_run(recorded.database, recorded.run_id, tmp_path)
    pdf = " ".join(page.extract_text() for page in PdfReader(paths["pdf"]).pages)
    assert "SPC1 sweep (BSU = 50 IOPS)" in pdf and "W per drive" in pdf and "mW/IOPS" in pdf
    assert skipped[0].error in " ".join(pdf.split())
    sheet = openpyxl.load_workbook(paths["xlsx"])["Sweep"]
    rows = [r for r in sheet.iter_rows(min_row=2, values_only=True) if r[0] is not None]
    assert [r[0] for r in rows] == units
    assert rows[0][10] == "SPC1 sweep (BSU = 50 IOPS)"
    assert rows[1][10] == f"Ended: {skipped[0].error}"
    assert rows[0][2] == pytest.approx(iops[0]) and rows[0][7] == pytest.approx(
        metrics[f"SPC1_BSU_{units[0]}"].avg_power_w / 50)


def _per_io_log(path: Path) -> list[tuple[float, int, int, int]]:
    """(time ms, direction, size, offset) per IO from fio's ``write_lat_log`` with
    ``log_offset=1``."""
    rows = []
    for line in path.read_text().splitlines():
        fields = [f.strip() for f in line.split(",")]
        rows.append((float(fields[0]), int(fields[2]), int(fields[3]), int(fields[4])))
    return rows


@pytest.mark.realtime("a sweep on real fio, real clock")
@pytest.mark.fio
@pytest.mark.skipif(shutil.which("fio") is None, reason="fio not installed")
def test_real_fio_step_runs_at_50_iops_per_bsu_with_sequential_log_writes(
        tmp_path: Path) -> None:
    size = 64 * 2**20
    target = tmp_path / "scratch.dat"
    with target.open("wb") as fh:
        fh.write(b"\0" * size)
    method = load_method("spc1-like-demo")
    sweep = method.plans[0].sweep
    assert sweep is not None
    spc1 = method.profile("SPC1")
    total = sweep.rate_iops(4)  # 4 BSUs: 200 IOPS
    reads = round(total * spc1.read_pct / 100)
    step = spc1.to_workload(queue_depth=sweep.queue_depth(4), rate_iops=(reads, total - reads),
                            duration_s=4)
    text = job_text(step, JobOptions((str(target),), "libaio", False, size))
    job = tmp_path / "step.fio"
    job.write_text(text.replace("\n\n[", f"\nwrite_lat_log={tmp_path / 'io'}\nlog_offset=1\n\n[",
                                1), encoding="utf-8")
    done = subprocess.run(["fio", str(job), "--output-format=json"], capture_output=True,
                          text=True, timeout=budget_s(120), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    logs = [_per_io_log(tmp_path / f"io_lat.{n}.log") for n in range(1, len(spc1.streams) + 1)]
    ios = sum(len(log) for log in logs)
    assert ios / 4 == pytest.approx(total, rel=0.15), ios  # rate-limited at 50 × BSU
    asu3 = logs[-1]  # the last stream: ASU-3, the log
    assert all(direction == 1 for _t, direction, _s, _o in asu3)  # writes only
    tail = [offset for _t, _d, _s, offset in asu3[len(asu3) // 2:]]
    assert len(tail) > 20 and all(b - a == 8192 for a, b in zip(tail, tail[1:])), tail[:10]
    assert size * 0.9 <= min(tail) and max(tail) + 8192 <= size


@pytest.mark.realtime("a sweep on real fio, real clock")
@pytest.mark.fio
@pytest.mark.slow  # about 20 s: three one-second-interval steps on real fio
@pytest.mark.skipif(shutil.which("fio") is None, reason="fio not installed")
def test_real_fio_sweep_end_to_end_stores_rate_limited_steps(tmp_path: Path, capsys) -> None:
    _, run = run_short_variant(tmp_path, capsys, "spc1-like-demo.toml", "spc1-short",
                               "SPC-1-like sweep, shortest", """[[plans]]
name = "online"
categories = ["online", "near-online"]
prefill = false
ready_idle_intervals = 1
com_check_intervals = 1

[plans.sweep]
name = "SPC1"
profile = "SPC1"
units = [2, 4, 8]
stabilisation_intervals = 2
measurement_intervals = 2
""")
    rates = {m.name: m.ops_rate for m in run.metrics}
    ran = [n for n in (2, 4, 8) if f"SPC1_BSU_{n}" in rates]
    assert ran[:2] == [2, 4], rates  # a scratch file keeps up with 100 and 200 IOPS
    # what the station controls, exactly: each step asks fio for 50 IOPS per BSU, and stores
    # what fio did as the step's figure. What fio achieves in a 2 s window is the machine's:
    # starved of CPU (load 11) it held 139 of 200 (issue 36), so the achieved rates are held
    # to their order and to their cap, not to the asked figure
    points = {p.units: p for p in sweep_table(run).points}
    for n in ran:
        assert points[n].asked_iops == 50 * n and points[n].iops == rates[f"SPC1_BSU_{n}"]
        assert 0 < points[n].iops <= 50 * n * 1.2, rates  # a rate limit is never overrun
    assert points[ran[-1]].iops > points[ran[0]].iops, rates  # more BSUs, more IOPS
    assert "rate_iops=" in "\n".join(run.job_files.values())
    # its bundle: the step figures and the stop rule re-derived by the standalone verifier
    assert "[x] sweep SPC1: " in assert_verifies(run, tmp_path / "sweep.zip")
