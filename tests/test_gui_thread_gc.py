"""Qt objects are finalised on the GUI thread only (ui.app.collect_in_gui_thread): with
automatic cycle collection, a run's worker thread that allocated past the threshold destroyed
a shown pyqtgraph plot and waited forever in QWindow::close (the suite froze twice so)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from tests.support.time_budget import budget_s

ROOT = Path(__file__).resolve().parent.parent

STATION = textwrap.dedent("""
    import gc, sys, threading, time, weakref
    import pyqtgraph as pg
    from ui.app import application

    app = application()
    plot = pg.PlotWidget()
    plot.plot([1, 2, 3])
    plot.show()
    app.processEvents()
    plot.cycle = plot  # a reference cycle: only the cycle collector frees it
    gone = weakref.ref(plot, lambda _: print("finalised on", threading.current_thread().name,
                                             flush=True))
    del plot
    worker_done = threading.Event()

    def worker():  # allocates as a run's writer does, far past gc's thresholds
        junk = [[object()] for _ in range(300_000)]
        del junk
        worker_done.set()

    threading.Thread(target=worker, daemon=True).start()
    deadline = time.monotonic() + 20
    while not worker_done.is_set() and time.monotonic() < deadline:
        app.processEvents()
        time.sleep(0.01)
    print("worker", "finished" if worker_done.is_set() else "STUCK", flush=True)
    while gone() is not None and time.monotonic() < deadline:
        app.processEvents()  # the GUI-thread collector's timer runs here
        time.sleep(0.05)
    sys.stdout.flush()
    import os; os._exit(0)
""")


@pytest.mark.process
def test_a_worker_threads_allocations_never_destroy_a_qt_object() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "QT_QPA_PLATFORM": "offscreen"}
    proc = subprocess.run([sys.executable, "-c", STATION], env=env, capture_output=True,
                          text=True, timeout=budget_s(90))
    assert proc.stdout.split("\n")[:2] == ["worker finished", "finalised on MainThread"], \
        (proc.returncode, proc.stdout, proc.stderr[-2000:])
