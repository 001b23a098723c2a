"""Storage benchmarks: durable ingest rate of power samples, load time, bytes per sample.

Goal (storage brief): ≥ 20 000 samples/s committed through RunWriter. "Durable" means the
clock stops only when ``flush()`` confirms the last batch is committed in the SQLite file.
Run: ``.venv/bin/python bench/bench_storage.py [--samples N] [--json]``.
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

from app.sequencer.events import PowerSamples  # noqa: E402
from app.storage.db import open_database  # noqa: E402
from app.storage.synthetic import outside, power_sample, run_started  # noqa: E402
from app.storage.writer import RunWriter  # noqa: E402
from bench.figure import BenchResult

COMMAND = ".venv/bin/python -m bench.run_all storage"
INGEST_GOAL = 20_000.0
BATCH = 100  # samples per PowerSamples event (the sampler publishes small batches)




def bench(samples: int = 200_000) -> list[BenchResult]:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "bench.db"
        database = open_database(f"sqlite:///{path}")
        writer = RunWriter(database)
        events = [PowerSamples(0, tuple(power_sample(1.0 + (i + k) * 0.01, i + k)
                                        for k in range(BATCH)), outside(BATCH))
                  for i in range(0, samples, BATCH)]
        writer(run_started(0.0, "bench-run"))
        start = time.perf_counter()
        for event in events:
            writer(event)
        if not writer.flush(120):
            raise RuntimeError(f"writer failed: {writer.error}")
        ingest = samples / (time.perf_counter() - start)
        writer.close()
        start = time.perf_counter()
        run = database.load_run("bench-run")
        load_s = time.perf_counter() - start
        assert len(run.power) == samples
        database.close()
        size = sum(p.stat().st_size for p in Path(folder).glob("bench.db*"))
    return [
        BenchResult("storage.ingest_rate", round(ingest), "samples/s",
                    f">= {INGEST_GOAL:.0f}", ingest >= INGEST_GOAL),
        BenchResult("storage.load_100k", round(load_s * 100_000 / samples, 3), "s",
                    "informative", True),
        BenchResult("storage.bytes_per_sample", round(size / samples, 1), "B",
                    "informative", True),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=200_000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results = bench(args.samples)
    if args.json:
        print(json.dumps([asdict(r) for r in results], indent=2))
    else:
        for r in results:
            print(f"{r.name:28} {r.value:>12} {r.unit:10} goal {r.goal:12} "
                  f"{'PASS' if r.passed else 'FAIL'}")
    return 0 if all(r.passed for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
