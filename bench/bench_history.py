"""History view benchmark: 10,000 stored runs (rows inserted in bulk, no samples), the time to
read them with their metrics, build the Qt view, and re-filter it.

Goal (issue 8): ≤ 100 ms per filter change with 10,000 runs. Runs offscreen (no display needed).
Run: ``.venv/bin/python -m bench.run_all history`` or ``.venv/bin/python bench/bench_history.py``.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.storage.db import open_database  # noqa: E402
from app.storage.synthetic import fill_history  # noqa: E402
from bench.figure import Figure  # noqa: E402

COMMAND = ".venv/bin/python -m bench.run_all history"
RUNS = 10_000
FILTER_GOAL_MS = 100.0


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
