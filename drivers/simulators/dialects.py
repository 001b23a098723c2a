"""Wire dialects of the simulated meters: what each instrument answers, in its own format.

The dialects keep the instrument state a driver can change (ranges, auto range, measurement
items, error queue) so a driver that forgets a set-up command gets the wrong answer here too.
A fixed range read above 140 % of full scale, or whose waveform peak exceeds the crest factor
(3) times the range, is over-range, like the WT300 (method-notes §3, §8); auto range picks the
smallest range that holds both.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable
from dataclasses import replace

from drivers.interfaces import SIMULATOR_IDN_PREFIX
from drivers.simulators.faults import FaultKind
from drivers.simulators.server import LineDialect
from drivers.simulators.state import ElectricalState

StateFn = Callable[[], ElectricalState]
OVERRANGE_FACTOR = 1.4
CREST_FACTOR = 3.0
PEAK_OF = {"volts": "v_peak+", "amps": "a_peak+"}


def nr3(value: float) -> str:
    """Yokogawa-style NR3 with five significant digits: ``230.05E+00``."""
    if value == 0:
        return "0.0000E+00"
    exp = int(math.floor(math.log10(abs(value)) / 3) * 3)
    mant = value / 10 ** exp
    digits = 2 if abs(mant) >= 100 else 3 if abs(mant) >= 10 else 4
    return f"{mant:.{digits}f}E{exp:+03d}"


def hioki_nr3(value: float) -> str:
    """Hioki's 10-character form: ``+230.05E+0``, ``+206.40E-3``."""
    if value == 0:
        return "+0.0000E+0"
    exp = int(math.floor(math.log10(abs(value)) / 3) * 3)
    mant = value / 10 ** exp
    digits = 2 if abs(mant) >= 100 else 3 if abs(mant) >= 10 else 4
    return f"{mant:+.{digits}f}E{exp:+d}"


def nr2(value: float) -> str:
    return f"{value:.4g}" if abs(value) < 1 else f"{value:.2f}"


class RangeState:
    """One input's range: fixed or auto, with the over-range rule."""

    def __init__(self, ranges: tuple[float, ...]) -> None:
        self.ranges = ranges
        self.fixed: float | None = None

    def present(self, value: float, peak: float = 0.0) -> float:
        if self.fixed is not None:
            return self.fixed
        return next((r for r in self.ranges
                     if abs(value) <= r and abs(peak) <= CREST_FACTOR * r), self.ranges[-1])

    def over(self, value: float, peak: float = 0.0) -> bool:
        present = self.present(value, peak)
        return abs(value) > OVERRANGE_FACTOR * present or abs(peak) > CREST_FACTOR * present

    def set(self, text: str) -> bool:
        number = float(re.sub(r"[A-Za-z]+$", "", text))
        if not any(math.isclose(number, r) for r in self.ranges):
            return False
        self.fixed = number
        return True


