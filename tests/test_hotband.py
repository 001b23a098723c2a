"""The hot band (docs/method-notes.md §2): the method knows it, the sequencer runs it as the
conditioning workload and as an active profile, and real fio gives each of the 13 streams its
share of the IOs inside its address range, proven from fio's own per-IO logs."""

from __future__ import annotations

import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from app.method.loader import MethodError, load_method, load_method_file
from app.core.records import PhaseKind
from drivers.fio.jobs import JobOptions, job_text
from drivers.simulators.sut import SimulatedSut
from app.storage.repository import load_run
from tests.support.time_budget import budget_s

#: the seed's shares (green-grid-coms-poms.txt, "Workload with Hot Band IO Patterns")
SEED_SHARES = {"write1": 5, "write2": 5, "write3": 5, "read1": 5, "read2": 5, "read3": 5,
               "read4": 5, "read5": 5, "uniform": 6, "hot1": 28, "hot2": 14, "hot3": 7,
               "hot4": 5}
SEED_RANGES = {"hot1": (10, 18), "hot2": (32, 40), "hot3": (55, 63), "hot4": (80, 88)}


def test_method_defines_the_seed_hot_band() -> None:
    profile = load_method("emerald-block-v3").profile("HOTBAND")
    assert {s.name: s.share_pct for s in profile.streams} == SEED_SHARES
    ranges = {s.name: (s.offset_pct, s.offset_pct + s.size_pct) for s in profile.streams}
    assert {k: ranges[k] for k in SEED_RANGES} == SEED_RANGES
    assert all(ranges[k] == (0, 100) for k in SEED_SHARES if k not in SEED_RANGES)
    hot = sum(s.share_pct for s in profile.streams if s.name in SEED_RANGES)
    space = sum(s.size_pct for s in profile.streams if s.name in SEED_RANGES)
    assert (hot, space) == (54, 32)  # "54 % of the IO in 32 % of the space"
    assert len(profile.to_workload().streams) == 13


def _variant(tmp_path: Path, profile_lines: str) -> Path:
    path = tmp_path / "bad.toml"
    base = Path(__file__).parents[1] / "resources" / "methods" / "emerald-block-v3.toml"
    text = base.read_text(encoding="utf-8").replace(
        "# Phase plans.", profile_lines + "\n# Phase plans.", 1)
    path.write_text(text, encoding="utf-8")
    return path


BAD_STREAMS = """[[profiles]]
name = "HB2"
title = "x"
block_size_kib = 8
read_pct = 70
intensity_pct = 100
align_kib = 8
pattern = "random"
metric = "EP_HB2"
metric_unit = "IOPS/W"
streams = [
  { name = "a", share_pct = 60.0, read_pct = 70.0, pattern = "random", block_size_kib = 8 },
  { name = "b", share_pct = 30.0, read_pct = 70.0, pattern = "random", block_size_kib = 8, offset_pct = 95.0, size_pct = 10.0 },
]
"""  # noqa: E501 - TOML: an inline table is one line


def test_stream_errors_name_the_key_and_the_evidence(tmp_path: Path) -> None:
    with pytest.raises(MethodError) as err:
        load_method_file(_variant(tmp_path, BAD_STREAMS))
    text = str(err.value)
    assert "streams.1" in text and "offset_pct 95 + size_pct 10 runs past the end" in text
    with pytest.raises(MethodError, match=r"stream shares add up to 90 %, not 100 %"):
        load_method_file(_variant(tmp_path, BAD_STREAMS.replace("offset_pct = 95.0",
                                                                "offset_pct = 0.0")))


def test_hotband_is_the_conditioning_workload_and_an_active_profile() -> None:
    method = load_method("emerald-hotband-v3")
    plan = method.plan_for("online")
    assert plan.conditioning_profile == "HOTBAND"
    assert [s.profile for s in plan.active][-1] == "HOTBAND"
    assert method.compliance == load_method("emerald-block-v3").compliance


def test_simulated_sut_runs_the_streams_not_the_headline_profile() -> None:
    profile = load_method("emerald-block-v3").profile("HOTBAND")
    sut = SimulatedSut()
    mixed = sut.operating_point(profile.to_workload(queue_depth=16))
    headline = sut.operating_point(profile.model_copy(update={"streams": ()}).to_workload(
        queue_depth=16))
    # a quarter of the IOs are 256 KiB sequential: far more bytes than 8 KiB random alone
    assert mixed.mib_s > 5 * headline.mib_s


