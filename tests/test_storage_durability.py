"""Crash drill: a process writing a run in real time is SIGKILLed at random moments.

Each child opens the database, starts a run with ``t0 = time.monotonic()`` and feeds a
RunWriter 1 000 samples/s stamped with ``time.monotonic()`` (system-wide on Linux, so parent
and child share the clock), printing its progress. After the kill the database must open
cleanly, hold every sample produced more than 1 s before the kill, and show the run
INTERRUPTED. Trials run a few at a time to keep the drill short.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BATCH = 10  # samples per batch, 1e-4 s apart
PERIOD_S = 0.01
RUN_ID = "crash-drill-run"
LOSS_WINDOW_S = 1.0


def child(url: str) -> None:
    """Runs in the subprocess: write samples until killed."""
    from app.records import RunStatus  # noqa: F401  (import cost before 'ready')
    from app.sequencer.events import PowerSamples
    from app.storage.db import open_database
    from app.storage.synthetic import outside, power_sample, run_started
    from app.storage.writer import RunWriter

    writer = RunWriter(open_database(url))
    t0 = time.monotonic()
    writer(run_started(t0, RUN_ID))
    print(f"ready {t0!r}", flush=True)
    seq = 0
    while True:
        t = time.monotonic()
        # run-relative stamps, as the sequencer publishes them
        writer(PowerSamples(0, tuple(power_sample(t + k * 1e-4 - t0, seq + k)
                                     for k in range(BATCH)), outside(BATCH)))
        seq += BATCH
        print(f"batch {t!r}", flush=True)
        time.sleep(PERIOD_S)


@dataclass
class Trial:
    url: str
    delay_s: float
    after_ready: bool
    t0: float | None = None
    batches: list[float] = field(default_factory=list)
    kill_t: float = 0.0


def _read(proc: subprocess.Popen, trial: Trial, ready: threading.Event) -> None:
    for line in proc.stdout:
        kind, _, value = line.partition(" ")
        if kind == "ready":
            trial.t0 = float(value)
            ready.set()
        elif kind == "batch":
            trial.batches.append(float(value))
    ready.set()


def run_trial(trial: Trial) -> Trial:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, __file__, trial.url], stdout=subprocess.PIPE,
                            text=True, cwd=ROOT, env=env)
    ready = threading.Event()
    reader = threading.Thread(target=_read, args=(proc, trial, ready), daemon=True)
    reader.start()
    if trial.after_ready:
        ready.wait(20)
    time.sleep(trial.delay_s)
    trial.kill_t = time.monotonic()
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    reader.join(10)
    return trial


def check(trial: Trial) -> None:
    from app.records import RunStatus
    from app.storage.db import open_database
    from app.storage.errors import RunNotFoundError

    database = open_database(trial.url)  # must open cleanly whatever the moment of the kill
    try:
        if trial.t0 is None:
            return  # killed before the run started: an empty, healthy database is correct
        try:
            run = database.load_run(RUN_ID)
        except RunNotFoundError:
            assert trial.kill_t - trial.t0 < LOSS_WINDOW_S, "run lost although > 1 s old"
            return
        assert run.status is RunStatus.INTERRUPTED
        stored = set(run.power.t.tolist())
        due = [t + k * 1e-4 - trial.t0 for t in trial.batches
               if t + BATCH * 1e-4 < trial.kill_t - LOSS_WINDOW_S for k in range(BATCH)]
        missing = [t for t in due if t not in stored]
        assert not missing, (f"{len(missing)} of {len(due)} samples older than 1 s lost "
                             f"(kill {trial.kill_t - trial.t0:.2f} s into the run)")
        produced = {t + k * 1e-4 - trial.t0 for t in trial.batches for k in range(BATCH)}
        assert stored <= produced  # and nothing invented
    finally:
        database.close()


@pytest.mark.realtime("real station processes SIGKILLed at random moments")
@pytest.mark.slow
def test_sigkill_at_random_moments_loses_at_most_one_second(tmp_path: Path) -> None:
    rng = random.Random(20240501)
    # kill moments spread evenly over 0.2 … 3 s into the run, jittered
    trials = [Trial(f"sqlite:///{tmp_path / f'drill{i}.db'}", 0.2 + 2.8 * (i + rng.random()) / 18,
                    True) for i in range(18)]
    trials += [Trial(f"sqlite:///{tmp_path / f'early{i}.db'}", rng.uniform(0.0, 0.9), False)
               for i in range(4)]  # during start-up: imports, schema creation, RunStarted
    with ThreadPoolExecutor(max_workers=6) as pool:
        done = list(pool.map(run_trial, trials))
    for trial in done:
        check(trial)
    late = [t for t in done if t.t0 is not None and t.kill_t - t.t0 > 1.2]
    assert len(late) >= 9, "too few trials killed mid-run to mean anything"


if __name__ == "__main__":
    child(sys.argv[1])
