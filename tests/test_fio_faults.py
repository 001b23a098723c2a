"""fio ending under the station (issue 15's matrix, docs/reliability.md): a local fio killed with
SIGKILL mid-phase, and a load host's ``fio --server`` killed mid-phase. Each is a clear
:class:`FioRunError` naming what happened, within seconds, with the intervals before kept.
(Exiting non-zero, a rejected job and a refusing load host are in tests/test_fio_engine.py.)
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from drivers.fio.engine import FioRunError
from drivers.fio.process import STDERR_GRACE_S
from drivers.interfaces import WorkloadProfile
from tests.support.fio import free_port, engine_for, needs_fio
from tests.support.fio_orphans import kill_server
from tests.support.time_budget import budget_s

pytestmark = [pytest.mark.fio, needs_fio]
RR = WorkloadProfile("RR", 8192, 100, True, 8192, duration_s=60)
#: the stall limit set short for the test (the method's default is 15 s)
STALL_S = 4.0


def _poll_until_error(engine, kept: list, seconds: float) -> FioRunError:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            kept += engine.poll()
        except FioRunError as exc:
            return exc
        time.sleep(0.1)
    raise AssertionError(f"no error within {seconds:.1f} s")


@pytest.mark.realtime("a real fio reports two 1 s intervals, then is SIGKILLed")
def test_a_killed_fio_fails_the_phase_and_keeps_its_intervals(tmp_path: Path) -> None:
    engine = engine_for(tmp_path)
    engine.check()
    engine.start(RR)
    kept: list = []
    deadline = time.monotonic() + budget_s(20)
    while sum(i.ios for i in kept) == 0 or len(kept) < 2:
        kept += engine.poll()
        assert time.monotonic() < deadline, "fio never reported IO"
        time.sleep(0.1)
    pid = next(iter(engine._procs.values())).pid
    os.killpg(pid, signal.SIGKILL)
    killed_at = time.monotonic()
    # noticed within 2 s on a quiet machine, plus the grace an ended fio's stderr reader is
    # given to bring its last words: the poll's patience, scaled with the machine's load
    error = _poll_until_error(engine, kept, budget_s(2.0) + STDERR_GRACE_S)
    detected_s = time.monotonic() - killed_at
    print(f"fio SIGKILL detected after {detected_s:.2f} s; {len(error.intervals)} intervals kept")
    assert "SIGKILL" in str(error) or "signal 9" in str(error) or "-9" in str(error), str(error)
    assert len(error.intervals) >= len(kept) >= 2  # every interval before the kill kept
    assert not engine.running
    engine.stop()
    engine.close()


@pytest.mark.slow
@pytest.mark.realtime("a real fio server killed mid-phase; the stall limit (set to 4 s) on the "
                      "real clock")
def test_a_load_host_dropping_the_connection_mid_phase_is_named(tmp_path: Path) -> None:
    """fio 3.33's client notices a dead server only by its own command timeout (~40 s); the
    engine notices its client's ETA lines stop and fails the phase after [fio] stall_s
    (the method's 15 s by default, set to STALL_S here), naming the host."""
    port = free_port()
    server = subprocess.Popen(["fio", f"--server=ip:127.0.0.1,{port}"], cwd=tmp_path,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True)
    try:
        deadline = time.monotonic() + budget_s(10)
        while socket.socket().connect_ex(("127.0.0.1", port)) and time.monotonic() < deadline:
            time.sleep(0.1)
        host = f"127.0.0.1:{port}"
        engine = engine_for(tmp_path, load_hosts=[host], stall_s=STALL_S)
        engine.check()
        engine.start(RR)
        time.sleep(2.0)  # the job runs on the host
        assert engine.running
        kill_server(server.pid)  # the host dies: its server and the job it was running
        killed_at = time.monotonic()
        # the stall limit (the engine's own, not scaled) + stopping the clients: a 15 s
        # quiet-machine margin, as at the default 15 s limit, where it took < 30 s; fio's own
        # timeout took 41.5 s, past the patience on a quiet machine
        error = _poll_until_error(engine, [], STALL_S + budget_s(15))
        detected_s = time.monotonic() - killed_at
        print(f"load host killed: detected after {detected_s:.2f} s: {error}")
        assert host in str(error) or "127.0.0.1" in str(error), str(error)
        assert "stopped answering mid-phase" in str(error)
        engine.stop()
        engine.close()
    finally:
        kill_server(server.pid)
        server.wait()
