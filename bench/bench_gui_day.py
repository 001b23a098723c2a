"""The station's GUI at hour 24 of a run with four power inputs (issue 27): event-loop
latency, run-view repaint and the GUI process's RSS.

Each measurement is a fresh process running the real ``MainWindow`` and its ``RunView`` on
the simulated lab with four inputs. The run is the smoke variant with 60 s intervals, 1 s
samples and one-second workload slices, and a 24.5 h conditioning, so the run is still going
at hour 24 and every live curve holds a day. Its station clock runs free (a fake clock) up to
hour 24, then at the real pace: from there on the run view gets a sample a second as in the
lab, with a day behind it. Once the GUI has drawn everything that piled up, for
``MEASURE_S`` real seconds: how late a 10 ms QTimer fires (the event loop's latency), and once
a second the run view's ``LivePlots.redraw()`` of every curve (as if each had new points)
with the paint it schedules — the "real" repaint row, beside bench_run_view's synthetic one —
in wall time and in the GUI thread's CPU time, and the GUI thread's CPU share. The machine is
shared: a bare process sleeping on the same 10 ms grid meanwhile gives the scheduler's own
wake-up lateness, the floor under the event loop's. Then the process's RSS (VmRSS) and peak RSS.

Before/after in one run: with ``STORWATT_BENCH_GUI_DAY_BASELINE=<git revision>`` that
revision's code is measured the same way, after this tree's, and the ratios are printed.
Run: ``QT_QPA_PLATFORM=offscreen nice python -m bench.run_all gui_day``.
"""

from __future__ import annotations

import json
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
BASELINE_ENV = "STORWATT_BENCH_GUI_DAY_BASELINE"
LATENCY_GOAL_MS = 50.0
REPAINT_GOAL_MS = 16.0
RSS_GOAL_MB = 400.0
#: real seconds measured at hour 24
MEASURE_S = int(os.environ.get("STORWATT_BENCH_GUI_DAY_MEASURE_S", "30"))
#: public APIs only (the same in a baseline revision); prints JSON
_RUN = r"""
import json, os, resource, statistics, subprocess, sys, threading, time
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
from PySide6.QtCore import QElapsedTimer, QTimer
from app.method.loader import load_method
from app.core.records import PowerInput, RunConfig, SutDescription
from app.station import session as sessions
from drivers.clock import FakeClock
from ui.shell import main_window
from ui.app import application

DAY_S, MEASURE_S, folder = 86_400.0, float(sys.argv[1]), sys.argv[2]


class PacedClock(FakeClock):
    '''Free (a fake clock) up to ``pace_at``, then the real pace from there.'''

    def __init__(self, pace_at):
        super().__init__(0.0)
        self.pace_at, self.real_from = pace_at, None
        self.paced = threading.Event()

    def now(self):
        if self.real_from is None:
            return super().now()
        return self.pace_at + time.monotonic() - self.real_from

    def sleep_until(self, deadline, wake=None):
        if self.real_from is None:
            if deadline <= self.pace_at:
                return super().sleep_until(deadline, wake)
            super().sleep_until(self.pace_at, wake)
            self.real_from = time.monotonic()
            self.paced.set()
        delay = deadline - self.now()
        if delay <= 0:
            return bool(wake and wake.is_set())
        if wake is None:
            time.sleep(delay)
            return False
        return wake.wait(delay)


method = load_method("smoke")
plans = tuple(p.model_copy(update={"conditioning_intervals": 1470, "prefill": False})
              for p in method.plans)
method = method.model_copy(update={"plans": plans, "interval_s": 60.0, "sample_period_s": 1.0})
opened = sessions.open_session
main_window.open_session = lambda config, **kw: opened(config, method=method, **kw)
app = application()
clock = PacedClock(DAY_S)
window = main_window.MainWindow(db_url=f"sqlite:///{folder}/runs.db", clock=clock)
window.resize(1500, 950)
window.show()
inputs = tuple(PowerInput(f"psu-{k}", "sim") for k in "abcd")
started = time.perf_counter()
window.start_run(RunConfig(method="smoke", lab="sim-direct", sut=SutDescription(),
                           power_inputs=inputs))
plots = window.run_view.plots
power = plots.series["power"]

def caught_up():
    x, _ = power.view()
    return clock.paced.is_set() and len(x) and x[-1] >= DAY_S - 5

while not caught_up():
    app.processEvents()
    time.sleep(0.01)
fast_s = time.perf_counter() - started
lateness, repaints = [], []
elapsed = QElapsedTimer()
elapsed.start()
last = [elapsed.nsecsElapsed()]

def tick():
    now = elapsed.nsecsElapsed()
    lateness.append(max(0.0, (now - last[0]) / 1e6 - 10))
    last[0] = now

try:  # this tree's curves skip a redraw with nothing new: make every curve new
    from ui.plots.live_curve import _DRAWN as drawn
except ImportError:
    drawn = {}

cpus = []

def repaint():
    drawn.clear()
    t, cpu = time.perf_counter(), time.thread_time()
    plots.redraw()
    app.processEvents()
    repaints.append((time.perf_counter() - t) * 1000)
    cpus.append((time.thread_time() - cpu) * 1000)

# a bare process on the same 10 ms grid meanwhile: how late the scheduler wakes anyone
sleeper = subprocess.Popen([sys.executable, "-c", "import sys, time\n"
    "due, end, out = time.monotonic(), time.monotonic() + float(sys.argv[1]), []\n"
    "while due < end:\n"
    "    due += 0.01\n"
    "    time.sleep(max(0.0, due - time.monotonic()))\n"
    "    out.append(time.monotonic() - due)\n"
    "print(*out)", str(MEASURE_S)], stdout=subprocess.PIPE, text=True)
gui_cpu = time.thread_time()

ticker = QTimer()
ticker.setInterval(10)
ticker.timeout.connect(tick)
ticker.start()
painter = QTimer()
painter.setInterval(1000)
painter.timeout.connect(repaint)
painter.start()
end = time.monotonic() + MEASURE_S
while time.monotonic() < end:
    app.processEvents()
    time.sleep(0.001)
ticker.stop()
painter.stop()
gui_cpu = time.thread_time() - gui_cpu
reference = [1000 * float(v) for v in sleeper.communicate()[0].split()]
with open("/proc/self/status") as status:
    rss = next(int(line.split()[1]) for line in status if line.startswith("VmRSS")) / 1024
x, _ = power.view()
print(json.dumps({"lateness": lateness, "repaints": repaints, "rss_mb": rss,
                  "repaint_cpu": cpus, "gui_busy": gui_cpu / MEASURE_S, "reference": reference,
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "fast_s": fast_s, "hour": float(x[-1]) / 3600, "samples": len(x)}))
sys.stdout.flush()
os._exit(0)  # the run is mid-conditioning: nothing to wait for
"""


