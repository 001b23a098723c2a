"""Disk full on a real small filesystem (issue 40, docs/reliability.md): the station's data
folder on a size-capped tmpfs that a filler file fills when MW1 starts.

The journal reserved at the start takes every event the full disk refuses to the database: the
run ends in a stated status with every committed sample kept, its end-of-run line names the
journal that was written (and only that), and once space is freed ``storwatt db recover``
brings the database every sample the run produced. (2 MiB, where the journal cannot be
reserved, refuses the run: tests/test_storage_durability_lost.py.)
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

import app.station.session
from app.cli.main import main
from app.sequencer import events as ev
from drivers.clock import FakeClock
from tests.support.small_disk import fill, mounted_tmpfs

pytestmark = pytest.mark.process


def _samples(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT count(*) FROM power_samples").fetchone()[0]


class FillAtMW1:
    """Runs on the fake clock; when MW1 starts, commits what came before, then fills the disk."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, disk: Path) -> None:
        self.disk = disk
        self.committed_before = -1
        self.produced = 0
        self.filler: Path | None = None
        self.session: app.station.session.RunSession | None = None
        real = app.station.session.open_session

        def open_filled(config, **kwargs):
            kwargs["listeners"] = [*kwargs.get("listeners", ()), self._listen]
            kwargs["clock"] = FakeClock()
            self.session = real(config, **kwargs)
            return self.session

        monkeypatch.setattr(app.station.session, "open_session", open_filled)
        monkeypatch.setattr(app.station.session, "DURABLE_WAIT_S", 1.0)

    def _listen(self, e: ev.RunEvent) -> None:
        if isinstance(e, ev.PowerSamples):
            self.produced += len(e.samples)
        if isinstance(e, ev.PhaseStarted) and e.phase.name == "MW1" and self.filler is None:
            assert self.session is not None and self.session.writer.flush(10.0)
            self.committed_before = _samples(self.disk / "runs.db")
            self.filler = fill(self.disk)


def test_a_disk_that_fills_mid_run_keeps_every_sample_in_the_reserved_journal(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture) -> None:
    with mounted_tmpfs(tmp_path / "disk", "8m") as disk:
        monkeypatch.setenv("STORWATT_DATA_DIR", str(disk))
        db = disk / "runs.db"
        run = FillAtMW1(monkeypatch, disk)
        rc = main(["run", "--lab", "sim-direct", "--method", "smoke", "--db", f"sqlite:///{db}"])
        captured = capsys.readouterr()
        out = captured.out + captured.err
        print(out[-3000:])
        assert run.filler is not None and run.committed_before > 0
        journals = list((disk / "journal").glob("*.swj"))
        assert len(journals) == 1
        assert "Traceback" not in out and "Errno" not in out
        assert "disk full" in out and str(journals[0]) in out  # the journal it checked
        assert "db recover" in out
        # measured whole, but not in the database: the exit code says the run needs an import
        assert rc == 1 and "Run finished: COMPLETED; disk full: " in out
        assert _samples(db) >= run.committed_before  # every committed sample kept
        run.filler.unlink()  # space freed: the journal brings back the rest
        assert main(["db", "recover", "--db", f"sqlite:///{db}"]) == 0
        assert _samples(db) == run.produced
        assert not list((disk / "journal").glob("*.swj"))
