"""Every shipped profile's access pattern, proven from fio's own per-IO log (docs/method-notes.md
§2): the job file the station writes runs on fio's null engine (no IO behind it, so the
pattern is fio's alone) with ``write_lat_log``/``log_offset=1``, and the logged offsets and
directions are checked against the method — random profiles uniform over the whole range,
sequential ones sequential and aligned, the read shares, the hot band's stream shares and
ranges, and its bands on the reference generator's in-band curve. The log is read and judged
by the station's own code (drivers/fio/access_log.py, app/sequencer/access_check.py), the code of
the
pre-run whose pattern the report states."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from app.method.loader import load_method
from app.sequencer.access_check import pattern_departures
from drivers.fio.access_log import (LOG_OPTIONS, LoggedRun, access_pattern, measure_pattern,
                                    pattern_of, read_lat_logs, share_below)
from drivers.fio.ceiling import null_engine_text, stream_of
from drivers.fio.jobs import JobOptions, job_text
from tests.support.time_budget import budget_s

pytestmark = [pytest.mark.fio,
              pytest.mark.skipif(shutil.which("fio") is None, reason="fio not installed")]

SPAN = 1_000_000_000  # the null engine addresses a 1 GB range: the hot bands are 80 MB
METHOD = load_method("emerald-block-v3")
#: the read share each of the six profiles must show (method-notes §2's table)
READ_PCT = {"MW1": 70, "MW2": 70, "RW": 0, "RR": 100, "SW": 0, "SR": 100}


def logged(tmp_path: Path, work, number_ios: int | None = None):
    """Run ``work``'s job file on the null engine with per-IO logs: (IOs, job names)."""
    text = null_engine_text(job_text(work, JobOptions(("/dev/storwatt-null",), "null", False,
                                                      SPAN, span=SPAN)))
    extra = [f"write_lat_log={tmp_path / 'p'}", *LOG_OPTIONS]
    if number_ios:  # an IO count, not a time: fio ignores number_ios while time_based
        extra.append(f"number_ios={number_ios}")
        text = text.replace("time_based=1\n", "")
    text = text.replace("[global]\n", "[global]\n" + "\n".join(extra) + "\n", 1)
    text = text.replace("ramp_time=500ms\n", "")  # every IO is logged, ramp or not
    # one fixed seed instead of a new sequence per run (randrepeat=0): the same generator and
    # distribution, but the uniformity test's p-value is the same on every run (with a new
    # sequence each run, MW1 once gave p = 0.00014 in ten CI runs: a 0.001 level is a 0.1 %
    # false alarm per profile and run)
    assert "randrepeat=0\n" in text
    text = text.replace("randrepeat=0\n", "randrepeat=1\nrandseed=20261126\n")
    job = tmp_path / "p.fio"
    job.write_text(text, encoding="utf-8")
    done = subprocess.run(["fio", "--output-format=json", str(job)], capture_output=True,
                          text=True, timeout=budget_s(60), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    names = [j["jobname"] for j in json.loads(done.stdout[done.stdout.index("{"):])["jobs"]]
    return read_lat_logs(tmp_path, "p", names), names


@pytest.mark.realtime("fio on the null engine, once per profile: the pattern is fio's fact")
@pytest.mark.parametrize("name", sorted(READ_PCT))
def test_each_profile_s_job_file_makes_its_pattern(tmp_path: Path, name: str) -> None:
    profile = METHOD.profile(name)
    work = profile.to_workload(queue_depth=4, jobs=METHOD.search.jobs, duration_s=1.0,
                               rate_iops=(7000, 3000) if profile.intensity_of else None)
    ios, _ = logged(tmp_path, work, None if profile.intensity_of else 20_000)
    block = work.block_size
    found = access_pattern(ios, 0, SPAN, block)
    # a sequential job walks its own quarter once (3,812 IOs of 256 KiB): number_ios caps
    assert found.ios >= (5000 if profile.random else 3800) and found.aligned and \
        found.within(0, SPAN)
    assert abs(found.read_pct - READ_PCT[name]) < 1.5, found
    if profile.random:
        assert found.uniformity_p > 0.001, found  # uniform over the whole target
        assert found.sequential_pct < 1, found
        assert found.highest_end > 0.95 * SPAN and found.lowest < 0.05 * SPAN
    else:
        assert found.sequential_pct > 99.9, found
    # the station's judge, on the same log, finds the method's pattern
    assert pattern_departures(pattern_of(ios, work, SPAN, 1.0, "test"), profile) == []


@pytest.mark.realtime("fio on the null engine: the hot band's shares, ranges and curve")
def test_the_hot_band_job_file_makes_the_seed_s_streams_and_the_reference_curve(
        tmp_path: Path) -> None:
    profile = METHOD.profile("HOTBAND")
    # 30,000 IOPS in all for 2 s: the same 60,000 IOs as 1 s at 60,000, but a job the loaded
    # CI machine held back for a moment moves its share half as much (write3 logged 2,377 of
    # ~2,944 IOs in a 1 s run: 0.96 point off)
    work = profile.at_intensity(METHOD.search, 30, 2.0, "active")
    ios, _ = logged(tmp_path, work)
    by_stream: dict[str, list] = {}
    for io in ios:
        by_stream.setdefault(stream_of(io.job, work), []).append(io)
    total = len(ios)
    assert total > 30_000  # hot1 alone ~12,000 reads: the curve to ±0.5 point (1 σ)
    for s in profile.streams:
        mine = by_stream[s.name]
        assert abs(100 * len(mine) / total - s.share_pct) < 0.5, (s.name, len(mine), total)
        start = SPAN * s.offset_pct / 100
        found = access_pattern(mine, int(start), int(SPAN * s.size_pct / 100),
                               int(s.block_size_kib * 1024))
        assert found.within(int(start), int(start + SPAN * s.size_pct / 100) + 1), s.name
        assert abs(found.read_pct - s.read_pct) < 2.5, (s.name, found)
        if s.pattern == "sequential":
            assert found.sequential_pct > 99.9, (s.name, found)
    hot = sum(len(by_stream[n]) for n in ("hot1", "hot2", "hot3", "hot4"))
    assert abs(100 * hot / total - 54) < 0.5  # "54 % of the IO in 32 % of the space"
    # the bands' reads follow the reference curve within 2 points (method-notes §2)
    hot1 = [io for io in by_stream["hot1"] if not io.write]
    first = min(io.offset for io in hot1) // 8192 * 8192
    band = SPAN * 8 // 100
    for x in (0.001, 0.01, 0.1, 0.5):
        measured = sum(io.offset - first < x * band for io in hot1) / len(hot1)
        assert abs(measured - share_below(x * band, band)) < 0.02, (x, measured)
    # the station's own reading of the same log: every stream's share, range, mix and curve
    found = pattern_of(ios, work, SPAN, 2.0, "test")
    assert [s.name for s in found.streams] == [s.name for s in profile.streams]
    assert all(len(s.curve) == 4 for s in found.streams if s.name.startswith("hot"))
    assert pattern_departures(found, profile) == []


@pytest.mark.realtime("fio on the null engine: a job file off its profile is caught")
def test_a_job_file_off_its_profile_is_caught_from_fio_s_log(tmp_path: Path) -> None:
    """The pre-run's judge can fail: MW1's file with another mix, or reaching only half the
    range, is named with the rule and the measured figure."""
    profile = METHOD.profile("MW1")
    work = profile.to_workload(queue_depth=4, jobs=1, duration_s=1.0)
    text = null_engine_text(job_text(work, JobOptions(("/dev/storwatt-null",), "null", False,
                                                      SPAN, span=SPAN)))
    assert "rwmixread=70" in text and f"size={SPAN}" in text
    bad = text.replace("rwmixread=70", "rwmixread=60").replace(f"size={SPAN}",
                                                               f"size={SPAN // 2}")
    found = measure_pattern([LoggedRun(("fio",), tmp_path / "p", bad)], work, SPAN)
    assert found.ios >= 19_000 and "null engine, per-IO log" in found.source
    departures = "; ".join(pattern_departures(found, profile))
    assert "% reads, asked 70 %" in departures and "asked the whole range" in departures
    assert "offsets not uniform over the range (chi-square p = " in departures


@pytest.mark.realtime("fio on the null engine at three queue depths: the generator's ceiling")
def test_the_generator_holds_the_hot_band_s_shares_at_every_queue_depth(tmp_path: Path) -> None:
    """The old job file (fio's ``flow`` weights) reached ~570 IOPS at queue depth 1 and
    skewed the shares at 16 (docs/performance.md); the capped one holds
    20,000 IOPS asked in the seed's shares at 1, 16 and the deepest listed depth — through the
    engine's own
    null-engine check, which never opens the target."""
    from dataclasses import replace

    from drivers.clock import MonotonicClock
    from drivers.fio.engine import FioEngine
    from drivers.fio.safety import TargetPolicy
    target = tmp_path / "scratch.dat"
    target.write_bytes(b"\0" * (64 << 20))
    before = target.read_bytes()
    engine = FioEngine([str(target)], clock=MonotonicClock(), workdir=tmp_path,
                       policy=TargetPolicy(allow_destructive=True, confirmed=(str(target),)))
    # the method's own check length (2 s): in 1 s a job held back for a moment by a loaded CI
    # machine moved a stream's share 0.99 point at depth 256 (the limit is 0.5)
    work = METHOD.profile("HOTBAND").at_intensity(METHOD.search, 20,
                                                  METHOD.search.generator_check_s, "generator")
    for depth in (1, 16, METHOD.search.queue_depths[-1]):
        found = engine.generator_ceiling(replace(work, queue_depth=depth), depth)
        assert found.asked_iops == 20_000 and found.kept_up(), found
    # the pre-run's pattern through the engine: the same file, logged, never the target
    mw1 = METHOD.profile("MW1")
    pattern = engine.access_pattern(mw1.at_intensity(METHOD.search, 1, 1.0, "generator"))
    assert pattern is not None and pattern.ios >= 19_000 and pattern.high_pct > 99
    assert pattern_departures(pattern, mw1) == []
    assert target.read_bytes() == before
    assert not list(tmp_path.glob("MW1-pattern*"))  # the log is removed once read


@pytest.mark.realtime("two real loopback fio servers as load hosts run the null-engine pre-run")
@pytest.mark.process
def test_the_pre_run_runs_on_every_load_host_with_its_share_of_the_rate(
        tmp_path: Path, two_fio_servers) -> None:
    """Through load hosts the pre-run runs on each host's fio (null engine there), each with
    half the rate as the real run splits it: the ceiling and the logged pattern are the two
    hosts' together (one host alone could not reach 90 % of the asked rate). The curved hot
    band is allowed on load hosts once the target size is given (its bands in bytes)."""
    from drivers.clock import MonotonicClock
    from drivers.fio.engine import FioEngine
    from drivers.fio.safety import TargetPolicy
    engine = FioEngine(["/tmp/storwatt-never-opened.dat"], clock=MonotonicClock(),
                       load_hosts=two_fio_servers, workdir=tmp_path,
                       policy=TargetPolicy(create_size=SPAN))
    profile = METHOD.profile("HOTBAND")
    # 20,000 IOPS in all, for the compliant method's 2 s: in a 0.5 s check two loaded CI cores
    # held a job back long enough to move a stream's share 0.88 point
    work = profile.at_intensity(METHOD.search, 20, METHOD.search.generator_check_s, "generator")
    found = engine.generator_ceiling(work, 20)
    assert found.asked_iops == 20_000 and found.kept_up(), found
    halves = [(tmp_path / f"HOTBAND-generator-host{i}" / "HOTBAND-generator.fio").read_text()
              for i in (1, 2)]
    assert all("rate_iops=" in h and "random_distribution=zoned_abs" in h for h in halves)
    pattern = engine.access_pattern(work)
    assert pattern is not None and all(h in pattern.source for h in two_fio_servers)
    assert pattern.ios > 15_000  # both hosts' logs: 20,000 IOPS for the pre-run's 1 s
    assert pattern_departures(pattern, profile) == []
    assert not Path("/tmp/storwatt-never-opened.dat").exists()
    assert not list(tmp_path.glob("HOTBAND-pattern*"))  # the returned logs are removed


def _run_logged(tmp_path: Path, text: str, host: str = ""):
    """Run a null-engine job file with the per-IO log on, as the station's pre-run does."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    job = tmp_path / "p.fio"
    job.write_text(text.replace("[global]\n", "[global]\n" + "\n".join(
        [f"write_lat_log={tmp_path / 'p'}", *LOG_OPTIONS, "loops=5"]) + "\n", 1)
        .replace("time_based=1\n", "").replace("ramp_time=500ms\n", ""), encoding="utf-8")
    done = subprocess.run(["fio", "--output-format=json", str(job)], capture_output=True,
                          text=True, timeout=budget_s(60), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    names = [j["jobname"] for j in json.loads(done.stdout[done.stdout.index("{"):])["jobs"]]
    return read_lat_logs(tmp_path, "p", names, host)


@pytest.mark.realtime("fio on the null engine: SR and SW over the shipped jobs and two hosts")
@pytest.mark.parametrize("name", ["SR", "SW"])
def test_sequential_profiles_touch_each_block_once_per_pass_over_jobs_and_hosts(
        tmp_path: Path, name: str) -> None:
    """Issue 38, seen 1: the shipped ``jobs = 4`` walked one region in lock-step (25 %
    distinct offsets, a read cache serving three jobs of four). Each job and each load host
    now walks its own slice: ≥ 99 % of the IOs at an offset no other IO of the pass touched
    (access_check.DISTINCT_PCT), from fio's own per-IO log; the lock-step file is caught."""
    profile = METHOD.profile(name)
    assert METHOD.search.jobs == 4  # the shipped job count is the one proven
    work = profile.to_workload(queue_depth=4, jobs=METHOD.search.jobs, duration_s=1.0)
    ios: list = []
    for host in (0, 1):
        text = null_engine_text(job_text(work, JobOptions(
            ("/dev/storwatt-null",), "null", False, SPAN, host=host, hosts=2, span=SPAN)))
        ios += _run_logged(tmp_path / f"host{host}", text, f"h{host}")
    found = pattern_of(ios, work, SPAN, 1.0, "test")
    assert found.ios >= 19_000 and (found.distinct_pct or 0) >= 99.0, found  # five passes each
    assert found.sequential_pct > 99.9 and found.high_pct > 95, found
    assert pattern_departures(found, profile) == []
    # the file as shipped before: every job from offset 0, one region, on one host
    old = "\n".join(line for line in null_engine_text(job_text(work, JobOptions(
        ("/dev/storwatt-null",), "null", False, SPAN, span=SPAN))).splitlines()
        if not line.startswith(("offset", "size=")) or line == f"size={SPAN}") + "\n"
    lockstep = pattern_of(_run_logged(tmp_path / "old", old), work, SPAN, 1.0, "test")
    assert lockstep.distinct_pct is not None and lockstep.distinct_pct < 30, lockstep
    assert any("no other job or host touched" in d for d in pattern_departures(lockstep, profile))


@pytest.mark.realtime("fio reads a 100 MiB sparse file: the slices in whole percentages")
def test_without_the_target_size_each_job_reads_its_own_whole_percent_slice(
        tmp_path: Path) -> None:
    """A load host's device has no size the station knows: the slices are whole percentages
    (fio 3.33 reads ``size=12.5%`` as 12 bytes). Read on a real (sparse) file with the
    shipped 4 jobs as load host 2 of 2: four disjoint 12 % slices from 48 %, every offset
    distinct."""
    target = tmp_path / "t.dat"
    with open(target, "wb") as f:
        f.truncate(100 << 20)
    work = METHOD.profile("SR").to_workload(queue_depth=1, jobs=METHOD.search.jobs,
                                            duration_s=1.0)
    text = job_text(work, JobOptions(("t.dat",), "psync", False, host=1, hosts=2))
    assert "offset=48%\noffset_increment=12%\nsize=12%" in text
    ios = _run_logged(tmp_path, text.replace("group_reporting=1", "group_reporting=0"))
    found = access_pattern(ios, 0, 100 << 20, work.block_size)
    assert found.ios == 5 * 4 * 48 and found.distinct_pct == 100.0, found  # five passes
    assert found.lowest == 48 * (100 << 20) // 100 and found.highest_end <= 96 * (100 << 20) // 100
