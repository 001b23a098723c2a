"""Lab sender benchmarks (issue 26): replication lag with many stations, the sender's cost to
a station's sampling, and a frozen server across a run's end.

* **Lag.** ``STATIONS`` stand-in stations, each its own SQLite file, run writer and sender
  (in-process: 20 station processes do not fit 2 shared cores), record 17 power rows a second
  (a total and 16 power inputs at 1 Hz) for ``LAG_SECONDS``, all sending into one local
  PostgreSQL server. A watcher polls the lab copy; a row's lag is the time from its commit on
  the station until the lab copy holds it. Goal: p99 ≤ 5 s and 0 rows lost.
* **Jitter.** One station samples on a deadline loop (20 Hz) while its writer stores; the
  sender (pushing every 0.5 s) is switched on and off in alternating blocks in the same run;
  p99 and median lateness with / without the sender. Goal: p99 ratio ≤ 1.1.
* **Frozen server.** Every server process stopped (``SIGSTOP``) for ``FREEZE_S`` across a run's
  end: the run closes as fast as with a healthy server (it records on the station), and after
  ``SIGCONT`` the lab copy holds every sample. Goal: 0 samples lost, the run's close time
  within 0.5 s of a healthy server's (both are a few tens of ms: a ratio would be noise).

Run: ``.venv/bin/python -m bench.run_all sender`` (needs the PostgreSQL server binaries).
"""

from __future__ import annotations

import os
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import sqlalchemy as sa

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the throw-away server helper of the test suite

from tests.support import pg_server  # noqa: E402
from tests.support.silent_server import server_processes  # noqa: E402
from app.sequencer.events import PowerSamples, RunEvent  # noqa: E402
from app.storage import schema as s  # noqa: E402
from app.storage.db import open_database  # noqa: E402
from app.storage.sender import Sender, open_lab, sync  # noqa: E402
from app.storage.synthetic import outside, power_sample, run_started  # noqa: E402
from app.storage.writer import RunWriter  # noqa: E402
from bench.figure import Figure  # noqa: E402

COMMAND = ".venv/bin/python -m bench.run_all sender"
STATIONS = 20
ROWS_PER_S = 17  # a total and 16 power inputs at 1 Hz
LAG_SECONDS = 30.0
JITTER_BLOCK_S = 2.5
JITTER_BLOCKS = 6  # per mode, alternating
#: the deadline loop's period: 20 Hz gives 300 lateness readings per mode in 30 s (at the
#: station's 5 Hz a p99 over so few samples would be its maximum, i.e. noise)
SAMPLE_PERIOD_S = 0.05
FREEZE_S = 10.0


class Station:
    """A stand-in station: its own database, writer and sender; it records one batch a second
    and remembers when each batch was committed."""

    def __init__(self, folder: Path, lab_url: str, index: int) -> None:
        self.database = open_database(f"sqlite:///{folder / f'station{index}.db'}")
        self.writer = RunWriter(self.database, journal_dir=folder / f"journal{index}",
                                lock_dir=folder / f"locks{index}")
        self.run_id = f"bench-sender-{index:02d}-{os.getpid()}"
        self.writer(run_started(0.0, self.run_id))
        self.sender = Sender(self.database, lab_url, interval_s=1.0)
        self.committed: list[tuple[float, float]] = []  # (sample t, commit time)
        self.rows = 0

    def record(self, second: int) -> None:
        samples = tuple(power_sample(float(second) + k / ROWS_PER_S, second * ROWS_PER_S + k)
                        for k in range(ROWS_PER_S))
        self.writer(PowerSamples(0, samples, outside(len(samples))))
        self.rows += len(samples)

    def close(self) -> None:
        self.writer.close()
        self.database.close()


