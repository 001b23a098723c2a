"""MW2's rate: the total the station asks for is the total fio runs (issue 14, item 1).

fio applies ``rate_iops`` to each job and each load host runs its own job file (fio 3.33:
``numjobs=4, rate_iops=70,30`` ran 280/120 IOPS), so the total is split over jobs × hosts.
The simulated lab applies the job files the way fio does, so it shows the same error.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from dataclasses import replace
from pathlib import Path

import pytest

from drivers.clock import FakeClock, MonotonicClock
from drivers.fio.engine import FioEngine
from drivers.fio.jobs import JobOptions, job_text, rate_shares, split_evenly
from drivers.fio.verdict import TargetPolicy
from drivers.interfaces import WorkloadError, WorkloadProfile
from drivers.simulators import engine as sim_engine
from drivers.simulators.engine import SimulatedWorkloadEngine, as_fio_runs
from drivers.simulators.fio_rate import applied_rate
from drivers.simulators.sut import SimulatedSut
from tests.support.time_budget import budget_s


KIB = 1024
needs_fio = pytest.mark.skipif(shutil.which("fio") is None, reason="fio not installed")


def mw2(total: int, jobs: int, duration_s: float | None = 60) -> WorkloadProfile:
    """MW2 as the sequencer derives it: 70 % of the total as reads (``_derived_intensity``)."""
    reads = round(total * 0.7)
    return WorkloadProfile("MW2", 8 * KIB, 70, True, 8 * KIB, queue_depth=16, jobs=jobs,
                           rate_iops=(reads, total - reads), duration_s=duration_s)


def old_job_text(profile: WorkloadProfile, options: JobOptions) -> str:
    """The job generation before the fix: ``numjobs=J`` with the whole rate on every job
    and on every host."""
    one = job_text(replace(profile, jobs=1), replace(options, host=0, hosts=1))
    return one.replace("numjobs=1", f"numjobs={profile.jobs}")


def options_of(text: str) -> list[dict[str, str]]:
    return [dict(line.split("=", 1) for line in block.splitlines() if "=" in line)
            for block in text.split("\n[")[1:] if not block.startswith("global]")]


# --- the split -------------------------------------------------------------------------------

def test_a_total_splits_into_shares_that_add_up_exactly() -> None:
    assert split_evenly(70, 4) == [18, 18, 17, 17]
    assert split_evenly(30, 4) == [8, 8, 7, 7]
    assert split_evenly(8, 4) == [2, 2, 2, 2]
    for total in range(0, 200, 7):
        for parts in (1, 3, 4, 8):
            shares = split_evenly(total, parts)
            assert sum(shares) == total and max(shares) - min(shares) <= 1


def test_four_jobs_share_the_rate_in_sections_that_add_up_to_it() -> None:
    sections = options_of(job_text(mw2(100, 4), JobOptions(("/tmp/x",))))
    assert [(s["numjobs"], s["rate_iops"]) for s in sections] == [("2", "18,8"), ("2", "17,7")]
    assert all(s["rw"] == "randrw" and s["rwmixread"] == "70" and s["iodepth"] == "16"
               for s in sections)


def test_two_hosts_each_run_their_share_and_together_the_total() -> None:
    profile = mw2(1000, 4)
    per_host = [rate_shares(profile, host, 2) for host in (0, 1)]
    assert all(len(shares) == 4 for shares in per_host)
    assert sum(r for shares in per_host for r, _ in shares) == 700
    assert sum(w for shares in per_host for _, w in shares) == 300
    texts = [job_text(profile, JobOptions(("/tmp/x",), host=h, hosts=2)) for h in (0, 1)]
    assert applied_rate(texts) == (700, 300)  # what fio runs in total


def test_an_even_split_keeps_one_section_and_one_job_keeps_the_whole_rate() -> None:
    assert [(s["numjobs"], s["rate_iops"]) for s in options_of(
        job_text(mw2(1000, 4), JobOptions(("/tmp/x",))))] == [("4", "175,75")]
    assert [(s["numjobs"], s["rate_iops"]) for s in options_of(
        job_text(mw2(1000, 1), JobOptions(("/tmp/x",))))] == [("1", "700,300")]


def test_a_rate_too_low_for_the_jobs_is_refused_not_run_unlimited() -> None:
    """fio reads rate_iops 0 as 'no limit': a used direction may never get a 0 share."""
    with pytest.raises(WorkloadError, match="write 3 cannot be split over 4 jobs × 1 load"):
        job_text(mw2(10, 4), JobOptions(("/tmp/x",)))
    pure_read = WorkloadProfile("RR", 8192, 100, True, 8192, jobs=4, rate_iops=(8, 0))
    # its write cap 0 reads as "no limit", but a read-only job issues no writes at all: it
    # adds no write rate (the rule the SPC-1-like sweep's read-only streams rely on)
    assert applied_rate([job_text(pure_read, JobOptions(("/tmp/x",)))]) == (8, 0)
    mixed = WorkloadProfile("MW", 8192, 70, True, 8192, rate_iops=(8, 0))
    with pytest.raises(WorkloadError, match="write 0"):
        job_text(mixed, JobOptions(("/tmp/x",)))


@pytest.mark.realtime("real fio runs measuring a rate over real seconds")
@pytest.mark.process
@pytest.mark.skipif(shutil.which("fio") is None, reason="fio not installed")
def test_fio_accepts_the_split_job_files(tmp_path: Path) -> None:
    for host in (0, 1):
        job = tmp_path / f"h{host}.fio"
        job.write_text(job_text(mw2(1001, 4), JobOptions((str(tmp_path / "a.dat"),), "null",
                                                         size=1 << 20, host=host, hosts=2)))
        done = subprocess.run(["fio", "--parse-only", str(job)], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr


# --- the simulated lab applies the job files as fio does ------------------------------------

def simulated_iops(profile: WorkloadProfile, load_hosts: int = 1) -> float:
    clock = FakeClock()
    engine = SimulatedWorkloadEngine(SimulatedSut(), clock, load_hosts=load_hosts)
    engine.start(profile)
    clock.advance(60)
    ios = sum(s.ios for s in engine.poll())
    engine.stop()
    return ios / 60


@pytest.mark.parametrize("hosts", [1, 2])
def test_the_simulated_lab_runs_the_total_rate_the_station_asks_for(hosts: int) -> None:
    assert simulated_iops(mw2(500, 4), hosts) == pytest.approx(500, rel=0.02)
    assert as_fio_runs(mw2(500, 4), hosts).rate_iops == (350, 150)


@pytest.mark.parametrize("hosts", [1, 2])
def test_the_old_job_generation_would_run_jobs_times_hosts_the_rate_on_the_simulator(
        hosts: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The class of bug the simulated lab used to hide: it now shows 4× (8× on two hosts)."""
    monkeypatch.setattr(sim_engine, "job_text", old_job_text)
    assert simulated_iops(mw2(500, 4), hosts) == pytest.approx(500 * 4 * hosts, rel=0.02)


