"""Sampling beside load hosts: 16 power inputs at 1 Hz while 8 loopback ``fio --server`` hosts
start and stop at every segment boundary (issue 27).

Each run is a fresh process: the real sequencer on a monotonic clock, 16 in-process simulated
power inputs summed by ``PowerInputs``, fio's client/server mode against 8 ``fio --server``
instances on 127.0.0.1 (null engine). The method is the smoke variant at 1 Hz with one random
and one sequential profile, so the run has a search with its probes, two active profiles and
ready idle: a dozen engine starts and stops. The figure is how late each meter poll starts
against its grid point (``MeterSampler.poll``, timed in the child) and how many grid points the
sampler skipped ("sequencer N period(s) behind"). Also timed: ``FioEngine.start()`` and
``stop()`` with the 8 hosts (median of 3).

A run is ~35 polls, so its p99 is its worst poll: the runs are repeated (``ROUNDS``) and
their polls pooled. The machine is shared: beside each run a bare Python process sleeps on a
100 ms grid and its own wake-up lateness is the reference row — what any process got from the
scheduler meanwhile, a floor the station's sampling cannot go below — and a poll later than
the goal while that process woke on time around it is counted as the station's own.

Before/after in one run: with ``STORWATT_BENCH_LOAD_HOSTS_BASELINE=<git revision>`` the same
runs are made with that revision's code (``git archive``), alternating with this tree's, and
the ratio of the p99s is printed.
Run: ``nice python -m bench.run_all load_hosts``.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.bench_reports import checkout
from bench.figure import Figure

ROOT = Path(__file__).resolve().parent.parent
BASELINE_ENV = "STORWATT_BENCH_LOAD_HOSTS_BASELINE"
HOSTS = 8
INPUTS = 16
LATENESS_GOAL_MS = 10.0
#: station runs per tree, alternating between trees, polls pooled (a run is ~35 polls)
ROUNDS = int(os.environ.get("STORWATT_BENCH_LOAD_HOSTS_ROUNDS", "3"))
#: a bare process on a 100 ms grid, printing each wake-up's lateness (s) until killed
_SLEEPER = r"""
import sys, time
due = time.monotonic()
while True:
    due += 0.1
    time.sleep(max(0.0, due - time.monotonic()))
    print(due, time.monotonic() - due, flush=True)
"""
#: one station run in a fresh interpreter, public APIs and MeterSampler.poll only (the same
#: in a baseline revision); prints JSON: poll lateness (s), skipped grid points, start/stop (s)
_RUN = r"""
import json, statistics, sys, time
from pathlib import Path
from app.method.loader import load_method
from app.core.records import PowerInput, RunConfig, SutDescription
from app.sequencer.sampler import MeterSampler
from app.station.session import open_session
from drivers.clock import MonotonicClock
from drivers.fio.engine import FioEngine
from drivers.fio.safety import TargetPolicy
from drivers.interfaces import WorkloadProfile

hosts, folder, inputs = sys.argv[1].split(","), Path(sys.argv[2]), int(sys.argv[3])
lateness, stamps, skipped = [], [], [0]
poll = MeterSampler.poll

