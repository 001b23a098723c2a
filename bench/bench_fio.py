"""fio alone vs fio driven by the station, side by side in one run (issue 5 bench).

The same null-ioengine job on a scratch file runs twice: once as a bare
``fio --output-format=json`` and once through ``FioEngine`` (json+ stream every second,
reader thread, differencing, polling as the sequencer does). The IOPS ratio shows what the
station's observation costs the workload (goal ≥ 0.98).
"""

from __future__ import annotations

import statistics
import subprocess
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from bench.figure import Figure, median_seconds
from drivers.clock import MonotonicClock
from drivers.fio.engine import FioEngine
from drivers.fio.jobs import JobOptions, job_text
from drivers.fio.safety import TargetPolicy, create_scratch_file
from drivers.fio.stream import DocumentSplitter
from drivers.interfaces import WorkloadProfile

COMMAND = ".venv/bin/python -m bench.run_all fio"
SECONDS = 5.0
REPEATS = 5
PROFILE = WorkloadProfile("RR", 4096, 100, True, 4096, queue_depth=1, jobs=1,
                          duration_s=SECONDS)


def fio_alone(folder: Path, target: str, *flags: str) -> float:
    """IOPS of a bare fio run; ``flags`` add the station's reporting options."""
    job = folder / "alone.fio"
    job.write_text(job_text(PROFILE, JobOptions((target,), "null", False, 64 << 20)))
    out = subprocess.run(["fio", "--output-format=json", *flags, str(job)], capture_output=True,
                         text=True, check=True).stdout
    docs = DocumentSplitter().feed(out)
    j = docs[-1]["jobs"][0]
    return j["read"]["total_ios"] / (j["job_runtime"] / 1000)


def fio_through_station(folder: Path, target: str) -> float:
    engine = FioEngine([target], clock=MonotonicClock(), ioengine="null", direct=False,
                       policy=TargetPolicy(create_size=64 << 20), workdir=folder)
    engine.check()
    engine.start(PROFILE)
    while engine.running:
        engine.poll()
        time.sleep(0.25)
    result = engine.stop()
    engine.poll()
    return result.read_ios / result.runtime_s


def split_ms(parts: list[str]) -> float:
    """Median of 3: milliseconds to split a stream fed as ``parts`` into its documents."""

    def split() -> None:
        splitter = DocumentSplitter()
        for part in parts:
            splitter.feed(part)

    return median_seconds(split, 3) * 1000


def splitting(folder: Path, target: str) -> list[Figure]:
    """The reader's cost per json+ stream: it feeds the splitter what one ``os.read`` gives
    (≤ 64 KiB); a line reader (before the ETA work) fed every line, and each feed re-parsed
    the open document from its ``{``: quadratic in the document's size."""
    job = folder / "split.fio"
    job.write_text(job_text(replace(PROFILE, duration_s=4.0),
                            JobOptions((target,), "null", False, 64 << 20)))
    text = subprocess.run(["fio", "--output-format=json+", "--status-interval=1", str(job)],
                          capture_output=True, text=True, check=True).stdout
    docs = len(DocumentSplitter().feed(text))
    print(f"json+ stream of a 4 s run: {len(text) // 1024} KiB, {docs} documents")
    chunks = [text[i:i + 65536] for i in range(0, len(text), 65536)]
    what = "split the json+ stream of a 4 s run (1 s status, ~75 KiB, median of 3)"
    return [Figure(f"{what} as read (≤ 64 KiB chunks)", round(split_ms(chunks), 2), "ms",
                   "informative", None, COMMAND),
            Figure(f"{what} line by line (the reader before)",
                   round(split_ms(text.splitlines(keepends=True)), 1), "ms",
                   "informative", None, COMMAND)]


def run() -> list[Figure]:
    # a plain temporary folder: the station refuses any target under /dev (/dev/shm too), and
    # the null engine never reads or writes the file
    with tempfile.TemporaryDirectory() as scratch, tempfile.TemporaryDirectory() as work:
        target = str(Path(scratch) / "target.dat")
        create_scratch_file(target, 64 << 20)  # sparse; the null engine never writes it
        alone_runs, flagged_runs, station_runs = [], [], []
        for _ in range(REPEATS):  # interleaved so machine load hits all alike
            alone_runs.append(fio_alone(Path(work), target))
            flagged_runs.append(fio_alone(Path(work), target, "--output-format=json+",
                                          "--status-interval=1"))
            station_runs.append(fio_through_station(Path(work), target))
        split = splitting(Path(work), target)
    alone, station = statistics.median(alone_runs), statistics.median(station_runs)
    flagged = statistics.median(flagged_runs)
    ratio = station / alone
    print(f"fio alone {alone:.0f} IOPS, through the station {station:.0f} IOPS, "
          f"ratio {ratio:.4f} (goal ≥ 0.98)")
    return [Figure("fio alone (null engine, 4 KiB random read, median of 5)", round(alone), "IOPS",
                        "reference", None, COMMAND),
            Figure("fio through the station (json+ stream, 1 s status, median of 5)", round(station),
                        "IOPS", "reference", None, COMMAND),
            Figure("fio alone with the station's flags (json+, --status-interval=1)",
                        round(flagged), "IOPS", "reference", None, COMMAND),
            Figure("station / alone IOPS ratio", round(ratio, 4), "", "≥ 0.98",
                        ratio >= 0.98, COMMAND),
            Figure("station / alone-with-the-same-flags ratio (the station's own cost)",
                        round(station / flagged, 4), "", "≥ 0.98", station / flagged >= 0.98,
                        COMMAND), *split]
