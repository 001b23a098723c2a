"""Measurement-core speed (issue 2): histogram merging and a day of 1 Hz samples."""

from __future__ import annotations

import time

import numpy as np

from app.metrics.efficiency import periodic_efficiency, stability
from app.metrics.histogram import ResponseTimeHistogram
from app.metrics.intervals import interval_means, interval_ops
from bench.figure import BenchResult
from drivers.sim.latency import lognormal_bucket_probabilities

COMMAND = ".venv/bin/python -m bench.run_all metrics"
WEIGHTS = (10, 9, 8, 7, 6, 5, 4, 3, 2, 1)


def merge_snapshots(n: int = 10_000) -> float:
    """ms to merge n one-second json+ bin snapshots and compute five confidence levels."""
    values, probs = lognormal_bucket_probabilities(5.0)
    rng = np.random.default_rng(3)
    snaps = [ResponseTimeHistogram.from_arrays(values, rng.multinomial(8000, probs))
             for _ in range(n)]
    start = time.perf_counter()
    merged = ResponseTimeHistogram.merge(*snaps)
    merged.confidence_levels((99.0, 99.9, 99.99, 99.999, 99.9999))
    return (time.perf_counter() - start) * 1000


def day_of_samples() -> float:
    """s to build one-minute intervals and stability for 24 h of 1 Hz samples."""
    t = np.arange(0, 86_400, 1.0)
    watts = 600 + np.random.default_rng(1).normal(0, 2, t.size)
    start = time.perf_counter()
    means, _ = interval_means(t, watts, None, 0.0, 60.0, 1440)
    ios, _ = interval_ops(t + 1, np.full(t.size, 5000.0), np.full(t.size, 4e7), 0.0, 60.0, 1440)
    ep = periodic_efficiency(ios / 60.0, means)
    for phase in range(0, 1440, 40):  # 36 phases of 40 one-minute intervals
        stability(ep[phase:phase + 40], WEIGHTS, 5.0, measurement_start=10)
    return time.perf_counter() - start


def bench() -> list[BenchResult]:
    merge_ms = merge_snapshots()
    day_s = day_of_samples()
    return [BenchResult("merge 10,000 json+ snapshots + 5 confidence levels", round(merge_ms, 1),
                        "ms", "≤ 200 ms", merge_ms <= 200, COMMAND),
            BenchResult("intervals + stability, 24 h of 1 Hz samples", round(day_s, 3), "s",
                        "≤ 1 s", day_s <= 1.0, COMMAND)]
