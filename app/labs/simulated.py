"""The simulated pieces a lab can be built from: the SUT, its engine and its meters.

For the ``sim`` lab the meters are wire-level simulators on loopback sockets (a Yokogawa WT310
and a Keysight DAQ970A) whose readings come from the simulated SUT, read by the same production
drivers a real lab uses, so the demo and the GUI exercise the real code path. The in-process
meters (``drivers.simulators.direct_meters``) read the SUT without a socket, for fake-clock runs
and for ``local-fio`` without a configured meter.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from app.core.records import PowerInput, RunConfig
from drivers.clock import Clock
from drivers.simulators import ElectricalState, MeterSimulator, ThermometerSimulator
from drivers.simulators.engine import SimulatedWorkloadEngine
from drivers.simulators.sut import HDD_15K, SSD_SAS, SimSutSpec, SimulatedSut

SIM_POWER_MODEL, SIM_POWER_DRIVER = "wt310", "wt300"
SIM_THERMO_MODEL, SIM_THERMO_DRIVER = "daq970a", "daq970a"


def simulated_sut(config: RunConfig, seed: int = 1) -> SimulatedSut:
    """A simulated SUT shaped like the described one (drive count/type, RAID, COMs on)."""
    sut = config.sut
    drive = SSD_SAS if sut.drive_type.upper() == "SSD" else HDD_15K
    count = max(1, sut.drive_count)
    per_drive = max(1, sut.raw_capacity_bytes // count)
    spec = SimSutSpec(drive=replace(drive, capacity_bytes=per_drive), drive_count=count,
                      raid=sut.raid, coms=tuple(sut.coms_on_during_test))
    return SimulatedSut(spec, seed=seed)


def simulated_engine(sut: SimulatedSut, config: RunConfig,
                     clock: Clock) -> SimulatedWorkloadEngine:
    """The simulated engine, running (and rate-splitting) as many load hosts as configured."""
    return SimulatedWorkloadEngine(sut, clock, load_hosts=max(1, len(config.sut.load_hosts)))


def power_simulator(sut: SimulatedSut, clock: Clock | None = None) -> MeterSimulator:
    """A loopback WT310 whose readings are the SUT's electrical state (not started); its data
    updates follow ``clock`` (the run's: on a fake clock, one update per simulated moment)."""
    return MeterSimulator(SIM_POWER_MODEL, source=lambda: ElectricalState(*sut.electrical_state()),
                          clock=clock)


#: how much of the simulated SUT's load an input carries, by its wiring: a three-phase shelf
#: draws as much as three single-phase supplies
PHASE_WEIGHT = {"1P2W": 1, "3P3W": 3, "3P4W": 3}


def input_shares(inputs: Sequence[PowerInput]) -> dict[str, float]:
    """Each input's share of the simulated SUT's power (they add up to the whole)."""
    total = sum(PHASE_WEIGHT[i.wiring] for i in inputs)
    return {i.name: PHASE_WEIGHT[i.wiring] / total for i in inputs}


def input_simulator(sut: SimulatedSut, model: str, share: float,
                    element: int | None = None, clock: Clock | None = None) -> MeterSimulator:
    """A loopback meter of ``model`` reading ``share`` of the SUT's power: one of several power
    inputs (on ``element`` alone when given, else spread over the meter's elements)."""
    def state() -> ElectricalState:
        watts, volts, amps, pf, hz = sut.electrical_state()
        return ElectricalState(watts * share, volts, amps * share, pf, hz)

    simulator = MeterSimulator(model, source=state, clock=clock)
    if element is not None:
        simulator.load_element(element)
    return simulator


def ptd_channels_simulator(sut: SimulatedSut, shares: dict[int, float]) -> MeterSimulator:
    """One loopback PTDaemon in multi-channel mode carrying the inputs on its channels:
    channel n reads ``shares[n]`` of the SUT's power (a channel no input names reads 0 W)."""
    whole = sum(shares.values())

    def state() -> ElectricalState:
        watts, volts, amps, pf, hz = sut.electrical_state()
        return ElectricalState(watts * whole, volts, amps * whole, pf, hz)

    channels = max(shares)
    simulator = MeterSimulator("ptd", source=state, channels=channels)
    simulator.load_channels(tuple(shares.get(c, 0.0) / whole for c in range(1, channels + 1)))
    return simulator


def thermometer_simulator(sut: SimulatedSut) -> ThermometerSimulator:
    """A loopback DAQ970A reading the SUT's inlet temperature (not started)."""
    return ThermometerSimulator(SIM_THERMO_MODEL, source=sut.inlet_celsius)