# --- real fio: the measured total ------------------------------------------------------------

#: a fixed MW1 figure: the point is that the rate the station asks for is what fio runs
MW1_IOPS = 2000


def mw2_share_on_real_fio(tmp_path: Path, **engine_kw) -> float:
    """MW2 (25 % of MW1_IOPS, jobs = 4) run for real: its measured IOPS over MW1_IOPS."""
    engine = FioEngine([str(tmp_path / "target.dat")], clock=MonotonicClock(),
                       policy=TargetPolicy(create_size=8 << 20), ioengine="null",
                       workdir=tmp_path, **engine_kw)
    engine.check()
    engine.start(mw2(round(MW1_IOPS * 0.25), 4, duration_s=3))
    deadline = time.monotonic() + budget_s(30)
    while engine.running and time.monotonic() < deadline:
        engine.poll()
        time.sleep(0.2)
    result = engine.stop()
    engine.poll()
    assert result.exit_code == 0 and result.runtime_s > 2.5, result
    return (result.read_ios + result.write_ios) / result.runtime_s / MW1_IOPS


@pytest.mark.fio
@needs_fio
def test_mw2_runs_at_a_quarter_of_mw1_with_four_jobs_on_real_fio(tmp_path: Path) -> None:
    share = mw2_share_on_real_fio(tmp_path)
    assert share == pytest.approx(0.25, abs=0.01), f"MW2 ran at {share:.1%} of MW1"


@pytest.mark.realtime("real fio runs measuring a rate over real seconds")
@pytest.mark.fio
@needs_fio
def test_mw2_runs_at_a_quarter_of_mw1_on_two_loopback_load_hosts(
        tmp_path: Path, two_fio_servers: list[str]) -> None:
    share = mw2_share_on_real_fio(tmp_path, load_hosts=two_fio_servers)
    assert share == pytest.approx(0.25, abs=0.01), f"MW2 ran at {share:.1%} of MW1"


def test_generated_jobs_use_total_latency_and_the_64_bit_uniform_generator() -> None:
    """method-notes §10: uniform random over [0, 2^64 − 1], a new sequence every run; the
    response time's bins are total latency (lat_ns)."""
    text = job_text(mw2(1000, 4), JobOptions(("/tmp/x",)))
    glob = dict(line.split("=", 1) for line in text.split("\n\n")[0].splitlines() if "=" in line)
    assert glob["random_generator"] == "tausworthe64" and glob["randrepeat"] == "0"
    assert glob["lat_percentiles"] == "1" and glob["clat_percentiles"] == "0"
