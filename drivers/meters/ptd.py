"""SPEC PTDaemon clients: power (TCP 8888) and temperature (TCP 8889), CRLF lines (§3, §8).

PTDaemon is not a VISA instrument: it is a daemon in front of the real meter that speaks a
plain line protocol. ``Go,<ms>,0,<mark>`` starts sampling, ``RL`` returns the samples since
the last call (``Last N samples`` followed by N ``Time,…,Watts,…`` lines), ``Stop`` ends.
PTDaemon knows its meter's accuracy, so the per-sample uncertainty comes from its
``Uncertainty`` answer (fraction of the reading; -1 when it cannot evaluate it).
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

from drivers.interfaces import (FLAG_GARBAGE, FLAG_INVALID, FLAG_NO_DATA, IdentityMismatch,
                                InstrumentError, InstrumentIdentity)
from drivers.meters.base import Instrument, split_simulator_prefix
from drivers.meters.commands import Control, Reading, on_off
from drivers.meters.power import POWER_FIELDS, PowerMeterBase
from drivers.meters.thermo import ThermometerBase
from drivers.meters.transport import SocketTransport, Transport, parse_host_port
from drivers.meters.values import NAN, PTD, Decoded, decode, parse_number

_RL_HEADER = re.compile(r"^Last\s+(\d+)\s+samples?", re.IGNORECASE)
_RL_KEYS = {"Watts": "watts", "Volts": "volts", "Amps": "amps", "PF": "pf", "Freq": "freq_hz"}


def positive(value: Any, meter: Any) -> float:
    number = float(value)
    if number <= 0:
        raise InstrumentError(f"range must be positive, got {value!r}")
    return number


class PtdSession(Instrument):
    """What both PTDaemon modes share: address, identity, Go/Stop."""

    IDN_QUERY = "Identify"
    MODELS = ("PTDaemon",)
    READ_TERMINATION = "\r\n"
    WRITE_TERMINATION = "\r\n"
    OPTIONS: ClassVar[dict[str, type]] = {"mark": str, "interval_ms": int}

    def _check_resource(self, resource: str) -> str:
        host, port = parse_host_port(resource, self.DEFAULT_PORT or 8888)
        return f"{host}:{port}"

    def _connect(self) -> Transport:
        host, _, port = self.resource.rpartition(":")
        return SocketTransport(host, int(port), termination=self.WRITE_TERMINATION,
                               timeout_s=self.timeout_s, waits=self.waits)

    def _identity_from(self, reply: str) -> InstrumentIdentity:
        simulator, text = split_simulator_prefix(reply)
        text = text.strip()
        if "ptdaemon" not in text.lower():
            raise IdentityMismatch(f"{self.resource} answered Identify with {text!r}: this is "
                                   "not a PTDaemon; check host and port (8888 power, 8889 "
                                   "temperature)")
        version = re.search(r"version\s+(\S+)", text, re.IGNORECASE)
        return InstrumentIdentity(simulator + "SPEC", "PTDaemon", "", version.group(1) if version else "",
                                  self.resource, self.DRIVER, self.calibration_date)

    def command_fields(self) -> dict[str, Any]:
        return {"mark": self.options.get("mark", "storwatt"),
                "interval_ms": self.options.get("interval_ms", 1000)}

    def _send_setup(self, command: str) -> None:
        self._check_ack(command, self._query(command))  # PTDaemon answers every command

    def _shutdown(self) -> None:
        self._query("Stop")


class PTDPower(PtdSession, PowerMeterBase):
    DRIVER = "ptd"
    DESCRIPTION = "SPEC PTDaemon power client (TCP line protocol)"
    DEFAULT_PORT = 8888
    SETUP = ("Go,{interval_ms},0,{mark}",)
    READING = Reading("RL", POWER_FIELDS)
    SPECIALS = PTD

    voltage_range = Control("SR,V,{value:g}", ack=True, validator=positive, unit="V")
    current_range = Control("SR,A,{value:g}", ack=True, validator=positive, unit="A")
    voltage_auto = Control("SR,V,Auto", ack=True, validator=on_off)
    current_auto = Control("SR,A,Auto", ack=True, validator=on_off)

    @property
    def accuracy(self) -> None:
        """PTDaemon knows its meter's accuracy and states each sample's uncertainty."""
        return None

    @property
    def volt_ranges(self) -> tuple[float, ...]:
        """None listed: PTDaemon takes any value and selects the meter's range itself."""
        return ()

    @property
    def amp_ranges(self) -> tuple[float, ...]:
        return ()

    def _present_ranges(self) -> tuple[float | None, float | None]:
        return self._fixed if self._fixed is not None else (None, None)

    def _fetch(self) -> dict[str, Decoded]:
        header = self._query("RL").strip()
        m = _RL_HEADER.match(header)
        if m is None:
            flag = FLAG_INVALID if "error" in header.lower() else FLAG_GARBAGE
            return {name: Decoded(NAN, frozenset({flag})) for name in POWER_FIELDS}
        lines = [self._require().read() for _ in range(int(m.group(1)))]
        if not lines:
            return {name: Decoded(NAN, frozenset({FLAG_NO_DATA})) for name in POWER_FIELDS}
        return self._parse_sample(lines[-1])

    def _parse_sample(self, line: str) -> dict[str, Decoded]:
        """``Time,<stamp>,Watts,22.95,Volts,…`` → fields (missing ones NaN, unflagged)."""
        parts = [p.strip() for p in line.split(",")]
        pairs = dict(zip(parts[0::2], parts[1::2]))
        if "Watts" not in pairs:
            flag = FLAG_INVALID if "error" in line.lower() else FLAG_GARBAGE
            return {name: Decoded(NAN, frozenset({flag})) for name in POWER_FIELDS}
        out = {name: Decoded(NAN) for name in POWER_FIELDS}
        for key, name in _RL_KEYS.items():
            if key in pairs:
                out[name] = decode(pairs[key], PTD)
        return out

    def _uncertainty_pct(self, watts: float, range_v: float | None,
                         range_a: float | None) -> float | None:
        return None if watts != watts else self._stated_uncertainty_pct()

    def _stated_uncertainty_pct(self) -> float | None:
        """The daemon's ``Uncertainty`` answer in % (None when it cannot evaluate it)."""
        value = parse_number(self._query("Uncertainty").split(",")[-1])
        return None if value is None or value < 0 else value * 100.0


class PTDTemperature(PtdSession, ThermometerBase):
    DRIVER = "ptd-temp"
    DESCRIPTION = "SPEC PTDaemon temperature client (TCP line protocol)"
    DEFAULT_PORT = 8889
    SETUP = ("Go,{interval_ms},0,{mark}",)
    READING = Reading("Temp", ("celsius",))

    SPECIALS = PTD

    def _field(self, reply: str) -> str:
        """``Temperature,23.50`` or a bare number; an error reply stays whole."""
        return reply if "error" in reply.lower() else reply.split(",")[-1]
