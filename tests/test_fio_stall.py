"""A stalled fio (SIGSTOP, a hung target) fails its phase instead of being measured at 0 IOPS
(issue 15, docs/reliability.md)."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from app.method.loader import load_method
from app.method.model import FioSettings
from drivers.fio.engine import FioStalled
from drivers.interfaces import DEFAULT_STALL_S
from drivers.interfaces import WorkloadError, WorkloadProfile
from tests.support.fio import engine_for, needs_fio
from tests.support.time_budget import budget_s

STALL_S = 3.0


@pytest.mark.realtime("a real fio stopped until the stall limit (set short) passes")
@pytest.mark.fio
@needs_fio
def test_a_stopped_fio_fails_the_phase_and_keeps_its_intervals(tmp_path: Path) -> None:
    engine = engine_for(tmp_path, stall_s=STALL_S)
    engine.check()
    engine.start(WorkloadProfile("RR", 8192, 100, True, 8192, duration_s=60))
    kept = []
    deadline = time.monotonic() + budget_s(20)
    while sum(i.ios for i in kept) == 0 or len(kept) < 2:  # fio is doing IO
        kept += engine.poll()
        assert time.monotonic() < deadline, "fio never reported IO"
        time.sleep(0.1)
    pid = next(iter(engine._procs.values())).pid
    os.killpg(pid, signal.SIGSTOP)
    stopped_at = time.monotonic()
    # the stall limit is the engine's own (not scaled); noticing it and stopping fio take
    # well under 6 s on a quiet machine: that margin is the test's patience, scaled with load
    with pytest.raises(FioStalled) as exc:
        while time.monotonic() - stopped_at < STALL_S + budget_s(6):
            kept += engine.poll()
            time.sleep(0.1)
    detected_s = time.monotonic() - stopped_at
    print(f"stall detected after {detected_s:.1f} s, {len(exc.value.intervals)} intervals kept")
    assert isinstance(exc.value, WorkloadError)  # the sequencer's failure path ends the phase
    assert str(exc.value).startswith("fio stalled: no IO completed for ")
    assert "fio stopped" in str(exc.value)
    assert STALL_S - 1.5 <= detected_s, detected_s  # not before its limit (load only delays)
    assert len(exc.value.intervals) >= len(kept) >= 2  # every interval before the stall kept
    assert not engine.running  # SIGCONT then SIGINT: the stopped fio exited
    with pytest.raises(ProcessLookupError):
        os.killpg(pid, 0)
    engine.stop()  # the sequencer still calls stop(): no second error
    engine.close()


def test_stall_limit_is_a_validated_method_setting() -> None:
    assert load_method("smoke").fio.stall_s == DEFAULT_STALL_S == 15.0
    for bad in (0.0, 1.0, -5.0, float("inf"), float("nan"), 1e9):
        with pytest.raises(ValueError, match="stall_s"):
            FioSettings(stall_s=bad)
    assert FioSettings(stall_s=30.0).stall_s == 30.0
