"""The real run view's plots at hour 24 with four power inputs: redraw time (issue 27).

Beside bench_ui's synthetic row (the six main curves alone) this draws what the run view holds
in a 24 h run with four inputs: the six main curves plus each input's and the total's power and
uncertainty curves (10 more), 86,400 points each. Each repeat adds one second to every curve,
as the live feed does, then times ``LivePlots.redraw()`` and the paint it schedules, in wall
time and in the GUI thread's CPU time (on a loaded machine the wall time is mostly waiting
for a core). Runs in a
fresh process per tree; with ``STORWATT_BENCH_RUN_VIEW_BASELINE=<git revision>`` that
revision's code draws the same, alternating, and the ratio is printed.
Run: ``QT_QPA_PLATFORM=offscreen nice python -m bench.run_all run_view``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.bench_reports import checkout
from bench.figure import Figure

ROOT = Path(__file__).resolve().parent.parent
BASELINE_ENV = "STORWATT_BENCH_RUN_VIEW_BASELINE"
GOAL_MS = 16.0
#: public APIs only (the same in a baseline revision); prints the median redraw in ms
_DRAW = r"""
import os, statistics, time
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
import numpy as np
from drivers.interfaces import PowerSample
from ui.app import application
from ui.plots.input_plots import TOTAL
from ui.plots.live import LivePlots
DAY_S, INPUTS = 86_400, ("psu-a", "psu-b", "psu-c", "psu-d")
app = application()
plots = LivePlots(redraw_ms=3_600_000)
plots.resize(1500, 1000)
plots.show()
rng = np.random.default_rng(1)
x = np.arange(DAY_S, dtype=float)
for i, name in enumerate(("power", "temperature", "iops", "mibs", "ep", "wma")):
    plots.series[name].extend(x, 100 * (i + 1) + np.cumsum(rng.normal(0, 0.5, DAY_S)))
for i, name in enumerate((*INPUTS, TOTAL)):
    watts = 150 * (4 if name == TOTAL else 1) + np.cumsum(rng.normal(0, 0.2, DAY_S))
    plots.inputs.add_series(name, x, watts, 0.3 + 0.01 * rng.random(DAY_S))
plots.inputs.power_widget.setVisible(True)
plots.redraw()
app.processEvents()
times, cpu, t = [], [], float(DAY_S)
for _ in range(40):
    for name in plots.series:
        plots.series[name].append(t, 100.0)
    parts = tuple(PowerSample(t, 150.0, uncertainty_pct=0.3, input=n) for n in INPUTS)
    plots.inputs.add_samples([PowerSample(t, 600.0, uncertainty_pct=0.3, inputs=parts)])
    t += 1
    start, start_cpu = time.perf_counter(), time.thread_time()
    plots.redraw()
    app.processEvents()
    times.append((time.perf_counter() - start) * 1000)
    cpu.append((time.thread_time() - start_cpu) * 1000)
print(statistics.median(times), statistics.median(cpu))
"""


def _draw(tree: Path) -> tuple[float, float]:
    """(median wall ms, median GUI-thread CPU ms) of a redraw with ``tree``'s code."""
    env = {**os.environ, "PYTHONPATH": str(tree), "QT_QPA_PLATFORM": "offscreen"}
    done = subprocess.run([sys.executable, "-c", _DRAW], cwd=tree, env=env,
                          capture_output=True, text=True, check=False)
    if done.returncode:
        raise RuntimeError(f"drawing with the code of {tree} failed: {done.stderr[-2000:]}")
    wall, cpu = done.stdout.split()[-2:]
    return float(wall), float(cpu)


def run() -> list[Figure]:
    baseline = os.environ.get(BASELINE_ENV, "").strip()
    command = (f"{BASELINE_ENV}={baseline} " if baseline else "") + \
        "QT_QPA_PLATFORM=offscreen nice python -m bench.run_all run_view"
    with tempfile.TemporaryDirectory() as tmp:
        trees = {"this tree": ROOT}
        if baseline:
            trees[baseline] = checkout(baseline, Path(tmp) / "baseline")
        medians = {name: _draw(tree) for name, tree in trees.items()}
    load = os.getloadavg()[0]
    figures = []
    for name, (ms, cpu_ms) in medians.items():
        mine = name == "this tree"
        label = "" if mine else f", {name}"
        figures += [Figure(
            "run view redraw, 24 h, 6 main + 10 per-input curves (4 inputs), median of 40"
            + label, round(ms, 2), "ms",
            f"<= {GOAL_MS:g} ms (load {load:.1f})" if mine else f"reference (load {load:.1f})",
            ms <= GOAL_MS if mine else None, command), Figure(
            "run view redraw, 24 h, 16 curves, GUI-thread CPU time, median of 40" + label,
            round(cpu_ms, 2), "ms", "informative: the redraw's own cost, which the load "
            f"does not inflate (load {load:.1f})", None, command)]
    if baseline:
        figures.append(Figure(f"run view redraw ratio this tree / {baseline}",
                              round(medians["this tree"][0] / medians[baseline][0], 3), "x",
                              "informative", None, command))
        figures.append(Figure(f"run view redraw CPU ratio this tree / {baseline}",
                              round(medians["this tree"][1] / medians[baseline][1], 3), "x",
                              "informative", None, command))
    return figures


if __name__ == "__main__":
    for figure in run():
        print(figure)
