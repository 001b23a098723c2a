"""History view benchmark at lab scale (issue 27): 100,000 stored runs (rows inserted in bulk,
no samples) on SQLite and on a throw-away PostgreSQL server; the time to open the history
window, each filter change and each sort, beside what the history did before (every run read
into Python by ``list_runs``, every filter a Python pass over them).

Goals: open ≤ 1 s, every filter ≤ 150 ms, on both databases. Wall time is what a QA engineer
waits; this process's CPU time is printed beside it because the build box is shared (the load
average is printed too) — a PostgreSQL server's own CPU is not in it.
Run: ``.venv/bin/python -m bench.run_all history`` or ``.venv/bin/python bench/bench_history.py``
(``--runs N`` for a smaller history, ``--sqlite-only``).

Before/after in one run: with ``STORWATT_BENCH_HISTORY_BASELINE=<git revision>`` the PostgreSQL
part is also made with that revision's code (``git archive``), each tree in a fresh process on
its own throw-away server (an older tree cannot open a newer schema), one after the other, and
each figure of the two is printed with their ratio.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if __package__ in (None, ""):
    sys.path.insert(0, str(ROOT))

from app.storage.opening import open_database
from app.storage.history import INVALID, HistoryFilter
from app.storage.synthetic import fill_history
from app.storage.repository import list_runs
from bench.figure import Figure
from tests.support import pg_server  # the suite's throw-away server

COMMAND = ".venv/bin/python -m bench.run_all history"
BASELINE_ENV = "STORWATT_BENCH_HISTORY_BASELINE"
#: the PostgreSQL part in a fresh interpreter with a tree's own code; prints the figures as JSON
_POSTGRESQL_RUN = r"""
import json, sys
from bench.bench_history import _backend
from tests.support import pg_server  # the suite's throw-away server
with pg_server.postgres_server() as url:
    figures = _backend("postgresql", url, int(sys.argv[1]))
