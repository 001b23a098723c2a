"""File targets are written with direct IO wherever their file system allows it (issue 24
item 8): the scratch-file rehearsal wrote through the page cache (``direct=0``) and measured
the station's RAM; buffered IO now happens only when asked or when the file system refuses
O_DIRECT (tmpfs), and the run's workload-engine line, printed on the report, says which."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from app.cli.cmd_run import config_from_args
from app.cli.main import build_parser
from drivers.clock import MonotonicClock
from drivers.fio.direct_io import refuses_direct_io
from drivers.fio.engine import FioEngine
from drivers.fio.safety import TargetPolicy

pytestmark = [pytest.mark.fio,
              pytest.mark.skipif(shutil.which("fio") is None, reason="fio not installed")]


def engine(folder: Path, **kw) -> FioEngine:
    return FioEngine([str(folder / "target.dat")], clock=MonotonicClock(),
                     policy=TargetPolicy(create_size=8 << 20), ioengine="psync",
                     workdir=folder, **kw)


def test_a_scratch_file_is_written_with_direct_io(tmp_path: Path) -> None:
    e = engine(tmp_path)
    assert e.check().endswith("(scratch file, 8 MiB); direct IO")
    assert e._options().direct is True


def test_buffered_io_only_when_asked_and_then_disclosed(tmp_path: Path) -> None:
    e = engine(tmp_path, direct=False)
    assert e.check().endswith("; buffered IO (through the page cache, as asked)")
    assert e._options().direct is False
    args = build_parser().parse_args(["run", "--buffered-io"])
    assert config_from_args(args).buffered_io is True


def test_a_file_system_without_direct_io_is_named(tmp_path: Path, monkeypatch) -> None:
    """tmpfs before Linux 6.6 and some FUSE file systems refuse O_DIRECT with EINVAL (this
    station's /dev/shm takes it, so the refusal is played)."""
    monkeypatch.setattr("drivers.fio.engine.refuses_direct_io",
                        lambda path: f"the file system holding {path} refuses direct IO "
                                     "(O_DIRECT)")
    e = engine(tmp_path)
    assert "; buffered IO: the file system holding" in e.check()
    assert e._options().direct is False
    assert refuses_direct_io(str(tmp_path / "target.dat")) == ""  # ext4 takes it
