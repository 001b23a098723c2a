"""fio as the workload engine: parsing real captures, real runs, safety and failure modes."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app.metrics.histogram import ResponseTimeHistogram
from drivers.clock import MonotonicClock
from drivers.fio.engine import FioEngine, client_argument, fio_version
from drivers.fio.jobs import JobOptions, job_text
from drivers.fio.safety import check_target
from drivers.fio.stream import (EMPTY, DocumentSplitter, client_snapshots, difference,
                                snapshot_of_document, snapshot_of_jobs)
from drivers.interfaces import WorkloadError, WorkloadProfile

FIX = Path(__file__).parent / "fixtures" / "fio"
pytestmark = pytest.mark.fio
needs_fio = pytest.mark.skipif(not any(os.access(os.path.join(p, "fio"), os.X_OK)
                                       for p in os.environ["PATH"].split(os.pathsep)),
                               reason="fio is not installed (CI installs it)")
MW1 = WorkloadProfile("MW1", 8192, 70, True, 8192, queue_depth=1, jobs=1)


def split(text: str, chunk: int = 997) -> tuple[list[dict], DocumentSplitter]:
    splitter = DocumentSplitter()
    docs = []
    for i in range(0, len(text), chunk):
        docs += splitter.feed(text[i:i + chunk])
    return docs, splitter


def slices_of(docs: list[dict]):
    prev, out = EMPTY, []
    for k, doc in enumerate(docs):
        snap = snapshot_of_document(doc)
        out.append(difference(snap, prev, k, k + 1))
        prev = snap
    return out, prev


def test_cumulative_stream_split_in_arbitrary_chunks_telescopes_to_the_final_totals() -> None:
    docs, splitter = split((FIX / "status_stream_randrw.txt").read_text())
    assert len(docs) == 4 and splitter.pending == ""
    slices, final = slices_of(docs)
    job = docs[-1]["jobs"][0]
    assert sum(s.read_ios for s in slices) == job["read"]["total_ios"]
    assert sum(s.write_ios for s in slices) == job["write"]["total_ios"]
    assert sum(s.read_bytes + s.write_bytes for s in slices) == \
        job["read"]["io_bytes"] + job["write"]["io_bytes"]
    merged = ResponseTimeHistogram.merge(*(ResponseTimeHistogram.from_bins(s.latency_bins)
                                           for s in slices))
    assert merged.total == final.ios == job["read"]["clat_ns"]["N"] + job["write"]["clat_ns"]["N"]
    # the interval mean latency is differenced exactly: weighted mean of slices == fio's mean
    mean_ms = sum(s.avg_resp_ms * s.ios for s in slices) / final.ios
    expected = (job["read"]["clat_ns"]["mean"] * job["read"]["clat_ns"]["N"]
                + job["write"]["clat_ns"]["mean"] * job["write"]["clat_ns"]["N"]) / final.ios / 1e6
    assert mean_ms == pytest.approx(expected, rel=1e-9)


def test_sigint_terminated_stream_with_text_between_documents() -> None:
    docs, splitter = split((FIX / "sigint_stream.txt").read_text(), chunk=4096)
    assert any("terminating on signal 2" in line for line in splitter.text_lines)
    assert len(docs) >= 2
    slices, final = slices_of(docs)
    assert final.write_ios == docs[-1]["jobs"][0]["write"]["total_ios"] > 0
    assert sum(s.write_ios for s in slices) == final.write_ios


def test_idle_direction_without_bins() -> None:
    doc = json.loads((FIX / "read_only.json").read_text())
    assert "bins" not in doc["jobs"][0]["write"]["clat_ns"]
    snap = snapshot_of_jobs(doc["jobs"])
    assert snap.write_ios == 0 and snap.read_ios == doc["jobs"][0]["read"]["total_ios"]
    assert sum(snap.bins.values()) == snap.read_ios


def test_client_server_document_gives_per_host_series_without_the_summary() -> None:
    text = (FIX / "client_one_host.json").read_text()
    doc = json.loads(text[text.find("{"):])
    series = client_snapshots(doc)
    assert list(series) == ["127.0.0.1:18765"]
    snaps = series["127.0.0.1:18765"]
    assert [s.ios for s in snaps] == sorted(s.ios for s in snaps) and len(snaps) == 4


def test_truncated_tail_stays_pending() -> None:
    text = (FIX / "status_stream_randrw.txt").read_text()
    docs, splitter = split(text[: len(text) - 500])
    assert len(docs) == 3 and splitter.pending.startswith("{")


def test_job_text_keeps_the_mix_and_refuses_injection(tmp_path: Path) -> None:
    mw2 = WorkloadProfile("MW2", 8192, 70, True, 8192, 16, 1, (700, 300), 60.0)
    text = job_text(mw2, JobOptions((str(tmp_path / "a.dat"), str(tmp_path / "b.dat"))))
    assert "rate_iops=700,300" in text and "rw=randrw" in text and "rwmixread=70" in text
    assert f"filename={tmp_path}/a.dat:{tmp_path}/b.dat" in text and "runtime=60000ms" in text
    for bad in ("/tmp/x\nioengine=sync", "/tmp/a:b", "", "/tmp/x=1"):
        with pytest.raises(WorkloadError):
            job_text(mw2, JobOptions((bad,)))
    with pytest.raises(WorkloadError, match="multiple of 512"):
        job_text(WorkloadProfile("X", 1000, 0, False, 512), JobOptions(("/tmp/x",)))


def test_client_argument_pairs_host_and_port() -> None:
    assert client_argument("lab-host-1") == "lab-host-1,8765"
    assert client_argument("10.0.0.5:9000") == "10.0.0.5,9000"
    with pytest.raises(WorkloadError):
        client_argument("host:port")


def test_missing_targets_are_refused_unless_a_scratch_size_is_given(tmp_path: Path) -> None:
    missing = str(tmp_path / "typo.dat")
    check = check_target(missing, writing=True)
    assert not check.ok and "silently create" in check.reason
    assert check_target(missing, writing=True, create_size=1 << 20).ok
    assert check_target("/dev/null", writing=True).kind == "other"


def test_the_system_disk_is_refused() -> None:
    root = next((line.split()[0] for line in open("/proc/mounts") if line.split()[1] == "/"
                 and line.startswith("/dev/")), None)
    if root is None or not Path(root).is_block_device():
        pytest.skip("/ is not on a block device here")
    check = check_target(root, writing=True, confirm_device=root)
    assert not check.ok and "system disk" in check.reason


# --- real fio ---------------------------------------------------------------------------------

def engine_for(tmp_path: Path, **kw) -> FioEngine:
    return FioEngine([str(tmp_path / "target.dat")], clock=MonotonicClock(),
                     target_size=8 << 20, ioengine="psync", workdir=tmp_path, **kw)


def run_for(engine: FioEngine, profile: WorkloadProfile, seconds: float):
    engine.start(profile)
    slices, t_end = [], time.monotonic() + seconds
    while time.monotonic() < t_end and engine.running:
        slices += engine.poll()
        time.sleep(0.1)
    result = engine.stop()
    slices += engine.poll()
    return slices, result


@needs_fio
def test_a_real_fio_run_reconciles_with_its_final_document(tmp_path: Path) -> None:
    engine = engine_for(tmp_path)
    assert "fio-3" in engine.check() and (tmp_path / "target.dat").exists()
    profile = WorkloadProfile("MW1", 8192, 70, True, 8192, duration_s=2.5)
    slices, result = run_for(engine, profile, 6)
    assert len(slices) >= 2
    assert sum(s.ios for s in slices) == result.read_ios + result.write_ios > 0
    assert sum(sum(s.latency_bins.values()) for s in slices) == result.read_ios + result.write_ios
    assert 0.6 < result.read_ios / (result.read_ios + result.write_ios) < 0.8
    assert "rwmixread=70" in result.job_text and result.exit_code == 0
    assert all(b.t_end > a.t_end for a, b in zip(slices, slices[1:]))


@needs_fio
def test_stop_leaves_no_fio_process(tmp_path: Path) -> None:
    engine = engine_for(tmp_path)
    engine.check()
    engine.start(WorkloadProfile("RR", 8192, 100, True, 8192, duration_s=60))
    time.sleep(1.5)
    pids = [p.pid for p in engine._procs.values()]
    result = engine.stop()
    assert result.read_ios > 0
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.killpg(pid, 0)


@needs_fio
def test_a_crashed_station_leaves_no_orphan_fio(tmp_path: Path) -> None:
    script = tmp_path / "station.py"
    script.write_text(f"""