class ScpiDialect(LineDialect):
    """SCPI-ish instruments: *IDN?, *CLS, an error queue, ranges and one reading query."""

    IDN = ""
    VOLT_RANGES: tuple[float, ...] = ()
    AMP_RANGES: tuple[float, ...] = ()
    #: command prefixes (upper case) → "volts"/"amps" range setters and auto switches
    RANGE_SET: dict[str, str] = {}
    AUTO_SET: dict[str, str] = {}
    ERR_QUERY = ":STAT:ERR?"
    ACCEPTED: tuple[str, ...] = ()  # set-up commands that need no state
    NAN_TEXT = "NAN"
    OVER_TEXT = "INF"

    def __init__(self, state: StateFn, idn: str | None = None) -> None:
        self.state = state
        self.idn = idn or self.IDN
        self.inputs = {"volts": RangeState(self.VOLT_RANGES), "amps": RangeState(self.AMP_RANGES)}
        self.errors: list[str] = []

    # -- formatting ---------------------------------------------------------------------------
    def fmt(self, value: float) -> str:
        return nr3(value)

    def special_text(self, kind: FaultKind) -> str:
        return self.NAN_TEXT if kind is FaultKind.NAN else self.OVER_TEXT

    def measurement_fields(self, command: str) -> list[str] | None:
        """Quantities the query asks for, or None when it is no measurement query."""
        raise NotImplementedError

    def is_measurement(self, command: str) -> bool:
        return self.measurement_fields(command.upper()) is not None

    def render(self, quantities: list[str], special: FaultKind | None) -> str:
        state = self.state()
        over = any(rs.over(state.value(q), state.value(PEAK_OF[q]))
                   for q, rs in self.inputs.items())
        out = []
        for q in quantities:
            if special is not None:
                out.append(self.special_text(special))
            elif over and q in ("amps", "watts", "volts", "va"):
                out.append(self.OVER_TEXT)
            else:
                out.append(self.fmt(state.value(q)))
        return ",".join(out)

    # -- dispatch -----------------------------------------------------------------------------
    def respond(self, command: str, special: FaultKind | None) -> str | None:
        upper = " ".join(command.upper().split())
        if upper == "*IDN?":
            return self.idn
        if upper == self.ERR_QUERY:
            return self.errors.pop(0) if self.errors else '0,"No error"'
        fields = self.measurement_fields(upper)
        if fields is not None:
            return self.render(fields, special)
        for prefix, quantity in self.RANGE_SET.items():
            if upper.startswith(prefix):
                return self._range(quantity, upper[len(prefix):].strip())
        for prefix, quantity in self.AUTO_SET.items():
            if upper.startswith(prefix):
                rs, switch = self.inputs[quantity], upper[len(prefix):].strip()
                state = self.state()
                rs.fixed = None if switch in ("ON", "1") else \
                    rs.present(state.value(quantity), state.value(PEAK_OF[quantity]))
                return None
        if upper == "*CLS":
            self.errors.clear()
            return None
        if self.extra(upper) or any(upper.startswith(p) for p in self.ACCEPTED):
            return None
        self.errors.append('113,"Undefined header"')
        return None  # an unknown query gets no answer, like the real instrument

    def _range(self, quantity: str, argument: str) -> str | None:
        rs = self.inputs[quantity]
        if argument == "?":
            state = self.state()
            return self.fmt(rs.present(state.value(quantity), state.value(PEAK_OF[quantity])))
        if not rs.set(argument):
            self.errors.append('224,"Illegal parameter value"')
        return None

    def extra(self, upper: str) -> bool:
        """Dialect-specific commands with state; True when handled."""
        return False


WT_FUNCTIONS = {"U": "volts", "I": "amps", "P": "watts", "S": "va", "LAMB": "pf",
                "FU": "freq_hz", "UPP": "v_peak+", "UMP": "v_peak-", "IPP": "a_peak+",
                "IMP": "a_peak-"}