def _lag(lab_url: str, folder: Path) -> list[Figure]:
    stations = [Station(folder, lab_url, i) for i in range(STATIONS)]
    for st in stations:
        st.writer.flush(30)
        st.sender.start()
    seen: dict[str, float] = {}  # run id → largest t in the lab copy
    lags: list[float] = []
    watcher = sa.create_engine(lab_url)
    stop = threading.Event()

    def watch() -> None:
        while not stop.wait(0.25):
            with watcher.connect() as conn:
                rows = conn.execute(sa.select(s.Run.uuid, sa.func.max(s.PowerSampleRow.t))
                                    .join(s.PowerSampleRow, s.PowerSampleRow.run_id == s.Run.id)
                                    .group_by(s.Run.uuid)).all()
            now = time.monotonic()
            for uuid, t_max in rows:
                seen[uuid] = t_max or 0.0
            for st in stations:
                while st.committed and st.committed[0][0] <= seen.get(st.run_id, -1.0):
                    lags.append(now - st.committed.pop(0)[1])

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    start = time.monotonic()
    second = 0
    while second < LAG_SECONDS:
        time.sleep(max(0.0, start + second - time.monotonic()))
        for st in stations:
            st.record(second)
        for st in stations:
            st.writer.flush(10)
            st.committed.append((float(second) + (ROWS_PER_S - 1) / ROWS_PER_S,
                                 time.monotonic()))
        second += 1
    for st in stations:
        st.sender.stop(30.0)
    time.sleep(0.5)
    stop.set()
    thread.join(5)
    watcher.dispose()
    lost = 0
    lab = open_lab(lab_url)
    with lab.read() as conn:
        for st in stations:
            held = conn.execute(sa.select(sa.func.count()).select_from(s.PowerSampleRow)
                                .join(s.Run, s.Run.id == s.PowerSampleRow.run_id)
                                .where(s.Run.uuid == st.run_id)).scalar_one()
            lost += st.rows - held
    lab.close()
    for st in stations:
        st.close()
    p99 = float(np.percentile(lags, 99)) if lags else float("nan")
    name = f"sender lag p99, {STATIONS} stations × {ROWS_PER_S} rows/s for {LAG_SECONDS:g} s"
    return [Figure(name, round(p99, 2), "s", "≤ 5 s", p99 <= 5.0, COMMAND),
            Figure(f"sender rows lost, {STATIONS} stations", lost, "rows", "0", lost == 0,
                   COMMAND)]


def _jitter(lab_url: str, folder: Path) -> list[Figure]:
    """p99 lateness of a 5 Hz deadline loop while its writer stores; sender on / off."""
    database = open_database(f"sqlite:///{folder / 'jitter.db'}")
    writer = RunWriter(database, journal_dir=folder / "jitter-journal",
                       lock_dir=folder / "jitter-locks")
    writer(run_started(0.0, f"bench-jitter-{os.getpid()}"))
    writer.flush(30)
    late: dict[bool, list[float]] = {True: [], False: []}
    n = 0
    for block in range(2 * JITTER_BLOCKS):
        with_sender = block % 2 == 1
        sender = Sender(database, lab_url, interval_s=0.5).start() if with_sender else None
        start = time.monotonic()
        ticks = int(JITTER_BLOCK_S / SAMPLE_PERIOD_S)
        for k in range(1, ticks + 1):
            deadline = start + k * SAMPLE_PERIOD_S
            time.sleep(max(0.0, deadline - time.monotonic()))
            late[with_sender].append(time.monotonic() - deadline)
            n += 1
            writer(PowerSamples(0, (power_sample(n * SAMPLE_PERIOD_S, n),), outside(1)))
        if sender is not None:
            sender.stop(30.0)
    writer.close()
    database.close()
    on, off = (np.array(late[mode]) * 1000 for mode in (True, False))
    p99_on, p99_off = float(np.percentile(on, 99)), float(np.percentile(off, 99))
    ratio = p99_on / p99_off if p99_off > 0 else float("nan")
    median = float(np.median(on) / np.median(off)) if np.median(off) > 0 else float("nan")
    return [Figure(f"sampling lateness p99 with the sender ({len(on)} deadlines, alternating "
                   "blocks)", round(p99_on, 3), "ms", "reference", None, COMMAND),
            Figure("sampling lateness p99 without the sender", round(p99_off, 3), "ms",
                   "reference", None, COMMAND),
            Figure("sampling lateness p99, with / without the sender", round(ratio, 3), "",
                   "≤ 1.1", ratio <= 1.1, COMMAND),
            Figure("sampling lateness median, with / without the sender", round(median, 3),
                   "", "informative", None, COMMAND)]


