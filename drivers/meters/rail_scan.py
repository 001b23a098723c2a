"""A DAQ that scans DC-voltage channels: the rails of the SUT's devices (issue 42).

The seed's current-sensor board ([SPC-1 framework], docs/method-notes.md §3 "Per-device DC
rails") turns each rail's current into a voltage that a DAQ reads, up to 14 rails at once. This
driver scans N channels of a Keysight 34970A/DAQ970A as DC voltages and returns one
:class:`RailScan` per scan: each channel's volts, in scan-list order, with flags — an overload
(SCPI's 9.9E+37) is a flagged NaN, never a number. Converting volts to amps and watts is the
record's work (:mod:`app.metrics.rail_power`), so every conversion is data the report shows.

The scan's commands (``CONF:VOLT:DC``, ``VOLT:DC:NPLC``, ``ROUT:SCAN``, ``READ?``) are the
34970A family's as an open driver uses them; docs/instruments.md marks each one "assumed —
check on your instrument" until read in the DAQ970A's manual. A scan takes time: each channel
integrates for NPLC power-line cycles, plus its switching and settling (a labelled default:
the manual's per-channel figure is not at hand). :meth:`DaqRailScanner.check_period` refuses a
channel list the sampling period cannot hold, naming both times, before a run starts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

from drivers.interfaces import InstrumentError
from drivers.meters.base import Instrument
from drivers.meters.thermo import DAQ970A
from drivers.meters.values import GENERIC, decode_fields

#: DC-voltage ranges of the 34970A family's DMM (V)
DC_RANGES_V = (0.1, 1.0, 10.0, 100.0, 300.0)
#: integration times a DC-voltage reading may be set to, in power-line cycles
NPLC_CHOICES = (0.02, 0.2, 1.0, 2.0, 10.0, 20.0, 100.0, 200.0)
#: the station's assumed switching and settling time per channel (s) — not the manual's
#: figure, which the project has not read; set ``switch_s`` from your instrument's datasheet
ASSUMED_SWITCH_S = 0.005


def parse_channels(text: str) -> tuple[int, ...]:
    """``"101:104,201"`` → (101, 102, 103, 104, 201): slot·100 + channel, each once, in the
    order typed; a range runs upwards within one slot."""
    channels: list[int] = []
    for part in (p.strip() for p in str(text).split(",")):
        first, _, last = part.partition(":")
        try:
            low, high = int(first), int(last or first)
        except ValueError:
            raise InstrumentError(f"channel list {text!r}: {part!r} is not a channel or a "
                                  "range such as 101:114") from None
        if high < low or low // 100 != high // 100:
            raise InstrumentError(f"channel list {text!r}: {part!r} must run upwards within "
                                  "one slot")
        channels.extend(range(low, high + 1))
    for channel in channels:
        slot, number = divmod(channel, 100)
        if not (1 <= slot <= 3 and 1 <= number <= 40):
            raise InstrumentError(f"channel {channel} does not exist: use slot·100 + channel, "
                                  "e.g. 101 … 140, 201 … 240, 301 … 340")
    if len(set(channels)) != len(channels):
        raise InstrumentError(f"channel list {text!r} names a channel twice")
    return tuple(channels)


@dataclass(frozen=True)
class RailScan:
    """One scan of the rail channels: volts per channel in scan order, NaN where flagged."""

    t: float  # station clock (s) when the scan was asked for
    channels: tuple[int, ...]
    volts: tuple[float, ...]
    flags: tuple[frozenset[str], ...]
    #: the instrument that answered (its identity key), as every reading carries it
    instrument: str = ""

    def reading(self, channel: int) -> float:
        return self.volts[self.channels.index(channel)]

    def as_mapping(self) -> dict[int, float]:
        return dict(zip(self.channels, self.volts))


class DaqRailScanner(Instrument):
    """Keysight 34970A/34972A/DAQ970A/DAQ973A scanning DC-voltage channels."""

    DRIVER = "daq970a-rails"
    DESCRIPTION = "Keysight 34970A/34972A/DAQ970A/DAQ973A DC-voltage scan of rail sensors"
    # the same instruments as the thermocouple driver: one DAQ may serve both (issue 42)
    MODELS, VENDORS, DEFAULT_PORT = DAQ970A.MODELS, DAQ970A.VENDORS, DAQ970A.DEFAULT_PORT
    OPTIONS: ClassVar[dict[str, type]] = {"channels": str, "range_v": float, "nplc": float,
                                          "line_hz": float, "switch_s": float}
    SETUP = ("*CLS", "CONF:VOLT:DC {range_v},(@{scan_list})",
             "VOLT:DC:NPLC {nplc},(@{scan_list})", "ROUT:SCAN (@{scan_list})", "SYST:ERR?")

    def __init__(self, resource: str, **options: Any) -> None:
        super().__init__(resource, **options)
        if "channels" not in self.options:
            raise InstrumentError(f"{self.DRIVER} needs channels=… (e.g. channels=101:114), "
                                  "the channels its rail sensors are wired to")
        self.channels = parse_channels(self.options["channels"])
        self.range_v = float(self.options.get("range_v", 10.0))
        if self.range_v not in DC_RANGES_V:
            raise InstrumentError(f"range_v={self.range_v:g} is not a DC-voltage range of "
                                  f"this DMM; choose one of {', '.join(map(str, DC_RANGES_V))}")
        self.nplc = float(self.options.get("nplc", 1.0))
        if self.nplc not in NPLC_CHOICES:
            raise InstrumentError(f"nplc={self.nplc:g} is not an integration time of this DMM; "
                                  f"choose one of {', '.join(f'{n:g}' for n in NPLC_CHOICES)}")
        self.line_hz = float(self.options.get("line_hz", 50.0))
        if self.line_hz not in (50.0, 60.0):
            raise InstrumentError(f"line_hz={self.line_hz:g}: the mains is 50 or 60 Hz")
        self.switch_s = float(self.options.get("switch_s", ASSUMED_SWITCH_S))
        if not (math.isfinite(self.switch_s) and 0 <= self.switch_s <= 1):
            raise InstrumentError(f"switch_s={self.switch_s!r} must be 0 … 1 s per channel")

    def command_fields(self) -> dict[str, Any]:
        return {"range_v": f"{self.range_v:g}", "nplc": f"{self.nplc:g}",
                "scan_list": ",".join(str(c) for c in self.channels)}

    @property
    def scan_time_s(self) -> float:
        """How long one scan of every channel takes: integration plus switching each."""
        return len(self.channels) * (self.nplc / self.line_hz + self.switch_s)

    def check_period(self, period_s: float) -> None:
        """Refuse a sampling period one scan of these channels cannot fit in."""
        if self.scan_time_s > period_s:
            raise InstrumentError(
                f"{len(self.channels)} channels at NPLC {self.nplc:g} ({self.line_hz:g} Hz) "
                f"take {self.scan_time_s:.3f} s a scan, longer than the {period_s:g} s sampling "
                "period: scan fewer channels, lower nplc, or sample less often")

    def scan(self, t: float) -> RailScan:
        """One scan: ``READ?`` answers every channel of the scan list, comma-separated."""
        reply = self._exchange(lambda: self._query("READ?"))
        decoded = decode_fields(reply, len(self.channels), GENERIC)
        return RailScan(t, self.channels, tuple(d.value for d in decoded),
                        tuple(d.flags for d in decoded), self.instrument_key())
