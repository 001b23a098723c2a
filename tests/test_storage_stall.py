"""A stalled data disk is announced (issue 40 §5, docs/reliability.md).

Seen on main: the data folder's disk frozen (``fsfreeze``) for 45 s — the station waited with
no word; killed during the freeze, ~80 samples it had measured were lost and nothing had said
that writes had stopped. Here a commit blocks on an event (the frozen disk, in process) from
the start of MW1 on the fake clock: past the stall limit the console says so with the samples
held and where; when the write completes the run says how long it lasted, every sample is
stored, and the run's stored log notes the stall.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

import pytest

import app.station.session
import app.storage.writer
from app.cli.main import main
from app.sequencer import events as ev
from app.station.storage_stall import (DEFAULT_COMMIT_STALL_S, ENV, RESUMED, STALLED,
                                       StallLimitError, StallWatch, commit_stall_limit)
from app.storage.writer import Held
from drivers.clock import FakeClock
from tests.support.small_disk import freeze, mounted_ext4, thaw
from tests.support.time_budget import budget_s

LIMIT_S = 2.0


class FrozenDisk:
    """The writer's commits block (as on a frozen disk) from MW1's start until SR starts."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.frozen = False
        self.stuck = False  # a write is blocked (the writer's stall clock runs only then)
        self.thawed = threading.Event()
        self.blocked = 0
        self.stuck_write = 0
        self.writer_blocked = threading.Event()
        self.writers: list[app.storage.writer.RunWriter] = []
        self.logs: list[ev.LogMessage] = []
        self.samples = 0
        real_apply = app.storage.writer.apply_events

        def apply(*args, **kwargs):
            if self.frozen and threading.current_thread().name == "run-writer":
                self.blocked += 1
                self.stuck_write = self.writers[0].write_under_way
                self.writer_blocked.set()
                assert self.thawed.wait(budget_s(30)), "the test never thawed the disk"
                self.stuck = False
            return real_apply(*args, **kwargs)

        monkeypatch.setattr(app.storage.writer, "apply_events", apply)
        real_open = app.station.session.open_session

        def open_on_fake_clock(config, **kwargs):
            kwargs["listeners"] = [*kwargs.get("listeners", ()), self._listen]
            kwargs["clock"] = clock = FakeClock()
            session = real_open(config, **kwargs)
            # every other write takes no station time: on the fake clock a commit's real
            # milliseconds would be whole seconds of a plan that runs at CPU speed
            session.writer.clock = lambda: clock.now() if self.stuck else 0.0
            self.writers.append(session.writer)
            return session

        monkeypatch.setattr(app.station.session, "open_session", open_on_fake_clock)

    def _listen(self, e: ev.RunEvent) -> None:
        if isinstance(e, ev.PhaseStarted) and e.phase.name == "MW1":
            self.frozen = self.stuck = True
            self.writers[0].flush(0.0)  # a commit now, before the fake clock runs the plan out
            assert self.writer_blocked.wait(budget_s(10)), "the writer never committed"
        elif isinstance(e, ev.PhaseStarted) and e.phase.name == "SR":
            self.frozen = False
            self.thawed.set()  # the stuck write ends before the plan runs on: on the real
            deadline = time.monotonic() + budget_s(10)  # clock it would within a period
            while self.writers[0].write_under_way == self.stuck_write:
                assert time.monotonic() < deadline, "the thawed write never completed"
                time.sleep(0.01)
        elif isinstance(e, ev.LogMessage):
            self.logs.append(e)
        elif isinstance(e, ev.PowerSamples | ev.TemperatureSamples):
            self.samples += len(e.samples)