import sys, time
sys.path.insert(0, {str(Path(__file__).parent.parent)!r})
from pathlib import Path
from drivers.clock import MonotonicClock
from drivers.fio.engine import FioEngine
from drivers.interfaces import WorkloadProfile
e = FioEngine([{str(tmp_path / 't.dat')!r}], clock=MonotonicClock(), target_size=8 << 20,
              ioengine="psync", workdir=Path({str(tmp_path)!r}))
e.check()
e.start(WorkloadProfile("RR", 8192, 100, True, 8192, duration_s=120))
print(list(e._procs.values())[0].pid, flush=True)
time.sleep(120)
""")
    child = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    fio_pid = int(child.stdout.readline())
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    deadline = time.monotonic() + 10
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
    with pytest.raises(WorkloadError, match="too old"):
        fio_version(binary)


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


@needs_fio
def test_fio_exiting_non_zero_mid_phase_is_a_clear_error_and_keeps_slices(tmp_path: Path) -> None:
    real = subprocess.run(["which", "fio"], capture_output=True, text=True).stdout.strip()
    capture = (FIX / "status_stream_randrw.txt").read_text()
    first_doc = capture[: capture.find('\n}\n') + 3]
    (tmp_path / "doc.txt").write_text(first_doc)
    binary = fake_fio(tmp_path, f"""case "$1" in
  --version) echo fio-3.33;;
  --parse-only) exec {real} "$@";;
  *) cat {tmp_path / 'doc.txt'}; sleep 1; echo "fio: io_u error on file: Input/output error" >&2; exit 3;;
