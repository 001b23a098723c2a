"""fio as the workload engine: parsing real captures, real runs, safety and failure modes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from app.metrics.histogram import ResponseTimeHistogram
from drivers.clock import MonotonicClock
from drivers.fio.engine import FioEngine, FioRunError, client_argument, fio_version
from drivers.fio.safety import TargetPolicy
from drivers.interfaces import WorkloadError, WorkloadProfile, WorkloadResult
from tests.support.fio import HOTBAND, engine_for, free_port, needs_fio
from tests.support.time_budget import budget_s

FIX = Path(__file__).parent / "fixtures" / "fio"
pytestmark = pytest.mark.fio
MW1 = WorkloadProfile("MW1", 8192, 70, True, 8192, queue_depth=1, jobs=1)


def test_client_argument_pairs_host_and_port() -> None:
    assert client_argument("lab-host-1") == "lab-host-1,8765"
    assert client_argument("10.0.0.5:9000") == "10.0.0.5,9000"
    for bad in ("host:port", "a,b:1", "h:70000", "", "h:"):
        with pytest.raises(WorkloadError, match="HOST\\[:PORT\\]"):
            client_argument(bad)


# --- real fio ---------------------------------------------------------------------------------

def run_for(engine: FioEngine, profile: WorkloadProfile, seconds: float):
    engine.start(profile)
    slices, t_end = [], time.monotonic() + seconds
    while time.monotonic() < t_end and engine.running:
        slices += engine.poll()
        time.sleep(0.1)
    result = engine.stop()
    slices += engine.poll()
    return slices, result


@pytest.mark.realtime("real fio runs on the real clock")
@needs_fio
def test_a_real_fio_run_reconciles_with_its_final_document(tmp_path: Path) -> None:
    engine = engine_for(tmp_path)
    assert engine.check() == \
        f"fio-3.33 (local) on {tmp_path / 'target.dat'} (scratch file, 8 MiB); direct IO"
    assert (tmp_path / "target.dat").stat().st_size == 8 << 20  # created by us, not by fio
    profile = WorkloadProfile("MW1", 8192, 70, True, 8192, duration_s=2.5)
    slices, result = run_for(engine, profile, 6)
    assert len(slices) >= 2 and not engine.running
    assert all(s.latency_bins and 0 < s.avg_resp_ms <= s.max_resp_ms for s in slices)
    assert slices[0].t_start < slices[0].t_end and all(
        a.t_end == b.t_start for a, b in zip(slices, slices[1:]))  # contiguous, no gaps
    assert sum(s.ios for s in slices) == result.read_ios + result.write_ios > 0
    assert sum(sum(s.latency_bins.values()) for s in slices) == result.read_ios + result.write_ios
    assert 0.6 < result.read_ios / (result.read_ios + result.write_ios) < 0.8
    assert "rwmixread=70" in result.job_text and result.exit_code == 0
    assert all(b.t_end > a.t_end for a, b in zip(slices, slices[1:]))


@pytest.mark.realtime("real fio runs on the real clock")
@needs_fio
def test_stop_leaves_no_fio_process(tmp_path: Path) -> None:
    engine = engine_for(tmp_path)
    engine.check()
    engine.start(WorkloadProfile("RR", 8192, 100, True, 8192, duration_s=60))
    time.sleep(1.5)
    procs = list(engine._procs.values())
    assert "--timeout=120" in procs[0].argv  # fio's own cap: 60 s + 60 s margin
    pids = [p.pid for p in procs]
    assert os.getpgid(pids[0]) == pids[0]  # its own process group
    result = engine.stop()
    assert result.read_ios > 0 and result.exit_code != 0
    assert engine.stop() == WorkloadResult(0, 0, 0, 0, 0.0, engine="fio-3.33",
                                           job_text=result.job_text)  # idempotent
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.killpg(pid, 0)


@pytest.mark.realtime("real fio runs on the real clock")
@needs_fio
def test_a_crashed_station_leaves_no_orphan_fio(tmp_path: Path) -> None:
    script = tmp_path / "station.py"
    script.write_text(f"""
import sys, time
sys.path.insert(0, {str(Path(__file__).parent.parent)!r})
from pathlib import Path
from drivers.clock import MonotonicClock
from drivers.fio.engine import FioEngine
from drivers.fio.safety import TargetPolicy
from drivers.interfaces import WorkloadProfile
e = FioEngine([{str(tmp_path / 't.dat')!r}], clock=MonotonicClock(),
              policy=TargetPolicy(create_size=8 << 20), ioengine="psync",
              workdir=Path({str(tmp_path)!r}))
