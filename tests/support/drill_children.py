"""What the crash drills' station processes run (tests/support/forked_station.py forks them
from a parent that imported this module, and with it the station).

Each function takes ``emit`` first: it publishes one line to the drill, written whole before
it returns, so the drill knows what was published before its SIGKILL.
"""

from __future__ import annotations

import time

from app.core.records import RunConfig
from app.sequencer import events as ev
from app.station.session import open_session
from app.storage.opening import open_database
from app.storage.synthetic import outside, power_sample, run_started
from app.storage.writer import RunWriter

from tests.support.forked_station import Emit


def smoke_station(emit: Emit, url: str, run_id: str) -> None:
    """One ``smoke`` run on the ``sim-direct`` lab on the real clock, storage and run journal
    as in production, emitting ``ready T`` at its start and ``sample T PHASE t`` for every
    power sample as it is published to the listeners (after the writer has taken it)."""

    def show(event: ev.RunEvent) -> None:
        if isinstance(event, ev.RunStarted):
            emit(f"ready {time.monotonic()!r}")
        elif isinstance(event, ev.PowerSamples):
            now = time.monotonic()
            for sample in event.samples:
                emit(f"sample {now!r} {event.phase_index} {sample.t!r}")

    config = RunConfig(method="smoke", taxonomy="online-2", lab="sim-direct")
    session = open_session(config, db_url=url, listeners=[show])
    session.sequencer.run_id = run_id
    session.run()
    emit("done")


def sample_writer(emit: Emit, url: str, run_id: str, batch: int, period_s: float) -> None:
    """The run writer alone, taking ``batch`` samples every ``period_s`` until killed; emits
    ``ready T0`` once the run is started and ``batch T`` after each batch is written."""
    writer = RunWriter(open_database(url))
    t0 = time.monotonic()
    writer(run_started(t0, run_id))
    emit(f"ready {t0!r}")
    seq = 0
    while True:
        t = time.monotonic()
        # run-relative stamps, as the sequencer publishes them
        writer(ev.PowerSamples(0, tuple(power_sample(t + k * 1e-4 - t0, seq + k)
                                        for k in range(batch)), outside(batch)))
        seq += batch
        emit(f"batch {t!r}")
        time.sleep(period_s)
