"""A database on a read-only file system can still be listed, shown and reported (issue 15,
docs/reliability.md). We run as root here, and chmod does not stop root: the honest test is a
file on a tmpfs remounted read-only (skipped, with the reason, where mount is refused)."""

from __future__ import annotations

import sqlite3
import subprocess
from pathlib import Path

import pytest

from app.cli.main import main
from app.storage import migrate
from app.storage.opening import open_database, open_for_reading
from app.storage.synthetic import full_run
from app.storage.writer import RunWriter
from ui.history.source import open_source

RUN_ID = "read-only-run"


def _mount(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["mount", *args], capture_output=True, text=True)


@pytest.fixture
def read_only_folder(tmp_path: Path):
    """A folder on its own tmpfs: ``fill(folder)`` writes into it, then it is remounted ro."""
    folder = tmp_path / "ro"
    folder.mkdir()
    done = _mount("-t", "tmpfs", "-o", "size=16m", "tmpfs", str(folder))
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs to make a read-only file system: {done.stderr.strip()}")

    def remount_read_only() -> Path:
        done = _mount("-o", "remount,ro", str(folder))
        assert done.returncode == 0, done.stderr
        return folder

    try:
        yield folder, remount_read_only
    finally:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True)


def store_run(folder: Path, old_schema: bool = False) -> str:
    path = folder / "station.db"
    url = f"sqlite:///{path}"
    database = open_database(url)
    writer = RunWriter(database)
    for event in full_run(run_id=RUN_ID, samples_per_phase=5):
        writer(event)
    writer.close()
    database.close()
    conn = sqlite3.connect(path)  # leave no -wal/-shm: a station closed cleanly
    try:
        conn.execute("PRAGMA journal_mode = DELETE")
        if old_schema:
            with conn:
                conn.execute("UPDATE alembic_version SET version_num = ?",
                             (migrate.revisions()[-2].id,))
    finally:
        conn.close()
    return url


@pytest.mark.process
def test_runs_list_show_and_report_on_a_read_only_file_system(read_only_folder, tmp_path,
                                                             capsys) -> None:
    folder, remount_read_only = read_only_folder
    url = store_run(folder)
    remount_read_only()
    with pytest.raises(OSError):
        (folder / "probe").write_text("x")  # really read-only, also for root
    assert main(["runs", "list", f"--db={url}"]) == 0
    assert RUN_ID[:8] in capsys.readouterr().out
    assert main(["runs", "show", RUN_ID, f"--db={url}"]) == 0
    assert "Samples SHA-256" in capsys.readouterr().out
    out = tmp_path / "reports"
    out.mkdir()
    assert main(["report", RUN_ID, f"--db={url}", f"--pdf={out / 'r.pdf'}",
                 f"--xlsx={out / 'r.xlsx'}"]) == 0
    assert (out / "r.pdf").stat().st_size > 0 and (out / "r.xlsx").stat().st_size > 0
    database = open_for_reading(url)
    assert database.read_only and database.interrupted == ()
    database.close()
    history = open_source(url)  # the history view: the same database, no fallback
    assert history.database is not None and history.database.read_only, history.problem
    history.database.close()
    assert sorted(p.name for p in folder.iterdir()) == ["station.db"]  # nothing written


@pytest.mark.process
def test_an_older_schema_read_only_says_so_in_one_line(read_only_folder, capsys) -> None:
    folder, remount_read_only = read_only_folder
    url = store_run(folder, old_schema=True)
    remount_read_only()
    assert main(["runs", "list", f"--db={url}"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert (f"read-only database at schema {migrate.revisions()[-2].id}; open it writable "
            "once to upgrade") in err


def test_a_writable_database_is_still_opened_for_recovery(tmp_path) -> None:
    url = store_run(tmp_path)
    database = open_for_reading(url)
    assert not database.read_only
    database.close()
