"""Shared life cycle of every meter driver: connect, identify, configure, reconnect, lock.

Subclasses are mostly data (class attributes: models, terminations, setup commands, controls,
the reading and the accuracy spec).

A session is bound to the instrument that answered :meth:`Instrument.open`: every reconnect
compares who answers now with that identity (never with the last one seen), before a set-up
command or a reading goes to it; another instrument at the address ends the session
(:class:`~drivers.interfaces.InstrumentReplaced`, refused on every later read and reconnect
until a new ``open``), and each reading names the instrument that answered for it, so the
sampler can refuse a reading of any other (issue 38).

The base keeps one ``threading.Lock`` per instrument so the sampler thread and a "test
connection" click can never interleave a query and its reply, and one :class:`Waits` that an
abort or the sampler's silence limit uses to end a read or a reconnect back-off early (the
lock is held for the whole wait, so it cannot be reached through the lock).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

from drivers.interfaces import (SIMULATOR_IDN_PREFIX, IdentityMismatch, InstrumentError,
                                InstrumentIdentity, InstrumentInterrupted, InstrumentReplaced)
from drivers.meters.transport import Transport, VisaTransport, check_visa_resource, query
from drivers.meters.waits import Waits

T = TypeVar("T")

#: the longest read timeout or back-off a driver option may set: past it a typo (1e30) would
#: hold the sampler for ever, beyond any silence limit a method can set
MAX_TIMEOUT_S = 600.0
MAX_RECONNECT_ATTEMPTS = 100


def _setting(name: str, value: Any, low: float, high: float, whole: bool = False) -> float:
    """A common driver option as a number in [low, high], or an error naming the option."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = math.nan
    if not (low <= number <= high) or (whole and not number.is_integer()):
        kind = "a whole number" if whole else "a number"
        raise InstrumentError(f"driver option {name}={value!r} must be {kind} from {low:g} "
                              f"to {high:g}")
    return number


def parse_idn(reply: str) -> tuple[str, str, str, str]:
    """``*IDN?`` → (vendor, model, serial, firmware); missing fields are empty."""
    parts = [p.strip() for p in reply.strip().split(",")] + ["", "", "", ""]
    return parts[0], parts[1], parts[2], parts[3]


def split_simulator_prefix(reply: str) -> tuple[str, str]:
    """(vendor prefix, the rest of the reply): StorWatt's wire simulators answer their identity
    query with ``STORWATT-SIM`` before what the emulated model says, so the driver accepts the
    model and the identity it returns says SIMULATED (a run on it is never compliant)."""
    text = reply.strip()
    if text.upper().startswith(SIMULATOR_IDN_PREFIX):
        return f"{SIMULATOR_IDN_PREFIX} ", text[len(SIMULATOR_IDN_PREFIX):].strip()
    return "", reply