def test_a_commit_that_does_not_complete_is_announced_and_noted_in_the_record(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture) -> None:
    monkeypatch.setenv(ENV, str(LIMIT_S))
    disk = FrozenDisk(monkeypatch)
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    rc = main(["run", "--lab", "sim-direct", "--method", "smoke", "--db", url])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert disk.blocked >= 1
    stalls = [e for e in disk.logs if e.message.startswith(STALLED)]
    assert len(stalls) == 1, [e.message for e in disk.logs]  # once per stall, not per sample
    stall = stalls[0]
    print(stall.message)
    assert stall.level == "WARNING"
    assert f"limit {ENV} = {LIMIT_S:g} s" in stall.message
    assert "samples not yet stored are held, in memory only" in stall.message
    held = int(stall.message.split("; ")[1].split(" samples")[0])
    assert held > 0
    assert f"WARNING: {STALLED}" in out  # the console says so
    resumed = [e for e in disk.logs if e.message.startswith(RESUMED)]
    assert len(resumed) == 1 and resumed[0].t > stall.t
    with sqlite3.connect(tmp_path / "runs.db") as conn:
        stored = conn.execute("SELECT count(*) FROM power_samples").fetchone()[0]
        stored += conn.execute("SELECT count(*) FROM temperature_samples").fetchone()[0]
        noted = conn.execute("SELECT count(*) FROM events WHERE message LIKE ?",
                             (f"{STALLED}%",)).fetchone()[0]
    assert stored == disk.samples  # nothing lost
    assert noted == 1  # the run's record notes the stall


class _Writer:
    """A writer stand-in whose write has been under way ``stalled`` seconds."""

    def __init__(self) -> None:
        self.stalled = 0.0
        self.write_under_way = 0
        self.database = type("Db", (), {"url": "sqlite:///data/runs.db"})()

    def stalled_s(self) -> float:
        return self.stalled

    def held(self) -> Held:
        return Held(40, 15)


def test_the_watch_speaks_once_when_a_stall_passes_the_limit_and_once_when_it_ends() -> None:
    writer = _Writer()
    watch = StallWatch(writer, limit_s=10.0)  # type: ignore[arg-type]  # a stand-in writer
    said = []
    # (write under way, its seconds so far); write 5 starts as soon as write 4 ends
    for write, stalled in ((0, 0.0), (1, 0.4), (2, 9.9), (2, 10.0), (2, 30.0), (2, 70.0),
                           (0, 0.0), (3, 0.0), (3, 3.0), (4, 12.0), (5, 0.0), (5, 0.2)):
        writer.write_under_way, writer.stalled = write, stalled
        said += [(write, level, message) for level, message in watch()]
    assert [(w, level) for w, level, _ in said] == [(2, "WARNING"), (0, "INFO"),
                                                   (4, "WARNING"), (5, "INFO")]
    assert "40 samples not yet stored are held, 15 in the run journal, 25 in memory only" \
        in said[0][2]
    assert "after a stall of at least 70 s" in said[1][2]


def test_the_stall_limit_is_a_labelled_station_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV, raising=False)
    assert commit_stall_limit() == DEFAULT_COMMIT_STALL_S == 10.0
    monkeypatch.setenv(ENV, "30")
    assert commit_stall_limit() == 30.0
    for bad in ("0", "-1", "nan", "inf", "1e9", "ten"):
        monkeypatch.setenv(ENV, bad)
        with pytest.raises(StallLimitError, match=f"{ENV}=.* is not a stall limit: give seconds"):
            commit_stall_limit()


def test_the_run_view_shows_a_stall_in_a_banner_while_it_lasts(qtbot) -> None:
    from PySide6.QtCore import QSettings

    from ui.run.view import RunView

    view = RunView(settings=QSettings())
    qtbot.addWidget(view)
    watch = StallWatch(_Writer(), limit_s=10.0)  # type: ignore[arg-type]  # a stand-in writer
    watch.writer.write_under_way, watch.writer.stalled = 3, 12.0
    (level, stalled), = watch()
    view._on_log_message(ev.LogMessage(level, stalled, 40.0))
    assert view.storage_banner.isVisibleTo(view)
    assert view.storage_banner.text().startswith("STORAGE STALLED — a write to ")
    assert "40 samples not yet stored are held" in view.storage_banner.text()
    watch.writer.write_under_way, watch.writer.stalled = 0, 0.0
    (level, resumed), = watch()
    view._on_log_message(ev.LogMessage(level, resumed, 60.0))
    assert not view.storage_banner.isVisibleTo(view)


