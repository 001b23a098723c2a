"""Every fio process the station started ends with the phase, stopped or not (issue 40 item 4,
docs/reliability.md).

fio forks a process per job and each job calls ``setsid()``: the station's signals to fio's
process group never reached it. A SIGSTOPped fio was left behind, still stopped, holding the
scratch target open, and the phase blamed "the fio binary and its version". Each case here
stops a real fio (or its job) and asserts the cause names a stopped fio and that no process
of any job's session is left (read from /proc).
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from drivers.fio import sessions
from drivers.fio.engine import FioRunError
from drivers.fio.process import FioProcess
from drivers.interfaces import WorkloadProfile
from tests.support.fio import engine_for, needs_fio
from tests.support.fio_orphans import no_fio_left_behind
from tests.support.time_budget import budget_s

pytestmark = [pytest.mark.fio, needs_fio,
              pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc (Linux)")]
RR = WorkloadProfile("RR", 8192, 100, True, 8192, duration_s=60)


def _started(tmp_path: Path, with_io: bool):
    """A real fio on a scratch file, its main pid and its jobs' sessions (fio's job processes,
    found as the main process's children in other sessions)."""
    engine = engine_for(tmp_path, stall_s=600.0)  # the stall rule is tests/test_fio_stall.py's
    engine.check()
    engine.start(RR)
    pid = next(iter(engine._procs.values())).pid
    deadline = time.monotonic() + budget_s(20)
    kept: list = []
    while not (jobs := sessions.child_sessions(pid, pid)) or (
            with_io and sum(i.ios for i in kept) == 0):
        kept += engine.poll()
        assert time.monotonic() < deadline, "fio never forked its job or never did IO"
        time.sleep(0.05)
    return engine, pid, jobs


def _stop(pids: list[int]) -> None:
    """SIGSTOP ``pids`` and wait until the kernel shows them stopped (a signal is delivered
    asynchronously; a person's ^Z or ``kill -STOP`` comes long before the phase ends)."""
    for pid in pids:
        os.kill(pid, signal.SIGSTOP)
    deadline = time.monotonic() + budget_s(5)
    while not all((s := sessions.read_stat(p)) is not None and s.stopped for p in pids):
        assert time.monotonic() < deadline, "SIGSTOP never took effect"
        time.sleep(0.01)


def _nothing_left(pid: int, jobs: set[int]) -> None:
    left = sessions.members(jobs | {pid})
    try:
        assert not left, f"left behind: {left}"
    finally:
        sessions.signal_all(left, signal.SIGKILL)


@pytest.mark.realtime("a real fio is stopped (SIGSTOP) and the phase ends")
@pytest.mark.parametrize("stopped", ["fio and its job", "its job only"])
@pytest.mark.parametrize("with_io", [True, False], ids=["mid-phase", "before-any-document"])
def test_a_stopped_fio_ends_with_its_phase_and_is_named(tmp_path: Path, stopped: str,
                                                        with_io: bool) -> None:
    engine, pid, jobs = _started(tmp_path, with_io)
    held = [s.pid for s in sessions.members(jobs)]
    if stopped == "fio and its job":
        held.append(pid)
    _stop(held)
    try:
        with pytest.raises(FioRunError) as exc:
            engine.stop()
        message = str(exc.value)
        print(message)
        assert message.startswith("fio was found stopped (SIGSTOP or ^Z:"), message
        assert all(str(p) in message for p in held)
        assert "binary" not in message
    finally:
        engine.close()
        _nothing_left(pid, jobs)


@pytest.mark.realtime("a real fio's job is stopped, then its parent killed")
def test_a_job_orphaned_by_a_killed_fio_still_ends_with_the_run(tmp_path: Path) -> None:
    """The main fio SIGKILLed (its group only: the job is in its own session) leaves its
    stopped job re-parented to init, where fio's pid no longer finds it; the sessions learnt
    while fio ran still do."""
    engine, pid, jobs = _started(tmp_path, with_io=True)
    _stop([s.pid for s in sessions.members(jobs)])
    os.killpg(pid, signal.SIGKILL)
    try:
        with pytest.raises(FioRunError) as exc:
            deadline = time.monotonic() + budget_s(10)
            while time.monotonic() < deadline:
                engine.poll()
                time.sleep(0.1)
        assert "signal 9" in str(exc.value) or "-9" in str(exc.value), str(exc.value)
        engine.stop()
    finally:
        engine.close()
        _nothing_left(pid, jobs)


def test_a_session_that_will_not_end_is_bounded_and_named(monkeypatch) -> None:
    """A job held in the kernel (uninterruptible IO) survives SIGKILL: the stop gives up
    after its bound and says which process may still hold the target."""
    signalled: list[signal.Signals] = []
    stuck = sessions.ProcStat(424242, "D", 1, 424242)
    monkeypatch.setattr(sessions, "members", lambda found: [stuck] if found else [])
    monkeypatch.setattr(sessions, "signal_all", lambda stats, sig: signalled.append(sig))
    assert sessions.end_sessions({424242}, term_s=0.0, kill_s=0.0) == [424242]
    assert signalled == [signal.SIGCONT, signal.SIGTERM, signal.SIGKILL]
    assert sessions.end_sessions(set(), term_s=0.0, kill_s=0.0) == []


@pytest.mark.realtime("a real fio job is orphaned on purpose; the guard's grace, set short")
def test_the_suite_guard_fails_a_test_that_leaves_a_fio_behind() -> None:
    """The class, not the case: every ``fio`` test runs inside this guard
    (tests/conftest.py), so any path that leaves a fio behind fails the test that took it."""
    with pytest.raises(pytest.fail.Exception, match=r"fio left behind after the test \(now "
                                                    r"killed\): pid \d+ \(state T"):
        with no_fio_left_behind(grace_s=0.5):
            proc = FioProcess(["fio", "--name=orphan", "--ioengine=null", "--size=1g",
                               "--rw=read", "--time_based", "--runtime=60"], clock=time.monotonic)
            deadline = time.monotonic() + budget_s(10)
            while not (jobs := sessions.child_sessions(proc.pid, proc.pid)):
                assert time.monotonic() < deadline, "fio never forked its job"
                time.sleep(0.05)
            _stop([s.pid for s in sessions.members(jobs)])
            os.killpg(proc.pid, signal.SIGKILL)  # its group only: the job is elsewhere
            proc.proc.wait()
    deadline = time.monotonic() + budget_s(5)
    while sessions.members(jobs):  # the guard killed it (SIGKILL takes effect a moment later)
        assert time.monotonic() < deadline, sessions.members(jobs)
        time.sleep(0.05)


def test_a_fio_deaf_to_sigint_is_named_as_stopped_or_stalled() -> None:
    """The escalation's own words (a fio in uninterruptible IO on a hung target cannot be
    made in a test): SIGTERM or SIGKILL ending it is the phase's cause, SIGINT is not."""
    assert FioProcess._finding([], signal.SIGINT, 5.0) == ""
    assert FioProcess._finding([], None, 5.0) == ""
    assert FioProcess._finding([], signal.SIGKILL, 5.0) == (
        "fio did not end within 5 s of SIGINT (stopped or stalled: its IO or its target hung) "
        "and was ended with SIGKILL")
    both = FioProcess._finding([41, 42], signal.SIGTERM, 5.0)
    assert both.startswith("fio was found stopped (SIGSTOP or ^Z: processes 41, 42 in state T)")
    assert both.endswith("was ended with SIGTERM")
