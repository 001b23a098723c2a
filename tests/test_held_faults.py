"""Regression guards for the fault cases of issue 25 that held on the main branch they were
tried against (docs/reliability.md): a stop signal at every phase start, the SQLite file moved
away mid-run, a newer schema refused by every command and left byte-identical."""

from __future__ import annotations

import hashlib
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
import sqlalchemy as sa

import app.station.session
from app.cli.main import main
from app.core.records import RunStatus
from app.sequencer import events as ev
from app.storage import migrate
from app.storage.opening import open_database
from drivers.clock import FakeClock
from tests.support.stored_runs import power_samples, store_synthetic_run, write_with_fault
from app.storage.repository import list_runs, load_run


class StopAtPhase:
    """Calls the sequencer's abort — what SIGTERM, SIGHUP and Ctrl-C call — when phase
    ``index`` starts, and counts the power samples the sequencer published."""

    def __init__(self, index: int, abort: Callable[[str], None]) -> None:
        self.index, self.abort = index, abort
        self.power = 0
        self.phases = 0

    def __call__(self, e: ev.RunEvent) -> None:
        if isinstance(e, ev.RunStarted):
            self.phases = len(e.phases)
        elif isinstance(e, ev.PowerSamples):
            self.power += len(e.samples)
        elif isinstance(e, ev.PhaseStarted) and e.phase.index == self.index:
            self.abort("SIGTERM: the station's service was stopped")


def _run_stopped_at(tmp_path: Path, index: int, monkeypatch) -> tuple[int, StopAtPhase, str]:
    real = app.station.session.open_session
    stops: list[StopAtPhase] = []

    def on_fake_clock(config, **kwargs):
        session = None

        def abort(reason: str) -> None:
            session.sequencer.abort(reason)

        stop = StopAtPhase(index, abort)
        stops.append(stop)
        kwargs["listeners"] = [*kwargs.get("listeners", ()), stop]
        session = real(config, **{**kwargs, "clock": FakeClock()})
        return session

    monkeypatch.setattr(app.station.session, "open_session", on_fake_clock)
    url = f"sqlite:///{tmp_path / f'runs-{index}.db'}"
    code = main(["run", "--lab", "sim-direct", "--method", "smoke", "--db", url,
                 "--out", str(tmp_path / f"out-{index}")])
    return code, stops[0], url


def test_a_stop_signal_at_every_phase_start_aborts_with_partial_reports_and_loses_nothing(
        tmp_path: Path, monkeypatch, capsys) -> None:
    index, phases = 0, None
    while phases is None or index < phases:
        code, stop, url = _run_stopped_at(tmp_path, index, monkeypatch)
        phases = stop.phases
        assert code == 1, index
        run = list_runs(open_database(url))[0]
        stored = load_run(open_database(url), run.run_id)
        assert stored.status is RunStatus.ABORTED and "SIGTERM" in stored.error, index
        assert len(stored.power) == stop.power, index  # every published sample stored
        out = tmp_path / f"out-{index}"
        assert sorted(p.suffix for p in out.iterdir()) == [".pdf", ".xlsx"], index
        index += 1
    assert phases >= 5
    assert "Traceback" not in capsys.readouterr().err


