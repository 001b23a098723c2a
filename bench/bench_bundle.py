"""Result-bundle benchmark: size and verify time of a 24-hour run with four power inputs.

Issue 29's goals: ``storwatt-verify`` checks the bundle in at most 10 s, and the bundle is at
most 3× the run's xlsx. The run is recorded by the real sequencer through ``open_session``
(simulated lab, four simulated power inputs, fake clock; emerald-block-v3 with conditioning
set so the plan is 24 h). Timed: writing the bundle of the loaded run (median of 3, in this
process) and the verifier in a fresh ``python -I -S`` process, as an auditor runs it
(median of 3; wall and CPU time, the machine being shared). The xlsx is written once for the
size ratio.
Run: ``.venv/bin/python -m bench.run_all bundle``.
"""

from __future__ import annotations

import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.core.records import PowerInput, RunConfig, SutDescription
from app.reports.export import write_bundle, write_reports
from app.station.session import open_session
from app.storage.repository import load_run
from bench.bench_reports import long_run_method
from bench.figure import Figure, median_seconds
from drivers.clock import FakeClock

ROOT = Path(__file__).resolve().parent.parent
VERIFIER = ROOT / "verifier" / "storwatt_verify.py"
RUN_HOURS = 24.0
VERIFY_GOAL_S = 10.0
SIZE_GOAL = 3.0  # bundle / xlsx
REPEATS = 3
COMMAND = "python -m bench.run_all bundle"


def record(folder: Path):
    config = RunConfig(method="emerald-block-v3", taxonomy="online-3", lab="sim-direct",
                       power_inputs=tuple(PowerInput(f"psu-{k}", "sim") for k in "abcd"),
                       sut=SutDescription(coms_declared=("deduplication",),
                                          coms_on_during_test=("deduplication",)))
    session = open_session(config, db_url=f"sqlite:///{folder / 'bench.db'}",
                           clock=FakeClock(), method=long_run_method(RUN_HOURS))
    session.sequencer.run()
    session.writer.close()
    return load_run(session.database, session.sequencer.run_id)


def verify_seconds(bundle: Path) -> tuple[float, float]:
    """(wall, CPU) seconds of one verifier process: the build box is shared by several
    engineers, so the CPU time (user + system of the child) says what the verifier costs and
    the wall time what a user waited."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-I", "-S", str(VERIFIER), str(bundle)],
                          capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"the verifier disagrees with the benchmark's bundle:\n"
                           f"{done.stdout[-3000:]}")
    return elapsed, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def run() -> list[Figure]:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        stored = record(folder)
        bundle, xlsx = folder / "run.zip", folder / "run.xlsx"
        written = median_seconds(lambda: write_bundle(stored, bundle), REPEATS)
        write_reports(stored, xlsx=xlsx)
        runs = [verify_seconds(bundle) for _ in range(REPEATS)]
        verify = statistics.median(wall for wall, _ in runs)
        cpu = statistics.median(used for _, used in runs)
        size, xlsx_size = bundle.stat().st_size, xlsx.stat().st_size
        samples = len(stored.power)
    what = f"{RUN_HOURS:g} h, 4 inputs, {samples} samples"
    return [
        Figure(f"bundle.verify_24h (python -I -S, median of {REPEATS})", round(verify, 2), "s",
               f"<= {VERIFY_GOAL_S:g} ({what})", verify <= VERIFY_GOAL_S, COMMAND),
        Figure(f"bundle.verify_24h CPU time (user + system, median of {REPEATS})",
               round(cpu, 2), "s", "informative", None, COMMAND),
        Figure("bundle.write_24h (median of 3)", round(written, 2), "s", "informative", None,
               COMMAND),
        Figure("bundle.size_24h", round(size / 1e6, 2), "MB", "informative", None, COMMAND),
        Figure("bundle.size / xlsx size (24 h, 4 inputs)", round(size / xlsx_size, 2), "",
               f"<= {SIZE_GOAL:g}", size <= SIZE_GOAL * xlsx_size, COMMAND),
    ]


if __name__ == "__main__":
    for figure in run():
        print(figure)
