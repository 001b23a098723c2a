"""Report benchmark: PDF + xlsx of an 8-hour run in at most 5 s (median of 5).

The run is recorded by the real sequencer on the simulated SUT with a fake clock (the
compliant method's active profiles, ready idle and a COM check, conditioning shortened so the
station time is 8 h): ≥ 30 000 power samples, 6 active histograms + COM, all stored through
the storage writer. Only the export is timed: each repeat is a fresh process (as
``storwatt report`` is) that loads the run and writes both files; imports are not timed.

Before/after in one run: with ``STORWATT_BENCH_REPORTS_BASELINE=<git revision>`` the same
recorded run is also exported by that revision's code (``git archive`` into a temporary
folder), the two alternating repeat by repeat so both see the same machine load, and the
ratio is reported.
Run: ``.venv/bin/python bench/bench_reports.py [--json]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import asdict
from io import BytesIO
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.sim_lab import simulated_sut  # noqa: E402
from app.method.loader import load_method  # noqa: E402
from app.records import RunConfig, SutDescription  # noqa: E402
from app.sequencer.lab import Lab  # noqa: E402
from app.sequencer.sequencer import Sequencer  # noqa: E402
from app.storage.db import open_database  # noqa: E402
from app.storage.writer import RunWriter  # noqa: E402
from drivers.clock import FakeClock  # noqa: E402
from drivers.simulators.engine import SimulatedWorkloadEngine  # noqa: E402
from drivers.simulators.direct_meters import SimulatedPowerMeter, SimulatedThermometer  # noqa: E402
from bench.figure import BenchResult  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
GOAL_S = 5.0
RUN_HOURS = 8.0
REPEATS = 5
BASELINE_ENV = "STORWATT_BENCH_REPORTS_BASELINE"
#: one timed export in a fresh interpreter; only the public export_run API, so a baseline
#: revision runs the very same script
_EXPORT = """
import sys, time
from pathlib import Path
from app.storage.db import open_database
from app.reports.export import export_run
database = open_database(sys.argv[1])
start = time.perf_counter()
export_run(database, sys.argv[2], Path(sys.argv[3]))
print(time.perf_counter() - start)
"""


def long_run_method(hours: float = RUN_HOURS):
    """emerald-block-v3 with conditioning set so the timed plan is ``hours`` long (a
    data-size stand-in for a long run; the method is otherwise unchanged)."""
    method = load_method("emerald-block-v3")
    plan = method.plan_for("online")
    base = method.plan_duration_s(plan.model_copy(update={"conditioning_intervals": 0}), 1)
    conditioning = max(0, round((hours * 3600 - base) / method.interval_s))
    new_plan = plan.model_copy(update={"conditioning_intervals": conditioning})
    return method.model_copy(update={"plans": (new_plan, *method.plans[1:])})


def record(db_url: str) -> str:
    clock = FakeClock()
    config = RunConfig(method="emerald-block-v3", taxonomy="online-3", lab="sim-direct",
                       sut=SutDescription(coms_declared=("deduplication",),
                                          coms_on_during_test=("deduplication",)))
    sut = simulated_sut(config)
    lab = Lab(SimulatedPowerMeter(sut), SimulatedWorkloadEngine(sut, clock),
              SimulatedThermometer(sut), sut.used_capacity_bytes, 0.0, "simulated SUT")
    database = open_database(db_url)
    writer = RunWriter(database)
    sequencer = Sequencer(long_run_method(), config, lab, clock, [writer])
    sequencer.run()
    writer.close()
    database.close()
    return sequencer.run_id


def timed_export(tree: Path, db_url: str, run_id: str, out: Path) -> float:
    """Seconds one export takes with the code of ``tree`` (a fresh process)."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run([sys.executable, "-c", _EXPORT, db_url, run_id, str(out)], cwd=tree,
                          env=env, capture_output=True, text=True, check=False)
    if done.returncode:
        raise RuntimeError(f"export with the code of {tree} failed: {done.stderr[-2000:]}")
    return float(done.stdout.split()[-1])


def checkout(revision: str, folder: Path) -> Path:
    """The tracked files of ``revision`` of this repository, unpacked into ``folder``."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", revision], check=True,
                             capture_output=True).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(folder, filter="data")
    return folder


def bench() -> list[BenchResult]:
    baseline = os.environ.get(BASELINE_ENV, "").strip()
    command = (f"{BASELINE_ENV}={baseline} " if baseline else "") + \
        "python -m bench.run_all reports"
    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite:///{Path(folder) / 'bench.db'}"
        run_id = record(url)
        database = open_database(url)
        run = database.load_run(run_id)
        samples, histograms = len(run.power), len(run.histograms)
        database.close()
        trees = {"this tree": ROOT}
        if baseline:
            trees[baseline] = checkout(baseline, Path(folder) / "baseline")
        times: dict[str, list[float]] = {name: [] for name in trees}
        for repeat in range(REPEATS):
            for index, (name, tree) in enumerate(trees.items()):
                out = Path(folder) / f"out-{index}-{repeat}"
                times[name].append(timed_export(tree, url, run_id, out))
        sizes = {p.suffix: p.stat().st_size for p in (Path(folder) / "out-0-0").iterdir()}
        elapsed = statistics.median(times["this tree"])
    size = f"{samples} samples, {histograms} histograms"
    results = [
        BenchResult(f"reports.export_8h (PDF + xlsx, median of {REPEATS})", round(elapsed, 2),
                    "s", f"<= {GOAL_S:g} ({size})", elapsed <= GOAL_S and samples >= 30_000,
                    command),
        BenchResult("reports.pdf_size", round(sizes[".pdf"] / 1e6, 2), "MB", "informative",
                    None, command),
        BenchResult("reports.xlsx_size", round(sizes[".xlsx"] / 1e6, 2), "MB", "informative",
                    None, command),
    ]
    if baseline:
        before = statistics.median(times[baseline])
        results += [
            BenchResult(f"reports.export_8h with the code of {baseline} (same run, alternating, "
                        f"median of {REPEATS})", round(before, 2), "s", "reference", None,
                        command),
            BenchResult(f"reports.export_8h this tree / {baseline}", round(elapsed / before, 3),
                        "", "informative", None, command),
        ]
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results = bench()
    if args.json:
        print(json.dumps([asdict(r) for r in results], indent=2))
    else:
        for r in results:
            print(f"{r.name:70} {r.value:>8} {r.unit:3} goal {r.goal:44} "
                  f"{ {True: 'PASS', False: 'FAIL', None: 'info'}[r.passed]}")
    return 0 if all(r.passed is not False for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
