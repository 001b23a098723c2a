"""Sampling-loop benchmark: 1 Hz readings of the WT310 simulator through the real driver.

The loop sleeps to a drift-corrected schedule (next = t0 + k·period) and measures how late
each reading starts (period jitter). Goal: p99 ≤ 10 ms. Default ≥ 2 minutes (120 samples);
``STORWATT_BENCH_SAMPLING_S`` shortens it for quick checks.
Run: ``.venv/bin/python bench/bench_sampling.py [--seconds N] [--json]``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import asdict
from pathlib import Path

import numpy as np

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from drivers.clock import MonotonicClock
from drivers.meters.registry import open_power_meter
from drivers.simulators import MeterSimulator
from bench.figure import BenchResult

COMMAND = ".venv/bin/python bench/bench_sampling.py"
JITTER_GOAL_MS = 10.0
PERIOD_S = 1.0




def sample_lateness(seconds: float, period: float = PERIOD_S) -> tuple[np.ndarray, int]:
    """Lateness (s) of each reading's start vs its slot, and the count of bad samples."""
    clock = MonotonicClock()
    with MeterSimulator("wt310") as sim:
        sim.set_state(250.0)
        meter = open_power_meter("wt300", sim.resource, range_v=300, range_a=2)
        meter.open()
        try:
            count = max(2, int(seconds / period))
            t0 = clock.now() + period
            late, bad = [], 0
            for k in range(count):
                slot = t0 + k * period
                clock.sleep_until(slot)
                sample = meter.read(clock.now())
                late.append(sample.t - slot)
                bad += not sample.usable or sample.watts != 250.0
        finally:
            meter.close()
    return np.asarray(late), bad


def run(seconds: float | None = None) -> list[BenchResult]:
    if seconds is None:
        seconds = float(os.environ.get("STORWATT_BENCH_SAMPLING_S", "120"))
    late, bad = sample_lateness(seconds)
    ms = late * 1000.0
    p50, p99 = np.percentile(ms, [50, 99])
    return [
        BenchResult("sampling.jitter_p50", round(float(p50), 3), "ms", "informative", True),
        BenchResult("sampling.jitter_p99", round(float(p99), 3), "ms",
                    f"<= {JITTER_GOAL_MS:g}", bool(p99 <= JITTER_GOAL_MS)),
        BenchResult("sampling.jitter_max", round(float(ms.max()), 3), "ms", "informative",
                    True),
        BenchResult("sampling.samples", len(ms), "samples", f">= {int(seconds)}",
                    len(ms) >= int(seconds / PERIOD_S) and bad == 0),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, help="duration (default 120 or the env var)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results = run(args.seconds)
    if args.json:
        print(json.dumps([asdict(r) for r in results], indent=2))
    else:
        for r in results:
            print(f"{r.name:24} {r.value:>10} {r.unit:8} goal {r.goal:10} "
                  f"{'PASS' if r.passed else 'FAIL'}")
    return 0 if all(r.passed for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