def test_sequencer_conditions_and_measures_with_the_hot_band(tmp_path: Path) -> None:
    from tests.support.recorded_runs import record_run
    recorded = record_run(tmp_path / "hb.db", method="demo-workloads", coms=())
    run = load_run(recorded.database, recorded.run_id)
    phases = {p.info.kind: p for p in run.phases}
    assert phases[PhaseKind.CONDITIONING].info.profile == "HOTBAND"
    metrics = {m.name: m for m in run.metrics}
    assert metrics["EP_HOTBAND"].valid and metrics["EP_HOTBAND"].unit == "IOPS/W"
    assert [p.info.profile for p in run.phases if p.info.kind is PhaseKind.ACTIVE][0] == \
        "HOTBAND"
    # searched by total rate, each listed step's job file first checked on the generator
    # alone (method-notes §2), stored and in both reports
    found = {r.profile: r for r in run.search_results}["HOTBAND"]
    steps = load_method("demo-workloads").search.queue_depths
    assert found.rate_iops and sum(found.rate_iops) == found.queue_depth * 1000
    assert [g.step for g in found.generator] == list(steps)
    assert all(g.kept_up() for g in found.generator)
    # the PDF's metrics table keeps each name whole (issue 41: "EP_HOTB / AND")
    from app.reports.export import export_run
    from tests.support.documents import pdf_pages
    pages = pdf_pages(export_run(recorded.database, recorded.run_id, tmp_path / "pdf")["pdf"])
    metrics_page = next(p for p in pages if "Active power tests" in p)
    assert "EP_HOTBAND" in metrics_page and "EP_HOTB AND" not in metrics_page
    # the SUT saturates below the deepest step's 16,000 IOPS: its intensity 100 is the last
    # step it kept up with (a probe short of its asked rate is over the limit)
    assert 2000 <= sum(found.rate_iops) <= found.ops_rate / 0.95
    assert not found.note.startswith("load generator limit"), found.note
    from app.reports.export import export_run
    import openpyxl
    from pypdf import PdfReader
    paths = export_run(recorded.database, recorded.run_id, tmp_path)
    rows = list(openpyxl.load_workbook(paths["xlsx"], read_only=True)["Generator"]
                .iter_rows(values_only=True))
    assert rows[0][:3] == ("profile", "step", "generator_iops") and len(rows) > len(steps)
    text = " ".join(page.extract_text() for page in PdfReader(paths["pdf"]).pages)
    assert "Load generator alone" in " ".join(text.split())
    # the access pattern of the same pre-run, per profile and per stream, stored and shown
    # beside the ceiling (the simulated engine models it and says so)
    assert found.pattern is not None and "modelled" in found.pattern.source
    assert [s.name for s in found.pattern.streams] == [
        s.name for s in load_method("demo-workloads").profile("HOTBAND").streams]
    header = rows[0]
    at = header.index("pattern_profile")
    assert header[at - 1] is None and header[at:at + 2] == ("pattern_profile", "stream")
    hot1 = next(r for r in rows if r[at] == "HOTBAND" and r[at + 1] == "hot1")
    assert hot1[header.index("share_of_ios_pct")] == 28
    whole = next(r for r in rows if r[at] == "HOTBAND" and r[at + 1] is None)
    assert whole[header.index("departures_from_method")] == "none"
    flat = " ".join(text.split())
    assert "Access pattern measured in the same pre-run" in flat
    assert "hot1 28.00 % @ 10.0–18.0 %" in flat

    _unsearched_profiles_have_their_own_pre_run(run, paths)

def _lat_log_counts(folder: Path, sections: list[str], profile) -> tuple[Counter, dict]:
    """IO count and (lowest offset, highest end) per stream from fio's per-IO latency logs
    (``write_lat_log`` with ``log_offset=1``: time, latency, direction, size, offset …), the
    logs numbered in the order of the job file's sections."""
    from drivers.fio.ceiling import stream_of
    counts: Counter = Counter()
    spans: dict[str, tuple[int, int]] = {}
    for number, section in enumerate(sections, 1):
        name = stream_of(section, profile)
        for line in (folder / f"hb_lat.{number}.log").read_text().splitlines():
            fields = [f.strip() for f in line.split(",")]
            size, offset = int(fields[3]), int(fields[4])
            counts[name] += 1
            lo, hi = spans.get(name, (offset, offset + size))
            spans[name] = (min(lo, offset), max(hi, offset + size))
    return counts, spans