class WT300Dialect(ScpiDialect):
    """The WT300 command set. A multi-element model (WT333E) splits what it measures over its
    elements (``shares``, equal by default: a balanced three-phase load) and answers Σ items
    (``U,SIGMA`` …) with the sum of the elements' powers and the mean of their volts and amps,
    as the WT300E does for a three-phase wiring; the wiring is ``:INP:WIR P1W2|P3W3|P3W4``."""

    VOLT_RANGES = (15.0, 30.0, 60.0, 150.0, 300.0, 600.0)
    AMP_RANGES = (0.5, 1.0, 2.0, 5.0, 10.0, 20.0)
    RANGE_SET = {":INP:VOLT:RANG": "volts", ":INP:CURR:RANG": "amps"}
    AUTO_SET = {":INP:VOLT:AUTO": "volts", ":INP:CURR:AUTO": "amps"}
    ACCEPTED = (":STAT:QMES", ":COMM:HEAD", ":NUM:FORM ASCII", ":INP:CFAC", ":STAT:FILT1 FALL")
    WIRINGS = {"P1W2": 1, "P3W3": 2, "P3W4": 3}  # code → elements it needs
    #: the data update interval (the WT300's fastest, 100 ms): ``:STAT:EESR?`` sets bit 0
    #: (UPD) when an update completed since the register was last read, which clears it
    UPDATE_S = 0.1

    def __init__(self, state: StateFn, idn: str, elements: int = 1,
                 now: Callable[[], float] = time.monotonic,
                 update_s: float = UPDATE_S) -> None:
        super().__init__(state, idn)
        self.held = False
        self.update_s = update_s
        #: the run's clock (a fake one in tests) beside real time: the data updates as either
        #: moves on, so a run on a fake clock sees one update per simulated moment and a read
        #: that waits for an update in real time gets one
        self.now = now
        self._eesr_read = (now(), time.monotonic())
        self.elements = elements
        self.shares = (1.0 / elements,) * elements
        self.wiring = "P1W2"
        self.count = 15
        #: item number → (function, element); element 0 = SIGMA (factory default: element 1)
        self.items: dict[int, tuple[str, int]] = {1: ("U", 1), 2: ("I", 1), 3: ("P", 1),
                                                  4: ("S", 1)}

    def measurement_fields(self, command: str) -> list[str] | None:
        if m := re.fullmatch(r":NUM:NORM:VAL\? (\d+)", command):  # one item by number
            numbers = [int(m.group(1))]
        elif command == ":NUM:NORM:VAL?":
            numbers = list(range(1, self.count + 1))
        else:
            return None
        return [f"{WT_FUNCTIONS[f]}@{e}" if f else ""
                for f, e in (self.items.get(k, ("", 0)) for k in numbers)]

    def hold(self, held: bool) -> None:
        self.held = held

    def respond(self, command: str, special: FaultKind | None) -> str | None:
        if " ".join(command.upper().split()) == ":STAT:EESR?":
            return str(self._event_register())
        return super().respond(command, special)

    def _event_register(self) -> int:
        """Bit 0: an update completed since the last read of the register (never while the
        data is held); reading clears it."""
        now = (self.now(), time.monotonic())
        last, self._eesr_read = self._eesr_read, now
        updated = any(int(n / self.update_s) != int(p / self.update_s)
                      for n, p in zip(now, last))
        return int(updated and not self.held)

    def element_state(self, element: int) -> ElectricalState:
        """What element ``element`` (0 = Σ) measures of the meter's state."""
        state = self.state()
        if self.elements == 1:
            return state
        if element == 0:  # mean of the elements' volts (line-to-line on 3P3W) and amps
            volts = state.volts * (math.sqrt(3) if self.wiring == "P3W3" else 1.0)
            return replace(state, volts=volts, amps=state.current / self.elements)
        share = self.shares[element - 1]
        return replace(state, watts=state.watts * share, amps=state.current * share)

    def render(self, quantities: list[str], special: FaultKind | None) -> str:
        out = []
        for q in quantities:
            if not q:
                out.append("NAN")  # an unset item reads as no data
                continue
            name, _, element = q.partition("@")
            state = self.element_state(int(element))
            over = any(rs.over(state.value(q), state.value(PEAK_OF[q]))
                       for q, rs in self.inputs.items())
            if special is not None:
                out.append(self.special_text(special))
            elif over and name in ("amps", "watts", "volts", "va"):
                out.append(self.OVER_TEXT)
            else:
                out.append(self.fmt(state.value(name)))
        return ",".join(out)

    def extra(self, upper: str) -> bool:
        if m := re.fullmatch(r":NUM:NORM:NUM (\d+)", upper):
            self.count = int(m.group(1))
            return True
        if m := re.fullmatch(r":NUM:NORM:ITEM(\d+) (\w+),(\d+|SIGMA)", upper):
            element = 0 if m.group(3) == "SIGMA" else int(m.group(3))
            sigma_ok = element != 0 or self.elements > 1  # a WT310 has no Σ
            if m.group(2) in WT_FUNCTIONS and element <= self.elements and sigma_ok:
                self.items[int(m.group(1))] = (m.group(2), element)
            else:
                self.errors.append('224,"Illegal parameter value"')
            return True
        if m := re.fullmatch(r":INP:WIR (\w+)", upper):
            if self.WIRINGS.get(m.group(1), 99) <= self.elements and self.elements > 1:
                self.wiring = m.group(1)
            else:
                self.errors.append('224,"Illegal parameter value"')
            return True
        return False


WT210_ORDER = ("V", "A", "W", "VA", "PF", "VHZ")
WT210_FUNCTIONS = {"V": "volts", "A": "amps", "W": "watts", "VA": "va", "PF": "pf",
                   "VHZ": "freq_hz"}


