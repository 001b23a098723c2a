"""Trace replay (docs/method-notes.md §6): fio iologs checked line by line, looped by the
station because fio replays a trace only once, redirected onto the station's target, named in
the method, modelled by the simulated SUT and replayed by real fio for the whole phase."""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from app.method.loader import MethodError, load_method, load_method_file
from drivers.fio.jobs import JobOptions, job_text
from drivers.fio.replay import looped_text, read_trace, write_looped_trace
from drivers.interfaces import WorkloadError
from drivers.simulators.sut import SimulatedSut
from tests.support.time_budget import budget_s

V3 = "fio version 3 iolog\n0 /dev/sdb add\n0 /dev/sdb open\n{ios}0 /dev/sdb close\n"


def _trace(tmp_path: Path, text: str, name: str = "t.iolog") -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    read_trace.cache_clear()
    return str(path)


def test_traces_are_checked_line_by_line(tmp_path: Path) -> None:
    with pytest.raises(WorkloadError, match="line 1: not an fio iolog"):
        read_trace(_trace(tmp_path, "blktrace binary\n"))
    with pytest.raises(WorkloadError, match=r"line 4: expected '<file> <read\|write"):
        read_trace(_trace(tmp_path, V3.format(ios="5 /dev/sdb rewrite 0 8192\n")))
    with pytest.raises(WorkloadError, match="line 5: timestamp 3 is earlier"):
        read_trace(_trace(tmp_path, V3.format(ios="5 /dev/sdb read 0 8192\n"
                                                   "3 /dev/sdb read 0 8192\n")))
    trace = read_trace(_trace(tmp_path, V3.format(ios="0 /dev/sdb read 0 8192\n"
                                                       "1000 /dev/sdb write 8192 4096\n")))
    assert (trace.version, trace.span, trace.read_pct, trace.end_offset) == (3, 1000, 50, 12288)


def test_the_looped_copy_keeps_time_rising_and_names_one_file(tmp_path: Path) -> None:
    trace = read_trace(_trace(tmp_path, V3.format(ios="0 /dev/sdb read 0 8192\n"
                                                       "1000 /dev/sdb write 8192 8192\n")))
    lines = looped_text(trace, 3).splitlines()
    ios = [line.split() for line in lines if " read " in line or " write " in line]
    assert [int(io[0]) for io in ios] == [0, 1000, 2000, 3000, 4000, 5000]
    assert {io[1] for io in ios} == {"storwatt-replay-target"} and len(ios) == 6
    with pytest.raises(WorkloadError, match="runs past the end of the 8192-byte target"):
        write_looped_trace(trace.path, tmp_path / "x.iolog", 10, 8192)


def test_replay_job_redirects_onto_the_one_target_without_time_base(tmp_path: Path) -> None:
    profile = load_method("demo-workloads").profile("REPLAY").to_workload(duration_s=5)
    text = job_text(profile, JobOptions(("/tmp/scratch.dat",)))
    section = text.split("[REPLAY]\n", 1)[1]
    assert f"read_iolog={profile.trace}" in section
    assert "replay_redirect=/tmp/scratch.dat" in section and "runtime=5000ms" in section
    assert "time_based" not in section  # fio would not loop the trace anyway (module notes)
    with pytest.raises(WorkloadError, match="exactly one target, not 2"):
        job_text(profile, JobOptions(("/tmp/a.dat", "/tmp/b.dat")))


def test_method_names_the_trace_and_a_missing_one_is_refused(tmp_path: Path) -> None:
    trace = load_method("emerald-block-v3").profile("REPLAY").trace
    assert trace is not None and Path(trace).is_absolute() and Path(trace).is_file()
    base = Path(__file__).parents[1] / "resources" / "methods" / "emerald-block-v3.toml"
    bad = tmp_path / "copy.toml"
    bad.write_text(base.read_text(encoding="utf-8").replace(
        '"oltp-sample.v3.iolog"', '"no-such.iolog"'), encoding="utf-8")
    with pytest.raises(MethodError, match=r"key 'profiles.\d+.trace': trace .*no-such.iolog: "
                                          r"not found"):
        load_method_file(bad)


