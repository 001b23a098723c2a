"""History view benchmark: 10,000 stored runs (rows inserted in bulk, no samples), the time to
read them with their metrics, build the Qt view, and re-filter it.

Goal (issue 8): ≤ 100 ms per filter change with 10,000 runs. Runs offscreen (no display needed).
Run: ``.venv/bin/python -m bench.run_all history`` or ``.venv/bin/python bench/bench_history.py``.
"""

from __future__ import annotations

import os
import random
import statistics
import sys
import tempfile
import time
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import sqlalchemy as sa  # noqa: E402

from app.records import RunStatus  # noqa: E402
from app.storage import schema as s  # noqa: E402
from app.storage.db import Database, open_database  # noqa: E402
from bench.figure import Figure  # noqa: E402

COMMAND = ".venv/bin/python -m bench.run_all history"
RUNS = 10_000
FILTER_GOAL_MS = 100.0
TAXONOMIES = ("online-2", "online-3", "online-4", "near-online-3", "virtual-2")
PROFILES = (("EP_RR", "IOPS/W", 30.0), ("EP_RW", "IOPS/W", 12.0), ("EP_SR", "MiB/s/W", 3.0),
            ("EP_SW", "MiB/s/W", 2.0), ("EP_MW1", "IOPS/W", 20.0), ("EP_MW2", "IOPS/W", 6.0),
            ("EP_RI", "GB/W", 12.3))
STATUSES = (RunStatus.COMPLETED,) * 8 + (RunStatus.ABORTED, RunStatus.INTERRUPTED,
                                        RunStatus.FAILED)


def fill_history(database: Database, count: int, seed: int = 8) -> list[str]:
    """Insert ``count`` runs with their metrics in bulk (no samples): the shape of a lab's
    history, for the benchmark and the history tests. Returns the run ids, oldest first."""
    rnd = random.Random(seed)
    start = datetime(2024, 1, 1, tzinfo=timezone.utc)
    with database.read() as conn:
        stations = [conn.execute(sa.insert(s.Station).values(name=f"lab-pc-{i + 1}")
                                 .returning(s.Station.id)).scalar_one() for i in range(4)]
        suts = [conn.execute(sa.insert(s.Sut).values(
            vendor=("Acme", "Globex", "Initech")[i % 3], model=f"Array {100 + i}",
            serial=f"SN-{i:04d}", raw_capacity_bytes=7_300_000_000_000, drive_count=50,
            drive_type="HDD").returning(s.Sut.id)).scalar_one() for i in range(30)]
        first = (conn.execute(sa.select(sa.func.max(s.Run.id))).scalar() or 0) + 1
        runs, ids = [], []
        for i in range(count):
            run_id = f"{rnd.getrandbits(128):032x}"
            run_id = "-".join((run_id[:8], run_id[8:12], run_id[12:16], run_id[16:20],
                               run_id[20:]))
            ids.append(run_id)
            status = rnd.choice(STATUSES)
            began = start + timedelta(hours=i * 2.5)
            runs.append(dict(
                id=first + i, uuid=run_id, station_id=rnd.choice(stations),
                sut_id=rnd.choice(suts), config={"taxonomy": "", "sut": {}},
                method_name="emerald" if i % 4 else "demo",
                method_version="3.0" if i % 4 else "1.0", method_compliant=bool(i % 4),
                taxonomy=rnd.choice(TAXONOMIES), lab="hardware",
                operator=rnd.choice(("ana", "ben", "chloé", "dmitri")), status=status.value,
                started_wall=began.isoformat(), finished_wall=(
                    began + timedelta(hours=2)).isoformat(), t0=0.0, planned_s=7200.0,
                duration_s=7200.0 if status is RunStatus.COMPLETED else 1800.0, error="",
                workload_engine="fio 3.33"))
        conn.execute(sa.insert(s.Run), runs)
        metrics = [dict(run_id=run["id"], name=name, value=base * rnd.uniform(0.8, 1.2),
                        unit=unit, valid=valid, reason="" if valid else "EPᵢ left the ±5 % band",
                        run_length_s=1800.0, avg_power_w=600.0, ops_rate=1.0, ops_unit="",
                        avg_response_ms=5.0, phase_index=k)
                   for run in runs if run["status"] == RunStatus.COMPLETED.value
                   for k, (name, unit, base) in enumerate(PROFILES)
                   for valid in (rnd.random() > 0.03,)]
        conn.execute(sa.insert(s.MetricRow), metrics)
    return ids


def _median_ms(action, repeats: int = 5) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        action()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def run(runs: int = RUNS) -> list[Figure]:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from app.storage.history import HistoryFilter
    from ui.history.view import HistoryView

    app = QApplication.instance() or QApplication([])
    with tempfile.TemporaryDirectory() as folder:
        database = open_database(f"sqlite:///{Path(folder) / 'history.db'}")
        fill_history(database, runs)
        start = time.perf_counter()
        view = HistoryView(database)
        view.resize(1500, 900)
        view.show()
        app.processEvents()
        open_ms = (time.perf_counter() - start) * 1000
        assert view.model.rowCount() == runs, view.model.rowCount()
        filters = [HistoryFilter(text="acme"), HistoryFilter(statuses=frozenset({"INVALID"})),
                   HistoryFilter(date_from=date(2025, 3, 1), date_to=date(2025, 6, 30)),
                   HistoryFilter(taxonomy="online-3", sut="SN-0007"), HistoryFilter()]
        per_filter = []
        for wanted in filters:
            def apply(wanted=wanted):
                view.apply_filter(wanted)
                app.processEvents()
            per_filter.append(_median_ms(apply))
        sort_ms = _median_ms(lambda: (view.sort_by("Started", descending=False),
                                      app.processEvents()), 3)
        worst = max(per_filter)
        view.close()
        database.close()
    return [
        Figure("history.open_10k_runs", round(open_ms, 1), "ms", "informative", None, COMMAND),
        Figure("history.filter_change_10k_runs_worst", round(worst, 1), "ms",
               f"≤ {FILTER_GOAL_MS:g} ms", worst <= FILTER_GOAL_MS, COMMAND),
        Figure("history.sort_10k_runs", round(sort_ms, 1), "ms", "informative", None, COMMAND),
    ]


if __name__ == "__main__":
    for figure in run():
        print(f"{figure.name:40} {figure.value:>10} {figure.unit:4} goal {figure.goal:12} "
              f"{'PASS' if figure.passed in (True, None) else 'FAIL'}")
