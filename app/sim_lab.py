"""Instruments of a lab: configured meters through their drivers, or the simulated ones.

For the simulated lab the meters are wire-level simulators on loopback sockets (a Yokogawa
WT310 and a Keysight DAQ970A) whose readings come from the simulated SUT, read by the same
production drivers a real lab uses — so the demo and the GUI exercise the real code path.
"""

from __future__ import annotations

from app.records import InstrumentConfig
from app.sequencer.lab import Lab
from drivers.meters.registry import open_power_meter, open_temperature_meter
from drivers.simulators.sut import SimulatedSut
from drivers.simulators import ElectricalState, MeterSimulator, ThermometerSimulator

SIM_POWER_MODEL, SIM_POWER_DRIVER = "wt310", "wt300"
SIM_THERMO_MODEL, SIM_THERMO_DRIVER = "daq970a", "daq970a"


def wire_simulated_meters(lab: Lab, sut: SimulatedSut) -> None:
    """Replace the lab's meters with drivers talking to loopback simulators of the SUT."""
    power_sim = MeterSimulator(SIM_POWER_MODEL,
                               source=lambda: ElectricalState(*sut.electrical_state()))
    thermo_sim = ThermometerSimulator(SIM_THERMO_MODEL, source=sut.inlet_celsius)
    for sim in (power_sim, thermo_sim):
        sim.start()
        lab.closers.append(sim.stop)
    lab.power_meter = open_power_meter(SIM_POWER_DRIVER, power_sim.resource)
    lab.temperature_meter = open_temperature_meter(SIM_THERMO_DRIVER, thermo_sim.resource)
    lab.closers.append(lab.power_meter.close)
    lab.closers.append(lab.temperature_meter.close)


def configured_meters(lab: Lab, power: InstrumentConfig, thermo: InstrumentConfig) -> None:
    """Use the configured drivers for every meter that is not ``sim``."""
    if power.driver != "sim":
        lab.power_meter = open_power_meter(power.driver, power.resource, **_options(power))
        lab.closers.append(lab.power_meter.close)
    if thermo.driver != "sim":
        lab.temperature_meter = open_temperature_meter(thermo.driver, thermo.resource,
                                                       **_options(thermo))
        lab.closers.append(lab.temperature_meter.close)


def _options(cfg: InstrumentConfig) -> dict:
    options = dict(cfg.options)
    if cfg.calibration_date:
        options["calibration_date"] = cfg.calibration_date
    return options
