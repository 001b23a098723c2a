"""A load host's per-second intervals from fio's returned logs and its normal report
(docs/fio.md, "Final figures of a load host").

Counts come from the hist log: its bins count every IO completed in a window, per direction,
exactly (the undone client log, ``host_logs.client_windows``); bytes are counts × the line's
block size. The IOs after the last full window are in no log line (fio issue #490): they
form a last interval of their own, their counts the report's exact ``issued`` totals minus
the logged ones, with no bins and no maximum (NaN: not known). So the intervals add up to
fio's exact totals, as the json+ intervals did; their bins to the totals less that tail.

Mean response time is total latency from the averaged lat log (what the local json+ path
measures), weighted by each job's and direction's count; bins are fio's completion latency
(the only histogram fio logs). Times are on the station clock as for the json+ client
documents: the host's IO began ``runtime`` before the report arrived, and a window ends
``t_ms`` after that.
"""

from __future__ import annotations

import math
import os
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from drivers.fio.clients import parse_host
from drivers.fio.host_logs import HistWindow, HostLogs, read_host_logs
from drivers.fio.normal_report import NormalReport, parse_normal_report
from drivers.interfaces import WorkloadError, WorkloadInterval


def _second(t_ms: int) -> int:
    return round(t_ms / 1000)


def _mean_ns(windows: Iterable[HistWindow], means: dict[tuple[int, int, int], int],
             report: NormalReport) -> float:
    """IO-weighted mean total latency of windows (the report's own mean where the lat log
    has no entry for a window)."""
    weighted = ios = 0.0
    for w in windows:
        mean = means.get((w.job, w.ddir, _second(w.t_ms)), report.mean_ns[w.ddir])
        weighted += w.ios * mean
        ios += w.ios
    return weighted / ios if ios else 0.0


def _interval(windows: list[HistWindow], t_start: float, t_end: float, host: str,
              means: dict[tuple[int, int, int], int], report: NormalReport) -> WorkloadInterval:
    counts, sizes = [0, 0], [0, 0]
    bins: dict[int, int] = defaultdict(int)
    for w in windows:
        counts[w.ddir] += w.ios
        sizes[w.ddir] += w.ios * w.bs
        for k, v in w.bins.items():
            bins[k] += v
    peak = max(bins, default=0) / 1e6
    return WorkloadInterval(t_start, t_end, counts[0], counts[1], sizes[0], sizes[1],
                            _mean_ns(windows, means, report) / 1e6, peak, dict(bins), host)


def _tail(logs: HostLogs, report: NormalReport, logged: list[int], t_start: float,
          t_end: float, host: str, block_size: int, last_second: int) -> WorkloadInterval | None:
    """The IOs after the last full window: exact counts, lat-log mean, no bins."""
    rest = [report.read_ios - logged[0], report.write_ios - logged[1]]
    if min(rest) < 0:
        raise WorkloadError(f"fio's hist logs count {logged[0]} reads and "
                            f"{logged[1]} writes, more than its report's issued "
                            f"{report.read_ios},{report.write_ios}")
    if not sum(rest):
        return None
    sizes = [0, 0]
    for ddir in (0, 1):
        mine = [w for w in logs.windows if w.ddir == ddir]
        ios = sum(w.ios for w in mine)
        per_io = sum(w.ios * w.bs for w in mine) / ios if ios else block_size
        sizes[ddir] = round(rest[ddir] * per_io)
    late = [m for m in logs.means if _second(m.t_ms) > last_second]
    mean = [_average([m.value for m in late if m.ddir == d]) or report.mean_ns[d]
            for d in (0, 1)]
    avg_ns = (rest[0] * mean[0] + rest[1] * mean[1]) / sum(rest)
    return WorkloadInterval(t_start, max(t_start, t_end), rest[0], rest[1], sizes[0], sizes[1],
                            avg_ns / 1e6, math.nan, {}, host)


def _average(values: list[int]) -> float:
    return sum(values) / len(values) if values else 0.0


def logged_intervals(logs: HostLogs, report: NormalReport, arrived: float, host: str,
                     block_size: int) -> list[WorkloadInterval]:
    """One interval per logged second plus the unlogged tail; ``arrived`` is the station
    time the report arrived, ``block_size`` the bytes per IO when no window shows one."""
    t0 = arrived - report.runtime_ms / 1000
    seconds: dict[int, list[HistWindow]] = defaultdict(list)
    for w in logs.windows:
        seconds[_second(w.t_ms)].append(w)
    # a window's mean cannot exceed its direction's maximum: a value above it is memory the
    # client never received (host_logs: the compressed log's end is lost), not a mean
    usable = [m for m in logs.means
              if not report.max_ns[m.ddir] or m.value <= report.max_ns[m.ddir]]
    means = {(m.job, m.ddir, _second(m.t_ms)): m.value for m in usable}
    out: list[WorkloadInterval] = []
    t_last, logged = t0, [0, 0]
    for second in sorted(seconds):
        windows = seconds[second]
        t_end = min(arrived, max(t_last, t0 + max(w.t_ms for w in windows) / 1000))
        interval = _interval(windows, t_last, t_end, host, means, report)
        logged = [logged[0] + interval.read_ios, logged[1] + interval.write_ios]
        out.append(interval)
        t_last = t_end
    tail = _tail(replace(logs, means=tuple(usable)), report, logged, t_last, arrived, host,
                 block_size, max(seconds, default=0))
    if tail is not None and tail.duration_s <= 0 and out:
        return out[:-1] + [_folded(out[-1], tail)]  # the last window ended as fio did
    return out + ([tail] if tail else [])


def _folded(last: WorkloadInterval, tail: WorkloadInterval) -> WorkloadInterval:
    """``last`` with a zero-length tail's IOs added (its bins and maximum as they were)."""
    ios = last.ios + tail.ios
    return replace(last, read_ios=last.read_ios + tail.read_ios,
                   write_ios=last.write_ios + tail.write_ios,
                   read_bytes=last.read_bytes + tail.read_bytes,
                   write_bytes=last.write_bytes + tail.write_bytes,
                   avg_resp_ms=(last.avg_resp_ms * last.ios + tail.avg_resp_ms * tail.ios) / ios)




def host_figures(folder: Path, report_text: str, arrived: float, host: str,
                 block_size: int) -> tuple[list[WorkloadInterval], NormalReport]:
    """One host's intervals and report once its client exited: its normal report
    (``report_text``, what the client printed) and the logs the client wrote in ``folder``
    (where it ran). Any failure names the host."""
    try:
        report = parse_normal_report(report_text)
        if report.error:
            raise WorkloadError(f"fio reported error {report.error} "
                                f"({os.strerror(report.error)})")
        logs = read_host_logs(folder, parse_host(host)[0], report.jobs)
        return logged_intervals(logs, report, arrived, host, block_size), report
    except WorkloadError as exc:
        raise WorkloadError(f"load host {host}: {exc}") from None
