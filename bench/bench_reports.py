"""Report benchmark: PDF + xlsx of an 8-hour run in at most 5 s.

The run is recorded by the real sequencer on the simulated SUT with a fake clock (the
compliant method's active profiles, ready idle and a COM check, conditioning shortened so the
station time is 8 h): ≥ 30 000 power samples, 6 active histograms + COM, all stored through
the storage writer. Only the export is timed.
Run: ``.venv/bin/python bench/bench_reports.py [--json]``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.sim_lab import simulated_sut  # noqa: E402
from app.method.loader import load_method  # noqa: E402
from app.records import RunConfig, SutDescription  # noqa: E402
from app.reports.export import export_run  # noqa: E402
from app.sequencer.lab import Lab  # noqa: E402
from app.sequencer.sequencer import Sequencer  # noqa: E402
from app.storage.db import open_database  # noqa: E402
from app.storage.writer import RunWriter  # noqa: E402
from drivers.clock import FakeClock  # noqa: E402
from drivers.simulators.engine import SimulatedWorkloadEngine  # noqa: E402
from drivers.simulators.direct_meters import SimulatedPowerMeter, SimulatedThermometer  # noqa: E402
from bench.figure import BenchResult

COMMAND = ".venv/bin/python bench/bench_reports.py"
GOAL_S = 5.0
RUN_HOURS = 8.0




def eight_hour_method():
    """emerald-block-v3 with conditioning cut so the timed plan is 8 h (a data-size
    stand-in for a long run; the method is otherwise unchanged)."""
    method = load_method("emerald-block-v3")
    plan = method.plan_for("online")
    base = method.plan_duration_s(plan.model_copy(update={"conditioning_intervals": 0}), 1)
    conditioning = max(0, round((RUN_HOURS * 3600 - base) / method.interval_s))
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
    sequencer = Sequencer(eight_hour_method(), config, lab, clock, [writer])
    sequencer.run()
    writer.close()
    database.close()
    return sequencer.run_id


def bench() -> list[BenchResult]:
    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite:///{Path(folder) / 'bench.db'}"
        run_id = record(url)
        database = open_database(url)
        run = database.load_run(run_id)
        samples, histograms = len(run.power), len(run.histograms)
        start = time.perf_counter()
        paths = export_run(database, run_id, Path(folder) / "out")
        elapsed = time.perf_counter() - start
        sizes = {k: p.stat().st_size for k, p in paths.items()}
        database.close()
    return [
        BenchResult("reports.export_8h", round(elapsed, 2), "s",
                    f"<= {GOAL_S:g} (PDF + xlsx, {samples} samples, {histograms} histograms)",
                    elapsed <= GOAL_S and samples >= 30_000),
        BenchResult("reports.pdf_size", round(sizes["pdf"] / 1e6, 2), "MB", "informative", True),
        BenchResult("reports.xlsx_size", round(sizes["xlsx"] / 1e6, 2), "MB", "informative",
                    True),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results = bench()
    if args.json:
        print(json.dumps([asdict(r) for r in results], indent=2))
    else:
        for r in results:
            print(f"{r.name:22} {r.value:>10} {r.unit:4} goal {r.goal:48} "
                  f"{'PASS' if r.passed else 'FAIL'}")
    return 0 if all(r.passed for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
