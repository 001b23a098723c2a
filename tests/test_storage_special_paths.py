"""Where the station's files may be (issue 25 minors): ``STORWATT_DATA_DIR`` naming a file
(a FileExistsError traceback in every command), a database URL naming a device (opened as an
empty database, ``<device>-journal`` created beside it) or a pipe, and ``/proc/self/mem``
reported as a full disk. Device nodes and pipes are made in the test's own folder."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
import sqlalchemy as sa

from app.cli.main import main
from app.storage.opening import open_database
from app.storage.errors import DatabaseUnreachableError, DiskFullError, StorageError, classify
from tests.support.bounded import outcome_within


def test_a_data_dir_that_is_a_file_is_one_line(tmp_path: Path, monkeypatch,
                                               capsys: pytest.CaptureFixture) -> None:
    not_a_folder = tmp_path / "data"
    not_a_folder.write_text("a file")
    monkeypatch.setenv("STORWATT_DATA_DIR", str(not_a_folder))
    monkeypatch.delenv("STORWATT_DB", raising=False)
    assert main(["runs", "list"]) == 1
    err = capsys.readouterr().err
    assert err == (f"storwatt runs: the StorWatt data folder {not_a_folder} "
                   "(STORWATT_DATA_DIR) is a file, not a folder: point STORWATT_DATA_DIR at a "
                   "folder\n")
    assert not_a_folder.read_text() == "a file"


def _open_within(url: str) -> BaseException | None:
    return outcome_within(lambda: open_database(url).close(), f"opening {url}")


def test_a_database_url_naming_a_device_node_is_refused(tmp_path: Path) -> None:
    node = tmp_path / "null"
    try:  # this folder's own node for the null device
        os.mknod(node, stat.S_IFCHR | 0o600, os.makedev(1, 3))
    except OSError as exc:
        pytest.skip(f"cannot make a device node here: {exc}")
    exc = _open_within(f"sqlite:///{node}")
    assert isinstance(exc, DatabaseUnreachableError), repr(exc)
    assert f"{node} is a device, not a database file" in str(exc)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["null"]  # before: null-journal too


def test_a_database_url_naming_a_pipe_is_refused_without_waiting(tmp_path: Path) -> None:
    fifo = tmp_path / "runs.db"
    os.mkfifo(fifo)
    try:
        exc = _open_within(f"sqlite:///{fifo}")
    finally:  # a reader stuck on the pipe (before) gets its end of file
        fd = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)
        os.close(fd)
    assert isinstance(exc, DatabaseUnreachableError), repr(exc)
    assert "is a pipe or socket, not a database file" in str(exc)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["runs.db"]


def test_a_database_in_proc_is_refused_and_never_called_a_full_disk() -> None:
    url = "sqlite:////proc/self/mem"
    error = classify(sa.exc.OperationalError("INSERT", {}, Exception("disk I/O error")), url)
    assert not isinstance(error, DiskFullError) and isinstance(error, StorageError)
    assert "full" not in str(error)
    from app.storage.sqlite_file import refuse_special_path

    with pytest.raises(DatabaseUnreachableError, match="not on a disk"):
        refuse_special_path(url, "/proc/self/mem")  # checked only: nothing is opened