def timed_poll(self, now):
    if now >= self.next_due:
        lateness.append(now - self.next_due)
        stamps.append(time.monotonic())
        skipped[0] += max(0, int((now - self.next_due) // self.period_s))
    return poll(self, now)

MeterSampler.poll = timed_poll
method = load_method("smoke")
plans = tuple(p.model_copy(update={"prefill": False, "active": p.active[:1] + p.active[-1:]})
              for p in method.plans)
method = method.model_copy(update={"plans": plans, "sample_period_s": 1.0})
config = RunConfig(method="smoke", lab="local-fio", target_size="8M",
                   sut=SutDescription(load_hosts=tuple(hosts),
                                      targets=(str(folder / "target.dat"),)),
                   power_inputs=tuple(PowerInput(f"psu-{i + 1}", "sim") for i in range(inputs)))
session = open_session(config, db_url=f"sqlite:///{folder}/runs.db", method=method)
session.sequencer.run()
session.writer.close()
session.lab.close()
engine = FioEngine([str(folder / "target.dat")], clock=MonotonicClock(), load_hosts=hosts,
                   policy=TargetPolicy(create_size=8 << 20), ioengine="null", workdir=folder)
engine.check()
starts, stops = [], []
for _ in range(3):
    t = time.perf_counter()
    engine.start(WorkloadProfile("RR", 4096, 100, True, 4096, duration_s=30))
    starts.append(time.perf_counter() - t)
    time.sleep(2.5)
    t = time.perf_counter()
    engine.stop()
    stops.append(time.perf_counter() - t)
engine.close()
print(json.dumps({"lateness": lateness, "stamps": stamps, "skipped": skipped[0],
                  "start": statistics.median(starts), "stop": statistics.median(stops)}))
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LoopbackHosts:
    """``count`` ``fio --server`` instances on 127.0.0.1, killed on exit."""

    def __init__(self, count: int, folder: Path) -> None:
        self.ports = [_free_port() for _ in range(count)]
        self.folder = folder
        self.procs: list[subprocess.Popen] = []

    def __enter__(self) -> list[str]:
        self.procs = [subprocess.Popen(["fio", f"--server=ip:127.0.0.1,{p}"], cwd=self.folder,
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                       start_new_session=True) for p in self.ports]
        for port in self.ports:
            deadline = time.monotonic() + 10
            while socket.socket().connect_ex(("127.0.0.1", port)) and time.monotonic() < deadline:
                time.sleep(0.1)
        return [f"127.0.0.1:{p}" for p in self.ports]

    def __exit__(self, *exc: object) -> None:
        for proc in self.procs:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def station_run(tree: Path, hosts: list[str], folder: Path) -> dict:
    """One station run with ``tree``'s code, a bare sleeper process beside it: the run's
    figures, with the sleeper's wake-up lateness as ``reference``."""
    folder.mkdir(parents=True)
    env = {**os.environ, "PYTHONPATH": str(tree)}
    sleeper = subprocess.Popen([sys.executable, "-c", _SLEEPER], stdout=subprocess.PIPE,
                               text=True)
    try:
        done = subprocess.run([sys.executable, "-c", _RUN, ",".join(hosts), str(folder),
                               str(INPUTS)], cwd=tree, env=env, capture_output=True, text=True,
                              check=False)
    finally:
        sleeper.kill()
        reference = [tuple(map(float, line.split()))
                     for line in sleeper.communicate()[0].splitlines()]
    if done.returncode:
        raise RuntimeError(f"run with the code of {tree} failed: {done.stderr[-2000:]}")
    return {**json.loads(done.stdout.splitlines()[-1]), "reference": reference}


def _own_late(run: dict) -> int:
    """Polls later than the goal while the bare process beside them woke on time: no
    wake-up of its within 0.1 s of the poll's wait was later than the goal either. (Both
    processes stamp ``time.monotonic``, one clock for the machine.)"""
    goal = LATENESS_GOAL_MS / 1000
    busy = [due for due, late in run["reference"] if late > goal]
    own = 0
    for late, stamp in zip(run["lateness"], run["stamps"]):
        if late > goal and not any(stamp - late - 0.1 <= due <= stamp + 0.1 for due in busy):
            own += 1
    return own


def _pooled(runs: list[dict]) -> dict:
    """The rounds of one tree as one: polls and reference wake-ups pooled, skipped summed,
    start/stop medians of the rounds' medians."""
    return {"lateness": [x for r in runs for x in r["lateness"]],
            "own": sum(_own_late(r) for r in runs),
            "reference": [late for r in runs for _, late in r["reference"]],
            "skipped": sum(r["skipped"] for r in runs),
            "start": statistics.median(r["start"] for r in runs),
            "stop": statistics.median(r["stop"] for r in runs)}


def _p99_ms(values: list[float]) -> float:
    ordered = sorted(values)
    return 1000 * ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))] if ordered else \
        float("nan")