def measure(tree: Path, folder: Path) -> dict:
    folder.mkdir(parents=True)
    env = {**os.environ, "PYTHONPATH": str(tree), "QT_QPA_PLATFORM": "offscreen",
           "STORWATT_DATA_DIR": str(folder)}
    done = subprocess.run([sys.executable, "-c", _RUN, str(MEASURE_S), str(folder)], cwd=tree,
                          env=env, capture_output=True, text=True, check=False)
    if done.returncode:
        raise RuntimeError(f"the GUI with the code of {tree} failed: {done.stderr[-2000:]}")
    return json.loads(done.stdout.splitlines()[-1])


def _p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))] if ordered else float("nan")


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[len(ordered) // 2] if ordered else float("nan")


def run() -> list[Figure]:
    baseline = os.environ.get(BASELINE_ENV, "").strip()
    command = (f"{BASELINE_ENV}={baseline} " if baseline else "") + \
        "QT_QPA_PLATFORM=offscreen nice python -m bench.run_all gui_day"
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        trees = {"this tree": ROOT}
        if baseline:
            trees[baseline] = checkout(baseline, Path(tmp) / "baseline")
        results = {name: measure(tree, Path(tmp) / f"gui-{i}")
                   for i, (name, tree) in enumerate(trees.items())}
    load = max(load, os.getloadavg()[0])
    figures = []
    for name, got in results.items():
        mine = name == "this tree"
        label = "" if mine else f", {name}"
        where = f"GUI at hour {got['hour']:.1f}, 4 inputs, 1 Hz"
        p99, repaint = _p99(got["lateness"]), _median(got["repaints"])
        figures += [
            Figure(f"GUI day: event-loop latency p99 ({where}{label})", round(p99, 1), "ms",
                   f"<= {LATENCY_GOAL_MS:g} ms ({len(got['lateness'])} ticks of 10 ms over "
                   f"{MEASURE_S} s, max {max(got['lateness'], default=0):.0f} ms, load "
                   f"{load:.1f})", p99 <= LATENCY_GOAL_MS if mine else None, command),
            Figure(f"GUI day: a bare process's wake-up lateness p99 beside it (10 ms grid"
                   f"{label})", round(_p99(got["reference"]), 1), "ms",
                   "reference: the scheduler's floor on this shared machine (max "
                   f"{max(got['reference'], default=0):.0f} ms, load {load:.1f})", None,
                   command),
            Figure(f"GUI day: GUI thread busy ({where}{label})",
                   round(100 * got["gui_busy"], 1), "%",
                   "informative: its CPU time over the measured seconds, which the load does "
                   "not inflate", None, command),
            Figure(f"GUI day: run view repaint, real RunView, median ({where}{label})",
                   round(repaint, 1), "ms",
                   f"<= {REPAINT_GOAL_MS:g} ms ({len(got['repaints'])} repaints, max "
                   f"{max(got['repaints'], default=0):.0f} ms, load {load:.1f})",
                   repaint <= REPAINT_GOAL_MS if mine else None, command),
            Figure(f"GUI day: run view repaint, real RunView, GUI-thread CPU, median ({where}"
                   f"{label})", round(_median(got["repaint_cpu"]), 1), "ms",
                   "informative: the repaint's own cost, which the load does not inflate",
                   None, command),
            Figure(f"GUI day: GUI process RSS ({where}{label})", round(got["rss_mb"]), "MB",
                   f"<= {RSS_GOAL_MB:g} MB (peak {got['peak_mb']:.0f} MB; the station runs "
                   f"in this process)", got["rss_mb"] <= RSS_GOAL_MB if mine else None,
                   command),
            Figure(f"GUI day: 24 h of the run fed through the GUI on the fake clock"
                   f"{label}", round(got["fast_s"]), "s", "informative", None, command),
        ]
    if baseline:
        this_tree, base = results["this tree"], results[baseline]
        for what, pick in (("event-loop latency p99", lambda r: _p99(r["lateness"])),
                           ("run view repaint", lambda r: _median(r["repaints"])),
                           ("run view repaint CPU", lambda r: _median(r["repaint_cpu"])),
                           ("GUI thread busy", lambda r: r["gui_busy"]),
                           ("GUI process RSS", lambda r: r["rss_mb"])):
            figures.append(Figure(f"GUI day: {what} ratio this tree / {baseline}",
                                  round(pick(this_tree) / pick(base), 3), "x", "informative", None,
                                  command))
    return figures


if __name__ == "__main__":
    for figure in run():
        print(figure)
