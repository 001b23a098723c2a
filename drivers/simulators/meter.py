"""Wire-level meter simulators: a loopback socket per meter speaking its real protocol.

Tests and the demo reach them through pyvisa-py's ``TCPIP::127.0.0.1::PORT::SOCKET`` (or a
plain socket for PTDaemon) exactly like a LAN meter. The ``source`` callable is the only
coupling to whatever produces the readings (a constant, or the simulated SUT's power model).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from drivers.clock import Clock, MonotonicClock
from drivers.interfaces import SIMULATOR_IDN_PREFIX
from drivers.simulators.dialects import (ChromaDialect, DaqDialect, HiokiDialect, PtdDialect,
                                         WatchportDialect, WT210Dialect, WT300Dialect)
from drivers.simulators.server import LineDialect, LineServer
from drivers.simulators.state import DEFAULT_CELSIUS, DEFAULT_STATE, ElectricalState

SERIAL = "SIM000001"
#: model → (*IDN? reply, elements); the WT300 family
WT300_MODELS = {"wt310": "WT310", "wt310e": "WT310E", "wt330": "WT330", "wt333e": "WT333E"}
WT300_ELEMENTS = {"wt310": 1, "wt310e": 1, "wt330": 3, "wt333e": 3}
POWER_MODELS = (*WT300_MODELS, "wt210", "chroma66202", "chroma66203", "chroma66204", "pw3335",
                "pw3336", "ptd")
TEMPERATURE_MODELS = ("daq970a", "34970a", "watchport", "ptd-temp")
#: model → the registry driver that reads it (for the CLI and docs)
DRIVER_FOR_MODEL = {**{m: "wt300" for m in WT300_MODELS}, "wt210": "wt210",
                    "chroma66202": "chroma66200", "chroma66203": "chroma66200",
                    "chroma66204": "chroma66200", "pw3335": "pw3335", "pw3336": "pw3335",
                    "ptd": "ptd", "daq970a": "daq970a", "34970a": "daq970a",
                    "watchport": "watchport", "ptd-temp": "ptd-temp"}


def _idn(vendor: str, model: str, firmware: str, serial: str = SERIAL) -> str:
    """The ``*IDN?`` reply of a simulated ``model``: ``STORWATT-SIM`` before the vendor, so
    the driver accepts it and marks the identity simulated (app.rules.compliance)."""
    return f"{SIMULATOR_IDN_PREFIX} {vendor},{model},{serial},{firmware}"


class MeterSimulator(LineServer):
    """A simulated power meter. ``compat_mode`` makes a WT300 answer like a WT210 (the WT200
    compatibility mode a technician may have left on); ``serial`` tells two meters of one
    model apart (PTDaemon: the serial in its meter field)."""

    def __init__(self, model: str, source: Callable[[], ElectricalState] | None = None,
                 host: str = "127.0.0.1", port: int = 0, *, compat_mode: bool = False,
                 channels: int = 1, clock: Clock | None = None,
                 update_s: float = WT300Dialect.UPDATE_S, serial: str = SERIAL) -> None:
        model = model.lower()
        if model not in POWER_MODELS:
            raise ValueError(f"unknown power-meter model {model!r}; choose one of "
                             f"{', '.join(POWER_MODELS)}")
        if compat_mode and model not in WT300_MODELS:
            raise ValueError("compat_mode (WT200 compatibility) exists on WT300 models only")
        if channels != 1 and model != "ptd":
            raise ValueError("channels (PTDaemon's multi-channel mode) exist on ptd only")
        self.model = model
        self.channels = channels
        #: the clock the meter's data updates follow (a run on a fake clock passes its own)
        self.clock = clock or MonotonicClock()
        self.update_s = update_s  # a WT300's data update interval
        self.serial = serial
        self._source = source
        self._constant = DEFAULT_STATE
        self._state_lock = threading.Lock()
        super().__init__(self._dialect(model, compat_mode), host, port)

    def _dialect(self, model: str, compat: bool):
        state, serial = self.state, self.serial
        if model in WT300_MODELS:
            if compat:
                return WT210Dialect(state, _idn("YOKOGAWA", "760401", "F1.03", serial))
            return WT300Dialect(state, _idn("YOKOGAWA", WT300_MODELS[model], "F1.03", serial),
                                WT300_ELEMENTS[model], self.clock.now, self.update_s)
        if model == "wt210":
            return WT210Dialect(state, _idn("YOKOGAWA", "WT210", "F2.11", serial))
        if model.startswith("chroma"):
            return ChromaDialect(state, _idn("Chroma ATE", model[6:], "1.20", serial))
        if model.startswith("pw"):
            return HiokiDialect(state, _idn("HIOKI", model.upper(), "V1.00", serial))
        return PtdDialect(state, channels=self.channels,
                          serial="0" if serial == SERIAL else serial)

    def load_channels(self, shares: tuple[float, ...]) -> None:
        """A multi-channel PTDaemon's split of the load over its channels (they add up to 1)."""
        dialect = self.dialect
        if not isinstance(dialect, PtdDialect) or len(shares) != dialect.channels:
            raise ValueError(f"{self.model} does not have {len(shares)} channels")
        dialect.shares = tuple(shares)

    def fail_channel(self, channel: int, failed: bool = True) -> None:
        """One channel of a multi-channel PTDaemon reads -1.000000 (its block alone)."""
        dialect = self.dialect
        if not isinstance(dialect, PtdDialect) or not 1 <= channel <= dialect.channels:
            raise ValueError(f"{self.model} has no channel {channel}")
        (dialect.failed.add if failed else dialect.failed.discard)(channel)

    def load_element(self, element: int) -> None:
        """Put the whole load on one element of a multi-element meter (the others read 0 W):
        an input wired to that element alone."""
        dialect = self.dialect
        if not isinstance(dialect, WT300Dialect) or not 1 <= element <= dialect.elements:
            raise ValueError(f"{self.model} has no element {element}")
        dialect.shares = tuple(1.0 if k == element else 0.0
                               for k in range(1, dialect.elements + 1))

    def state(self) -> ElectricalState:
        """What the meter measures now: the source's value, else the constant state."""
        if self._source is not None:
            return self._source()
        with self._state_lock:
            return self._constant

    def set_state(self, watts: float, volts: float = 230.0, amps: float | None = None,
                  pf: float = 0.95, freq_hz: float = 50.0) -> None:
        """Read a constant state from now on (replaces any source)."""
        with self._state_lock:
            self._source = None
            self._constant = ElectricalState(watts, volts, amps, pf, freq_hz)


