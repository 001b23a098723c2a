"""Measurement-core speed: histogram merging at phase end and a day of 1 Hz samples.

Goals (docs/performance.md): merging 10,000 one-second json+ bin snapshots and reading five
confidence levels ≤ 200 ms, so a 30-minute measurement interval (1,800 snapshots) or a long
conditioning phase is summarised without a pause; one-minute intervals plus the stability
verdict over 24 h of 1 Hz samples ≤ 1 s. Each figure is the median of several repeats: the
build box is shared, and a single run mostly measures the neighbours.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

import numpy as np

from app.metrics.efficiency import stability
from app.metrics.histogram import ResponseTimeHistogram
from app.metrics.intervals import build_intervals
from bench.figure import Figure
from drivers.simulators.latency import lognormal_bucket_probabilities

COMMAND = "python -m bench.run_all metrics"
WEIGHTS = (10, 9, 8, 7, 6, 5, 4, 3, 2, 1)  # method-notes §4 default
LEVELS = (99.0, 99.9, 99.99, 99.999, 99.9999)
REPEATS = 5


def _median_s(action: Callable[[], object], repeats: int = REPEATS) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def snapshot_bins(n: int = 10_000, ios_per_s: int = 8000) -> list[dict[str, int]]:
    """n one-second json+ ``bins`` mappings (string keys, as fio prints them) drawn from a
    5 ms log-normal in fio's bucket layout: about 300 non-empty buckets each."""
    values, probs = lognormal_bucket_probabilities(5.0)
    rng = np.random.default_rng(3)
    keys = [str(v) for v in values]
    snaps = []
    for counts in rng.multinomial(ios_per_s, probs, size=n):
        nz = np.flatnonzero(counts)
        snaps.append({keys[i]: int(counts[i]) for i in nz})
    return snaps


def merge_figures() -> list[Figure]:
    bins = snapshot_bins()
    parse_s = _median_s(lambda: [ResponseTimeHistogram.from_bins(b) for b in bins], 3)
    hists = [ResponseTimeHistogram.from_bins(b) for b in bins]

    def merge_and_levels() -> None:
        ResponseTimeHistogram.merge(*hists).confidence_levels(LEVELS)

    merge_s = _median_s(merge_and_levels)
    return [Figure("merge 10,000 json+ snapshots + 5 confidence levels (median of 5)",
                   round(merge_s * 1000, 1), "ms", "≤ 200 ms", merge_s <= 0.200, COMMAND),
            Figure("read 10,000 json+ bins mappings into histograms (median of 3; done live, "
                   "one per second)", round(parse_s * 1000, 1), "ms", "informative", None,
                   COMMAND)]


def day_of_samples() -> tuple[tuple, float]:
    """24 h of 1 Hz power samples (a few flagged) and one-second workload slices."""
    seconds = 86_400
    rng = np.random.default_rng(1)
    t = np.arange(seconds) + 0.5
    watts = 600 + rng.normal(0, 2, seconds)
    usable = rng.random(seconds) > 0.001  # ~86 over-range samples, skipped not averaged
    ends = np.arange(1, seconds + 1, dtype=float)
    ios = rng.poisson(5000, seconds).astype(float)
    return (t, watts, usable, ends, ios, ios * 8192), float(seconds)


def day_figure() -> Figure:
    arrays, seconds = day_of_samples()

    def intervals_and_stability() -> None:
        phase = build_intervals(*arrays, 0.0, seconds, 60.0, "IOPS")
        ep = np.array([f.ep for f in phase.figures])
        stability(ep, WEIGHTS, 5.0, measurement_start=10)

    day_s = _median_s(intervals_and_stability)
    return Figure("one-minute intervals + stability, 24 h of 1 Hz samples (median of 5)",
                  round(day_s, 3), "s", "≤ 1 s", day_s <= 1.0, COMMAND)


def run() -> list[Figure]:
    return [*merge_figures(), day_figure()]
