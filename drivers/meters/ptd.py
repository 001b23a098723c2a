"""SPEC PTDaemon clients: power (TCP 8888) and temperature (TCP 8889), CRLF lines (§3, §8).

PTDaemon is not a VISA instrument: it is a daemon in front of the real meter that speaks a
plain line protocol. ``Go,<ms>,0,<mark>`` starts sampling, ``RL`` returns the samples since
the last call (``Last N samples`` followed by N ``Time,…,Watts,…`` lines), ``Stop`` ends.
PTDaemon knows its meter's accuracy, so the per-sample uncertainty comes from its
``Uncertainty`` answer: statistics since ``Go`` (``drivers/meters/ptd_replies.py`` parses
the real daemon's replies; docs/method-notes.md §8). Ranges change between ``Stop`` and a new
``Go``, as the reference client changes them, so those statistics cover one range setting.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, ClassVar

from drivers.interfaces import (FLAG_GARBAGE, FLAG_INVALID, FLAG_NO_DATA, IdentityMismatch,
                                InstrumentError, InstrumentIdentity)
from drivers.meters.base import Instrument, split_simulator_prefix
from drivers.meters.commands import Control, Reading, on_off
from drivers.meters.power import POWER_FIELDS, PowerMeterBase
from drivers.meters.ptd_replies import (POWER_MODE, UncertaintyStats, interval_uncertainty_pct,
                                        parse_identify, parse_ranges, parse_uncertainty)
from drivers.meters.thermo import ThermometerBase
from drivers.meters.transport import SocketTransport, Transport, parse_host_port
from drivers.meters.values import NAN, PTD, Decoded, decode

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
        """A real daemon is known by its Identify layout (``version=`` and ``mode=`` fields);
        it does not say "PTDaemon" there. The simulator's reply has the same layout after its
        ``STORWATT-SIM`` prefix, so its identity says SIMULATED."""
        simulator, text = split_simulator_prefix(reply)
        daemon = parse_identify(text)
        if daemon is None:
            raise IdentityMismatch(f"{self.resource} answered Identify with {text.strip()!r}: "
                                   "this is not a PTDaemon (no version= and mode= fields); "
                                   "check host and port (8888 power, 8889 temperature)")
        self._check_mode(daemon.mode, text)
        return InstrumentIdentity(simulator + "SPEC", f"PTDaemon {daemon.device}", daemon.meter,
                                  daemon.version, self.resource, self.DRIVER,
                                  self.calibration_date)

    def _check_mode(self, mode: str, reply: str) -> None:
        """A temperature client refuses a power daemon (the one mode value captured)."""
        if mode == POWER_MODE:
            raise IdentityMismatch(f"{self.resource} is a PTDaemon measuring power "
                                   f"(Identify: {reply.strip()!r}); the temperature daemon "
                                   "listens on its own port (8889 by default)")

    def command_fields(self) -> dict[str, Any]:
        return {"mark": self.options.get("mark", "storwatt"),
                "interval_ms": self.options.get("interval_ms", 1000)}

    def _send_setup(self, command: str) -> None:
        self._check_ack(command, self._query(command))  # PTDaemon answers every command

    def _shutdown(self) -> None:
        self._query("Stop")


class PTDPower(PtdSession, PowerMeterBase):
    """Freshness not checked by the daemon's word (``RL`` has no "new data" status); the
    identical-readings rule (``drivers.meters.power``) still applies."""

    DRIVER = "ptd"
    DESCRIPTION = "SPEC PTDaemon power client (TCP line protocol)"
    DEFAULT_PORT = 8888
    SETUP = ("Go,{interval_ms},0,{mark}",)
    READING = Reading("RL", POWER_FIELDS)
    SPECIALS = PTD
    #: ``RL`` sample lines carry Watts, Volts, Amps and PF, never a frequency (the captured
    #: PTDaemon 1.10 lines, tests/fixtures/ptd; method-notes §3 "not measured by this
    #: interface"): the supply rule judges the volts, the report says Hz was not measured
    GIVES_FREQUENCY = False

    voltage_range = Control("SR,V,{value:g}", ack=True, validator=positive, unit="V")
    current_range = Control("SR,A,{value:g}", ack=True, validator=positive, unit="A")
    voltage_auto = Control("SR,V,Auto", ack=True, validator=on_off)
    current_auto = Control("SR,A,Auto", ack=True, validator=on_off)

    def __init__(self, resource: str, **options: Any) -> None:
        super().__init__(resource, **options)
        self._since_go: UncertaintyStats | None = None  # the last Uncertainty reply of this Go

    def _check_mode(self, mode: str, reply: str) -> None:
        if mode != POWER_MODE:
            raise IdentityMismatch(f"{self.resource} is a PTDaemon in mode {mode!r}, not "
                                   f"{POWER_MODE!r} (Identify: {reply.strip()!r}); the power "
                                   "daemon listens on its own port (8888 by default)")

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

    # -- ranging: between Stop and Go, so the daemon's statistics cover one setting ----------
    def _configure(self) -> None:
        self._since_go = None
        super()._configure()

    def _apply_fixed(self, volts: float, amps: float) -> None:
        self._restart(lambda: PowerMeterBase._apply_fixed(self, volts, amps))

    def _apply_auto(self) -> None:
        self._restart(lambda: PowerMeterBase._apply_auto(self))

    def _restart(self, change: Callable[[], None]) -> None:
        """``Stop``, the range commands, then ``Go`` again (which restarts the statistics)."""
        self._send_setup("Stop")
        change()
        self._configure()

    def _present_ranges(self) -> tuple[float | None, float | None]:
        """The fixed ranges sent, else what ``RR`` says the meter uses on auto range."""
        if self._fixed is not None:
            return self._fixed
        return parse_ranges(self._query("RR")).present()

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
        """The uncertainty (%) the daemon's ``Uncertainty`` statistics vouch for over the
        samples since the previous ask (None when it could not evaluate one of them)."""
        stats = parse_uncertainty(self._query("Uncertainty"))
        stated = interval_uncertainty_pct(self._since_go, stats)
        self._since_go = stats
        return stated


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