print(json.dumps([[f.name, f.value] for f in figures]))
"""
RUNS = 100_000
OPEN_GOAL_MS = 1000.0
FILTER_GOAL_MS = 150.0
FILTERS = {"text": HistoryFilter(text="acme"),
           "text_verdict": HistoryFilter(text="invalid"),
           "text_none": HistoryFilter(text="zzz"),
           "status_invalid": HistoryFilter(statuses=frozenset({INVALID})),
           "status_aborted": HistoryFilter(statuses=frozenset({"ABORTED"})),
           "dates": HistoryFilter(date_from=date(2025, 3, 1), date_to=date(2025, 6, 30)),
           "taxonomy_sut": HistoryFilter(taxonomy="online-3", sut="SN-0007"),
           "station": HistoryFilter(station="lab-pc-2"),
           "clear": HistoryFilter()}
SORTS = (("Started (UTC)", False), ("SUT", False), ("Status", True), ("QA", True),
         ("EP_RR", True))


def _timed(action: Callable[[], object], repeats: int = 3) -> tuple[float, float]:
    """Median wall and CPU milliseconds of ``repeats`` calls."""
    walls, cpus = [], []
    for _ in range(repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        action()
        walls.append((time.perf_counter() - wall) * 1000)
        cpus.append((time.process_time() - cpu) * 1000)
    return statistics.median(walls), statistics.median(cpus)


@contextlib.contextmanager
def _sqlite() -> Iterator[str]:
    with tempfile.TemporaryDirectory() as folder:
        yield f"sqlite:///{Path(folder) / 'history.db'}"


def _real_rows(database, runs: int) -> None:
    """Store ``runs`` runs, each with a real run's configuration snapshot and resolved method
    (~10 KB of JSON in its row, as the writer stores them): a database reads whole rows, and
    the bulk rows of ``fill_history`` alone would make a scan look cheaper than a lab's
    history is."""
    from app.method.loader import load_method
    from app.method.record import resolved_method
    from app.storage.synthetic import run_started

    fill_history(database, runs, config=run_started(0.0).config.snapshot(),
                 method_json=resolved_method(load_method("emerald-block-v3")))


def _backend(name: str, url: str, runs: int) -> list[Figure]:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from ui.history.view import HistoryView

    app = QApplication.instance() or QApplication([])
    database = open_database(url)
    _real_rows(database, runs)
    figures, n = [], f"{runs // 1000}k"

    def figure(label: str, wall: float, cpu: float, goal: float | None) -> None:
        figures.append(Figure(f"history.{label}_{n}_runs.{name}", round(wall, 1), "ms",
                              f"≤ {goal:g} ms" if goal else "informative",
                              None if goal is None else wall <= goal,
                              f"{COMMAND}  (CPU {cpu:.0f} ms)"))
        print(f"  {name:10} {label:28} {wall:9.1f} ms wall {cpu:9.1f} ms CPU", flush=True)

    def open_view() -> HistoryView:
        view = HistoryView(database)
        view.resize(1500, 900)
        view.show()
        app.processEvents()
        return view

    views: list[HistoryView] = []
    wall, cpu = _timed(lambda: views.append(open_view()), 1)
    figure("open", wall, cpu, OPEN_GOAL_MS)
    view = views[0]
    assert view.model.total == runs, view.model.total
    worst = 0.0
    for label, wanted in FILTERS.items():
        def apply(wanted: HistoryFilter = wanted) -> None:
            view.apply_filter(wanted)
            app.processEvents()
        wall, cpu = _timed(apply)
        worst = max(worst, wall)
        figure(f"filter_{label}", wall, cpu, FILTER_GOAL_MS)
    for title, descending in SORTS:
        def sort(title: str = title, descending: bool = descending) -> None:
            view.sort_by(title, descending)
            app.processEvents()
        wall, cpu = _timed(sort)
        figure(f"sort_{title.split()[0].lower()}", wall, cpu, None)
    view.close()
    # side by side: what opening and filtering cost before (every run built in Python)
    rows: list = []
    wall, cpu = _timed(lambda: rows.extend(list_runs(database)), 1)
    figure("before_open_list_runs", wall, cpu, None)
    wall, cpu = _timed(lambda: [w.mask(rows) for w in FILTERS.values()])
    figure("before_all_filters_python", wall, cpu, None)
    database.close()
    print(f"  {name}: open {figures[0].value} ms vs list_runs alone "
          f"{figures[-2].value} ms before: ×{figures[-2].value / figures[0].value:.1f}; "
          f"worst filter {worst:.1f} ms", flush=True)
    return figures


def _postgresql_in(tree: Path, runs: int) -> dict[str, float]:
    """The PostgreSQL figures of ``tree``'s code, measured in a fresh interpreter."""
    done = subprocess.run([sys.executable, "-c", _POSTGRESQL_RUN, str(runs)], cwd=tree,
                          env={**os.environ, "PYTHONPATH": str(tree)}, capture_output=True,
                          text=True, check=False)
    if done.returncode:
        raise RuntimeError(f"history bench with the code of {tree} failed: {done.stderr[-2000:]}")
    print(done.stdout.rsplit("\n", 2)[0], flush=True)
    return dict(json.loads(done.stdout.splitlines()[-1]))


def _side_by_side(baseline: str, runs: int) -> list[Figure]:
    """Each PostgreSQL figure of this tree beside ``baseline``'s, with their ratio."""
    from bench.bench_reports import checkout

    command = f"{BASELINE_ENV}={baseline} {COMMAND}"
    with tempfile.TemporaryDirectory() as folder:
        before = _postgresql_in(checkout(baseline, Path(folder)), runs)
    after = _postgresql_in(ROOT, runs)
    load = os.getloadavg()[0]
    return [Figure(f"{name}, {baseline} → this tree", after[name], "ms",
                   f"informative: {baseline} {before[name]:g} ms, ratio "
                   f"{after[name] / before[name]:.2f} (load {load:.1f})", None, command)
            for name in after if name in before and before[name]]


def run(runs: int = RUNS, postgresql: bool = True) -> list[Figure]:
    print(f"load average at start: {os.getloadavg()}", flush=True)
    figures = []
    with _sqlite() as url:
        figures += _backend("sqlite", url, runs)
    baseline = os.environ.get(BASELINE_ENV, "").strip()
    if postgresql and pg_server.available():
        print(f"PostgreSQL skipped: {pg_server.available()}")
    elif postgresql and baseline:
        figures += _side_by_side(baseline, runs)
    elif postgresql:
        with pg_server.postgres_server() as url:
            figures += _backend("postgresql", url, runs)
    print(f"load average at end: {os.getloadavg()}", flush=True)
    return figures


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=RUNS)
    parser.add_argument("--sqlite-only", action="store_true")
    args = parser.parse_args()
    for f in run(args.runs, not args.sqlite_only):
        print(f"{f.name:48} {f.value:>10} {f.unit:4} goal {f.goal:12} "
              f"{'PASS' if f.passed in (True, None) else 'FAIL'}")
