"""Parse fio's ``--output-format=json+ --status-interval=N`` output into per-interval slices.

method-notes §9 (checked by hand on fio 3.33): the stream is *cumulative*, pretty-printed JSON
documents back to back with no separator, sometimes with plain text lines between them
(``fio: terminating on signal 2``); the last document is the final one. Each document is
split with ``json.JSONDecoder().raw_decode`` from the next ``{``; consecutive snapshots are
differenced (IO counts, bytes, latency sums, ``lat_ns.bins``) so the slices telescope exactly
to fio's final totals. Idle directions carry no ``bins`` key. (Load hosts' clients print no
JSON: ``host_seconds`` rebuilds their intervals.)

Response time is fio's *total* latency ``lat_ns`` (submission to completion, what the host
sees), never ``clat_ns`` (completion only): mean, max and bins all come from it, and the job
files ask for its bins with ``lat_percentiles=1`` (drivers/fio/jobs.py, method-notes §10).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from drivers.interfaces import WorkloadError, WorkloadInterval

_DECODER = json.JSONDecoder()


@dataclass(frozen=True)
class Snapshot:
    """Cumulative figures of one fio report (reads and writes merged, all jobs summed)."""

    runtime_ms: float  # job_runtime summed over jobs
    read_ios: int
    write_ios: int
    read_bytes: int
    write_bytes: int
    lat_sum_ns: float  # Σ mean × N over directions: lets a slice's mean be differenced
    bins: dict[int, int] = field(default_factory=dict)
    error: int = 0
    host: str = ""
    max_ns: int = 0  # cumulative total-latency (lat_ns) max over directions

    @property
    def ios(self) -> int:
        return self.read_ios + self.write_ios


EMPTY = Snapshot(0.0, 0, 0, 0, 0, 0.0)


class DocumentSplitter:
    """Incremental splitter: feed text as it arrives, get complete documents back."""

    def __init__(self) -> None:
        self._buffer = ""
        self.text_lines: list[str] = []  # non-JSON lines fio printed between documents

    def feed(self, chunk: str) -> list[dict[str, Any]]:
        self._buffer += chunk
        docs: list[dict[str, Any]] = []
        while True:
            start = self._buffer.find("{")
            if start < 0:  # text only: keep its whole lines, the rest may go on in the next read
                cut = max(self._buffer.rfind("\n"), self._buffer.rfind("\r")) + 1
                self._keep_text(self._buffer[:cut])
                self._buffer = self._buffer[cut:]
                return docs
            self._keep_text(self._buffer[:start])
            try:
                doc, end = _DECODER.raw_decode(self._buffer, start)
            except json.JSONDecodeError:
                self._buffer = self._buffer[start:]  # incomplete: wait for more text
                return docs
            docs.append(doc)
            self._buffer = self._buffer[end:]

    def _keep_text(self, text: str) -> None:
        self.text_lines += [line.strip() for line in text.splitlines() if line.strip()]

    @property
    def pending(self) -> str:
        """Unparsed tail (a truncated document when fio died mid-print)."""
        return self._buffer


def _direction(d: dict[str, Any]) -> tuple[int, int, float, dict[int, int], int]:
    """IOs, bytes, total-latency sum, bins and max of one direction (idle ones have no bins).

    A direction that did IO without ``lat_ns`` bins came from a job file without
    ``lat_percentiles=1``: refused, so a completion-only histogram never passes for one."""
    lat = d.get("lat_ns", {})
    n = int(lat.get("N", 0))
    if n and "bins" not in lat:
        raise WorkloadError("fio printed no lat_ns bins (total latency): the job file needs "
                            "lat_percentiles=1")
    bins = {int(k): int(v) for k, v in lat.get("bins", {}).items()}
    return (int(d.get("total_ios", 0)), int(d.get("io_bytes", 0)),
            float(lat.get("mean", 0.0)) * n, bins, int(lat.get("max", 0)) if n else 0)


def snapshot_of_jobs(jobs: list[dict[str, Any]], host: str = "") -> Snapshot:
    """Sum the job entries of one report (one entry with ``group_reporting``)."""
    totals = [0.0, 0, 0, 0, 0, 0.0]
    bins: dict[int, int] = {}
    error = max_ns = 0
    for job in jobs:
        r_ios, r_bytes, r_lat, r_bins, r_max = _direction(job.get("read", {}))
        w_ios, w_bytes, w_lat, w_bins, w_max = _direction(job.get("write", {}))
        max_ns = max(max_ns, r_max, w_max)
        for i, v in enumerate((float(job.get("job_runtime", 0)), r_ios, w_ios, r_bytes,
                               w_bytes, r_lat + w_lat)):
            totals[i] += v
        for b in (r_bins, w_bins):
            for k, v in b.items():
                bins[k] = bins.get(k, 0) + v
        error = error or int(job.get("error", 0))
    return Snapshot(totals[0], int(totals[1]), int(totals[2]), int(totals[3]), int(totals[4]),
                    totals[5], bins, error, host, max_ns)


def snapshot_of_document(doc: dict[str, Any]) -> Snapshot:
    if "jobs" not in doc:
        raise WorkloadError("fio printed a JSON document without 'jobs'")
    return snapshot_of_jobs(doc["jobs"])


def difference(cur: Snapshot, prev: Snapshot, t_start: float, t_end: float) -> WorkloadInterval:
    """The slice between two cumulative snapshots."""
    r_ios, w_ios = cur.read_ios - prev.read_ios, cur.write_ios - prev.write_ios
    if r_ios < 0 or w_ios < 0:
        raise WorkloadError("fio snapshots went backwards (IO counts decreased)")
    bins = {k: v - prev.bins.get(k, 0) for k, v in cur.bins.items()}
    bins = {k: v for k, v in bins.items() if v > 0}
    ios = r_ios + w_ios
    avg_ms = (cur.lat_sum_ns - prev.lat_sum_ns) / ios / 1e6 if ios else 0.0
    # the cumulative max is exact when it grew in this slice; otherwise the slice's highest
    # non-empty bucket (its midpoint, within 1/64 of the true value) is the best bound
    if cur.max_ns > prev.max_ns:
        max_ms = cur.max_ns / 1e6
    else:
        max_ms = min(max(bins), cur.max_ns or max(bins)) / 1e6 if bins else 0.0
    return WorkloadInterval(t_start, t_end, r_ios, w_ios, cur.read_bytes - prev.read_bytes,
                            cur.write_bytes - prev.write_bytes, avg_ms, max_ms, bins, cur.host)


class IntervalSeries:
    """Turns a host's cumulative documents into intervals, one per document that advanced.

    Time stamps (station clock): an interval ends when its document *arrived* and starts where
    the previous one ended (the first at ``t0``, the moment fio was launched). Arrival time is
    what the sequencer can line up with the power samples it takes at the same moment; fio's
    own ``job_runtime`` is summed over jobs and excludes start-up, so it cannot anchor a slice.
    """

    def __init__(self, t0: float, host: str = "") -> None:
        self.t_last = t0
        self.last = EMPTY
        self.host = host

    def add(self, arrived: float, snap: Snapshot) -> WorkloadInterval | None:
        prev = self.last
        if snap.ios < prev.ios or (snap.ios == prev.ios and snap.runtime_ms <= prev.runtime_ms):
            return None  # a repeated (or stale) document carries no new slice
        interval = difference(snap, prev, self.t_last, max(arrived, self.t_last))
        self.t_last, self.last = interval.t_end, snap
        return interval
