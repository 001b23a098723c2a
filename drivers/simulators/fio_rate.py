"""How fio applies ``rate_iops`` from job files: the simulated lab's model of fio's rule.

The simulated engine runs the *same* job files the real one would (``drivers.fio.jobs``, one
per load host) through this model, so a job file that asks fio for the wrong total rate makes
the simulated SUT run the wrong rate too: the simulated lab cannot hide that class of bug.

fio's rule (fio 3.33, method-notes §10): ``rate_iops`` caps *each job*; ``numjobs=N`` makes
N jobs of a section; ``[global]`` options apply to every section; every load host runs its
own job file. ``rate_iops=X`` caps each direction at X, ``R,W`` reads at R and writes at W,
and an empty or 0 value means no limit for that direction — for a direction the job issues
(a read-only stream of a sweep step adds no writes, whatever its write cap).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

NO_LIMIT = math.inf
#: what fio generates on the null engine with capped sections, about: 790,000 IOPS for the
#: 17-section hot band at queue depth 256 on the project's 2-core machine (docs/performance.md)
GENERATOR_IOPS = 750_000.0
#: what fio generates when sections share a ``flow_id``: its token flow control throttles fio
#: itself (570–780 IOPS for the 13-stream hot band at queue depth 1 on the null engine, fio
#: 3.33; docs/performance.md) — the simulated lab shows a job file that uses it as slow
FLOW_THROTTLED_IOPS = 600.0
#: a job that never issues a direction adds nothing to it, whatever its cap says
_READ_ONLY, _WRITE_ONLY = ("read", "randread"), ("write", "randwrite")


def sections(text: str) -> list[dict[str, str]]:
    """The job sections of a job file, each with the ``[global]`` options it inherits."""
    options: dict[str, dict[str, str]] = {}
    current: dict[str, str] | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            current = options.setdefault(line[1:-1], {})
        elif current is not None:
            key, _, value = line.partition("=")
            current[key.strip()] = value.strip()
    common = options.pop("global", {})
    return [{**common, **own} for own in options.values()]


def _cap(value: str) -> float:
    return float(value) if value and float(value) > 0 else NO_LIMIT


def _direction_caps(value: str) -> tuple[float, float]:
    parts = [p.strip() for p in value.split(",")]
    write = parts[1] if len(parts) > 1 else parts[0]  # one value caps each direction
    return _cap(parts[0]), _cap(write)


def applied_rate(job_files: Iterable[str]) -> tuple[float, float]:
    """(read, write) IOPS cap fio applies in total over all job files (load hosts):
    the per-job cap × jobs, summed; ``NO_LIMIT`` for a direction any job leaves unlimited."""
    read = write = 0.0
    for text in job_files:
        for job in sections(text):
            jobs = int(job.get("numjobs", "1"))
            r, w = _direction_caps(job.get("rate_iops", ""))
            rw = job.get("rw", "")
            r, w = (r, 0.0) if rw in _READ_ONLY else (0.0, w) if rw in _WRITE_ONLY else (r, w)
            read, write = read + r * jobs, write + w * jobs
    return read, write


def generator_rate(job_files: Iterable[str]) -> float:
    """The most IOPS fio itself generates from ``job_files`` (one per load host, each its own
    fio): ``FLOW_THROTTLED_IOPS`` for a file whose sections share a ``flow`` counter,
    ``GENERATOR_IOPS`` otherwise."""
    return sum(FLOW_THROTTLED_IOPS if any("flow" in job for job in sections(text))
               else GENERATOR_IOPS for text in job_files)