def run() -> list[Figure]:
    if shutil.which("fio") is None:
        return [Figure("load hosts: fio not installed", float("nan"), "", "fio on PATH", False)]
    baseline = os.environ.get(BASELINE_ENV, "").strip()
    command = (f"{BASELINE_ENV}={baseline} " if baseline else "") + \
        "nice python -m bench.run_all load_hosts"
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        trees = {"this tree": ROOT}
        if baseline:
            trees[baseline] = checkout(baseline, folder / "baseline")
        runs: dict[str, list[dict]] = {name: [] for name in trees}
        with LoopbackHosts(HOSTS, folder) as hosts:
            for round_ in range(ROUNDS):
                for index, (name, tree) in enumerate(trees.items()):
                    runs[name].append(station_run(tree, hosts,
                                                  folder / f"run-{round_}-{index}"))
        results = {name: _pooled(got) for name, got in runs.items()}
    load = max(load, os.getloadavg()[0])
    where = f"{INPUTS} inputs + {HOSTS} loopback fio --server hosts, 1 Hz"
    figures: list[Figure] = []
    for name, got in results.items():
        mine = name == "this tree"
        label = "" if mine else f", {name}"
        p99 = _p99_ms(got["lateness"])
        figures += [
            Figure(f"load hosts: poll lateness p99 ({where}{label})", round(p99, 1), "ms",
                   f"<= {LATENESS_GOAL_MS:g} ms (max {1000 * max(got['lateness']):.0f} ms, "
                   f"median {1000 * statistics.median(got['lateness']):.1f} ms, "
                   f"{len(got['lateness'])} polls in {ROUNDS} runs, load {load:.1f})",
                   p99 <= LATENESS_GOAL_MS if mine else None, command),
            Figure(f"load hosts: a bare process's wake-up lateness p99 beside the runs "
                   f"(100 ms grid{label})", round(_p99_ms(got["reference"]), 1), "ms",
                   f"reference: the scheduler's floor on this shared machine (max "
                   f"{1000 * max(got['reference'], default=math.nan):.0f} ms, "
                   f"{len(got['reference'])} wake-ups, load {load:.1f})", None, command),
            Figure(f"load hosts: polls later than {LATENESS_GOAL_MS:g} ms while a bare process "
                   f"beside them woke on time ({where}{label})", got["own"], "",
                   f"0: the station's own lateness, not the scheduler's "
                   f"({sum(x > LATENESS_GOAL_MS / 1000 for x in got['lateness'])} polls later "
                   f"than {LATENESS_GOAL_MS:g} ms in all, load {load:.1f})",
                   got["own"] == 0 if mine else None, command),
            Figure(f"load hosts: grid points skipped ({where}{label})", got["skipped"], "",
                   "0", got["skipped"] == 0 if mine else None, command),
            Figure(f"load hosts: FioEngine.start() with {HOSTS} hosts (median of 3{label})",
                   round(1000 * got["start"]), "ms", "informative (off the sampling path)",
                   None, command),
            Figure(f"load hosts: FioEngine.stop() with {HOSTS} hosts (median of 3{label})",
                   round(1000 * got["stop"]), "ms", "informative (off the sampling path)",
                   None, command),
        ]
    if baseline:
        ratio = _p99_ms(results["this tree"]["lateness"]) / _p99_ms(results[baseline]["lateness"])
        figures.append(Figure(f"load hosts: poll lateness p99 ratio this tree / {baseline}",
                              round(ratio, 3), "x", "informative", None, command))
    return figures


if __name__ == "__main__":
    for figure in run():
        print(figure)