e.check()
e.start(WorkloadProfile("RR", 8192, 100, True, 8192, duration_s=120))
print(list(e._procs.values())[0].pid, flush=True)
time.sleep(120)
""")
    child = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    fio_pid = int(child.stdout.readline())
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    deadline = time.monotonic() + budget_s(10)
    while time.monotonic() < deadline:
        try:
            os.killpg(fio_pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.2)
    os.killpg(fio_pid, signal.SIGKILL)
    pytest.fail("fio survived the station's SIGKILL")


def test_nonexistent_fio_binary(tmp_path: Path) -> None:
    with pytest.raises(WorkloadError, match="fio not found"):
        engine_for(tmp_path, fio_binary="/nonexistent/fio").check()


def fake_fio(tmp_path: Path, body: str) -> str:
    path = tmp_path / "fio"
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return str(path)


def test_fio_too_old(tmp_path: Path) -> None:
    binary = fake_fio(tmp_path, 'echo "fio-2.1"\n')
    with pytest.raises(WorkloadError, match="fio-2.1 is too old: StorWatt needs fio ≥ 3.0"):
        engine_for(tmp_path, fio_binary=binary).check()
    with pytest.raises(WorkloadError, match="does not look like fio"):
        fio_version(fake_fio(tmp_path, 'echo "hello"\n'))


RW = WorkloadProfile("RW", 4096, 0, True, 4096, queue_depth=1, jobs=1, duration_s=1)


@pytest.mark.realtime("real fio runs on the real clock")
@needs_fio
def test_a_scratch_file_is_kept_and_recognised_on_the_next_run(tmp_path: Path) -> None:
    target = tmp_path / "target.dat"
    first = engine_for(tmp_path)
    first.check()
    inode = target.stat().st_ino
    run_for(first, RW, 5)
    second = FioEngine([str(target)], clock=MonotonicClock(), ioengine="psync",
                       workdir=tmp_path)  # the next run: no scratch size, nothing to create
    assert second.check().endswith("(scratch file, 8 MiB); direct IO")
    _, result = run_for(second, RW, 5)
    assert result.write_ios > 0
    assert (target.stat().st_ino, target.stat().st_size) == (inode, 8 << 20)


@pytest.mark.realtime("real fio runs on the real clock")
@needs_fio
def test_a_confirmed_existing_file_is_written_in_place(tmp_path: Path) -> None:
    target = tmp_path / "old.bin"
    target.write_bytes(b"\1" * (1 << 20))
    before = target.stat()
    engine = FioEngine([str(target)], clock=MonotonicClock(), ioengine="psync", workdir=tmp_path,
                       policy=TargetPolicy(confirmed=(str(target),), create_size=8 << 20))
    engine.check()
    _, result = run_for(engine, RW, 5)
    after = target.stat()
    assert result.write_ios > 0  # fio wrote into it, never unlinked or re-laid it out
    assert (after.st_ino, after.st_size) == (before.st_ino, before.st_size)


@needs_fio
def test_the_job_folder_is_made_at_start_and_removed_by_close(tmp_path: Path,
                                                              monkeypatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    engine = FioEngine([str(tmp_path / "typo.dat")], clock=MonotonicClock(), ioengine="psync")
    with pytest.raises(WorkloadError):
        engine.check()
    assert not list(tmp_path.glob("storwatt-fio-*"))  # a refused run makes no folder
    engine = FioEngine([str(tmp_path / "t.dat")], clock=MonotonicClock(), ioengine="psync",
                       policy=TargetPolicy(create_size=1 << 20))
    engine.start(WorkloadProfile("RR", 4096, 100, True, 4096, duration_s=30))
    assert len(list(tmp_path.glob("storwatt-fio-*"))) == 1
    engine.close()  # mid-phase, as after a failure: fio stopped, folder gone
    assert not engine.running and not list(tmp_path.glob("storwatt-fio-*"))


@needs_fio
def test_a_bad_target_is_refused_before_fio_runs(tmp_path: Path) -> None:
    engine = FioEngine([str(tmp_path / "typo.dat")], clock=MonotonicClock(), workdir=tmp_path,
                       ioengine="psync")
    with pytest.raises(WorkloadError, match="typo.dat: does not exist.*silently create"):
        engine.check()
    with pytest.raises(WorkloadError, match="typo.dat"):
        engine.start(MW1)
    assert not (tmp_path / "typo.dat").exists() and not engine.running


def test_job_rejected_by_parse_only(tmp_path: Path) -> None:
    binary = fake_fio(tmp_path, """case "$1" in
  --version) echo fio-3.33;;
  --parse-only) echo "fio: failed parsing blockalign=8192" >&2; exit 1;;
  *) echo "must not run" >&2; exit 9;;
