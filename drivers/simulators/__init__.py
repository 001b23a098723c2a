"""Wire-level instrument simulators on loopback sockets (see ``meter``)."""

from drivers.simulators.faults import FaultKind, FaultPlan
from drivers.simulators.meter import (DRIVER_FOR_MODEL, POWER_MODELS, TEMPERATURE_MODELS,
                                      MeterSimulator, ThermometerSimulator, simulator_for)
from drivers.simulators.server import Exchange
from drivers.simulators.state import ElectricalState

__all__ = ["DRIVER_FOR_MODEL", "POWER_MODELS", "TEMPERATURE_MODELS", "Exchange", "FaultKind",
           "FaultPlan", "ElectricalState", "MeterSimulator", "ThermometerSimulator",
           "simulator_for"]
