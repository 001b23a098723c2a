"""fio's own per-second logs as a load host's client writes them (docs/fio.md, "Final
figures of a load host").

A load host's client runs without JSON, so its live ETA lines reach the station
(``drivers/fio/host_rates.py``) and the per-second figures come from the logs fio's server
sends back at the end, written beside the job file as ``NAME_clat_hist.J.log.HOST`` (latency
histogram) and ``NAME_lat.J.log.HOST`` (mean total latency), one file per job ``J``.

Measured on fio 3.33 and read in its source:

* **Histogram log** (``write_hist_log``, ``log_hist_msec=1000``, ``log_hist_coarseness=0``):
  one line per direction and window, ``msec, ddir, bs, c0, …, c1855`` — 1856 counts, fio's
  FIO_IO_U_PLAT layout (``drivers/fio/buckets.py``). It is fio's *completion* latency
  histogram (``stat.c: add_clat_sample`` copies ``io_u_plat[FIO_CLAT]``), empty unless the job
  has ``clat_percentiles=1``. A window closes at the first IO completing after it ran 1 s, so
  the IOs after the last full window are in no line (fio issue #490).
* **The client's counts are not per window.** The server turns each cumulative histogram into
  a difference in place and then subtracts the *next* one from that difference
  (``server.c: __fio_append_iolog_gz_hist``, unchanged in fio's master at 3.42), so the client
  writes d₁ = c₁, dᵢ = cᵢ − dᵢ₋₁ for the cumulative cᵢ (measured: 352, 350, 702 for windows
  of 352, 350, 350 IOs). :func:`client_windows` undoes it: cᵢ = dᵢ + dᵢ₋₁ per direction.
* **The client's last line loses its last bins.** The server compresses the log with
  ``Z_BLOCK`` flushes and then writes the stream's ``Z_FINISH`` end into a buffer it already
  queued (``server.c: fio_append_iolog_gz``), so the end never reaches the client, which
  leaves the last decompressed bytes of the log as uninitialised memory: up to one deflate
  match, 258 bytes, i.e. the last line's last 33 bins (measured: a hot-band job's last line
  held 18446744069414584320 and 94854811261000 in bins 1849 and 1851; a zlib replay of
  fio's flushing on 300 random logs lost at most 237 bytes). Those bins are latencies of
  12.7 s and more: :func:`client_windows` drops them from the last window, and its IOs there
  count as unlogged (``host_seconds``).
* **Averaged value logs** (``write_lat_log``, ``log_avg_msec=1000``): ``msec, value, ddir,
  bs, offset`` with the window's mean total latency in ns (submission to completion, what the
  station's mean response time is).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from drivers.fio.buckets import PLAT_NR, bucket_value
from drivers.interfaces import WorkloadError

READ, WRITE = 0, 1
#: the first bucket a client-written hist log's last line may hold garbage in (258 bytes)
UNRELIABLE_TAIL = PLAT_NR - 33
#: the file-name prefix of the logs the station's host job files ask for
LOG_PREFIX = "storwatt"
#: what a load host's job file adds: per-second hist log (full bins; it is the completion
#: histogram, empty without ``clat_percentiles=1``) and per-second mean total latency
HOST_LOG_OPTIONS = ("clat_percentiles=1", f"write_hist_log={LOG_PREFIX}", "log_hist_msec=1000",
                    "log_hist_coarseness=0", f"write_lat_log={LOG_PREFIX}", "log_avg_msec=1000")
_MIDPOINTS = [int(v) for v in bucket_value(np.arange(PLAT_NR))]


@dataclass(frozen=True)
class HistWindow:
    """One direction's completions in one window of one job (bins: midpoint ns → IOs)."""

    job: int
    t_ms: int  # end of the window, ms since the job started on the host
    ddir: int  # 0 read, 1 write
    bs: int
    bins: dict[int, int] = field(default_factory=dict)

    @property
    def ios(self) -> int:
        return sum(self.bins.values())


@dataclass(frozen=True)
class MeanWindow:
    """One averaged value-log entry: a job's mean of one direction over one window."""

    job: int
    t_ms: int
    ddir: int
    value: int


def _fields(line: str, number: int, name: str) -> list[int]:
    try:
        return [int(v) for v in line.split(",")]
    except ValueError:
        raise WorkloadError(f"fio log {name} line {number} is not comma-separated integers: "
                            f"{line[:60]!r}") from None


