"""The load-host clock check: fio's IO log stamped on the host against the station's wall
time around the probe's stop (drivers/fio/clock_probe.py), its verdict in the run log
(app/sequencer/host_clocks.py), and the warning end to end with real loopback servers.

A loopback server shares the station's clock, and faketime is not installed, so a real
offset is made the other way round: the station's wall clock is shifted (``wall=``)."""

from __future__ import annotations

import math
import time
from dataclasses import replace
from functools import partial
from pathlib import Path

import pytest

from app.reports.content import build_content
from app.sequencer import events as ev
from app.sequencer.host_clocks import clock_verdict
from app.storage.opening import open_database
from app.storage.repository import load_run
from app.storage.writer import RunWriter
from drivers.fio.clock_probe import LogTimes, offset_of, read_log_times
from drivers.interfaces import HostClock, WorkloadError
from tests.support.fio import free_port, engine_for, needs_fio
from tests.support.sequencer_runs import make_run
def test_the_log_gives_the_last_host_time_and_the_largest_gap() -> None:
    log = read_log_times("1795400528880, 1, 0, 4096, 0\n1795400528881, 1, 0, 4096, 0\n"
                         "1795400528885, 1, 0, 4096, 0\n")
    assert log == LogTimes(1795400528.885, pytest.approx(0.004), 3)
    with pytest.raises(WorkloadError, match="logged no IO"):
        read_log_times("\n")
    with pytest.raises(WorkloadError, match="line 2"):
        read_log_times("1795400528880, 1, 0, 4096, 0\nfio: oops\n")


def test_the_offset_interval_holds_the_true_offset() -> None:
    """A host 2 s ahead whose last IO came 0.05 s after the stop request, the client exiting
    0.12 s after it: the interval is [T − B, T + 1 ms − A + gap] and holds +2 s."""
    stop, exited = 1000.0, 1000.12
    log = LogTimes(1000.05 + 2.0, 0.001, 2000)
    offset, half = offset_of(log, stop, exited)
    assert offset - half <= 2.0 <= offset + half
    assert half == pytest.approx((0.12 + 0.001 + 0.001) / 2)


def test_the_verdict_warns_beyond_half_a_sample_period() -> None:
    level, text = clock_verdict(HostClock("h1:8765", 0.120, 0.060), 1.0)
    assert level == "INFO" and "+120 ms ± 60 ms" in text and "within" in text
    level, text = clock_verdict(HostClock("h1:8765", -0.47, 0.06), 1.0)  # could be −0.53 s
    assert level == "WARNING" and "may exceed half a sample period (0.5 s)" in text
    level, text = clock_verdict(HostClock("h2:8765", error="connection refused"), 1.0)
    assert level == "WARNING" and "not measured (connection refused)" in text


def _clock_logs(rec) -> list[ev.LogMessage]:
    return [e for e in rec.of(ev.LogMessage) if "clock offset" in e.message]


def test_the_sequencer_logs_each_hosts_clock_before_the_first_phase() -> None:
    seq, rec, _ = make_run("smoke")
    seq.lab = replace(seq.lab, host_clocks=lambda: (HostClock("a:1", 0.01, 0.05),
                                                    HostClock("b:1", 1.5, 0.05)))
    seq.run()
    logs = _clock_logs(rec)
    assert [(e.level, e.message.split(":")[0]) for e in logs] == [
        ("INFO", "load host a"), ("WARNING", "load host b")]
    first_phase = rec.of(ev.PhaseStarted)[0]
    assert all(rec.events.index(e) < rec.events.index(first_phase) for e in logs)


# --- real loopback servers ---------------------------------------------------------------------

@pytest.mark.realtime("real fio hosts on the station clock")
@pytest.mark.process
@needs_fio
def test_real_hosts_on_the_station_clock_measure_near_zero(tmp_path: Path,
                                                           two_fio_servers) -> None:
    refused = f"127.0.0.1:{free_port()}"
    engine = engine_for(tmp_path / "jobs", load_hosts=[*two_fio_servers, refused])
    clocks = engine.host_clocks()
    for clock in clocks[:2]:
        assert not clock.error and abs(clock.offset_s) <= clock.uncertainty_s + 0.01, clock
        assert clock.uncertainty_s < 0.5  # loaded 2-core CI: ~0.1 s, the limit is 0.5 s
    assert "clock probe did not run" in clocks[2].error and math.isnan(clocks[2].offset_s)
    assert not any(p.name.startswith("storwatt-clock") for p in tmp_path.rglob("*"))


@pytest.mark.realtime("real fio hosts on the station clock")
@pytest.mark.process
@needs_fio
def test_a_shifted_station_clock_warns_end_to_end_into_the_report(tmp_path: Path,
                                                                  two_fio_servers
                                                                  ) -> None:
    engine = engine_for(tmp_path / "jobs", load_hosts=two_fio_servers[:1])
    seq, rec, _ = make_run("smoke")
    seq.lab = replace(seq.lab, host_clocks=partial(engine.host_clocks,
                                                   wall=lambda: time.time() + 2.0))
    database = open_database(f"sqlite:///{tmp_path / 'runs.db'}")
    writer = RunWriter(database)
    seq.listeners.append(writer)
    seq.run()
    assert writer.flush(10)
    writer.close()
    (warning,) = _clock_logs(rec)
    assert warning.level == "WARNING" and "load host 127.0.0.1" in warning.message
    offset_ms = int(warning.message.split("clock offset ")[1].split(" ms")[0])
    assert -2300 < offset_ms < -1700  # the host reads 2 s behind the shifted station
    report_log = build_content(load_run(database, seq.run_id)).events
    assert any(e.level == "WARNING" and e.message == warning.message for e in report_log)
    database.close()
