"""What a simulated meter measures: a frozen electrical state from a source callable."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ElectricalState:
    watts: float
    volts: float = 230.0
    amps: float | None = None  # None: derived from watts, volts and pf
    pf: float = 0.95
    freq_hz: float = 50.0

    @property
    def current(self) -> float:
        if self.amps is not None:
            return self.amps
        return self.watts / (self.volts * self.pf) if self.volts and self.pf else 0.0

    def value(self, quantity: str) -> float:
        """``volts``/``amps``/``watts``/``pf``/``freq_hz``/``va`` by name."""
        if quantity == "amps":
            return self.current
        if quantity == "va":
            return self.volts * self.current
        return float(getattr(self, quantity))


DEFAULT_STATE = ElectricalState(watts=100.0)
DEFAULT_CELSIUS = 23.5