class WT210Dialect(ScpiDialect):
    """WT210/WT230; also what a WT300 in WT200 compatibility mode speaks."""

    VOLT_RANGES = WT300Dialect.VOLT_RANGES
    AMP_RANGES = WT300Dialect.AMP_RANGES
    RANGE_SET = {":CONF:VOLT:RANG": "volts", ":CONF:CURR:RANG": "amps"}
    AUTO_SET = {":CONF:VOLT:AUTO": "volts", ":CONF:CURR:AUTO": "amps"}
    ACCEPTED = (":COMM:HEAD", ":CONF:CFAC")
    NAN_TEXT = "9.91E+37"
    OVER_TEXT = "9.90E+37"

    def __init__(self, state: StateFn, idn: str) -> None:
        super().__init__(state, idn)
        self.enabled = {"V", "A", "W"}

    def measurement_fields(self, command: str) -> list[str] | None:
        if command != ":MEAS:VAL?":
            return None
        return [WT210_FUNCTIONS[f] for f in WT210_ORDER if f in self.enabled]

    def extra(self, upper: str) -> bool:
        if m := re.fullmatch(r":MEAS:ITEM:(\w+) (ON|OFF)", upper):
            if m.group(1) in WT210_FUNCTIONS:
                (self.enabled.add if m.group(2) == "ON" else self.enabled.discard)(m.group(1))
                return True
        return False


class ItemListDialect(ScpiDialect):
    """Meters whose reading query names its items: ``MEAS? V,I,W,PF`` (Chroma, Hioki)."""

    QUERIES: tuple[str, ...] = ()
    ITEMS: dict[str, str] = {}

    def measurement_fields(self, command: str) -> list[str] | None:
        head, _, items = command.partition(" ")
        if head not in self.QUERIES:
            return None
        names = [i.strip() for i in items.split(",") if i.strip()]
        if not names or any(n not in self.ITEMS for n in names):
            return None
        return [self.ITEMS[n] for n in names]


class ChromaDialect(ItemListDialect):
    VOLT_RANGES = (150.0, 300.0, 500.0)
    AMP_RANGES = (0.01, 0.04, 0.2, 2.0, 8.0, 20.0)
    RANGE_SET = {"CONF:VOLT:RANG": "volts", "CONF:CURR:RANG": "amps"}
    AUTO_SET = {"CONF:VOLT:AUTO": "volts", "CONF:CURR:AUTO": "amps"}
    ERR_QUERY = "SYST:ERR?"
    ACCEPTED = ("SYST:TRAN:SEP 0", "SYST:TRAN:TERM 0")
    QUERIES = ("MEAS?", "FETC?")
    ITEMS = {"V": "volts", "I": "amps", "W": "watts", "PF": "pf", "FREQ": "freq_hz",
             "VPK+": "v_peak+", "VPK-": "v_peak-", "IPK+": "a_peak+", "IPK-": "a_peak-"}
    NAN_TEXT = "-1"
    OVER_TEXT = "-3"

    def fmt(self, value: float) -> str:
        return nr2(value)


class HiokiDialect(ItemListDialect):
    termination = "\r\n"
    VOLT_RANGES = (6.0, 15.0, 30.0, 60.0, 150.0, 300.0, 600.0, 1000.0)
    AMP_RANGES = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0,
                  20.0)
    RANGE_SET = {":VOLT1:RANG": "volts", ":CURR1:RANG": "amps"}
    AUTO_SET = {":VOLT1:AUTO": "volts", ":CURR1:AUTO": "amps"}
    ERR_QUERY = ":ERR?"
    ACCEPTED = (":HEAD OFF",)
    QUERIES = (":MEAS?",)
    ITEMS = {"U1": "volts", "I1": "amps", "P1": "watts", "PF1": "pf", "FREQU1": "freq_hz"}
    NAN_TEXT = "+777.77E+9"
    OVER_TEXT = "+999.99E+9"

    def fmt(self, value: float) -> str:
        return hioki_nr3(value)


