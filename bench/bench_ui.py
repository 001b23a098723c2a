"""GUI benchmarks: live-plot redraw time with 24 h of 1 Hz data on 6 curves (goal ≤ 16 ms)
and the GUI event loop's latency p99 while a simulated run streams events (goal ≤ 50 ms).

Redraw = what the run view's timer does: push the buffer views to the curves and paint the
widget (clip-to-view and peak downsampling are on, as in the station). Latency = how late a
10 ms QTimer fires while the smoke method runs on the simulated lab in real time and the run
view draws it. Run: ``QT_QPA_PLATFORM=offscreen .venv/bin/python bench/bench_ui.py [--json]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np

from bench.figure import BenchResult

COMMAND = "QT_QPA_PLATFORM=offscreen .venv/bin/python bench/bench_ui.py"
DAY_S = 24 * 3600
REDRAW_GOAL_MS = 16.0
LATENCY_GOAL_MS = 50.0
CURVES = ("power", "temperature", "iops", "mibs", "ep", "wma")


def _fill_day(plots) -> None:
    """24 h of 1 Hz samples on each of the six curves (a noisy, drifting signal)."""
    rng = np.random.default_rng(1)
    x = np.arange(DAY_S, dtype=float)
    for i, name in enumerate(CURVES):
        y = 100 * (i + 1) + np.cumsum(rng.normal(0, 0.5, DAY_S))
        plots.series[name].extend(x, y)


def bench_redraw(repeats: int = 40) -> BenchResult:
    from ui.app import application
    from ui.plots.live import LivePlots

    app = application()
    plots = LivePlots(redraw_ms=3_600_000)
    plots.resize(1500, 800)
    plots.show()
    _fill_day(plots)
    plots.redraw()
    app.processEvents()
    times = []
    t = float(DAY_S)
    for _ in range(repeats):
        for name in CURVES:  # one new second of data per redraw, as during a run
            plots.series[name].append(t, 100.0)
        t += 1
        start = time.perf_counter()
        plots.redraw()
        app.processEvents()  # the paint the timer's update() schedules
        times.append((time.perf_counter() - start) * 1000)
    plots.close()
    median = statistics.median(times)
    return BenchResult("plot redraw, 24 h × 6 curves (median)", round(median, 2), "ms",
                       f"≤ {REDRAW_GOAL_MS:g} ms", median <= REDRAW_GOAL_MS, COMMAND)


def bench_latency(method: str = "smoke", lab: str = "sim-direct",
                  tick_ms: int = 10) -> BenchResult:
    from PySide6.QtCore import QElapsedTimer, QTimer

    from app.core.records import RunConfig
    from app.station.session import open_session
    from ui.app import application
    from ui.run.bridge import RunBridge
    from ui.run.view import RunView

    app = application()
    with tempfile.TemporaryDirectory() as folder:
        view = RunView(confirm=lambda *_: True)
        view.resize(1500, 950)
        view.show()
        bridge = RunBridge()
        session = open_session(RunConfig(method=method, lab=lab),
                               db_url=f"sqlite:///{folder}/bench.db", listeners=[bridge])
        lateness: list[float] = []
        clock = QElapsedTimer()
        clock.start()
        last = [clock.nsecsElapsed()]

        def tick() -> None:
            now = clock.nsecsElapsed()
            lateness.append(max(0.0, (now - last[0]) / 1e6 - tick_ms))
            last[0] = now

        timer = QTimer()
        timer.setInterval(tick_ms)
        timer.timeout.connect(tick)
        timer.start()
        done: list[object] = []
        view.ended.connect(done.append)
        view.start(session, bridge)
        while not done:
            app.processEvents()
            time.sleep(0.001)
        timer.stop()
        view.close()
    p99 = float(np.percentile(lateness, 99)) if lateness else float("nan")
    return BenchResult(f"event-loop latency p99, {method} run ({lab})", round(p99, 2), "ms",
                       f"≤ {LATENCY_GOAL_MS:g} ms", p99 <= LATENCY_GOAL_MS,
                       f"{COMMAND} --method {method} --lab {lab}")


def bench(method: str = "smoke", lab: str = "sim-direct") -> list[BenchResult]:
    return [bench_redraw(), bench_latency(method, lab)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--method", default="smoke")
    parser.add_argument("--lab", default="sim-direct",
                        help="sim-direct (in-process meters) or sim (loopback meter simulators)")
    args = parser.parse_args()
    results = bench(args.method, args.lab)
    if args.json:
        print(json.dumps([asdict(r) for r in results], indent=2))
    else:
        for r in results:
            print(f"{r.name:48} {r.value:>9} {r.unit:3} goal {r.goal:10} "
                  f"{'PASS' if r.passed else 'FAIL'}")
    return 0 if all(r.passed for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
