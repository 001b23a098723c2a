"""A load host's final figures from fio's returned logs and normal report, and its live rates
from the ETA lines: byte-level tests on real captures (fixtures/fio/host_logs/README.md)."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import pytest

from drivers.fio.buckets import PLAT_NR, bucket_value
from drivers.fio.host_logs import (HOST_LOG_OPTIONS, UNRELIABLE_TAIL, HistWindow,
                                   client_windows, read_hist_log, read_host_logs,
                                   read_mean_log)
from drivers.fio.host_rates import EtaFeed
from drivers.fio.host_seconds import host_figures, logged_intervals
from drivers.fio.jobs import JobOptions, job_text
from drivers.fio.normal_report import parse_normal_report
from drivers.interfaces import WorkloadError, WorkloadProfile

CAPTURES = Path(__file__).parent / "fixtures" / "fio" / "host_logs"
HOST = "127.0.0.1"
STDOUT = (CAPTURES / "client-stdout.txt").read_text()


def _counts(windows: list[HistWindow], job: int, ddir: int) -> list[int]:
    return [w.ios for w in windows if w.job == job and w.ddir == ddir]


def test_the_client_hist_log_is_undone_into_the_windows_local_fio_writes() -> None:
    hist = CAPTURES / f"storwatt_clat_hist.1.log.{HOST}"
    written = read_hist_log(hist.read_text(), 1, hist.name)
    assert _counts(written, 1, 0) == [352, 350, 702]  # fio 3.33's client: not per window
    undone = client_windows(written)
    assert _counts(undone, 1, 0) == [352, 350, 350] and _counts(undone, 1, 1) == [152, 150, 150]
    local = read_hist_log((CAPTURES / "local" / "storwatt_clat_hist.1.log").read_text(), 1)
    assert _counts(local, 1, 0) == [352, 350, 350]  # local fio writes plain windows
    assert [w.t_ms for w in undone] == [w.t_ms for w in written]
    reads_written = [w for w in written if w.ddir == 0]
    third = {k: v - reads_written[0].bins.get(k, 0) for k, v in reads_written[2].bins.items()}
    assert [w for w in undone if w.ddir == 0][2].bins == {k: v for k, v in third.items() if v}


def test_hist_lines_hold_fios_full_bucket_layout() -> None:
    line = (CAPTURES / f"storwatt_clat_hist.1.log.{HOST}").read_text().splitlines()[0]
    assert len(line.split(",")) == 3 + PLAT_NR == 3 + 1856
    window = read_hist_log(line, 1)[0]
    assert set(window.bins) <= {int(v) for v in bucket_value(range(PLAT_NR))}  # midpoints, ns
    coarse = ", ".join(["1000", "0", "4096"] + ["0"] * 928)
    with pytest.raises(WorkloadError, match="928 latency bins.*expected 1856 "
                                            r"\(log_hist_coarseness=0\)"):
        read_hist_log(coarse, 1, "x.log")
    with pytest.raises(WorkloadError, match="x.log line 1 is not comma-separated integers"):
        read_hist_log("1000, 0, 4096, a", 1, "x.log")


def test_the_last_lines_unreliable_bins_are_dropped() -> None:
    """A real hot-band capture whose last line ends in uninitialised memory (fio's server
    never sends the compressed stream's end): the garbage is dropped, not counted."""
    hist = CAPTURES / "hotband" / f"storwatt_clat_hist.1.log.{HOST}"
    written = read_hist_log(hist.read_text(), 1, hist.name)
    midpoints = [int(v) for v in bucket_value(range(PLAT_NR))]
    assert written[-1].bins[midpoints[1851]] == 94854811261000  # not a count: memory
    undone = client_windows(written)
    assert [w.ios for w in undone] == [23, 17]
    assert max(undone[-1].bins) < midpoints[UNRELIABLE_TAIL] == 12817793024  # ≥ 12.8 s gone
    assert undone[0].bins == written[0].bins  # only the last line is cut


def test_a_log_whose_counts_fall_is_refused() -> None:
    first, second = (HistWindow(1, t, 0, 4096, {100: n}) for t, n in ((1000, 10), (2000, 1)))
    third = HistWindow(1, 3000, 0, 4096, {100: 0})
    with pytest.raises(WorkloadError, match="job 1 at 3000 ms: counts fall"):
        client_windows([first, second, third])


def test_local_logged_bins_are_json_plus_completion_bins_less_the_last_second() -> None:
    entry = json.loads((CAPTURES / "local" / "local-json.txt").read_text())["jobs"][0]
    windows = [w for j in (1, 2) for w in read_hist_log(
        (CAPTURES / "local" / f"storwatt_clat_hist.{j}.log").read_text(), j)]
    logged: dict[int, int] = {}
    for w in windows:
        for k, v in w.bins.items():
            logged[k] = logged.get(k, 0) + v
    clat: dict[int, int] = {}
    for d in ("read", "write"):
        for k, v in entry[d]["clat_ns"]["bins"].items():
            clat[int(k)] = clat.get(int(k), 0) + v
    assert all(v <= clat[k] for k, v in logged.items())
    total = entry["read"]["total_ios"] + entry["write"]["total_ios"]
    assert (total, sum(logged.values())) == (4000, 3008)  # 992 IOs after the last window


def test_the_normal_report_gives_exact_counts_run_time_and_total_latency() -> None:
    report = parse_normal_report(STDOUT)
    assert (report.read_ios, report.write_ios, report.runtime_ms, report.jobs) == \
        (2800, 1200, 4002, 2)
    assert report.mean_ns[0] == pytest.approx(816.14) and report.max_ns[0] == 10482
    with pytest.raises(WorkloadError, match="0 'issued rwts' lines"):
        parse_normal_report("fio: terminating on signal 2\n")
    assert parse_normal_report(STDOUT.replace("(nsec): min=58, max=10482, avg=816.14",
                                              "(usec): min=58, max=10k, avg=816.14")
                               ).max_ns[0] == 10e6


def test_intervals_from_the_logs_add_up_to_the_reports_exact_totals() -> None:
    logs = read_host_logs(CAPTURES, HOST, 2)
    report = parse_normal_report(STDOUT)
    got = logged_intervals(logs, report, 100.0, "h:1", 8192)
    assert [(s.read_ios, s.write_ios) for s in got] == \
        [(704, 304), (700, 300), (699, 300), (697, 296)]
    assert sum(s.read_ios for s in got) == 2800 and sum(s.write_ios for s in got) == 1200
    assert sum(s.read_bytes for s in got) == 2800 * 8192
    *logged, tail = got
    assert [sum(s.latency_bins.values()) for s in logged] == [1008, 1000, 999]
    assert tail.latency_bins == {} and math.isnan(tail.max_resp_ms)  # no log line holds it
    assert got[0].t_start == pytest.approx(100.0 - 4.002) and tail.t_end == 100.0
    assert all(a.t_end == b.t_start for a, b in zip(got, got[1:]))
    means = read_mean_log((CAPTURES / f"storwatt_lat.1.log.{HOST}").read_text(), 1)
    assert all(0 < s.avg_resp_ms < 0.011 for s in got) and len(means) == 8


def test_a_tail_of_no_time_joins_the_last_window() -> None:
    """fio's run ended as its last window closed: the unlogged IOs join that window rather
    than form an interval of zero length (an infinite rate)."""
    logs = read_host_logs(CAPTURES, HOST, 2)
    report = parse_normal_report(STDOUT)
    got = logged_intervals(logs, report, 100.0, "h:1", 8192)
    early = logged_intervals(logs, replace(report, runtime_ms=3006), 100.0, "h:1", 8192)
    assert len(early) == len(got) - 1 and all(s.duration_s > 0 for s in early)
    assert sum(s.ios for s in early) == 4000 and early[-1].latency_bins == got[-2].latency_bins
    assert early[-1].ios == got[-2].ios + got[-1].ios


def test_a_window_mean_above_the_directions_maximum_is_not_used() -> None:
    logs = read_host_logs(CAPTURES, HOST, 2)
    report = parse_normal_report(STDOUT)
    means = [replace(m, value=94854811261000) if i == len(logs.means) - 1 else m
             for i, m in enumerate(logs.means)]
    got = logged_intervals(replace(logs, means=tuple(means)), report, 100.0, "h:1", 8192)
    assert all(s.avg_resp_ms < report.max_ns[0] / 1e6 for s in got)


def test_host_figures_name_the_host_and_the_missing_log(tmp_path: Path) -> None:
    with pytest.raises(WorkloadError, match=r"load host 127.0.0.1:9: fio's client wrote 0 of "
                                            r"2 hist logs storwatt_clat_hist.J.log.127.0.0.1"):
        host_figures(tmp_path, STDOUT, 10.0, "127.0.0.1:9", 8192)
    got, report = host_figures(CAPTURES, STDOUT, 10.0, "127.0.0.1:9", 8192)
    assert report.jobs == 2 and {s.host for s in got} == {"127.0.0.1:9"}


def test_eta_feed_turns_chunks_into_rates_whatever_the_read_boundaries() -> None:
    whole, pieces = EtaFeed("h:1"), EtaFeed("h:1")
    whole(1.0, STDOUT)
    for i in range(0, len(STDOUT), 7):
        pieces(float(i), STDOUT[i:i + 7])
    rates = whole.take()
    assert [(r.read_iops, r.write_iops, r.read_kib_s) for r in rates] == \
        [(698, 299, 5587), (701, 299, 5609)]
    assert [(r.read_iops, r.write_iops) for r in pieces.take()] == [(698, 299), (701, 299)]
    assert whole.take() == [] and pieces.text == STDOUT
    assert rates[0].mib_per_s == pytest.approx((5587 + 2394) / 1024)


def test_a_load_hosts_job_file_asks_for_the_logs() -> None:
    profile = WorkloadProfile("MW1", 8192, 70, True, 8192, duration_s=4)
    options = JobOptions(("/dev/x",), "psync", True, host_logs=True)
    lines = job_text(profile, options).splitlines()
    assert all(option in lines for option in HOST_LOG_OPTIONS)
    assert lines.index("clat_percentiles=1") > lines.index("clat_percentiles=0")  # last wins
    assert "write_hist_log=storwatt" not in job_text(profile, JobOptions(("/dev/x",)))
