"""Thermometers: Keysight 34970A/DAQ970A thermocouple channel and Digi Watchport/H/T.

Inlet temperature at 0.1 °C resolution, at least every 60 s (method-notes §3). An open
thermocouple (+9.9E+37) or "Sensor Error" is a flagged NaN, never a temperature.
"""

from __future__ import annotations

from typing import Any, ClassVar

from drivers.interfaces import InstrumentError, InstrumentIdentity, TemperatureSample
from drivers.meters.base import Instrument, split_simulator_prefix
from drivers.meters.commands import Reading
from drivers.meters.values import GENERIC, WATCHPORT, SpecialValues, decode

TC_TYPES = ("B", "E", "J", "K", "N", "R", "S", "T")


class ThermometerBase(Instrument):
    READING: ClassVar[Reading]
    SPECIALS: ClassVar[SpecialValues] = GENERIC
    #: the resolution (°C) of the configured mode, for a driver whose replies print a fixed
    #: number of digits whatever the instrument resolves; None: the reply's last digit tells
    #: (a sensor prints the digits it resolves: ``+22.4C`` → 0.1 °C, method-notes §3)
    STATED_RESOLUTION_C: ClassVar[float | None] = None

    def read(self, t: float) -> TemperatureSample:
        reply = self._exchange(lambda: self._query(self.READING.command(self)))
        d = decode(self._field(reply), self.SPECIALS, sensor=True)
        resolution = None if d.value != d.value else (self.STATED_RESOLUTION_C or d.resolution)
        return TemperatureSample(t, d.value, d.flags, resolution, self.instrument_key())

    def _field(self, reply: str) -> str:
        return reply


class DAQ970A(ThermometerBase):
    DRIVER = "daq970a"
    DESCRIPTION = "Keysight 34970A/34972A/DAQ970A/DAQ973A thermocouple channel"
    MODELS = ("34970A", "34972A", "DAQ970A", "DAQ973A")
    VENDORS = ("KEYSIGHT", "AGILENT", "HEWLETT-PACKARD")
    DEFAULT_PORT = 5025
    OPTIONS: ClassVar[dict[str, type]] = {"channel": int, "tc_type": str}
    SETUP = ("*CLS",)
    READING = Reading("MEAS:TEMP? TC,{tc_type},(@{channel})", ("celsius",))

    def __init__(self, resource: str, **options: Any) -> None:
        super().__init__(resource, **options)
        fields = self.command_fields()
        slot, chan = divmod(fields["channel"], 100)
        if not (1 <= slot <= 3 and 1 <= chan <= 40):
            raise InstrumentError(f"channel {fields['channel']} does not exist: use slot·100 + "
                                  "channel, e.g. 101 … 140, 201 … 240, 301 … 340")
        if fields["tc_type"] not in TC_TYPES:
            raise InstrumentError(f"thermocouple type {fields['tc_type']!r} unknown; choose "
                                  f"one of {', '.join(TC_TYPES)}")

    def command_fields(self) -> dict[str, Any]:
        return {"channel": self.options.get("channel", 101),
                "tc_type": str(self.options.get("tc_type", "K")).upper()}


class Watchport(ThermometerBase):
    """Digi Watchport/H or /T probe: USB serial (9600 8N1, CR) or a serial-to-LAN bridge."""

    DRIVER = "watchport"
    DESCRIPTION = "Digi Watchport/H or Watchport/T USB temperature probe (serial, CR)"
    MODELS = ("WATCHPORT/H", "WATCHPORT/T")
    READ_TERMINATION = "\r"
    WRITE_TERMINATION = "\r"
    IDN_QUERY = "I"
    READING = Reading("TC", ("celsius",))
    SPECIALS = WATCHPORT

    def _identity_from(self, reply: str) -> InstrumentIdentity:
        simulator, answer = split_simulator_prefix(reply)
        model = answer.strip().split()[0] if answer.strip() else ""
        self._check_model(reply, "Digi", model)
        return InstrumentIdentity(simulator + "Digi", model, "", "", self.resource, self.DRIVER,
                                  self.calibration_date)