class DaqDialect(ScpiDialect):
    """Keysight 34970A/DAQ970A answering ``MEAS:TEMP? TC,<type>,(@<channel>)`` in °C."""

    ERR_QUERY = "SYST:ERR?"
    NAN_TEXT = OVER_TEXT = "+9.90000000E+37"  # open thermocouple / overload

    def __init__(self, celsius: Callable[[], float], idn: str) -> None:
        super().__init__(lambda: ElectricalState(0.0), idn)
        self.celsius = celsius

    def measurement_fields(self, command: str) -> list[str] | None:
        ok = re.fullmatch(r"MEAS:TEMP\? TC,[BEJKNRST],\(@[1-3]\d\d\)", command)
        return ["celsius"] if ok else None

    def render(self, quantities: list[str], special: FaultKind | None) -> str:
        return self.NAN_TEXT if special else f"{self.celsius():+.8E}"


class WatchportDialect(LineDialect):
    termination = "\r"

    def __init__(self, celsius: Callable[[], float], model: str = "Watchport/H") -> None:
        self.celsius = celsius
        self.model = model

    def wants_reply(self, command: str) -> bool:
        return True

    def is_measurement(self, command: str) -> bool:
        return command.strip().upper() == "TC"

    def respond(self, command: str, special: FaultKind | None) -> str | None:
        word = command.strip().upper()
        if word == "I":
            return f"{SIMULATOR_IDN_PREFIX} {self.model}"
        if word == "TC":
            return "Sensor Error" if special else f"{self.celsius():+.4f}C"
        return "Invalid Command"


