"""Verifier benchmark (issue 37): the WMA check is linear, and no hostile bundle exhausts it.

* **24 h vs 48 h conditioning.** Two runs of emerald-block-v3 with the conditioning set so the
  plan is 24 h and 48 h (``bench_reports.long_run_method``; one simulated meter, fake clock)
  are recorded and bundled. Timed, in CPU seconds (user + system; the box is shared, so wall
  time mostly measures the neighbours): the verifier's interval check alone
  (``check_attempts``: grid, placement, per-interval means, EP_i and WMA_i, the stabilisation
  rule), in this process, median of 3; and the whole verifier in its own ``python -I -S``
  process, as an auditor runs it. Goal: 48 h ≤ 2.2× 24 h (the quadratic check was ×4.1 per
  doubling: 0.95 s → 3.9 s).
* **Hostile bundles.** Built from the 24 h bundle (tests/support/hostile_bundles.py, as the
  matrix of tests/test_verifier_hostile.py builds them) and each verified in its own
  ``python -I -S`` process: wall and CPU seconds, peak resident memory (the child's
  ``ru_maxrss``) and exit status; the worst case of each is the published row.

Recording the two runs takes about 2 minutes of CPU. Run: ``python -m bench.run_all verifier``.
"""

from __future__ import annotations

import hashlib
import io
import json
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.core.records import RunConfig, SutDescription
from app.reports.export import write_bundle
from app.station.session import open_session
from app.storage.repository import load_run
from bench.bench_bundle import VERIFIER
from bench.bench_reports import long_run_method
from bench.figure import Figure
from drivers.clock import FakeClock
from tests.support.bundles import read_files, verifier_module
from tests.support.hostile_bundles import bomb_zip

HOURS = (24.0, 48.0)
RATIO_GOAL = 2.2
REPEATS = 3
GIB = 1 << 30
COMMAND = "python -m bench.run_all verifier"


def record(folder: Path, hours: float) -> Path:
    config = RunConfig(method="emerald-block-v3", taxonomy="online-3", lab="sim-direct",
                       sut=SutDescription(coms_declared=("deduplication",),
                                          coms_on_during_test=("deduplication",)))
    session = open_session(config, db_url=f"sqlite:///{folder / f'{hours:g}h.db'}",
                           clock=FakeClock(), method=long_run_method(hours))
    session.sequencer.run()
    session.writer.close()
    return write_bundle(load_run(session.database, session.sequencer.run_id),
                        folder / f"{hours:g}h.zip")


def interval_check_cpu(bundle: Path) -> tuple[float, int]:
    """(median CPU seconds of ``check_attempts``, intervals checked)."""
    verifier = verifier_module()
    b = verifier.read_bundle(str(bundle))
    times = []
    for _ in range(REPEATS):
        start = time.process_time()
        verifier.check_attempts(b, verifier.Checklist(io.StringIO()))
        times.append(time.process_time() - start)
    return statistics.median(times), len(b.intervals)


#: started from this (large) process, a child's ru_maxrss starts at this process's peak (Linux
#: keeps it across exec), so the verifier is started by a small launcher whose own child it is
LAUNCHER = ("import resource, subprocess, sys; done = subprocess.run(sys.argv[1:]); "
            "use = resource.getrusage(resource.RUSAGE_CHILDREN); "
            "print(done.returncode, use.ru_utime + use.ru_stime, use.ru_maxrss, file=sys.stderr)")


def child(bundle: Path, folder: Path) -> tuple[int, float, float, float, str]:
    """(exit status, wall s, CPU s, peak RSS MB, first line) of one verifier process."""
    out = folder / "child.out"
    with out.open("wb") as sink:
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-I", "-S", "-c", LAUNCHER, sys.executable, "-I",
                               "-S", str(VERIFIER), str(bundle)],
                              stdout=sink, stderr=subprocess.PIPE, text=True, check=True)
        wall = time.perf_counter() - start
    status, cpu, rss_kb = done.stderr.split()[-3:]
    first = out.read_text(errors="replace").splitlines()[:1]
    return int(status), wall, float(cpu), int(rss_kb) / 1024, first[0][:100] if first else ""


def _forged(files: dict[str, bytes], **changed: bytes) -> dict[str, bytes]:
    manifest = json.loads(files["manifest.json"])
    for name, data in changed.items():
        manifest["files"][name] = hashlib.sha256(data).hexdigest()
        manifest["sizes"][name] = len(data)
    return files | changed | {"manifest.json": json.dumps(manifest).encode()}