class Instrument:
    """Connection, identity and options common to power meters and thermometers."""

    DRIVER: ClassVar[str] = ""
    DESCRIPTION: ClassVar[str] = ""
    MODELS: ClassVar[tuple[str, ...]] = ()
    VENDORS: ClassVar[tuple[str, ...]] = ()
    READ_TERMINATION: ClassVar[str] = "\n"
    WRITE_TERMINATION: ClassVar[str] = "\n"
    DEFAULT_PORT: ClassVar[int | None] = None
    IDN_QUERY: ClassVar[str] = "*IDN?"
    #: commands sent once after the identity check (may use ``{field}`` from command_fields)
    SETUP: ClassVar[tuple[str, ...]] = ()
    #: driver-specific keyword options and their types (besides the common ones)
    OPTIONS: ClassVar[dict[str, type]] = {}

    def __init__(self, resource: str, *, backend: str = "@py", timeout_s: float = 2.0,
                 reconnect_attempts: int = 4, reconnect_delay_s: float = 0.2,
                 calibration_date: str = "", **options: Any) -> None:
        unknown = sorted(set(options) - set(self.OPTIONS))
        if unknown:
            allowed = sorted({"backend", "timeout_s", "reconnect_attempts", "reconnect_delay_s",
                              "calibration_date", *self.OPTIONS, *self._common_options()})
            raise InstrumentError(f"driver {self.DRIVER} has no option {', '.join(unknown)}; "
                                  f"valid options: {', '.join(allowed)}")
        self.resource = self._check_resource(resource)
        self.backend = backend
        self.timeout_s = _setting("timeout_s", timeout_s, 0.001, MAX_TIMEOUT_S)
        self.reconnect_attempts = int(_setting("reconnect_attempts", reconnect_attempts, 0,
                                               MAX_RECONNECT_ATTEMPTS, whole=True))
        self.reconnect_delay_s = _setting("reconnect_delay_s", reconnect_delay_s, 0,
                                          MAX_TIMEOUT_S)
        self.calibration_date = calibration_date
        self.options = {k: self.OPTIONS[k](v) for k, v in options.items()}
        self._lock = threading.Lock()
        self.waits = Waits()
        self._transport: Transport | None = None
        #: who answered open(): the session's instrument, never changed by a reconnect
        self._bound: InstrumentIdentity | None = None
        #: who answered the identity query on the present connection (stamped on readings)
        self._answered: InstrumentIdentity | None = None
        #: set once another instrument answered at the address: the session is over
        self._replaced: InstrumentReplaced | None = None
        self._stale = False

    @classmethod
    def _common_options(cls) -> tuple[str, ...]:
        return ()

    # -- hooks --------------------------------------------------------------------------------
    def _check_resource(self, resource: str) -> str:
        return check_visa_resource(resource)

    def _connect(self) -> Transport:
        return VisaTransport(self.resource, backend=self.backend,
                             read_termination=self.READ_TERMINATION,
                             write_termination=self.WRITE_TERMINATION, timeout_s=self.timeout_s,
                             waits=self.waits)

    def command_fields(self) -> dict[str, Any]:
        """Values the command templates may use (element, channel …)."""
        return dict(self.options)

    def _identity_from(self, reply: str) -> InstrumentIdentity:
        simulator, answer = split_simulator_prefix(reply)
        vendor, model, serial, firmware = parse_idn(answer)
        self._check_model(reply, vendor, model)
        return InstrumentIdentity(simulator + vendor, model, serial, firmware, self.resource,
                                  self.DRIVER, self.calibration_date)

    def _check_model(self, reply: str, vendor: str, model: str) -> None:
        vendor_ok = not self.VENDORS or any(v.lower() in vendor.lower() for v in self.VENDORS)
        if not (vendor_ok and model.upper() in self.MODELS):
            raise IdentityMismatch(
                f"{self.resource} answered {self.IDN_QUERY} with {reply.strip()!r}, which is not "
                f"a {'/'.join(self.MODELS)}; check the address or choose the driver for this "
                "meter (storwatt meter drivers)")

    def _configure(self) -> None:
        for command in self.SETUP:
            self._send_setup(command.format(**self.command_fields()))

    def _send_setup(self, command: str) -> None:
        if command.endswith("?"):
            self._check_ack(command, self._query(command))
        else:
            self._write(command)

    def _check_ack(self, command: str, reply: str) -> None:
        """A set-up answer that reports an error stops the open with the meter's own words."""
        text = reply.strip()
        head = text.split(",")[0].strip().lstrip("+-")
        ok = int(head) == 0 if head.isdigit() else "error" not in text.lower()
        if not ok:
            raise InstrumentError(f"{self.DRIVER} at {self.resource} rejected the set-up "
                                  f"({command!r} → {text!r}); check the meter's mode/firmware")

    def _shutdown(self) -> None:
        """Last words before closing (PTDaemon: Stop)."""

    # -- wire ---------------------------------------------------------------------------------
    def _require(self) -> Transport:
        if self._transport is None:
            if self._bound is not None:  # opened once: closed or reconnect failed since
                raise InstrumentError(f"{self.DRIVER} at {self.resource} is not connected "
                                      "(closed, or the last reconnect failed)")
            raise InstrumentError(f"{self.DRIVER} at {self.resource} is not open: call open()")
        return self._transport

    def _write(self, line: str) -> None:
        self._require().write(line)

    def _query(self, line: str) -> str:
        return query(self._require(), line)

    # -- public life cycle --------------------------------------------------------------------
    def open(self) -> InstrumentIdentity:
        self.waits.reset()  # a new session: an earlier stop request is over
        with self._lock:
            self._bound = self._replaced = None
            self._bound = self._open_locked()
            return self._bound

    @property
    def session_identity(self) -> InstrumentIdentity | None:
        """The instrument this session opened (None before :meth:`open`)."""
        return self._bound

    def _open_locked(self) -> InstrumentIdentity:
        self._close_transport()
        self._stale = False
        self._transport = self._connect()
        try:
            identity = self._identity_from(self._query(self.IDN_QUERY))
            self._answered = identity
            self._check_same(identity)  # before any set-up command reaches another meter
            self._configure()
        except Exception:
            self._close_transport()
            raise
        return identity

    def _check_same(self, identity: InstrumentIdentity) -> None:
        """Refuse an instrument other than the session's; the refusal is final."""
        bound = self._bound
        if bound is None or identity.key == bound.key:
            return
        self._replaced = InstrumentReplaced(
            f"after reconnecting, {self.resource} is {identity.describe()} instead of "
            f"{bound.describe()}: another meter took this address; no reading of it is "
            "taken (stop and check the wiring)", bound, identity)
        raise self._replaced

    def _refuse_if_replaced(self) -> None:
        replaced = self._replaced
        if replaced is not None:
            raise InstrumentReplaced(str(replaced), replaced.recorded, replaced.found)

    def instrument_key(self) -> str:
        """The key of the instrument that answered on this connection, stamped on each
        reading (:attr:`~drivers.interfaces.PowerSample.instrument`)."""
        return self._answered.key if self._answered is not None else ""

    def identify(self) -> InstrumentIdentity:
        return self._exchange(lambda: self._identity_from(self._query(self.IDN_QUERY)))

    def close(self) -> None:
        """Close the session; a failed last word (PTDaemon's ``Stop``: the daemon may go on
        logging) is raised once the transport is closed, for the lab's tear-down to report."""
        with self._lock:
            try:
                if self._transport is not None:
                    self._shutdown()
            finally:
                self._close_transport()

    def _close_transport(self) -> None:
        if self._transport is not None:
            self._transport.close()
            self._transport = None

    def reconnect(self) -> InstrumentIdentity:
        """Reopen with exponential backoff; the meter must be the same one (model + serial)."""
        with self._lock:
            return self._reconnect_locked()

    def interrupt(self) -> None:
        """Any thread, no lock: end the read or reconnect in progress within one wait slice,
        and every later one until :meth:`open` (the run is stopping)."""
        self.waits.interrupt()

    def end_waits_after(self, seconds: float | None) -> None:
        """Bound every read and reconnect wait to ``seconds`` from now (None: lift it)."""
        self.waits.end_after(seconds)

    def reconnect_span_s(self) -> float:
        """How long a meter that stopped answering holds the sampler with these settings: the
        read that times out, then every reconnect attempt timing out on its identity query,
        with the back-off between attempts (none after the last). The defaults give
        2 + 4 × 2 + (0.2 + 0.4 + 0.8) = 11.4 s; the method's silence limit must be longer
        (docs/reliability.md)."""
        attempts = max(1, self.reconnect_attempts)
        backoff = sum(self.reconnect_delay_s * 2 ** i for i in range(attempts - 1))
        return self.timeout_s * (1 + attempts) + backoff

    def _reconnect_locked(self) -> InstrumentIdentity:
        self._refuse_if_replaced()
        delay = self.reconnect_delay_s
        last: InstrumentError | None = None
        attempts = max(1, self.reconnect_attempts)
        for attempt in range(1, attempts + 1):
            try:
                identity = self._open_locked()
            except (IdentityMismatch, InstrumentInterrupted):
                raise
            except InstrumentError as exc:
                last = exc
                if attempt < attempts and self.waits.sleep(delay):
                    raise InstrumentInterrupted(
                        f"reconnecting to {self.DRIVER} at {self.resource} stopped after "
                        f"{attempt} attempt(s) ({self.waits.why()}); last error: {exc}") from None
                delay *= 2
                continue
            self._after_reconnect()
            self._stale = False
            return identity
        raise InstrumentError(f"could not reconnect to {self.DRIVER} at {self.resource} "
                              f"after {attempts} attempt(s); last error: "
                              f"{self._without_resource(str(last))}")

    def _without_resource(self, message: str) -> str:
        """A transport's message without its own mention of the resource, for a message that
        already names it (the address once, not twice)."""
        for mention, by in ((f" at {self.resource}: ", ": "), (f" at {self.resource}", ""),
                            (f"{self.resource}: ", ""), (f"{self.resource} ", "")):
            message = message.replace(mention, by)
        return message

    def _exchange(self, operation: Callable[[], T]) -> T:
        """Run one locked operation. After a timeout or a lost connection a late reply could
        be taken for the next answer, so the next operation reconnects first."""
        with self._lock:
            self._refuse_if_replaced()
            if self._stale:
                self._reconnect_locked()
            try:
                return operation()
            except InstrumentError:
                if self._transport is not None:
                    self._stale = True
                raise

    def _after_reconnect(self) -> None:
        """Restore state the meter lost (ranges)."""

    def __enter__(self) -> Instrument:
        self.open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
