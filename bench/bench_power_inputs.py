"""Loading a long run's power inputs: whole result columns, not per-cell look-ups (issue 27).

A run with four power inputs is recorded once by the real sequencer on the simulated SUT with
a fake clock (``open_session``: the smoke variant at 1 Hz with a conditioning of ``HOURS``),
then ``load_power_inputs`` — which the report, the record hash and the run view all go
through — is timed in a fresh process per repeat (median of 3). With
``STORWATT_BENCH_POWER_INPUTS_BASELINE=<git revision>`` the same stored run is also loaded by
that revision's code (``git archive``), alternating, and the ratio is printed.
Run: ``nice python -m bench.run_all power_inputs``.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.bench_reports import checkout
from bench.figure import Figure

ROOT = Path(__file__).resolve().parent.parent
BASELINE_ENV = "STORWATT_BENCH_POWER_INPUTS_BASELINE"
HOURS = 4.0
REPEATS = 3
_RECORD = """
import sys
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
session.sequencer.run()
session.writer.close()
print(session.sequencer.run_id)
"""
#: one timed load in a fresh interpreter (the same in a baseline revision); prints s and rows
_LOAD = """
import sys, time
import sqlalchemy as sa
from app.storage import schema
from app.storage.opening import open_database
from app.storage.power_inputs import load_power_inputs
database = open_database(sys.argv[1])
with database.engine.connect() as conn:
    pk = conn.execute(sa.select(schema.Run.id).where(schema.Run.uuid == sys.argv[2])).scalar_one()
    start = time.perf_counter()
    inputs = load_power_inputs(conn, pk)
    print(time.perf_counter() - start, sum(len(i.t) for i in inputs))
"""


def _python(tree: Path, script: str, *args: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run([sys.executable, "-c", script, *args], cwd=tree, env=env,
                          capture_output=True, text=True, check=False)
    if done.returncode:
        raise RuntimeError(f"with the code of {tree}: {done.stderr[-2000:]}")
    return done.stdout.splitlines()[-1]


def run() -> list[Figure]:
    baseline = os.environ.get(BASELINE_ENV, "").strip()
    command = (f"{BASELINE_ENV}={baseline} " if baseline else "") + \
        "nice python -m bench.run_all power_inputs"
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'inputs.db'}"
        run_id = _python(ROOT, _RECORD, str(HOURS), url)
        trees = {"this tree": ROOT}
        if baseline:
            trees[baseline] = checkout(baseline, Path(tmp) / "baseline")
        times: dict[str, list[float]] = {name: [] for name in trees}
        rows = 0
        for _ in range(REPEATS):
            for name, tree in trees.items():
                seconds, rows_text = _python(tree, _LOAD, url, run_id).split()
                times[name].append(float(seconds))
                rows = int(rows_text)
    load = os.getloadavg()[0]
    medians = {name: statistics.median(t) for name, t in times.items()}
    figures = [Figure(f"load_power_inputs, {HOURS:g} h x 4 inputs at 1 Hz ({rows:,} readings, "
                      f"median of {REPEATS}{'' if name == 'this tree' else ', ' + name})",
                      round(seconds, 3), "s", f"informative (load {load:.1f})", None, command)
               for name, seconds in medians.items()]
    if baseline:
        figures.append(Figure(f"load_power_inputs ratio this tree / {baseline}",
                              round(medians["this tree"] / medians[baseline], 3), "x",
                              "< 1 (faster)", medians["this tree"] < medians[baseline], command))
    return figures


if __name__ == "__main__":
    for figure in run():
        print(figure)
