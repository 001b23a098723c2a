"""A demo run recorded by the real sequencer on a fake clock holds what the reports need.

The runs go through the same code as a station run (simulated SUT, in-process simulated
meters, sequencer, RunWriter, SQLite), only time is simulated, so a demo plan takes a second.
The helpers are in ``tests/support/recorded_runs.py``.
"""

from __future__ import annotations

from pathlib import Path

from app.core.records import PhaseKind, RunStatus
from app.storage.repository import load_run
from tests.support.recorded_runs import pause_once_in, record_run

def test_recorded_demo_run_is_stored_with_what_reports_need(tmp_path: Path) -> None:
    recorded = record_run(tmp_path / "r.db", hook=pause_once_in("RW"))
    run = load_run(recorded.database, recorded.run_id)
    assert recorded.status is RunStatus.COMPLETED
    assert {m.name for m in run.metrics} >= {"EP_MW1", "EP_RR", "EP_SR", "EP_RI",
                                             "COM_deduplication"}
    rw = next(p for p in run.phases if p.info.profile == "RW" and p.info.kind is PhaseKind.ACTIVE)
    assert rw.attempts == 2
    assert len(run.power) > 500 and len(run.histograms) == 6 and run.job_files