class PtdDialect(LineDialect):
    """PTDaemon in power (8888) or temperature (8889) mode; every command is answered in the
    layouts captured from PTDaemon 1.10.0 (docs/method-notes.md §8, tests/fixtures/ptd/).

    ``Identify`` has the captured layout with the simulator's prefix and a device name of its
    own (``StorWattSimulatedMeter``); its unnamed numeric fields are the captured ones
    verbatim, and ``mode=temperature`` is the simulator's value (no capture shows a
    temperature daemon's). ``RR`` reports ``Ranges,<A auto>,<A>,<V auto>,<V>``: on auto range
    the WT300 range the load needs, like the captured WT333E. ``Uncertainty`` reports the
    statistics since ``Go``: a sample taken on auto range (or a bad one) is "unknown", one on
    fixed ranges has 0.15 %.

    With ``channels`` > 1 it is a daemon in multi-channel mode (started with ``-c 1,N``):
    ``RL,*,*`` answers the documented layout (docs/method-notes.md §8): the header naming the
    sum channel and channels 1 - N, then ``Time,<stamp>`` with the sum's block and one block
    per channel. The channels split the state by ``shares`` (equal by default); the sum's watts
    is theirs added, its volts and amps their mean, as the captured daemon reports them. A
    channel in ``failed`` reads ``-1.000000`` in its block alone (a constructed fault: the
    captured bad samples fail every block). Single-channel, ``RL,*,*`` is refused with the
    words the real daemon's refusal contains."""

    termination = "\r\n"
    #: the simulated meter behind the daemon ranges like a WT300 on auto range
    VOLT_RANGES = WT300Dialect.VOLT_RANGES
    AMP_RANGES = WT300Dialect.AMP_RANGES
    #: the uncertainty (fraction of the reading) of a sample on fixed ranges
    FIXED_UNCERTAINTY = 0.0015

    def __init__(self, state: StateFn, celsius: Callable[[], float] | None = None,
                 version: str = "1.10.0-storwatt-sim", channels: int = 1,
                 serial: str = "0") -> None:
        self.state = state
        self.serial = serial  # the meter's serial in Identify's last field
        self.celsius = celsius
        self.version = version
        self.channels = channels
        self.shares = (1.0 / channels,) * channels
        self.failed: set[int] = set()
        self.running = False
        self.ranges = {"V": "Auto", "A": "Auto"}
        self.evaluated: list[float] = []  # uncertainty of each evaluated sample since Go
        self.unknown = 0  # samples since Go whose uncertainty could not be evaluated

    def wants_reply(self, command: str) -> bool:
        return True

    def is_measurement(self, command: str) -> bool:
        return command.strip() in ("RL", "RL,*,*", "Temp", "Watts")

    def respond(self, command: str, special: FaultKind | None) -> str | None:
        cmd = command.strip()
        if cmd == "Identify":
            mode = "temperature" if self.celsius else "power"
            return (f"{SIMULATOR_IDN_PREFIX} StorWattSimulatedMeter,1000,1,1,1,1,0,0,1,"
                    f"version={self.version},OS=simulated,mode={mode},1,1,3,0,0,no_cal_date,"
                    f"STORWATT;SIMULATED;{self.serial};{self.version}")
        if cmd.startswith("Go,"):
            self.running = True
            self.evaluated, self.unknown = [], 0
            return "Starting untimed measurement"
        if cmd == "Stop":
            self.running = False
            return "Stopping untimed measurement"
        if m := re.fullmatch(r"SR,([VA]),(\S+)", cmd):
            self.ranges[m.group(1)] = m.group(2)
            return f"Range {m.group(1)} changed"
        if cmd == "RR":
            return self._ranges()
        if cmd == "RL" and self.celsius is None:
            return self._samples(special)
        if cmd == "RL,*,*" and self.celsius is None:
            if self.channels == 1:
                return "Error: Invalid number of parameters"
            return self._channel_samples(special)
        if cmd == "Uncertainty" and self.celsius is None:
            return self._uncertainty()
        if cmd == "Temp" and self.celsius is not None:
            if special is FaultKind.OVERRANGE:
                return "Error: sensor not responding"
            return "-1.000000" if special else f"Temperature,{self.celsius():.2f}"
        return f"Error: unknown command {cmd!r}"

    def _ranges(self) -> str:
        s = self.state()
        fields = []
        for key, value, ranges in (("A", s.current, self.AMP_RANGES),
                                   ("V", s.volts, self.VOLT_RANGES)):
            auto = self.ranges[key] == "Auto"
            present = RangeState(ranges).present(value) if auto else float(self.ranges[key])
            fields.append(f"{int(auto)},{present:.6f}")
        return "Ranges," + ",".join(fields)

    def _take_sample(self, bad: bool) -> None:
        """The daemon evaluates each sample's uncertainty as it takes it."""
        if bad or "Auto" in self.ranges.values():
            self.unknown += 1
        else:
            self.evaluated.append(self.FIXED_UNCERTAINTY)

    def _uncertainty(self) -> str:
        counts = (f"{len(self.evaluated) + self.unknown},0,{len(self.evaluated)},"
                  f"{self.unknown}")
        if not self.evaluated:
            return f"Uncertainty,-1.0,10000000.000000,0.000000,{counts}"
        u = self.evaluated
        return f"Uncertainty,{sum(u) / len(u):.6f},{min(u):.6f},{max(u):.6f},{counts}"

    def _samples(self, special: FaultKind | None) -> str:
        if not self.running:
            return "Error: no measurement running (send Go first)"
        if special is FaultKind.OVERRANGE:
            return "Error: meter over range"
        s = self.state()
        self._take_sample(special is FaultKind.NAN)
        stamp = time.strftime("%m-%d-%Y %H:%M:%S.000")
        if special is FaultKind.NAN:
            values = ["-1.000000"] * 4
        else:
            values = [f"{s.watts:.6f}", f"{s.volts:.6f}", f"{s.current:.6f}", f"{s.pf:.6f}"]
        line = (f"Time,{stamp},Watts,{values[0]},Volts,{values[1]},Amps,{values[2]},"
                f"PF,{values[3]}")
        return "Last 1 samples\r\n" + line

    def _channel_samples(self, special: FaultKind | None) -> str:
        if not self.running:
            return "Error: no measurement running (send Go first)"
        if special is FaultKind.OVERRANGE:
            return "Error: meter over range"
        s = self.state()
        parts = [(s.watts * share, s.volts, s.current * share, s.pf) for share in self.shares]
        total = (sum(p[0] for p in parts), s.volts, s.current / self.channels, s.pf)
        blocks = [total, *parts]
        bad = {0, *range(1, self.channels + 1)} if special is FaultKind.NAN else \
            {0, *self.failed} if self.failed else set()
        self._take_sample(bool(bad))
        text = ",".join(
            "Watts,{},Volts,{},Amps,{},PF,{}".format(
                *(["-1.000000"] * 4 if k in bad else [f"{v:.6f}" for v in block]))
            for k, block in enumerate(blocks))
        stamp = time.strftime("%m-%d-%Y %H:%M:%S.000")
        return (f"Last 1 samples from sum channel and channels 1 - {self.channels}\r\n"
                f"Time,{stamp},{text}")
