"""Screenshots of the history, a run detail, a comparison and the best-foot-forward view for
docs/history.md.

Run under Xvfb on a lab laptop's screen: ``xvfb-run -a -s "-screen 0 1366x768x24" .venv/bin/python
-m tools.history_screenshots docs/screenshots`` (a scratch database with 400 list runs and two full
synthetic runs, and a simulated product family of eight drive counts; nothing touches the
station's database).
"""

from __future__ import annotations

import sys
import tempfile
from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import QSize
from PySide6.QtWidgets import QApplication

from app.sequencer import events as ev
from app.storage.audit import add_audit_entry
from app.storage.opening import open_database
from app.storage.synthetic import full_run
from app.storage.writer import RunWriter
from app.storage.synthetic import fill_history
from app.station.sim_family import run_family
from ui.history.view import HistoryView
from ui.widgets.screen_fit import fit_to_screen


def _events(t0: float, ep_rr: float) -> list:
    out = []
    for e in full_run(t0, samples_per_phase=240):
        if isinstance(e, ev.IntervalClosed):  # inside the phase's last attempt
            r = e.interval
            end = r.start_s + 60 - r.index
            e = ev.IntervalClosed(replace(r, start_s=end - 5 * (5 - r.index), end_s=end - 5 * (
                4 - r.index), ep=r.ep * ep_rr / 29.3 * (1 + 0.01 * r.index),
                wma=r.wma * ep_rr / 29.3))
        if isinstance(e, ev.MetricComputed) and e.metric.name == "EP_RR":
            e = ev.MetricComputed(replace(e.metric, value=ep_rr))
        if isinstance(e, ev.RunFinished):
            e = ev.RunFinished(e.status, e.t, (replace(e.metrics[0], value=ep_rr),
                                               e.metrics[1]))
        out.append(e)
    return out


def _store(database, events) -> str:
    writer = RunWriter(database)
    for e in events:
        writer(e)
    writer.close()
    return events[0].run_id


def main(out_dir: str) -> int:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    app = QApplication.instance() or QApplication(sys.argv)
    with tempfile.TemporaryDirectory() as folder:
        database = open_database(f"sqlite:///{Path(folder) / 'history.db'}")
        fill_history(database, 400)
        first = _store(database, _events(1000.0, 29.3))
        second = _store(database, _events(5000.0, 26.37))
        add_audit_entry(database, second, "disposition", "EP_RR 10 % below the reference "
                        "run; re-test after firmware update", "Q. A. Lead", "rejected")
        view = HistoryView(database)
        fit_to_screen(view, QSize(1500, 900))  # as the station opens it on this screen
        view.show()
        view.sort_by("Started (UTC)", descending=True)
        view.table.selectRow(0)
        app.processEvents()
        view.grab().save(str(out / "history-list.png"))
        detail = view.open_detail(second)
        detail.phase_choice.setCurrentIndex(2)
        settle = [app.processEvents() for _ in range(3)]  # noqa: F841 (layout, then paint)
        view.grab().save(str(out / "history-detail.png"))
        detail.tabs.setCurrentIndex(1)
        app.processEvents()
        view.grab().save(str(out / "history-detail-metrics.png"))
        detail.tabs.setCurrentIndex(5)
        app.processEvents()
        view.grab().save(str(out / "history-detail-audit.png"))
        view.compare([first, second])
        app.processEvents()
        view.grab().save(str(out / "history-compare.png"))
        run_family(database.url)
        view.best_foot_forward()
        app.processEvents()
        view.grab().save(str(out / "best-foot-forward.png"))
        view.close()
        database.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "docs/screenshots"))
