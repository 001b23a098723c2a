"""fio writes only the file the station checked (issue 25, item 5): the scratch target swapped
for a symbolic link to a user's file between its check and fio's start destroyed 377 of 1000
lines of that file. Now the checked (device, inode) is held open and handed to fio as
``/dev/fd/N``; a target that became a link or another file before the start is refused with
fio never started, and one swapped while fio runs fails the phase when it ends. Real fio
(psync, a 1 MiB scratch file, 1 s phases)."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

import drivers.fio.engine as engine_module
from drivers.clock import MonotonicClock
from drivers.fio.engine import FioEngine, FioRunError
from drivers.fio.safety import TargetPolicy
from drivers.interfaces import WorkloadError, WorkloadProfile

needs_fio = pytest.mark.skipif(not any(os.access(os.path.join(p, "fio"), os.X_OK)
                                       for p in os.environ["PATH"].split(os.pathsep)),
                               reason="fio is not installed (CI installs it)")
pytestmark = [pytest.mark.fio, needs_fio,
              pytest.mark.skipif(not sys.platform.startswith("linux"),
                                 reason="fio reopens the station's descriptor on Linux only")]
MW1 = WorkloadProfile("MW1", 4096, 30, True, 4096, duration_s=1.0)
USER_TEXT = "".join(f"line {i:4d} of a user's file the station did not create\n"
                    for i in range(1000))


def _engine(tmp_path: Path) -> tuple[FioEngine, Path, Path]:
    target, victim = tmp_path / "scratch.dat", tmp_path / "user.txt"
    victim.write_text(USER_TEXT)
    (tmp_path / "jobs").mkdir()
    engine = FioEngine([str(target)], clock=MonotonicClock(), ioengine="psync",
                       policy=TargetPolicy(create_size=1 << 20), workdir=tmp_path / "jobs")
    engine.check()  # creates the scratch file and its sidecar
    return engine, target, victim


def _swap_for_link(target: Path, victim: Path) -> None:
    target.unlink()
    target.symlink_to(victim)


@pytest.mark.realtime("real fio runs a 1 s write phase into the file it was handed")
def test_a_target_swapped_for_a_link_as_fio_starts_writes_only_the_checked_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    engine, target, victim = _engine(tmp_path)
    real_process = engine_module.FioProcess

    def swap_then_start(*args, **kwargs):  # the swap in the window after every check
        _swap_for_link(target, victim)
        return real_process(*args, **kwargs)

    monkeypatch.setattr(engine_module, "FioProcess", swap_then_start)
    engine.start(MW1)
    kept, deadline = [], time.monotonic() + 10
    while engine.running and time.monotonic() < deadline:
        kept += engine.poll()
        time.sleep(0.1)
    with pytest.raises(FioRunError, match="replaced while the phase ran") as caught:
        engine.stop()
    engine.close()
    assert victim.read_text() == USER_TEXT  # before: 377 of 1000 lines destroyed
    assert sum(i.write_ios for i in caught.value.intervals) > 0  # into the checked file
    assert "# target /dev/fd/" in caught.value.args[0] or "/dev/fd/" in engine._job
    with pytest.raises(WorkloadError, match="refusing fio targets"):
        engine.start(MW1)  # the next phase refuses the link as before
    assert victim.read_text() == USER_TEXT


@pytest.mark.parametrize("swap", ["link", "other file"])
def test_a_target_swapped_after_its_check_is_refused_before_fio_starts(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, swap: str) -> None:
    engine, target, victim = _engine(tmp_path)
    real_check = engine._safe_targets
    started: list[object] = []

    def check_then_swap(writing: bool):
        checks = real_check(writing)
        if swap == "link":
            _swap_for_link(target, victim)
        else:  # a file of the same name and size in the scratch file's place
            other = tmp_path / "other.dat"
            other.write_bytes(bytes(1 << 20))
            os.replace(other, target)
        return checks

    monkeypatch.setattr(engine, "_safe_targets", check_then_swap)
    monkeypatch.setattr(engine_module, "FioProcess", lambda *a, **k: started.append(a))
    with pytest.raises(WorkloadError, match="after it was checked|replaced after its check"):
        engine.start(MW1)
    assert started == []  # before: fio was started on whatever the name led to
    assert victim.read_text() == USER_TEXT
    engine.close()
