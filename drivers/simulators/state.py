"""What a simulated meter measures: a frozen electrical state from a source callable."""

from __future__ import annotations

import math
from dataclasses import dataclass

#: crest factors of the simulated supply: a sine voltage, and the current of a power supply
#: with power-factor correction (peakier than a sine, well inside a meter's CF 3)
SINE_CREST = math.sqrt(2)
PSU_CURRENT_CREST = 1.6


@dataclass(frozen=True, slots=True)
class ElectricalState:
    watts: float
    volts: float = 230.0
    amps: float | None = None  # None: derived from watts, volts and pf
    pf: float = 0.95
    freq_hz: float = 50.0
    crest_v: float = SINE_CREST
    crest_a: float = PSU_CURRENT_CREST

    @property
    def current(self) -> float:
        if self.amps is not None:
            return self.amps
        return self.watts / (self.volts * self.pf) if self.volts and self.pf else 0.0

    def value(self, quantity: str) -> float:
        """``volts``/``amps``/``watts``/``pf``/``freq_hz``/``va`` by name, and the waveform
        peaks ``v_peak+``, ``v_peak-``, ``a_peak+``, ``a_peak-`` (symmetric waveforms)."""
        if quantity.startswith(("v_peak", "a_peak")):
            peak = self.volts * self.crest_v if quantity[0] == "v" else \
                self.current * self.crest_a
            return -peak if quantity.endswith("-") else peak
        if quantity == "amps":
            return self.current
        if quantity == "va":
            return self.volts * self.current
        return float(getattr(self, quantity))


DEFAULT_STATE = ElectricalState(watts=100.0)
DEFAULT_CELSIUS = 23.5
