"""Memory benchmark: the station's peak RSS must not grow with the length of a phase (issue 27).

Each run is a fresh process (the headless station as ``storwatt run`` is): the real sequencer,
recorder, storage writer and SQLite on the simulated SUT with four power inputs, driven by a
fake clock through ``app.station.session.open_session``. The method is the smoke variant with 60 s
intervals, 1 s sampling and one-second workload slices (as fio reports them), and a
conditioning of 2 h or 12 h — the phase whose slices the recorder used to keep. The figure is
the child's peak RSS (``ru_maxrss``) and the 12 h / 2 h ratio.

Before/after in one run: with ``STORWATT_BENCH_MEMORY_BASELINE=<git revision>`` the same runs
are also made with that revision's code (``git archive`` into a temporary folder), alternating,
and its figures are published beside this tree's.
Run: ``python -m bench.run_all memory``.
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
BASELINE_ENV = "STORWATT_BENCH_MEMORY_BASELINE"
HOURS = (2.0, 12.0)
#: the 12 h run may use at most this much more than the 2 h run (flat, not linear)
MAX_GROWTH = 1.20
GOAL_MB = 300.0
#: one run in a fresh interpreter through public APIs only, so a baseline revision runs the
#: very same script; prints peak RSS (MB) and the wall time (s)
_RUN = """
import resource, sys, time
from app.method.loader import load_method
from app.core.records import PowerInput, RunConfig, SutDescription
from app.station.session import open_session
from drivers.clock import FakeClock
hours, db_url = float(sys.argv[1]), sys.argv[2]
method = load_method("smoke")
plans = tuple(p.model_copy(update={"conditioning_intervals": round(hours * 60),
                                   "prefill": False}) for p in method.plans)
method = method.model_copy(update={"plans": plans, "interval_s": 60.0, "sample_period_s": 1.0})
inputs = tuple(PowerInput(f"psu-{k}", "sim") for k in "abcd")
config = RunConfig(method="smoke", lab="sim-direct", sut=SutDescription(), power_inputs=inputs)
session = open_session(config, db_url=db_url, clock=FakeClock(), method=method)
start = time.perf_counter()
session.sequencer.run()
session.writer.close()
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, time.perf_counter() - start)
"""


def peak_rss(tree: Path, hours: float, folder: Path) -> tuple[float, float]:
    """(peak RSS in MB, seconds) of one fake-clock run with the code of ``tree``."""
    db = folder / f"run-{os.getpid()}-{hours:g}-{abs(hash(tree))}.db"
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run([sys.executable, "-c", _RUN, str(hours), f"sqlite:///{db}"],
                          cwd=tree, env=env, capture_output=True, text=True, check=False)
    if done.returncode:
        raise RuntimeError(f"run with the code of {tree} failed: {done.stderr[-2000:]}")
    db.unlink(missing_ok=True)
    mb, seconds = done.stdout.split()[-2:]
    return float(mb), float(seconds)


def run() -> list[Figure]:
    baseline = os.environ.get(BASELINE_ENV, "").strip()
    command = (f"{BASELINE_ENV}={baseline} " if baseline else "") + \
        "nice python -m bench.run_all memory"
    load = os.getloadavg()[0]
    figures: list[Figure] = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        trees = {"this tree": ROOT}
        if baseline:
            trees[baseline] = checkout(baseline, folder / "baseline")
        rss: dict[str, dict[float, float]] = {name: {} for name in trees}
        for hours in HOURS:
            for name, tree in trees.items():
                rss[name][hours] = peak_rss(tree, hours, folder)[0]
    load = max(load, os.getloadavg()[0])
    short, long = HOURS
    for name, by_hours in rss.items():
        mine = name == "this tree"
        label = "" if mine else f", {name}"
        growth = by_hours[long] / by_hours[short]
        figures += [
            Figure(f"memory.station_peak_rss_{long:g}h_conditioning (4 inputs{label})",
                   round(by_hours[long], 1), "MB",
                   (f"<= {GOAL_MB:g} MB (load {load:.1f})" if mine
                    else f"reference (load {load:.1f})"),
                   by_hours[long] <= GOAL_MB if mine else None, command),
            Figure(f"memory.station_rss_growth_{long:g}h_vs_{short:g}h (4 inputs{label})",
                   round(growth, 2), "x",
                   f"<= {MAX_GROWTH:g} ({by_hours[short]:.0f} -> {by_hours[long]:.0f} MB)",
                   growth <= MAX_GROWTH if mine else None, command),
        ]
    if baseline:
        base = rss[baseline][long]
        figures.append(Figure(f"memory.station_peak_rss_{long:g}h ratio this tree / {baseline}",
                              round(rss["this tree"][long] / base, 3), "x", "informative",
                              None, command))
    return figures


if __name__ == "__main__":
    for figure in run():
        print(figure)