def _zip(path: Path, files: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return path


def _padded_run(files: dict[str, bytes]) -> bytes:
    """run.json with a field of floats filling it to just under its 32 MiB ceiling: the most
    JSON the verifier will parse for one member (memory, not bytes, is the cost)."""
    run = json.loads(files["run.json"])
    limit = verifier_module().JSON_MEMBER_BYTES["run.json"]
    run["padding"] = [0.123456789] * ((limit - len(files["run.json"]) - 1024) // 12)
    return json.dumps(run, separators=(",", ":")).encode()


def hostile_cases(folder: Path, bundle: Path) -> dict[str, Callable[[], Path]]:
    files = read_files(bundle)
    manifest = json.loads(files["manifest.json"])
    declared = json.loads(files["manifest.json"])
    declared["sizes"]["events.jsonl"] = 4 * GIB
    declared["rows"]["events.jsonl"] = 4 * GIB // verifier_module().ROW_BYTES["events.jsonl"]
    grown = files["power_samples.csv"] + files["power_samples.csv"].split(b"\n", 1)[1] * 4
    return {
        "4 GiB of {} lines as events.jsonl, declared": lambda: bomb_zip(
            folder / "a.zip", files, "events.jsonl", 4 * GIB, declared, b"{}\n"),
        "4 GiB of newlines as events.jsonl, undeclared": lambda: bomb_zip(
            folder / "b.zip", files, "events.jsonl", 4 * GIB, manifest),
        "a 100,000-deep JSON array as method.json": lambda: _zip(
            folder / "c.zip", files | {"method.json": b"[" * 100_000 + b"]" * 100_000}),
        "run.json at its 32 MiB ceiling": lambda: _zip(
            folder / "d.zip", _forged(files, **{"run.json": _padded_run(files)})),
        "power_samples.csv 5x its declared size": lambda: _zip(
            folder / "e.zip", files | {"power_samples.csv": grown}),
        "/dev/zero": lambda: Path("/dev/zero"),
    }


def run() -> list[Figure]:
    figures = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        bundles = {hours: record(folder, hours) for hours in HOURS}
        checks = {hours: interval_check_cpu(bundle) for hours, bundle in bundles.items()}
        runs = {hours: [child(bundle, folder) for _ in range(REPEATS)]
                for hours, bundle in bundles.items()}
        if any(status != 0 for results_ in runs.values() for status, *_ in results_):
            raise RuntimeError(f"the verifier disagrees with the benchmark's bundles: {runs}")
        whole = {hours: statistics.median(cpu for _, _, cpu, _, _ in results_)
                 for hours, results_ in runs.items()}
        peak = {hours: max(rss for *_, rss, _ in results_) for hours, results_ in runs.items()}
        for hours in HOURS:
            cpu, intervals = checks[hours]
            figures.append(Figure(f"verifier.interval_check_{hours:g}h CPU ({intervals} "
                                  f"intervals, check_attempts, median of {REPEATS})",
                                  round(cpu, 3), "s", "informative", None, COMMAND))
        ratio = checks[48.0][0] / checks[24.0][0]
        figures.append(Figure("verifier.interval_check 48 h / 24 h CPU", round(ratio, 2), "",
                              f"<= {RATIO_GOAL:g}", ratio <= RATIO_GOAL, COMMAND))
        for hours in HOURS:
            figures.append(Figure(f"verifier.whole_{hours:g}h CPU (python -I -S, median of "
                                  f"{REPEATS})", round(whole[hours], 2), "s", "informative",
                                  None, COMMAND))
        for hours in HOURS:
            figures.append(Figure(f"verifier.whole_{hours:g}h peak memory (ru_maxrss)",
                                  round(peak[hours], 1), "MB", "informative (issue 37: bounded "
                                  "whatever the run's length — not yet)", None, COMMAND))
        whole_ratio = whole[48.0] / whole[24.0]
        figures.append(Figure("verifier.whole 48 h / 24 h CPU", round(whole_ratio, 2), "",
                              f"<= {RATIO_GOAL:g}", whole_ratio <= RATIO_GOAL, COMMAND))
        results = {}
        for name, build in hostile_cases(folder, bundles[24.0]).items():
            results[name] = child(build(), folder)
            print(name, results[name], flush=True)
        for name, (status, _, cpu, rss, line) in results.items():
            figures.append(Figure(f"verifier.hostile {name}: CPU (exit {status}, peak "
                                  f"{rss:.0f} MB; {line[:60]})", round(cpu, 2), "s",
                                  "informative", None, COMMAND))
        worst_cpu = max(results, key=lambda n: results[n][2])
        worst_rss = max(results, key=lambda n: results[n][3])
        figures.append(Figure(f"verifier.hostile worst time ({worst_cpu}; wall "
                              f"{results[worst_cpu][1]:.2f} s)", round(results[worst_cpu][2], 2),
                              "s CPU", "informative", None, COMMAND))
        figures.append(Figure(f"verifier.hostile worst peak memory ({worst_rss})",
                              round(results[worst_rss][3], 1), "MB", "informative (the honest "
                              f"24 h bundle it is built from: {peak[24.0]:.0f} MB)", None,
                              COMMAND))
    return figures


if __name__ == "__main__":
    for figure in run():
        print(figure)
