"""Two real loopback ``fio --server`` load hosts: live per-host rates while the phase runs,
and the final per-host intervals rebuilt from fio's returned logs (docs/fio.md, "Several
load hosts"). Short phases with a rate cap, tolerant of a loaded 2-core machine."""

from __future__ import annotations

import math
import time
from pathlib import Path

import pytest

from drivers.fio.engine import FioEngine
from drivers.interfaces import HostRate, LiveRates, WorkloadInterval, WorkloadProfile
from tests.support.fio import engine_for, needs_fio

#: 2 jobs per host at 1000 IOPS over both hosts: 500 per host, 350 reads + 150 writes
MIXED = WorkloadProfile("MW1", 8192, 70, True, 8192, queue_depth=1, jobs=2, duration_s=5.0,
                        rate_iops=(700, 300))


def run_watching(engine: FioEngine, profile: WorkloadProfile, limit_s: float = 40.0
                 ) -> tuple[list[tuple[bool, HostRate]], list[WorkloadInterval], object]:
    """Run a phase as the sequencer does; each rate is kept with whether fio still ran."""
    engine.start(profile)
    rates: list[tuple[bool, HostRate]] = []
    slices: list[WorkloadInterval] = []
    deadline = time.monotonic() + limit_s
    while engine.running and time.monotonic() < deadline:
        slices += engine.poll()
        running = engine.running
        rates += [(running, r) for r in engine.live_rates()]
        time.sleep(0.1)
    result = engine.stop()
    return rates, slices + engine.poll(), result


@pytest.mark.realtime("real fio servers as load hosts, real-clock runs")
@pytest.mark.process
@needs_fio
def test_live_host_rates_arrive_before_the_phase_ends(tmp_path: Path,
                                                      two_fio_servers) -> None:
    engine = engine_for(tmp_path, load_hosts=two_fio_servers)
    engine.check()
    assert isinstance(engine, LiveRates) and not engine.live  # counted figures: at the end
    rates, slices, _ = run_watching(engine, MIXED)
    final_end = max(s.t_end for s in slices)
    for host in two_fio_servers:
        mine = [(running, r) for running, r in rates if r.host == host]
        during = [r for running, r in mine if running and r.t < final_end]
        assert during, f"{host}: no live rate before the phase ended ({mine})"
        assert all(0 < r.iops < 1000 and r.mib_per_s > 0 for r in during)
        assert any(r.write_iops > 0 for r in during)  # both directions shown
    assert [r.t for _, r in rates] == sorted(r.t for _, r in rates)


@pytest.mark.realtime("real fio servers as load hosts, real-clock runs")
@pytest.mark.process
@needs_fio
def test_final_per_host_intervals_and_bins_come_from_the_logs_and_match_the_totals(
        tmp_path: Path, two_fio_servers) -> None:
    engine = engine_for(tmp_path, load_hosts=two_fio_servers)
    engine.check()
    _, slices, result = run_watching(engine, MIXED)
    assert {s.host for s in slices} == set(two_fio_servers)
    assert sum(s.read_ios for s in slices) == result.read_ios > 0
    assert sum(s.write_ios for s in slices) == result.write_ios > 0
    assert sum(s.read_bytes + s.write_bytes for s in slices) == \
        (result.read_ios + result.write_ios) * 8192
    for i, host in enumerate(two_fio_servers, 1):
        mine = [s for s in slices if s.host == host]
        *logged, tail = mine
        assert len(logged) >= 3 and all(s.latency_bins for s in logged)
        assert all(sum(s.latency_bins.values()) == s.ios for s in logged)
        assert not tail.latency_bins and math.isnan(tail.max_resp_ms)  # after the last window
        assert tail.ios <= 600  # at most one window (1 s at 500 IOPS) plus rounding
        assert all(a.t_end == b.t_start for a, b in zip(mine, mine[1:]))
        assert all(0 < s.avg_resp_ms < 1000 for s in mine)
        assert (tmp_path / f"host{i}" / f"MW1-host{i}.fio").exists()  # its own folder
    engine.close()


@pytest.mark.realtime("real fio servers as load hosts, real-clock runs")
@pytest.mark.process
@needs_fio
def test_a_hot_band_on_load_hosts_reads_one_log_per_stream(tmp_path: Path,
                                                            two_fio_servers) -> None:
    """13 stream sections, 13 jobs per host, 13 log files each: every one is read, and the
    intervals add up to fio's exact totals (a last line's garbage bins once broke this)."""
    from tests.support.fio import HOTBAND
    engine = engine_for(tmp_path, load_hosts=two_fio_servers)
    engine.check()
    profile = WorkloadProfile("HOTBAND", 8192, 70, True, 8192, queue_depth=1, duration_s=3.0,
                              streams=HOTBAND.streams, rate_iops=(1400, 600))
    _, slices, result = run_watching(engine, profile)
    assert sum(s.read_ios for s in slices) == result.read_ios > 0
    assert sum(s.write_ios for s in slices) == result.write_ios > 0
    assert len(list((tmp_path / "host1").glob("storwatt_clat_hist.*.log.127.0.0.1"))) == 13
    assert all(s.max_resp_ms < 12_000 for s in slices if s.latency_bins)  # no garbage bins
    engine.close()


@pytest.mark.process
@needs_fio
def test_a_segment_stopped_before_its_hosts_started_io_counts_nothing_and_fails_nothing(
        tmp_path: Path, two_fio_servers) -> None:
    """A ranging or search segment shorter than a client's ~2 s start-up (a busy station) is
    stopped before the host printed a job report: nothing happened to count. It failed the
    whole run ("fio printed 0 'issued rwts' lines") when the screenshot script ran the demo
    method's 2 s ranging segments beside the full suite."""
    engine = engine_for(tmp_path, load_hosts=two_fio_servers)
    engine.check()
    engine.start(MIXED)
    time.sleep(0.2)  # the clients are still connecting
    result = engine.stop()
    assert result.read_ios == result.write_ios == 0 and not result.error
    assert engine.poll() == []
