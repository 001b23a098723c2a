"""Every simulator of the station, in one place.

Wire-level instrument simulators on loopback sockets (``meter``, ``server``, ``dialects``) that
the real drivers talk to; the simulated SUT (``sut``) and fio engine (``engine``); and in-process
meters reading the SUT directly (``direct_meters``) for fake-clock sequencer tests. None of them
identifies as a real instrument's vendor.
"""

from drivers.simulators.faults import FaultKind, FaultPlan
from drivers.simulators.meter import (DRIVER_FOR_MODEL, POWER_MODELS, TEMPERATURE_MODELS,
                                      MeterSimulator, ThermometerSimulator, simulator_for)
from drivers.simulators.server import Exchange
from drivers.simulators.state import ElectricalState

__all__ = ["DRIVER_FOR_MODEL", "POWER_MODELS", "TEMPERATURE_MODELS", "Exchange", "FaultKind",
           "FaultPlan", "ElectricalState", "MeterSimulator", "ThermometerSimulator",
           "simulator_for"]
