"""The ``local-fio`` lab: real IO with fio, meters as configured (or clearly simulated).

Without a configured power meter the power and temperature come from the simulated SUT,
made to follow the profile fio is running, and every output says they are SIMULATED — real
IO figures next to simulated watts are a rehearsal, not a measurement.
"""

from __future__ import annotations

from dataclasses import dataclass

from app import units

from app.labs import LabError, lab_with_meters, open_lab_meters, simulated_sut
from app.records import RunConfig
from app.sequencer.lab import Lab
from drivers.clock import Clock
from drivers.fio.engine import FioEngine
from drivers.interfaces import WorkloadInterval, WorkloadProfile, WorkloadResult
from drivers.sim.sut import SimulatedSut

def parse_size(text: str) -> int:
    """'64M' → 67108864 (K/M/G/T are binary multiples, as fio reads them; ``app.units``)."""
    try:
        return units.parse_size(text)
    except units.UnitError as exc:
        raise LabError(f"size {text!r}: {exc}") from None


@dataclass
class SutFollowingEngine:
    """Wraps the fio engine so the simulated SUT's power follows the running profile."""

    engine: FioEngine
    sut: SimulatedSut

    @property
    def name(self) -> str:
        return self.engine.name

    @property
    def live(self) -> bool:
        return self.engine.live

    @property
    def running(self) -> bool:
        return self.engine.running

    def check(self) -> str:
        return self.engine.check()

    def start(self, profile: WorkloadProfile) -> None:
        self.engine.start(profile)
        self.sut.apply(profile)

    def poll(self) -> list[WorkloadInterval]:
        return self.engine.poll()

    def stop(self) -> WorkloadResult:
        self.sut.apply(None)
        return self.engine.stop()


def fio_lab(config: RunConfig, clock: Clock) -> Lab:
    if not config.sut.targets:
        raise LabError("local-fio needs at least one --target (a scratch file or a block device)")
    engine = FioEngine(config.sut.targets, clock=clock, load_hosts=config.sut.load_hosts,
                       target_size=parse_size(config.target_size),
                       confirm_device=config.confirm_device,
                       allow_destructive=bool(config.confirm_device))
    sut = simulated_sut(config)
    simulated = config.power_meter.driver == "sim"
    return lab_with_meters(
        open_lab_meters(config, sut), SutFollowingEngine(engine, sut) if simulated else engine,
        None, 1.2, "fio on " + ", ".join(config.sut.targets)
        + ("; power and temperature SIMULATED (no meter configured)" if simulated else ""))
