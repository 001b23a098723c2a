"""Stored runs of the media-library plan for the compliance tests: the same simulated readings
under identities of real, calibrated instruments (and an engine named like fio), so only the
compliance rules decide (docs/method-notes.md §2, §3)."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

import pytest

from app.storage.stored import StoredRun
from drivers.interfaces import InstrumentIdentity
from drivers.simulators.engine import SimulatedWorkloadEngine
from drivers.simulators.direct_meters import SimulatedPowerMeter, SimulatedThermometer
from tests.support import recorded_runs as runs

COMPLIANT = "emerald-block-v3"
#: the media-library plan: the shortest whole compliant sequence (SW, SR, 2 h ready idle)
MEDIA = "removable-1"


def real_identity(vendor: str, model: str, driver: str,
                  days_ago: int | None) -> InstrumentIdentity:
    calibrated = "" if days_ago is None else (date.today() - timedelta(days=days_ago)).isoformat()
    return InstrumentIdentity(vendor, model, "C2X123", "F1.03", "TCPIP::10.0.0.5::INSTR", driver,
                              calibrated)


class FioLikeEngine(SimulatedWorkloadEngine):
    """The simulated SUT's engine under the name a real fio engine reports."""

    def check(self) -> str:
        return "fio 3.33 (local)"


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
            def __init__(self, sut) -> None:  # type: ignore[no-untyped-def]
                super().__init__(sut)
                self.identity = real_identity("Keysight", "DAQ970A", "daq970a",
                                              calibrated_days_ago)
        monkeypatch.setattr(runs, "SimulatedThermometer", RealThermometer)
        monkeypatch.setattr(runs, "SimulatedWorkloadEngine", FioLikeEngine)
    recorded = runs.record_run(tmp_path / "r.db", method=method, taxonomy=MEDIA, coms=(),
                               meter=meter, hook=hook)
    return recorded.database.load_run(recorded.run_id)
