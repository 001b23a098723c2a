"""A simulated 34970A/DAQ970A scanning DC-voltage channels: the rail sensors' outputs.

It keeps what the driver sets (the DC range and integration time per channel, the scan list)
and answers ``READ?`` with every channel of the scan list in order, as the driver's protocol
(:mod:`drivers.meters.rail_scan`) expects — and with the real instrument's traps:

* a ``READ?`` before a scan list is set gets no reply and an error in the queue;
* a channel read above its range (beyond the DMM's over-range margin, assumed 120 %) is the
  SCPI overload ``+9.90000000E+37``;
* a scan takes its time: the reply comes after each channel's integration (NPLC cycles of the
  mains) and switching, so a scan list too long for the sampling period shows as late replies.

``volts`` gives each channel's sensor output now (a constant per channel, or the simulated
SUT's rail model). It identifies as ``STORWATT-SIM``, never as the real instrument.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable

from drivers.simulators.dialects import ScpiDialect
from drivers.simulators.faults import FaultKind
from drivers.simulators.meter import _idn
from drivers.simulators.server import LineServer
from drivers.simulators.state import ElectricalState

#: how far past its range the simulated DMM still reads (assumed, not the manual's figure)
OVERRANGE_MARGIN = 1.2
#: the simulated per-channel switching and settling time (s)
SWITCH_S = 0.005
_CHANNELS = r"\(@([\d,:]+)\)"


def _channel_list(text: str) -> list[int]:
    out: list[int] = []
    for part in text.split(","):
        first, _, last = part.partition(":")
        out.extend(range(int(first), int(last or first) + 1))
    return out


class DaqRailsDialect(ScpiDialect):
    ERR_QUERY = "SYST:ERR?"
    OVER_TEXT = "+9.90000000E+37"

    def __init__(self, volts: Callable[[int], float], idn: str, line_hz: float = 50.0) -> None:
        super().__init__(lambda: ElectricalState(0.0), idn)
        self.volts = volts
        self.line_hz = line_hz
        self.range_v: dict[int, float] = {}
        self.nplc: dict[int, float] = {}
        self.scan_list: list[int] = []

    def measurement_fields(self, command: str) -> list[str] | None:
        return ["scan"] if command == "READ?" else None

    def render(self, quantities: list[str], special: FaultKind | None) -> str:
        time.sleep(sum(self.nplc.get(c, 1.0) / self.line_hz + SWITCH_S
                       for c in self.scan_list))  # the scan takes its time
        out = []
        for channel in self.scan_list:
            value = self.volts(channel)
            limit = self.range_v.get(channel, 10.0) * OVERRANGE_MARGIN
            out.append(self.OVER_TEXT if special is not None or abs(value) > limit
                       else f"{value:+.8E}")
        return ",".join(out)

    def respond(self, command: str, special: FaultKind | None) -> str | None:
        upper = " ".join(command.upper().split())
        if upper == "READ?" and not self.scan_list:
            self.errors.append('-221,"Settings conflict; no scan list"')
            return None
        return super().respond(command, special)

    def extra(self, upper: str) -> bool:
        if m := re.fullmatch(rf"CONF:VOLT:DC ([\d.]+),{_CHANNELS}", upper):
            for channel in _channel_list(m.group(2)):
                self.range_v[channel] = float(m.group(1))
            return True
        if m := re.fullmatch(rf"VOLT:DC:NPLC ([\d.]+),{_CHANNELS}", upper):
            for channel in _channel_list(m.group(2)):
                self.nplc[channel] = float(m.group(1))
            return True
        if m := re.fullmatch(rf"ROUT:SCAN {_CHANNELS}", upper):
            self.scan_list = _channel_list(m.group(1))
            return True
        return False


class RailScannerSimulator(LineServer):
    """A loopback DAQ whose channels read ``volts(channel)``; unset channels read 0 V."""

    def __init__(self, volts: Callable[[int], float] | None = None, host: str = "127.0.0.1",
                 port: int = 0, serial: str = "SIM000001") -> None:
        self._fixed: dict[int, float] = {}
        self._source = volts
        super().__init__(DaqRailsDialect(self.volts, _idn("Keysight Technologies", "DAQ970A",
                                                           "A.03.01", serial)), host, port)

    def volts(self, channel: int) -> float:
        if self._source is not None:
            return self._source(channel)
        return self._fixed.get(channel, 0.0)

    def set_channel(self, channel: int, volts: float) -> None:
        self._source = None
        self._fixed[channel] = volts