esac
""")
    engine = engine_for(tmp_path, fio_binary=binary)
    engine.check()
    with pytest.raises(WorkloadError, match="rejected the job file MW1.fio.*blockalign"):
        engine.start(MW1)
    assert not engine.running


@pytest.mark.realtime("real fio runs on the real clock")
@needs_fio
def test_fio_exiting_non_zero_mid_phase_is_a_clear_error_and_keeps_slices(tmp_path: Path) -> None:
    real = subprocess.run(["which", "fio"], capture_output=True, text=True).stdout.strip()
    capture = (FIX / "status_stream_randrw.txt").read_text()
    first_doc = capture[: capture.find('\n}\n') + 3]
    (tmp_path / "doc.txt").write_text(first_doc)
    binary = fake_fio(tmp_path, f"""case "$1" in
  --version) echo fio-3.33;;
  --parse-only) exec {real} "$@";;
  *) cat {tmp_path / 'doc.txt'}; sleep 1
     echo "fio: io_u error on file: Input/output error" >&2; exit 3;;
esac
""")
    engine = engine_for(tmp_path, fio_binary=binary)
    engine.check()
    engine.start(WorkloadProfile("MW1", 8192, 70, True, 8192, duration_s=10))
    got, error = [], None
    deadline = time.monotonic() + budget_s(10)
    while time.monotonic() < deadline:
        try:
            got += engine.poll()
        except FioRunError as exc:
            error = exc
            break
        time.sleep(0.1)
    result = engine.stop()  # the failure was raised once; stop() reports it, no re-raise
    got += engine.poll()
    assert error is not None and "exited with code 3" in str(error)
    assert "Input/output error" in str(error) and "Input/output error" in result.error
    assert len(got) == 1 and got[0].ios > 0  # the interval before the failure is kept
    assert error.intervals == tuple(got) == tuple(engine.intervals)


@needs_fio
def test_a_load_host_refusing_the_connection(tmp_path: Path) -> None:
    host = f"127.0.0.1:{free_port()}"
    engine = engine_for(tmp_path, load_hosts=[host])
    engine.check()
    engine.start(WorkloadProfile("MW1", 8192, 70, True, 8192, duration_s=2))
    with pytest.raises(FioRunError, match=f"load host {host} refused the connection"):
        deadline = time.monotonic() + budget_s(15)
        while time.monotonic() < deadline:
            engine.poll()
            time.sleep(0.1)
    engine.stop()


@pytest.mark.realtime("real fio runs on the real clock")
@needs_fio
def test_two_load_hosts_each_run_their_job_and_bins_merge(tmp_path: Path,
                                                          two_fio_servers) -> None:
    engine = engine_for(tmp_path, load_hosts=two_fio_servers)
    engine.check()
    assert not engine.live
    slices, result = run_for(engine, WorkloadProfile("RR", 8192, 100, True, 8192,
                                                     duration_s=2.0), 15)
    hosts = {s.host for s in slices}
    assert hosts == set(two_fio_servers)
    for host in hosts:  # each host's intervals are contiguous and cover its own run
        mine = [s for s in slices if s.host == host]
        assert len(mine) >= 2 and all(a.t_end == b.t_start for a, b in zip(mine, mine[1:]))
    assert sum(s.ios for s in slices) == result.read_ios > 0
    merged = ResponseTimeHistogram.merge(*(ResponseTimeHistogram.from_bins(s.latency_bins)
                                           for s in slices))
    # each host's IOs after its last hist-log window have no bins (drivers/fio/host_seconds)
    unbinned = sum(s.ios for s in slices if not s.latency_bins)
    assert merged.total + unbinned == result.read_ios and merged.total > 0


@needs_fio
def test_a_short_hot_band_run_merges_its_thirteen_streams(tmp_path: Path) -> None:
    engine = engine_for(tmp_path)
    engine.check()
    profile = WorkloadProfile("HOTBAND", 8192, 70, True, 8192, queue_depth=1, duration_s=1.5,
                              streams=HOTBAND.streams, rate_iops=(1400, 600))
    slices, result = run_for(engine, profile, 8)
    assert result.read_ios > 0 and result.write_ios > 0 and slices
    assert sum(s.ios for s in slices) == result.read_ios + result.write_ios
    assert 0.5 < result.runtime_s < 4  # job_runtime summed over 13 streams, divided back