@pytest.mark.fio
@pytest.mark.realtime("real fio on a real file: the streams' shares and ranges from fio's log")
@pytest.mark.skipif(shutil.which("fio") is None, reason="fio not installed")
def test_real_fio_gives_each_stream_its_share_inside_its_range(tmp_path: Path) -> None:
    size = 64 * 2**20
    target = tmp_path / "scratch.dat"
    with target.open("wb") as fh:  # written, so the sequential reads read real blocks
        fh.write(b"\0" * size)
    method = load_method("emerald-block-v3")
    profile = method.profile("HOTBAND")
    work = profile.at_intensity(method.search, 4, 3, "active")  # 4,000 IOPS in all
    text = job_text(work, JobOptions((str(target),), "libaio", False, size))
    per_io_logs = f"write_lat_log={tmp_path / 'hb'}\nlog_offset=1\n"
    job = tmp_path / "hb.fio"
    job.write_text(text.replace("\n\n[", f"\n{per_io_logs}\n[", 1), encoding="utf-8")
    done = subprocess.run(["fio", str(job), "--output-format=json"], capture_output=True,
                          text=True, timeout=budget_s(120), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    sections = [line[1:-1] for line in text.splitlines()
                if line.startswith("[") and line != "[global]"]
    assert len(sections) == 17  # the four curved bands run a read and a write section each
    counts, spans = _lat_log_counts(tmp_path, sections, work)
    total = sum(counts.values())
    assert total > 5000, counts
    names = [s.name for s in profile.streams]
    shares = {n: 100 * counts[n] / total for n in names}
    off = {n: round(shares[n] - SEED_SHARES[n], 2) for n in names
           if abs(shares[n] - SEED_SHARES[n]) > 0.5}
    assert not off, f"streams off their share by more than 0.5 point: {off} ({counts})"
    for s in profile.streams:
        lo, hi = size * s.offset_pct / 100, size * (s.offset_pct + s.size_pct) / 100
        first, end = spans[s.name]
        assert lo <= first and end <= hi, (s.name, first, end, lo, hi)


def test_methods_show_lists_each_stream(capsys) -> None:
    from app.cli.main import main
    assert main(["methods", "show", "emerald-hotband-v3"]) == 0
    out = capsys.readouterr().out
    assert "stream hot1: 28 % of the IOs, 8 KiB random 70/30 over 10–18 % of the target" in out
    assert "conditioning      HOTBAND for 12 h" in out


def _unsearched_profiles_have_their_own_pre_run(run, paths) -> None:
    """Issue 30: MW2 (rate derived from MW1) and a trace replay are not searched, yet the job
    file each runs is pre-run on the null engine before its phase, stored, judged by the
    generator rule and shown in both reports; the replay's pattern is said to be the trace's."""
    from app.rules.compliance import GENERATOR, assess_compliance
    import openpyxl
    from pypdf import PdfReader
    rows = {r.profile: r for r in run.search_results}
    replay = rows["REPLAY"]
    assert not replay.searched and "trace" in (replay.pre_run_basis or "")
    assert replay.pattern is None and len(replay.generator) == 1
    assert replay.ops_rate > 0 and not replay.note  # judged against the measured rate
    assert rows["HOTBAND"].searched
    sheet = list(openpyxl.load_workbook(paths["xlsx"], read_only=True)["Search"]
                 .iter_rows(values_only=True))
    assert sheet[0][-1] == "pre_run_basis"
    assert [r[-1] for r in sheet[1:] if r[0] == "REPLAY"] == [replay.pre_run_basis]
    text = " ".join(" ".join(page.extract_text() for page in PdfReader(paths["pdf"]).pages)
                    .split())
    assert "The trace's own offsets, replayed as recorded" in text
    verdict = {c.name: c for c in assess_compliance(run).criteria}
    assert verdict[GENERATOR].met and "REPLAY" in verdict[GENERATOR].evidence