def _close_time(folder: Path, lab_url: str, tag: str, freeze: bool) -> tuple[float, int, int]:
    """(seconds from the run's last event to its storage closed, samples recorded, samples
    in the lab copy after the server answers again)."""
    database = open_database(f"sqlite:///{folder / f'{tag}.db'}")
    writer = RunWriter(database, journal_dir=folder / f"{tag}-journal",
                       lock_dir=folder / f"{tag}-locks")
    run_id = f"bench-freeze-{tag}-{os.getpid()}"
    events: list[RunEvent] = [run_started(0.0, run_id)]
    events += [PowerSamples(0, tuple(power_sample(i + k / 10, i * 10 + k) for k in range(10)),
                            outside(10)) for i in range(60)]
    sender = Sender(database, lab_url, interval_s=0.5).start()
    for event in events[:31]:
        writer(event)
    writer.flush(30)
    time.sleep(1.5)  # the sender has sent the first half
    frozen = server_processes(lab_url) if freeze else []
    for pid in frozen:
        os.kill(pid, signal.SIGSTOP)
    try:
        began = time.monotonic()
        for event in events[31:]:
            writer(event)
        writer.close()
        closed = time.monotonic() - began
        sender.stop(0.5)  # its last push may wait on the frozen server: not the run's
        time.sleep(max(0.0, FREEZE_S - (time.monotonic() - began)))
    finally:
        for pid in frozen:
            os.kill(pid, signal.SIGCONT)
    sender.stop(60.0)
    lab = open_lab(lab_url)
    sync(database, lab)
    local = len(database.load_run(run_id).power)
    copied = len(lab.load_run(run_id).power)
    lab.close()
    database.close()
    return closed, local, copied


def _freeze(lab_url: str, folder: Path) -> list[Figure]:
    healthy, _, _ = _close_time(folder, lab_url, "healthy", freeze=False)
    frozen, local, copied = _close_time(folder, lab_url, "frozen", freeze=True)
    expected = 60 * 10
    lost = (expected - local) + (expected - copied)
    return [Figure(f"server frozen {FREEZE_S:g} s across a run's end: samples lost (station "
                   "+ lab copy after recovery)", lost, "samples", "0", lost == 0, COMMAND),
            Figure("run close time with a healthy lab server", round(healthy * 1000, 1), "ms",
                   "reference", None, COMMAND),
            Figure("run close time with the lab server frozen", round(frozen * 1000, 1), "ms",
                   "≤ healthy + 500 ms", frozen <= healthy + 0.5, COMMAND)]


def run() -> list[Figure]:
    if pg_server.available():
        return [Figure(f"sender bench did not run: {pg_server.available()}", float("nan"), "",
                       "runs", False, COMMAND)]
    with pg_server.postgres_server() as lab_url, tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        before = os.environ.get("STORWATT_DATA_DIR")
        os.environ["STORWATT_DATA_DIR"] = str(folder / "data")  # the senders' state file
        open_database(lab_url).close()  # the owner creates the schema, as in a lab
        try:
            return [*_lag(lab_url, folder), *_jitter(lab_url, folder),
                    *_freeze(lab_url, folder)]
        finally:
            if before is None:
                os.environ.pop("STORWATT_DATA_DIR", None)
            else:
                os.environ["STORWATT_DATA_DIR"] = before


if __name__ == "__main__":
    for figure in run():
        print(f"{figure.name}: {figure.value} {figure.unit} (goal {figure.goal})")
