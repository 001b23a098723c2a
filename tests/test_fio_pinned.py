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
from tests.support.time_budget import budget_s

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
    kept, deadline = [], time.monotonic() + budget_s(10)
    while engine.running and time.monotonic() < deadline:
        kept += engine.poll()
        time.sleep(0.1)
    with pytest.raises(FioRunError, match="replaced while the phase ran") as caught:
        engine.stop()
    engine.close()
    assert victim.read_text() == USER_TEXT  # before: 377 of 1000 lines destroyed
    assert sum(i.write_ios for i in caught.value.intervals) > 0  # into the checked file
    assert "# target /dev/fd/" in engine._job and f"= {target} (device" in engine._job
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


# --- causes named as what they are (issue 25 minors) ---------------------------------------

def _fake_fio(tmp_path: Path, body: str) -> str:
    """A script answering --version and --parse-only as fio does, and ``body`` otherwise."""
    real = next(os.path.join(p, "fio") for p in os.environ["PATH"].split(os.pathsep)
                if os.access(os.path.join(p, "fio"), os.X_OK))
    script = tmp_path / "fake-fio"
    script.write_text(f"""#!/bin/sh
case "$1" in
  --version) echo fio-3.33;;
  --parse-only) exec {real} "$@";;
  *) {body};;
esac
""")
    script.chmod(0o755)
    return str(script)


@pytest.mark.realtime("a fake fio prints its garbage and exits within 0.3 s")
def test_garbage_instead_of_fio_output_is_named_not_no_io(tmp_path: Path) -> None:
    binary = _fake_fio(tmp_path, "printf 'Segmentation fault (core dumped) x%.0s\\n' 1 2 3; "
                                 "sleep 0.3; exit 0")
    (tmp_path / "jobs").mkdir()
    engine = FioEngine([str(tmp_path / "scratch.dat")], clock=MonotonicClock(),
                       fio_binary=binary, ioengine="psync",
                       policy=TargetPolicy(create_size=1 << 20), workdir=tmp_path / "jobs")
    engine.check()
    engine.start(MW1)
    deadline = time.monotonic() + budget_s(2)
    while engine.running and time.monotonic() < deadline:
        engine.poll()
        time.sleep(0.05)
    with pytest.raises(FioRunError, match="printed no fio status document .* but "
                                          "'Segmentation fault"):
        engine.stop()  # before: no error, and the search said fio "did not start IO"
    engine.close()


def test_a_target_deleted_after_its_check_is_named(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    engine, target, _ = _engine(tmp_path)
    real_check = engine._safe_targets

    def check_then_delete(writing: bool):
        checks = real_check(writing)
        target.unlink()
        return checks

    monkeypatch.setattr(engine, "_safe_targets", check_then_delete)
    with pytest.raises(WorkloadError, match="was deleted after it was checked; fio was not "
                                            "started"):
        engine.start(MW1)  # before: fio's own "you need to specify size="
    engine.close()


@pytest.mark.realtime("real fio runs one 0.5 s phase on the scratch file first")
def test_a_scratch_file_deleted_between_phases_is_not_recreated(tmp_path: Path) -> None:
    engine, target, _ = _engine(tmp_path)
    engine.start(WorkloadProfile("MW1", 4096, 30, True, 4096, duration_s=0.5))
    deadline = time.monotonic() + budget_s(5)
    while engine.running and time.monotonic() < deadline:
        engine.poll()
        time.sleep(0.05)
    engine.stop()
    target.unlink()
    with pytest.raises(WorkloadError, match="was deleted after an earlier phase of this run"):
        engine.start(MW1)  # before: a new empty file passed for the conditioned target
    assert not target.exists()
    engine.close()