@pytest.mark.process
def test_a_really_frozen_data_disk_is_announced_and_nothing_is_lost(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture) -> None:
    """The seen case on a real filesystem: the data folder on an ext4 loop mount frozen with
    ``fsfreeze`` from MW1's start until SR's (the writer blocks in the kernel, as on main)."""
    with mounted_ext4(tmp_path / "disk", tmp_path / "disk.img") as disk:
        monkeypatch.setenv("STORWATT_DATA_DIR", str(disk))
        monkeypatch.setenv(ENV, str(LIMIT_S))
        seen = FrozenFilesystem(monkeypatch, disk)
        rc = main(["run", "--lab", "sim-direct", "--method", "smoke", "--db",
                   f"sqlite:///{disk / 'runs.db'}"])
        out = capsys.readouterr().out
        assert rc == 0, out
        assert seen.frozen_at is not None and seen.thawed_at is not None
        stalls = [e for e in seen.logs if e.message.startswith(STALLED)]
        print("\n".join(e.message for e in stalls))
        # the frozen write is announced while the disk is frozen (on the fake clock a thawed
        # commit's real milliseconds may pass the limit too: each is announced, and ends)
        assert any(seen.frozen_at <= e.t <= seen.thawed_at for e in stalls)
        assert len([e for e in seen.logs if e.message.startswith(RESUMED)]) == len(stalls)
        assert f"WARNING: {STALLED}" in out
        with sqlite3.connect(disk / "runs.db") as conn:
            stored = conn.execute("SELECT count(*) FROM power_samples").fetchone()[0]
            stored += conn.execute("SELECT count(*) FROM temperature_samples").fetchone()[0]
            noted = conn.execute("SELECT count(*) FROM events WHERE message LIKE ?",
                                 (f"{STALLED}%",)).fetchone()[0]
        assert stored == seen.samples and noted == len(stalls)


class FrozenFilesystem:
    """Freezes the data folder's filesystem when MW1 starts (after a commit has begun) and
    thaws it when SR starts, waiting there until the frozen write completed."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, disk: Path) -> None:
        self.disk = disk
        self.frozen_at: float | None = None
        self.thawed_at: float | None = None
        self.logs: list[ev.LogMessage] = []
        self.samples = 0
        self.writer: app.storage.writer.RunWriter | None = None
        self.clock = FakeClock()
        real_open = app.station.session.open_session

        def open_on_fake_clock(config, **kwargs):
            kwargs["listeners"] = [*kwargs.get("listeners", ()), self._listen]
            kwargs["clock"] = self.clock
            session = real_open(config, **kwargs)
            session.writer.clock = self.clock.now  # the freeze lasts a plan's station seconds
            self.writer = session.writer
            return session

        monkeypatch.setattr(app.station.session, "open_session", open_on_fake_clock)

    def _listen(self, e: ev.RunEvent) -> None:
        assert self.writer is not None
        if isinstance(e, ev.PhaseStarted) and e.phase.name == "MW1":
            assert self.writer.flush(budget_s(10))
            freeze(self.disk)
            self.frozen_at = e.t
            self.writer.flush(0.0)  # a commit now: it blocks in the kernel
            deadline = time.monotonic() + budget_s(10)
            while not self.writer.write_under_way:
                assert time.monotonic() < deadline, "the writer never began its write"
                time.sleep(0.01)
            self.frozen_write = self.writer.write_under_way
        elif isinstance(e, ev.PhaseStarted) and e.phase.name == "SR":
            thaw(self.disk)
            self.thawed_at = e.t
            deadline = time.monotonic() + budget_s(10)
            while self.writer.write_under_way == self.frozen_write:
                assert time.monotonic() < deadline, "the thawed write never completed"
                time.sleep(0.01)
        elif isinstance(e, ev.LogMessage):
            self.logs.append(e)
        elif isinstance(e, ev.PowerSamples | ev.TemperatureSamples):
            self.samples += len(e.samples)


def test_a_server_database_is_named_without_its_password() -> None:
    """The lines go to the console and into the stored record: never a password."""
    writer = _Writer()
    writer.database.url = "postgresql+psycopg://station:s3cret@lab-db/storwatt"
    watch = StallWatch(writer, limit_s=10.0)  # type: ignore[arg-type]  # a stand-in writer
    writer.write_under_way, writer.stalled = 7, 11.0
    writer_lines = [message for _, message in watch()]
    writer.write_under_way, writer.stalled = 0, 0.0
    writer_lines += [message for _, message in watch()]
    assert len(writer_lines) == 2 and all("s3cret" not in m and "station:***@lab-db" in m
                                          for m in writer_lines)