def read_hist_log(text: str, job: int, name: str = "hist log") -> list[HistWindow]:
    """Lines as written (counts per bucket, not yet undone): a line without
    ``3 + 1856`` numbers means the log was not written with ``log_hist_coarseness=0``."""
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        values = _fields(line, number, name)
        if len(values) != 3 + PLAT_NR or values[1] not in (READ, WRITE):
            raise WorkloadError(f"fio log {name} line {number} has {len(values) - 3} latency "
                                f"bins (direction {values[1] if len(values) > 1 else '?'}); "
                                f"expected {PLAT_NR} (log_hist_coarseness=0), read or write")
        bins = {_MIDPOINTS[i]: n for i, n in enumerate(values[3:]) if n}
        out.append(HistWindow(job, values[0], values[1], values[2], bins))
    return out


def client_windows(written: Sequence[HistWindow]) -> list[HistWindow]:
    """Per-window counts from one client-written hist log (the module docstring says why):
    cumulative cᵢ = dᵢ + dᵢ₋₁, window = cᵢ − cᵢ₋₁, per job and direction; the last line's
    bins from :data:`UNRELIABLE_TAIL` on are dropped. A negative count means the log is not
    in fio 3.33's client form: refused rather than guessed at."""
    last_written: dict[tuple[int, int], dict[int, int]] = {}
    last_total: dict[tuple[int, int], dict[int, int]] = {}
    out = []
    cut = _MIDPOINTS[UNRELIABLE_TAIL]
    for number, w in enumerate(written, 1):
        if number == len(written):  # its end may never have arrived
            w = replace(w, bins={k: v for k, v in w.bins.items() if k < cut})
        key = (w.job, w.ddir)
        before = last_written.get(key, {})
        total = {k: w.bins.get(k, 0) + before.get(k, 0) for k in w.bins.keys() | before.keys()}
        prev = last_total.get(key, {})
        bins = {k: total.get(k, 0) - prev.get(k, 0) for k in total.keys() | prev.keys()
                if number < len(written) or k < cut}
        if any(v < 0 for v in bins.values()):
            raise WorkloadError(f"fio hist log of job {w.job} at {w.t_ms} ms: counts fall "
                                "between windows; not the layout fio 3.33's client writes")
        last_written[key], last_total[key] = w.bins, total
        out.append(HistWindow(w.job, w.t_ms, w.ddir, w.bs, {k: v for k, v in bins.items() if v}))
    return out


def read_mean_log(text: str, job: int, name: str = "lat log") -> list[MeanWindow]:
    """``msec, value, ddir, bs, offset`` lines of an averaged (``log_avg_msec``) log."""
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        values = _fields(line, number, name)
        if len(values) < 3 or values[2] not in (READ, WRITE):
            raise WorkloadError(f"fio log {name} line {number} is not 'msec, value, ddir, …' "
                                f"of a read or write: {line[:60]!r}")
        out.append(MeanWindow(job, values[0], values[2], values[1]))
    return out


@dataclass(frozen=True)
class HostLogs:
    """Everything one host's client wrote back for one phase."""

    windows: tuple[HistWindow, ...]  # per-window counts, undone (client_windows)
    means: tuple[MeanWindow, ...]  # mean total latency per window (ns)


def read_host_logs(folder: Path, host_name: str, jobs: int,
                   prefix: str = LOG_PREFIX) -> HostLogs:
    """The logs of every job (fio writes one file per job, ``numjobs`` included, numbered from
    1); fewer hist logs than ``jobs`` fails naming what is missing: without them the host's
    seconds cannot be rebuilt."""
    windows: list[HistWindow] = []
    means: list[MeanWindow] = []
    hists = sorted(folder.glob(f"{prefix}_clat_hist.*.log.{host_name}"))
    if len(hists) < jobs:
        raise WorkloadError(f"fio's client wrote {len(hists)} of {jobs} hist logs "
                            f"{prefix}_clat_hist.J.log.{host_name} in {folder}")
    for hist in hists:
        job = int(hist.name.removeprefix(f"{prefix}_clat_hist.").split(".")[0])
        lat = folder / f"{prefix}_lat.{job}.log.{host_name}"
        try:
            windows += client_windows(read_hist_log(hist.read_text(), job, hist.name))
            means += read_mean_log(lat.read_text(), job, lat.name)
        except OSError as exc:
            raise WorkloadError(f"fio's client wrote no log {exc.filename}: {exc.strerror}"
                                ) from None
    return HostLogs(tuple(windows), tuple(means))
