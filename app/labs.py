"""Build the lab a run uses from its configuration.

* ``sim`` — the built-in simulated lab: the simulated SUT, reached through the wire-level meter
  simulators on loopback sockets and the production drivers (so the demo exercises the same
  code path as a real WT310), with the simulated workload engine.
* ``sim-direct`` — the simulated SUT with in-process meters; for fast tests on a fake clock.
* ``local-fio`` — real IO with fio against the configured targets; meters as configured, or
  the simulated meters (clearly labelled SIMULATED) when none are.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from app.records import LAB_KINDS, RunConfig
from app.sequencer.lab import Lab
from drivers.clock import Clock
from drivers.simulators.engine import SimulatedWorkloadEngine
from drivers.simulators.direct_meters import SimulatedPowerMeter, SimulatedThermometer
from drivers.simulators.sut import HDD_15K, SSD_SAS, SimSutSpec, SimulatedSut


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


def build_lab(config: RunConfig, clock: Clock, protected: Sequence[str] = ()) -> Lab:
    """``protected``: paths a real workload must never write (``app.protected``)."""
    if config.lab not in LAB_KINDS:
        raise LabError(f"unknown lab {config.lab!r}; choose one of {', '.join(LAB_KINDS)}")
    if config.lab == "sim-direct":
        return _sim_direct(config, clock)
    if config.lab == "sim":
        return _sim_wire(config, clock)
    return _local_fio(config, clock, protected)


def simulated_engine(sut: SimulatedSut, config: RunConfig,
                     clock: Clock) -> SimulatedWorkloadEngine:
    """The simulated engine, running (and rate-splitting) as many load hosts as configured."""
    return SimulatedWorkloadEngine(sut, clock, load_hosts=max(1, len(config.sut.load_hosts)))


def _sim_direct(config: RunConfig, clock: Clock) -> Lab:
    sut = simulated_sut(config)
    return Lab(SimulatedPowerMeter(sut), simulated_engine(sut, config, clock),
               SimulatedThermometer(sut), sut.used_capacity_bytes, 0.0,
               "simulated SUT, in-process simulated meters")


def _sim_wire(config: RunConfig, clock: Clock) -> Lab:
    """Simulated SUT behind loopback meter simulators, read by the production drivers."""
    from app.sim_lab import configured_meters, wire_simulated_meters

    sut = simulated_sut(config)
    lab = Lab(SimulatedPowerMeter(sut), simulated_engine(sut, config, clock),
              SimulatedThermometer(sut), sut.used_capacity_bytes, 0.0,
              "simulated SUT behind loopback meter simulators")
    try:
        wire_simulated_meters(lab, sut)
        configured_meters(lab, config.power_meter, config.temperature_meter)
    except Exception:
        lab.close()
        raise
    return lab


def _local_fio(config: RunConfig, clock: Clock, protected: Sequence[str]) -> Lab:
    from app.fio_lab import fio_lab

    return fio_lab(config, clock, protected)
