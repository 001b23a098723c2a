"""The run database under two stations and under a clean-up script (issue 15's matrix,
docs/reliability.md): two stations running at once on one SQLite file both store every
sample, and a database file deleted under a running station is put back with nothing lost."""

from __future__ import annotations

import glob
import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.core.records import RunConfig, RunStatus
from app.sequencer import events as ev
from app.station.session import open_session
from app.storage.opening import open_database
from app.storage.repository import list_runs, load_run
from tests.support.time_budget import budget_s

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.realtime("two real station processes on one database file")
@pytest.mark.process
def test_two_stations_running_at_once_on_one_sqlite_file_store_both_runs(
        tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'shared.db'}"
    stations = [subprocess.Popen(
        [sys.executable, "-m", "app.cli.main", "run", "--method=smoke", "--lab=sim-direct",
         "--taxonomy=online-2", f"--db={url}", f"--out={tmp_path / f'out{i}'}", "--quiet"],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True) for i in range(2)]
    outputs = [station.communicate(timeout=budget_s(180)) for station in stations]
    assert [s.returncode for s in stations] == [0, 0], outputs
    database = open_database(url)
    runs = list_runs(database)
    assert len(runs) == 2 and {r.status for r in runs} == {RunStatus.COMPLETED}
    counts = [len(load_run(database, r.run_id).power.t) for r in runs]
    assert min(counts) > 50, counts  # each run's whole record, not one of them


@pytest.mark.realtime("the writer restores a deleted database file while a real-clock run "
                       "goes on (on a fake clock the run ends first and the test waits 60 s)")
def test_a_database_file_deleted_under_a_running_station_is_restored_with_nothing_lost(
        tmp_path: Path, caplog) -> None:
    db = tmp_path / "runs.db"
    published: list[tuple[int, float]] = []

    def delete_in_mw1(event: ev.RunEvent) -> None:
        if isinstance(event, ev.PowerSamples):
            published.extend((event.phase_index, s.t) for s in event.samples)
        if isinstance(event, ev.PhaseStarted) and event.phase.name == "MW1" and db.exists():
            for path in glob.glob(f"{db}*"):  # the file, its -wal and -shm: rm runs.db*
                os.unlink(path)

    session = open_session(RunConfig(method="smoke", taxonomy="online-2", lab="sim-direct"),
                           db_url=f"sqlite:///{db}", listeners=[delete_in_mw1])
    assert session.run() is RunStatus.COMPLETED
    assert db.exists(), "the run went into the deleted file and was lost with it"
    assert any("was deleted under the running station; restored" in r.message
               for r in caplog.records)
    stored = load_run(open_database(f"sqlite:///{db}"), session.run_id)
    assert stored.status is RunStatus.COMPLETED
    assert set(zip(stored.power.phase_index.tolist(), stored.power.t.tolist())) == \
        set(published)  # every sample, from before and after the deletion