esac
""")
    engine = engine_for(tmp_path, fio_binary=binary)
    engine.check()
    engine.start(WorkloadProfile("MW1", 8192, 70, True, 8192, duration_s=10))
    got, error = [], None
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            got += engine.poll()
        except WorkloadError as exc:
            error = exc
            break
        time.sleep(0.1)
    engine.stop()
    assert error is not None and "exited with code 3" in str(error)
    assert "Input/output error" in str(error)
    assert len(got) == 1 and got[0].ios > 0  # the slice before the failure is kept


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@needs_fio
def test_a_load_host_refusing_the_connection(tmp_path: Path) -> None:
    engine = engine_for(tmp_path, load_hosts=[f"127.0.0.1:{_free_port()}"])
    engine.check()
    engine.start(WorkloadProfile("MW1", 8192, 70, True, 8192, duration_s=2))
    with pytest.raises(WorkloadError, match="127.0.0.1"):
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            engine.poll()
            time.sleep(0.1)
    engine.stop()


@pytest.fixture
def two_fio_servers(tmp_path: Path):
    ports = [_free_port(), _free_port()]
    servers = [subprocess.Popen(["fio", f"--server=ip:127.0.0.1,{p}"], cwd=tmp_path,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True) for p in ports]
    try:
        for port in ports:
            deadline = time.monotonic() + 10
            while socket.socket().connect_ex(("127.0.0.1", port)) and time.monotonic() < deadline:
                time.sleep(0.1)
        yield [f"127.0.0.1:{p}" for p in ports]
    finally:
        for s in servers:
            os.killpg(s.pid, signal.SIGKILL)
            s.wait()


@needs_fio
def test_two_load_hosts_each_run_their_job_and_bins_merge(tmp_path: Path,
                                                          two_fio_servers) -> None:
    engine = engine_for(tmp_path, load_hosts=two_fio_servers)
    engine.check()
    assert not engine.live
    slices, result = run_for(engine, WorkloadProfile("RR", 8192, 100, True, 8192,
                                                     duration_s=2.0), 15)
    hosts = {s.host for s in slices}
    assert hosts == {f"127.0.0.1:{p.split(':')[1]}" for p in two_fio_servers}
    assert sum(s.ios for s in slices) == result.read_ios > 0
    merged = ResponseTimeHistogram.merge(*(ResponseTimeHistogram.from_bins(s.latency_bins)
                                           for s in slices))
    assert merged.total == result.read_ios
