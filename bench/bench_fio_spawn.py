"""How long a sampling thread is held up while 8 fio clients are started (issue 27).

The station starts one fio client per load host on its workload-control thread while the
sequencer thread polls the meters. A client started with a ``preexec_fn`` (the parent-death
signal armed in the forked child, ``drivers.fio.process``'s fallback) makes CPython fork the
whole interpreter with the GIL held; started through ``setpriv --pdeathsig`` (the default where
util-linux has it) it takes CPython's ``vfork`` path. Both are measured side by side in one
process with a ~150 MB heap, as a station's: a thread sleeping 0.5 ms at a time records the
longest gap between its wake-ups while 8 ``fio --version`` are started, 10 rounds per way,
alternating. The ratio of the medians is printed.
Run: ``nice python -m bench.run_all fio_spawn``.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.figure import Figure
from drivers.fio import process

CLIENTS = 8
ROUNDS = 10
COMMAND = "nice python -m bench.run_all fio_spawn"


def _longest_gap_ms(start: object) -> float:
    """The longest gap between a sleeping thread's wake-ups while ``start()`` runs."""
    gaps: list[float] = []
    done = threading.Event()

    def sampler() -> None:
        last = time.perf_counter()
        while not done.is_set():
            time.sleep(0.0005)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    thread = threading.Thread(target=sampler)
    thread.start()
    time.sleep(0.05)
    started = start()  # type: ignore[operator]  # a callable, typed loosely for the lambda
    time.sleep(0.05)
    done.set()
    thread.join()
    for proc in started:
        proc.wait()
    return 1000 * max(gaps)


def _clients(argv: list[str], old: bool) -> list[subprocess.Popen]:
    started = []
    for _ in range(CLIENTS):
        args, preexec_fn = ((argv, process._death_watch(os.getpid())) if old
                            else process.launch(argv))
        started.append(subprocess.Popen(args, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL, start_new_session=True,
                                        preexec_fn=preexec_fn))
    return started


def run() -> list[Figure]:
    if not sys.platform.startswith("linux") or process.pdeathsig_setpriv() is None:
        return [Figure("fio spawn: setpriv --pdeathsig not available", float("nan"), "",
                       "Linux with util-linux setpriv", False, COMMAND)]
    argv = [shutil.which("fio") or "true", "--version"]
    ballast = [bytes(1000) for _ in range(150_000)]  # a station's heap: fork copies its tables
    load = os.getloadavg()[0]
    gaps: dict[bool, list[float]] = {True: [], False: []}
    for _ in range(ROUNDS):
        for old in (True, False):
            gaps[old].append(_longest_gap_ms(lambda old=old: _clients(argv, old)))
    del ballast
    load = max(load, os.getloadavg()[0])
    before, after = (statistics.median(gaps[k]) for k in (True, False))
    where = f"{CLIENTS} clients, median of {ROUNDS} rounds, load {load:.1f}"
    return [Figure(f"fio spawn: sampler held up while {CLIENTS} fio clients start, preexec_fn",
                   round(before, 1), "ms", f"reference: the old way ({where}, max "
                   f"{max(gaps[True]):.1f} ms)", None, COMMAND),
            Figure(f"fio spawn: sampler held up while {CLIENTS} fio clients start, setpriv",
                   round(after, 1), "ms", f"≤ 10 ms ({where}, max {max(gaps[False]):.1f} ms)",
                   after <= 10.0, COMMAND),
            Figure("fio spawn: ratio setpriv / preexec_fn", round(after / before, 3), "x",
                   "informative", None, COMMAND)]


if __name__ == "__main__":
    for figure in run():
        print(figure)
