"""Screenshot of the COM savings view for docs/history.md, from the seed's RAID 1 → RAID 5
example (green-grid-coms-poms.txt) stored as two runs in a scratch database.

Run under Xvfb or offscreen: ``QT_QPA_PLATFORM=offscreen .venv/bin/python -m
tools.com_savings_shot docs/screenshots`` (nothing touches the station's database).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from PySide6.QtWidgets import QApplication

from app.core.records import MetricResult, RunConfig, RunStatus, SutDescription
from app.sequencer import events as ev
from app.storage.db import Database
from app.storage.opening import open_database
from app.storage.writer import RunWriter
from ui.history.view import HistoryView

#: (run id, drives, RAID, EP_RI inputs (GB, idle W), EP_MW1 inputs (IOPS, active W)): the
#: seed's "Raid Parity" column, 450 GB drives, usable capacity held at 36,000 GB
SEED_RUNS = (("5eed0001-raid1-baseline", 160, "RAID 1", (36_000.0, 2360.0), (36_010.0, 3134.0)),
             ("5eed0002-raid5-optimised", 107, "RAID 5", (36_000.0, 1564.0), (17_040.0, 2200.0)))


def store_seed_runs(database: Database) -> list[str]:
    """Store the seed's two configurations as completed runs holding only their metrics."""
    ids = []
    for run_id, drives, raid, (gb, idle_w), (iops, active_w) in SEED_RUNS:
        config = RunConfig(method="emerald-block-v3", taxonomy="online-4", lab="sim",
                           station="seed", operator="Green Grid COM study",
                           sut=SutDescription(model="High-mid array", drive_count=drives,
                                              raid=raid, raw_capacity_bytes=int(gb * 1e9)))
        metrics = (MetricResult("EP_MW1", iops / active_w, "IOPS/W", True, "", 1800.0,
                                active_w, iops, "IOPS"),
                   MetricResult("EP_RI", gb / idle_w, "GB/W", True, "", 7200.0, idle_w, gb,
                                "GB"))
        writer = RunWriter(database)
        for event in (ev.RunStarted(run_id, config, "emerald-block-v3", "3.0.0-sw1", True, (),
                                    0.0, "2016-01-01T00:00:00+00:00", 0.0),
                      *(ev.MetricComputed(m) for m in metrics),
                      ev.RunFinished(RunStatus.COMPLETED, 1.0, metrics, "")):
            writer(event)
        writer.close()
        ids.append(run_id)
    return ids


def main(out_dir: str) -> int:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    app = QApplication.instance() or QApplication(sys.argv)
    with tempfile.TemporaryDirectory() as folder:
        database = open_database(f"sqlite:///{Path(folder) / 'savings.db'}")
        base, opt = store_seed_runs(database)
        view = HistoryView(database)
        view.resize(1400, 720)
        view.show()
        savings = view.savings(base, opt)
        assert savings is not None
        savings.base_enclosures.setValue(2)  # the seed's CAPEX counts two enclosures fewer
        app.processEvents()
        view.grab().save(str(out / "com-savings.png"))
        view.close()
        database.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "docs/screenshots"))
