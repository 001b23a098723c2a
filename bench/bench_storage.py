"""Storage benchmarks: durable ingest rate of power samples, with and without the run journal,
the journal's reservation at run start, load time, bytes per sample.

Goal (storage brief): ≥ 20 000 samples/s committed through RunWriter. "Durable" means the
clock stops only when ``flush()`` confirms the last batch is committed in the SQLite file —
or, with the database locked, when ``close()`` confirms every sample is in the run journal
(encoded, written, fsync'd). The two rates side by side, and their ratio, are the cost of
journalling every event (the writer journals only while the database fails).
Run: ``.venv/bin/python bench/bench_storage.py [--samples N] [--json]``.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import statistics
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.sequencer.events import PowerSamples
from app.storage.opening import open_database
from app.storage.journal import (JournalFile, journal_path, new_header,
                                 reserve_bytes)
from app.storage.synthetic import outside, power_sample, run_started
from app.storage.writer import RunWriter
from bench.figure import BenchResult
from app.storage.repository import load_run

COMMAND = ".venv/bin/python -m bench.run_all storage"
INGEST_GOAL = 20_000.0
BATCH = 100  # samples per PowerSamples event (the sampler publishes small batches)
REPEATS = 3
LONG_RUN_S = 12 * 3600.0  # the compliant method's conditioning alone can take 12 h
SAMPLES_PER_S = 5.0


def _events(samples: int) -> list[PowerSamples]:
    return [PowerSamples(0, tuple(power_sample(1.0 + (i + k) * 0.01, i + k)
                                  for k in range(BATCH)), outside(BATCH))
            for i in range(0, samples, BATCH)]


def _ingest(folder: Path, events: list[PowerSamples], samples: int, locked: bool,
            repeat: int) -> tuple[float, float]:
    """Samples/s from the first event until all are durable: committed to the database, or —
    with the database held locked by another connection — in the run journal; and samples
    per CPU second of this process meanwhile (the writer's cost, which a machine shared with
    other work does not change: the suite's test of the goal reads that one)."""
    path = folder / f"ingest-{'locked' if locked else 'free'}-{repeat}.db"
    database = open_database(f"sqlite:///{path}", busy_timeout_s=0.05)
    started = run_started(0.0, f"bench-{path.stem}")
    writer = RunWriter(database, samples_per_s=samples / started.planned_s,
                       journal_dir=folder / "journal")
    writer(started)
    if not writer.flush(30):  # the run row and the journal reservation are not timed
        raise RuntimeError(f"writer failed: {writer.error}")
    holder = sqlite3.connect(path, isolation_level=None) if locked else None
    if holder:
        holder.execute("BEGIN EXCLUSIVE")
    start, cpu_start = time.perf_counter(), time.process_time()
    for event in events:
        writer(event)
    if locked:
        stored = writer.close(timeout=0.0)  # stop retrying: the journal must hold them all
        elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu_start
        if stored.samples != samples:
            raise RuntimeError(f"journal holds {stored.samples} of {samples} samples")
        if holder is not None:  # (it is: the database was locked)
            holder.execute("ROLLBACK")
            holder.close()
    else:
        if not writer.flush(120):
            raise RuntimeError(f"writer failed: {writer.error}")
        elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu_start
        writer.close()
    database.close()
    return samples / elapsed, samples / cpu


def _reserve_ms(folder: Path) -> tuple[float, int]:
    """Time to create and pre-allocate the journal of a long run (done at RunStarted)."""
    size = reserve_bytes(LONG_RUN_S, SAMPLES_PER_S)
    start = time.perf_counter()
    journal = JournalFile.create(journal_path("reserve", folder),
                                 new_header("reserve", "sqlite:///bench.db", size))
    elapsed = time.perf_counter() - start
    journal.discard()
    return elapsed * 1000, size


def bench(samples: int = 200_000) -> list[BenchResult]:
    events = _events(samples)
    free, journalled = [], []
    with tempfile.TemporaryDirectory() as folder:
        for repeat in range(REPEATS):  # interleaved, so machine load hits both alike
            free.append(_ingest(Path(folder), events, samples, False, repeat))
            journalled.append(_ingest(Path(folder), events, samples, True, repeat))
        reserve_ms, reserved = _reserve_ms(Path(folder))
        url = f"sqlite:///{Path(folder) / 'ingest-free-0.db'}"
        database = open_database(url)
        start = time.perf_counter()
        run = load_run(database, "bench-ingest-free-0")
        load_s = time.perf_counter() - start
        assert len(run.power) == samples
        database.close()
        size = sum(p.stat().st_size for p in Path(folder).glob("ingest-free-0.db*"))
    ingest, via_journal = (statistics.median(r for r, _ in free),
                           statistics.median(r for r, _ in journalled))
    per_cpu = statistics.median(c for _, c in free)
    return [
        BenchResult("storage.ingest_rate", round(ingest), "samples/s",
                    f">= {INGEST_GOAL:.0f}", ingest >= INGEST_GOAL),
        BenchResult("storage.ingest_rate_per_cpu_s (samples per CPU second of the station "
                    "process, median of 3)", round(per_cpu), "samples/s",
                    f">= {INGEST_GOAL:.0f}", per_cpu >= INGEST_GOAL),
        BenchResult("storage.ingest_rate_journal (database locked: every sample into the "
                    "run journal, median of 3)", round(via_journal), "samples/s",
                    f">= {INGEST_GOAL:.0f}", via_journal >= INGEST_GOAL),
        BenchResult("storage.journal_to_database_ingest_ratio", round(via_journal / ingest, 2),
                    "", "informative", None),
        BenchResult(f"storage.journal_reserve ({reserved / 2**20:.0f} MiB for 12 h at "
                    f"{SAMPLES_PER_S:g} samples/s)", round(reserve_ms, 1), "ms",
                    "informative", None),
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
                  f"{'—' if r.passed is None else 'PASS' if r.passed else 'FAIL'}")
    return 0 if all(r.passed is not False for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