def test_the_sqlite_file_moved_away_mid_run_is_put_back_with_nothing_lost(
        tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    database = open_database(f"sqlite:///{path}", busy_timeout_s=0.1)

    def move_away() -> None:  # `mv runs.db* elsewhere/`
        for suffix in ("", "-wal", "-shm"):
            moved = Path(f"{path}{suffix}")
            if moved.exists():
                moved.rename(tmp_path / f"elsewhere{suffix}")

    events, stored = write_with_fault(database, "moved-away", move_away)
    assert stored.in_database
    run = load_run(open_database(f"sqlite:///{path}"), "moved-away")
    assert len(run.power) == power_samples(events) and run.status is RunStatus.COMPLETED


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("argv", [
    ["runs", "list"], ["runs", "show", "newer-run"], ["report", "newer-run"],
    ["db", "info"], ["db", "upgrade"], ["db", "recover"],
    ["run", "--lab", "sim-direct", "--method", "smoke"],
    ["run", "--resume", "newer-run"]], ids=lambda a: " ".join(a[:2]))
def test_a_newer_schema_is_refused_by_every_command_and_left_byte_identical(
        tmp_path: Path, argv: list[str], capsys, monkeypatch) -> None:
    path = tmp_path / "runs.db"
    url = f"sqlite:///{path}"
    store_synthetic_run(url, "newer-run-0001").close()
    newer = f"{int(migrate.head()) + 1:04d}"
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        conn.exec_driver_sql(f"UPDATE alembic_version SET version_num = '{newer}'")
    engine.dispose()
    with sqlite3.connect(path) as conn:  # one whole file, as a newer StorWatt left it
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    before = _digest(path)
    monkeypatch.chdir(tmp_path)  # `report` writes into the current folder
    assert main([*argv, "--db", url]) == 1
    err = capsys.readouterr().err
    assert newer in err and "Traceback" not in err, err
    assert _digest(path) == before
    assert not list(tmp_path.glob("*.pdf")) and not list(tmp_path.glob("*.xlsx"))


#: a report writer that loads everything, says "ready", and writes both reports on "go". Each
#: report's temporary file is held 0.5 s after it is written and synced, before its rename:
#: the reports are built in memory, so the file lived a few ms, and a loaded machine's poll
#: missed it (the kill came after the writer had ended)
_WRITER = """
import os
import sys
import time
from pathlib import Path

_fsync = os.fsync


def held_fsync(fd):
    _fsync(fd)
    time.sleep(0.5)


os.fsync = held_fsync
from app.reports.export import write_reports
from app.storage.opening import open_database
from app.storage.repository import load_run
run = load_run(open_database(sys.argv[1], recover_journals=False), "killed-report")
folder = Path(sys.argv[2])
print("ready", flush=True)
sys.stdin.readline()
write_reports(run, folder / "r.pdf", folder / "r.xlsx")
"""


def _report_child(url: str, folder: Path):
    """A report writer process, imports and loading done (so a kill moment lands in the
    report's own work), waiting for "go"."""
    import subprocess
    import sys

    root = Path(__file__).resolve().parent.parent
    return subprocess.Popen([sys.executable, "-c", _WRITER, url, str(folder)],
                            env={**os.environ, "PYTHONPATH": str(root)}, text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)


def _kill_when(proc, ready: Callable[[], bool], limit_s: float = 30.0) -> bool:
    """Tell ``proc`` to go and SIGKILL it as soon as ``ready()``; False if it ended first."""
    import time

    assert proc.stdout.readline().strip() == "ready"
    proc.stdin.write("go\n")
    proc.stdin.flush()
    deadline = time.monotonic() + limit_s
    try:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                return False
            if ready():
                proc.kill()
                return True
            time.sleep(0.0005)
        raise AssertionError("the report writer did not reach the moment")
    finally:
        proc.kill()
        proc.wait(10)


@pytest.mark.realtime("report processes are SIGKILLed at real moments of their work")
def test_a_report_killed_at_any_moment_is_never_torn(tmp_path: Path) -> None:
    """Report writers SIGKILLed the instant each report's temporary file appears: each
    destination is absent or whole (killed while loading, nothing is written at all)."""
    import openpyxl
    from pypdf import PdfReader

    url = f"sqlite:///{tmp_path / 'runs.db'}"
    store_synthetic_run(url, "killed-report-0001").close()

    def appeared(folder: Path, pattern: str) -> Callable[[], bool]:
        return lambda: any(folder.glob(pattern))

    moments = {"pdf temp": lambda f: appeared(f, "r.pdf.*.partial"),
               "xlsx temp": lambda f: appeared(f, "r.xlsx.*.partial")}
    folders = {name: tmp_path / name.replace(" ", "-") for name in moments}
    children = {}
    for name, folder in folders.items():  # started together: their imports overlap
        folder.mkdir()
        children[name] = _report_child(url, folder)
    killed = []
    for name, moment in moments.items():
        folder = folders[name]
        killed.append(_kill_when(children[name], moment(folder)))
        pdf, xlsx = folder / "r.pdf", folder / "r.xlsx"
        if pdf.exists():
            assert len(PdfReader(pdf).pages) > 0, name
        if xlsx.exists():
            openpyxl.load_workbook(xlsx, read_only=True).close()
    assert killed == [True, True]  # the moments while a report file is written
    assert (tmp_path / "xlsx-temp" / "r.pdf").exists()  # written whole before the kill
