"""Where inside a hot band the reference load generator puts its IOs, and the same in fio.

The Emerald kit's mandated generator (Vdbench) draws a hot band's offsets from a fixed curve
that crowds the IOs at the band's start (docs/method-notes.md §2, "The in-band curve"): a
uniform draw z is mapped through a piecewise-linear curve of cumulative probability against an
offset whose "MB" values end up as kilobytes of byte offset, taken modulo the band, writes
shifted by 1 % of the band first. The numbers below are those facts (method-notes §2 names the
source); the code is the project's own.

fio cannot draw from such a curve, but ``random_distribution=zoned_abs`` gives each zone of a
job's range its whole-percent share of the IOs, uniform inside the zone. Cutting the band at
its 1 %, 2 %, … 99 % quantiles, rounded to whole blocks, gives each block a quantile ends in
its whole percents and the stretches between them 0 %, so at every block edge fio's cumulative
share is within one point of the curve's (offsets are whole blocks in both generators). fio 3.33
refuses a separate distribution per
direction (``zoned_abs:…,…``: "failed parsing"), so a band's reads and writes run as two job
sections, each with its own zones (drivers/fio/jobs.py).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import cache

import numpy as np

#: the curve's offsets ("MB" in the reference, bytes / 1000 in effect) at its break points
CURVE_MB = (0, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536,
            131072, 262144, 524288, 1048576, 2097152, 4194304, 8388608, 16777216, 33554432,
            67108864, 134217728, 268435456, 536870912, 1073741824, 10737418240)
#: cumulative probability at each break point
CURVE_P = (0, 0.087217, 0.10101, 0.132206, 0.159946, 0.201713, 0.262602, 0.32645, 0.366902,
           0.386175, 0.436941, 0.482631, 0.523752, 0.56076, 0.594068, 0.624045, 0.651024,
           0.675305, 0.697159, 0.716827, 0.734528, 0.750459, 0.764797, 0.777701, 0.789314,
           0.799767, 0.809174, 0.81764, 1)
#: "MB" of offset per unit of probability inside each segment (the last one does not meet
#: the curve's end point: it only changes how the top ~18 % wraps around the band)
CURVE_SLOPE = (183.4511752, 1159.945628, 1025.778015, 2307.172362, 3064.644852, 4204.331611,
               8019.055699, 25313.90019, 106263.1067, 80683.52498, 179296.7222, 398437.1604,
               885415.912, 1967590.916, 4372424.257, 9716498.348, 21592218.55, 47982707.89,
               106628239.8, 236951643.9, 526559208.7, 1170131575.0, 2600292389.0,
               5778427530.0, 12840950067.0, 28535444594.0, 63412099098.0, 1313220630.0,
               10737418240.0)
#: bytes of offset per curve "MB": the reference divides MB × 1000 by the transfer size in
#: bytes to get a record number
BYTES_PER_CURVE_MB = 1000
#: a write's record number moves on by this share of the band's records before the modulo
WRITE_SHIFT = 0.01


def _wrapped_below(start: np.ndarray, end: np.ndarray, band: float,
                   x: np.ndarray) -> np.ndarray:
    """Length of {y in [start, end) : y mod band < x}, for each segment (rows) and x
    (columns)."""
    def below(t: np.ndarray) -> np.ndarray:  # the same over [0, t)
        whole, rest = np.divmod(t[:, None], band)
        return whole * x[None, :] + np.minimum(rest, x[None, :])
    return below(end) - below(start)


def shares_below(xs: np.ndarray, band_bytes: float, write: bool = False) -> np.ndarray:
    """Share of the band's IOs (0–1) whose offset inside the band lies below each of ``xs``
    bytes: each curve segment spreads its probability evenly over its offsets, wrapped."""
    p = np.asarray(CURVE_P, dtype=float)
    mass = np.diff(p)
    start = np.asarray(CURVE_MB[:-1], dtype=float) * BYTES_PER_CURVE_MB
    start += WRITE_SHIFT * band_bytes if write else 0.0
    end = start + mass * np.asarray(CURVE_SLOPE[:-1], dtype=float) * BYTES_PER_CURVE_MB
    inside = _wrapped_below(start, end, float(band_bytes), np.asarray(xs, dtype=float))
    return (mass / (end - start)) @ inside


def _quantiles(qs: np.ndarray, band_bytes: float, write: bool) -> np.ndarray:
    """The offsets below which ``qs`` of the IOs fall (bisection, all at once: the share
    rises with the offset)."""
    lo, hi = np.zeros(len(qs)), np.full(len(qs), float(band_bytes))
    for _ in range(64):
        mid = (lo + hi) / 2
        under = shares_below(mid, band_bytes, write) < qs
        lo, hi = np.where(under, mid, lo), np.where(under, hi, mid)
    return hi


@cache
def curve_zones(band_bytes: int, block: int, write: bool = False) -> tuple[tuple[int, int], ...]:
    """(whole percent, zone bytes) for ``zoned_abs``: the band cut at its percent quantiles,
    rounded up to block edges. The zones cover the band exactly, their percentages add up to
    100, and at every block edge their cumulative share is within one point of the curve's."""
    blocks = band_bytes // block
    if blocks < 1:
        raise ValueError(f"a {band_bytes}-byte band holds no {block}-byte block")
    # zone k ends at the first block edge at or past the k % quantile, so at every block edge
    # fio's share and the curve's differ by less than one point (offsets are whole blocks in
    # both generators)
    quantiles = _quantiles(np.arange(1, 100) / 100, band_bytes, write)
    cuts = [min(max(math.ceil(q / block), 1), blocks) for q in quantiles]
    zones: list[tuple[int, int]] = []
    edge, done = 0, 0  # the last zone's end (blocks) and the percent below it
    # every block a quantile ends in is a zone of its own; a stretch between two such blocks
    # gets 0 % (fio takes it): its mass, under one point, goes to the block after it
    for end in sorted({*cuts, *(c - 1 for c in cuts), blocks} - {0}):
        below = 100 if end == blocks else sum(c <= end for c in cuts)
        zones.append((below - done, (end - edge) * block))
        edge, done = end, below
    return tuple(zones)


def zoned_abs(zones: Sequence[tuple[int, int]]) -> str:
    """The ``random_distribution`` value fio takes for ``zones``."""
    return "zoned_abs:" + ":".join(f"{pct}/{size}" for pct, size in zones)
