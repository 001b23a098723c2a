"""Stored runs of the media-library plan for the compliance tests: the same simulated readings
under identities of real, calibrated instruments (and an engine named like fio), so only the
compliance rules decide (docs/method-notes.md §2, §3)."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.storage.stored import StoredRun
from drivers.simulators.direct_meters import SimulatedPowerMeter, SimulatedThermometer
from tests.support import recorded_runs as runs
from tests.support.verdict_runs import COMPLIANT, MEDIA, REMOVABLE_1, real_identity
from tests.support.verdict_runs import FioNamedEngine as FioLikeEngine
from app.storage.repository import load_run

def record(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, method: str = COMPLIANT,
           real: bool = True, calibrated_days_ago: int | None = 30,
           hook: runs.Hook | None = None) -> StoredRun:
    """One stored run of the media-library plan; ``real`` swaps in identities without the
    simulator's vendor prefix (and an engine named like fio) on the same simulated readings."""
    def meter(power: SimulatedPowerMeter) -> SimulatedPowerMeter:
        if real:
            power.identity = real_identity("YOKOGAWA", "WT310E", "wt300", calibrated_days_ago)
        return power

    if real:
        class RealThermometer(SimulatedThermometer):
            def __init__(self, sut) -> None:
                super().__init__(sut)
                self.identity = real_identity("Keysight", "DAQ970A", "daq970a",
                                              calibrated_days_ago)
        monkeypatch.setattr(runs, "SimulatedThermometer", RealThermometer)
        monkeypatch.setattr(runs, "SimulatedWorkloadEngine", FioLikeEngine)
    recorded = runs.record_run(tmp_path / "r.db", method=method, taxonomy=MEDIA, coms=(),
                               meter=meter, hook=hook, answers=REMOVABLE_1)
    return load_run(recorded.database, recorded.run_id)
