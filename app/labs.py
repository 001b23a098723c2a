"""Build the lab a run uses from its configuration.

* ``sim`` — the built-in simulated lab: the simulated SUT, reached through the wire-level meter
  simulators on loopback sockets and the production drivers (so the demo exercises the same
  code path as a real WT310), with the simulated workload engine.
* ``sim-direct`` — the simulated SUT with in-process meters; for fast tests on a fake clock.
* ``local-fio`` — real IO with fio against the configured targets; meters as configured, or
  the simulated meters (clearly labelled SIMULATED) when none are.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from app.records import LAB_KINDS, SIMULATED_LABS, RunConfig
from app.sequencer.lab import Lab
from drivers.clock import Clock
from drivers.fio.engine import DEFAULT_STALL_S
from drivers.interfaces import PowerMeter, TemperatureMeter, WorkloadEngine
from drivers.sim.engine import SimulatedWorkloadEngine
from drivers.sim.meters import SimulatedPowerMeter, SimulatedThermometer
from drivers.sim.sut import HDD_15K, SSD_SAS, SimSutSpec, SimulatedSut


class LabError(ValueError):
    """The lab cannot be built from this configuration (message says what to fix)."""


def simulated_sut(config: RunConfig, seed: int = 1) -> SimulatedSut:
    """A simulated SUT shaped like the described one (drive count/type, RAID, COMs on)."""
    sut = config.sut
    drive = SSD_SAS if sut.drive_type.upper() == "SSD" else HDD_15K
    count = max(1, sut.drive_count)
    per_drive = max(1, sut.raw_capacity_bytes // count)
    spec = SimSutSpec(drive=replace(drive, capacity_bytes=per_drive), drive_count=count,
                      raid=sut.raid, coms=tuple(sut.coms_on_during_test))
    return SimulatedSut(spec, seed=seed)


@dataclass
class LabMeters:
    """The meters a run of ``config`` reads, opened exactly as the run opens them.

    One code path for the run and for the wizard's "Test connection": the connection test
    must identify the very instrument (driver, resource, simulator model) the run will read.
    """

    power_meter: PowerMeter
    temperature_meter: TemperatureMeter | None
    closers: list[Callable[[], None]] = field(default_factory=list)

    def close(self) -> None:
        Lab.close(self)  # type: ignore[arg-type]  # same newest-first, never-raising close


def open_lab_meters(config: RunConfig, sut: SimulatedSut | None = None) -> LabMeters:
    """``sim-direct``: in-process simulated meters; ``sim``: the production drivers on
    loopback simulators (WT310, DAQ970A), then any configured meter; ``local-fio``: the
    configured meters, the simulated ones where none is configured — but no simulated
    thermometer beside a real power meter."""
    from app.sim_lab import NO_THERMOMETER, configured_meters, wire_simulated_meters

    sut = sut or simulated_sut(config)
    meters = LabMeters(SimulatedPowerMeter(sut), SimulatedThermometer(sut))
    try:
        if config.lab == "sim":
            wire_simulated_meters(meters, sut)
        if config.lab != "sim-direct":
            configured_meters(meters, config.power_meter, config.temperature_meter)
    except Exception:
        meters.close()
        raise
    if config.temperature_meter.driver == NO_THERMOMETER or _inlet_would_be_simulated(config):
        meters.temperature_meter = None
    return meters


def _inlet_would_be_simulated(config: RunConfig) -> bool:
    """A real power meter beside the simulated thermometer: its inlet would pass for a
    measured one, so there is no thermometer and every metric says so (method-notes §3)."""
    return (config.lab not in SIMULATED_LABS and config.power_meter.driver != "sim"
            and config.temperature_meter.driver == "sim")


def lab_with_meters(meters: LabMeters, engine: WorkloadEngine,
                    capacity_probe: Callable[[], tuple[int, int]] | None,
                    workload_latency_s: float, description: str) -> Lab:
    """A lab around already opened meters (closing the lab closes them)."""
    return Lab(meters.power_meter, engine, meters.temperature_meter, capacity_probe,
               workload_latency_s, description, meters.closers)


def build_lab(config: RunConfig, clock: Clock, protected: Sequence[str] = (),
              fio_stall_s: float = DEFAULT_STALL_S) -> Lab:
    """``protected``: paths a real workload must never write (``app.protected``);
    ``fio_stall_s``: the method's ``[fio] stall_s``."""
    if config.lab not in LAB_KINDS:
        raise LabError(f"unknown lab {config.lab!r}; choose one of {', '.join(LAB_KINDS)}")
    if config.lab == "sim-direct":
        return _sim_direct(config, clock)
    if config.lab == "sim":
        return _sim_wire(config, clock)
    return _local_fio(config, clock, protected, fio_stall_s)


def simulated_engine(sut: SimulatedSut, config: RunConfig,
                     clock: Clock) -> SimulatedWorkloadEngine:
    """The simulated engine, running (and rate-splitting) as many load hosts as configured."""
    return SimulatedWorkloadEngine(sut, clock, load_hosts=max(1, len(config.sut.load_hosts)))


def _sim_direct(config: RunConfig, clock: Clock) -> Lab:
    sut = simulated_sut(config)
    return lab_with_meters(open_lab_meters(config, sut), simulated_engine(sut, config, clock),
                           sut.used_capacity_bytes, 0.0,
                           "simulated SUT, in-process simulated meters")


def _sim_wire(config: RunConfig, clock: Clock) -> Lab:
    """Simulated SUT behind loopback meter simulators, read by the production drivers."""
    sut = simulated_sut(config)
    return lab_with_meters(open_lab_meters(config, sut), simulated_engine(sut, config, clock),
                           sut.used_capacity_bytes, 0.0,
                           "simulated SUT behind loopback meter simulators")


def _local_fio(config: RunConfig, clock: Clock, protected: Sequence[str],
               stall_s: float) -> Lab:
    from app.fio_lab import fio_lab

    return fio_lab(config, clock, protected, stall_s)
