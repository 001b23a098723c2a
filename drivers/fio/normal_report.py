"""The few exact figures of fio's normal (text) report, as a load host's client prints it at
the end of a job (docs/fio.md, "Final figures of a load host").

With ``group_reporting`` the report holds one job block. Its ``issued rwts: total=R,W,T,S``
line is fio's exact IO count per direction (the same ``total_io_u`` json+ prints as
``total_ios``); ``lat (nsec|usec|msec): min=…, max=…, avg=…`` gives each direction's total
latency (rounded to 2 decimals of its unit); the run status lines give ``run=A-Bmsec``.
Everything else (``io=10.9MiB``) is rounded for reading and is not used.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from drivers.interfaces import WorkloadError

_ISSUED = re.compile(r"issued rwts: total=(\d+),(\d+),\d+,\d+")
_DIRECTION = re.compile(r"^\s*(read|write): IOPS=", re.MULTILINE)
_LAT = re.compile(r"^\s*lat \((nsec|usec|msec)\): min=\s*(\d+(?:\.\d+)?)[kKMG]?, "
                  r"max=\s*(\d+(?:\.\d+)?)([kKMG]?), avg=\s*(\d+(?:\.\d+)?)", re.MULTILINE)
_RUN = re.compile(r"run=(\d+)-(\d+)msec")
_TO_NS = {"nsec": 1.0, "usec": 1e3, "msec": 1e6}
_SCALE = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9}
_ERROR = re.compile(r"err=\s*(\d+)")
_JOBS = re.compile(r"\(groupid=\d+, jobs=(\d+)\)")


@dataclass(frozen=True)
class NormalReport:
    """Exact IO counts, the run time and each direction's total latency (ns)."""

    read_ios: int
    write_ios: int
    runtime_ms: int  # the longest ``run=`` of the report's groups
    mean_ns: tuple[float, float] = (0.0, 0.0)  # read, write (0 for an idle direction)
    max_ns: tuple[float, float] = (0.0, 0.0)
    error: int = 0
    jobs: int = 1  # fio jobs the report sums (``group_reporting``): one log file each


def parse_normal_report(text: str) -> NormalReport:
    """The report fio's client printed; WorkloadError when it holds none."""
    issued = _ISSUED.findall(text)
    runs = _RUN.findall(text)
    if len(issued) != 1 or not runs:
        raise WorkloadError(f"fio printed {len(issued)} 'issued rwts' lines "
                            f"and {len(runs)} run times, expected one job report "
                            "(group_reporting=1): the phase's figures cannot be counted")
    mean, peak = [0.0, 0.0], [0.0, 0.0]
    starts = list(_DIRECTION.finditer(text))
    for here, after in zip(starts, [*starts[1:], None]):
        lat = _LAT.search(text, here.end(), after.start() if after else len(text))
        if lat is None:
            continue
        unit = _TO_NS[lat.group(1)]
        slot = 0 if here.group(1) == "read" else 1
        peak[slot] = float(lat.group(3)) * _SCALE[lat.group(4)] * unit
        mean[slot] = float(lat.group(5)) * unit
    errors = [int(e) for e in _ERROR.findall(text)]
    jobs = [int(j) for j in _JOBS.findall(text)]
    return NormalReport(int(issued[0][0]), int(issued[0][1]),
                        max(int(b) for _, b in runs), (mean[0], mean[1]), (peak[0], peak[1]),
                        max(errors, default=0), max(jobs, default=1))