class ThermometerSimulator(LineServer):
    """A simulated thermometer; ``serial`` tells two of one model apart (a Watchport states
    none: it is told apart by its model, /H or /T, alone)."""

    def __init__(self, model: str, source: Callable[[], float] | None = None,
                 host: str = "127.0.0.1", port: int = 0, serial: str = SERIAL) -> None:
        model = model.lower()
        if model not in TEMPERATURE_MODELS:
            raise ValueError(f"unknown thermometer model {model!r}; choose one of "
                             f"{', '.join(TEMPERATURE_MODELS)}")
        self.model = model
        self._source = source
        self._constant = DEFAULT_CELSIUS
        dialect: LineDialect
        if model == "watchport":
            dialect = WatchportDialect(self.celsius)
        elif model == "ptd-temp":
            dialect = PtdDialect(lambda: DEFAULT_STATE, celsius=self.celsius,
                                 serial="0" if serial == SERIAL else serial)
        else:
            vendor = "HEWLETT-PACKARD" if model == "34970a" else "Keysight Technologies"
            dialect = DaqDialect(self.celsius, _idn(vendor, model.upper(), "A.03.01", serial))
        super().__init__(dialect, host, port)

    def celsius(self) -> float:
        return self._source() if self._source is not None else self._constant

    def set_temperature(self, celsius: float) -> None:
        self._source = None
        self._constant = celsius


def simulator_for(model: str, **kwargs) -> LineServer:
    """A power or temperature simulator by model name (CLI helper)."""
    if model.lower() in TEMPERATURE_MODELS:
        return ThermometerSimulator(model, **kwargs)
    return MeterSimulator(model, **kwargs)