def test_simulated_sut_replays_at_the_recorded_rate() -> None:
    profile = load_method("demo-workloads").profile("REPLAY")
    trace = read_trace(profile.trace)
    point = SimulatedSut().operating_point(profile.to_workload(queue_depth=64))
    assert point.iops == pytest.approx(trace.recorded_iops, rel=0.01)


@pytest.mark.realtime("a trace replayed by real fio for a whole phase")
@pytest.mark.fio
@pytest.mark.skipif(shutil.which("fio") is None, reason="fio not installed")
def test_real_fio_replays_the_looped_trace_for_the_whole_phase(tmp_path: Path) -> None:
    """A 100-IO trace of 0.1 s in a 3 s phase: fio must replay IO for the whole phase, not
    stop after one pass (fio 3.33 replays a trace once). iodepth 1, as the engine replays a
    timed trace."""
    ios = "".join(f"{i * 1000} /dev/sdb {'read' if i % 10 < 7 else 'write'} {i * 8192} 8192\n"
                  for i in range(100))
    trace = _trace(tmp_path, V3.format(ios=ios))
    target = tmp_path / "scratch.dat"
    target.write_bytes(b"\0" * 4 * 2**20)
    looped = write_looped_trace(trace, tmp_path / "REPLAY.iolog", 3, target.stat().st_size)
    profile = load_method("demo-workloads").profile("REPLAY").to_workload(queue_depth=1,
                                                                          duration_s=3)
    job = tmp_path / "replay.fio"
    job.write_text(job_text(replace(profile, trace=str(looped)),
                            JobOptions((str(target),), "libaio", False)), encoding="utf-8")
    done = subprocess.run(["fio", str(job), "--output-format=json"], capture_output=True,
                          text=True, timeout=budget_s(60), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)["jobs"][0]
    reads, writes = result["read"]["total_ios"], result["write"]["total_ios"]
    assert result["job_runtime"] >= 2500 and reads + writes >= 5 * 100, result["job_runtime"]
    assert 60 < 100 * reads / (reads + writes) < 80  # the trace's 70/30 mix


@pytest.mark.realtime("the null-engine pre-run of a trace replay by real fio")
@pytest.mark.fio
@pytest.mark.skipif(shutil.which("fio") is None, reason="fio not installed")
def test_real_fio_pre_runs_the_looped_trace_it_will_replay(tmp_path: Path) -> None:
    """Issue 30: a trace replay is not searched, yet the job file it runs (the looped copy of
    its trace) is pre-run on the null engine: a timed trace paces itself, so its recorded rate
    is the rate the generator must hold; its pattern is the trace's (none is measured)."""
    from tests.support.fio import engine_for
    ios = "".join(f"{i * 1000} /dev/sdb {'read' if i % 10 < 7 else 'write'} {i * 8192} 8192\n"
                  for i in range(100))  # 1,000 IOPS as recorded
    trace = _trace(tmp_path, V3.format(ios=ios))
    engine = engine_for(tmp_path)
    work = replace(load_method("demo-workloads").profile("REPLAY").to_workload(
        queue_depth=4, duration_s=0.5, kind="generator"), trace=trace)
    try:
        found = engine.generator_ceiling(work, 4)
        assert found.asked_iops == pytest.approx(1000.0)
        # paced by the trace, never faster; whether it keeps the pace is the generator rule's
        # to judge (a fake-clock test, tests/test_hotband_generator.py): fio's replay does not
        # catch up once behind, and on a loaded CI machine it held 844 of 1,000 IOPS
        assert 0 < found.iops < 1100, found
        assert engine.access_pattern(work) is None
    finally:
        engine.close()
