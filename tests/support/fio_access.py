"""What a job file really asks of the target, read back from fio's own per-IO log (tests).

A profile's definition says "8 KiB random 70/30 over the whole target"; whether fio does that
with the job file the station writes is a fact about fio, so it is measured: the file runs
(on the null engine, no IO behind it) with ``write_lat_log`` and ``log_offset=1``, and every
logged IO's direction, size and offset is checked against the profile (method-notes §2, "Every
profile's access pattern, proven"). Random offsets are tested for uniformity with a
chi-square goodness-of-fit over equal slices of the range, its p-value from the
Wilson–Hilferty normal approximation (accurate to a few per mille at these degrees of freedom,
enough for a pass/fail at p = 0.001).
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from drivers.fio.hotband_curve import shares_below

#: the lines fio's per-IO latency log holds with ``log_offset=1``:
#: time (ms), latency (ns), direction (0 read, 1 write), size (bytes), offset (bytes), …
LOG_OPTIONS = ("log_offset=1",)


@dataclass(frozen=True, slots=True)
class LoggedIO:
    job: str
    write: bool
    size: int
    offset: int


@dataclass(frozen=True)
class AccessPattern:
    """One profile's IOs as fio logged them."""

    ios: int
    read_pct: float
    #: share of the IOs that start where their job's previous IO ended (or back at the
    #: range's start after its end): sequential access
    sequential_pct: float
    #: every offset a whole number of blocks from the range's start
    aligned: bool
    lowest: int
    highest_end: int
    #: chi-square goodness of fit of the offsets over equal slices of the range (uniform)
    uniformity_p: float

    def within(self, start: int, end: int) -> bool:
        return start <= self.lowest and self.highest_end <= end


def read_lat_logs(folder: Path, prefix: str, sections: Sequence[str]) -> list[LoggedIO]:
    """The IOs of ``prefix_lat.N.log`` for each job section N (1-based, in job-file order:
    fio numbers a section's logs in that order when every section has one job)."""
    out: list[LoggedIO] = []
    for number, job in enumerate(sections, 1):
        for line in (folder / f"{prefix}_lat.{number}.log").read_text().splitlines():
            fields = line.split(",")
            out.append(LoggedIO(job, fields[2].strip() == "1", int(fields[3]), int(fields[4])))
    return out


def chi_square_p(counts: Sequence[int]) -> float:
    """Upper-tail p of the chi-square statistic of ``counts`` against equal expectations."""
    k = len(counts) - 1
    total = sum(counts)
    if k < 1 or total == 0:
        return math.nan
    expected = total / len(counts)
    stat = sum((c - expected) ** 2 for c in counts) / expected
    z = ((stat / k) ** (1 / 3) - (1 - 2 / (9 * k))) / math.sqrt(2 / (9 * k))
    return 0.5 * math.erfc(z / math.sqrt(2))


def access_pattern(ios: Iterable[LoggedIO], start: int, length: int, block: int,
                   slices: int = 64) -> AccessPattern:
    """The pattern of ``ios`` over the range ``start`` … ``start + length``."""
    ios = list(ios)
    if not ios:
        raise ValueError("fio logged no IO")
    last_end: dict[str, int] = {}
    continuing = 0
    counts = [0] * slices
    aligned = True
    for io in ios:
        previous = last_end.get(io.job)
        if previous is not None and (io.offset == previous or
                                     previous >= start + length and io.offset == start):
            continuing += 1
        last_end[io.job] = io.offset + io.size
        aligned = aligned and (io.offset - start) % block == 0
        counts[min(slices - 1, (io.offset - start) * slices // length)] += 1
    firsts = len(last_end)  # each job's first IO continues nothing
    return AccessPattern(
        ios=len(ios), read_pct=100 * sum(not io.write for io in ios) / len(ios),
        sequential_pct=100 * continuing / max(1, len(ios) - firsts), aligned=aligned,
        lowest=min(io.offset for io in ios),
        highest_end=max(io.offset + io.size for io in ios),
        uniformity_p=chi_square_p(counts))


def zone_share_below(zones: Sequence[tuple[int, int]], x: float) -> float:
    """Share of the IOs fio puts below ``x`` bytes with ``zones`` (uniform inside each): what
    the approximation gives, to compare with :func:`share_below`."""
    edges = [0]
    for _, size in zones:
        edges.append(edges[-1] + size)
    k = bisect.bisect_right(edges, x) - 1
    done = sum(p for p, _ in zones[:k]) / 100
    if k >= len(zones):
        return done
    return done + zones[k][0] / 100 * (x - edges[k]) / zones[k][1]


def share_below(x: float, band_bytes: float, write: bool = False) -> float:
    """The reference curve's share of a band's IOs (0–1) below ``x`` bytes."""
    return float(shares_below(np.array([x]), band_bytes, write)[0])
