"""Line transports to instruments: VISA (pyvisa, any backend) and a plain TCP socket (PTDaemon).

Drivers talk in text lines and never see pyvisa or socket errors: every failure becomes an
:class:`InstrumentTimeout` (no answer in time — a reconnect may help) or an
:class:`InstrumentError` (cannot open, connection lost) whose message names the resource.

A read waits for its reply in slices of :data:`~drivers.meters.waits.SLICE_S` up to the
transport's timeout, so a stop request or the sampler's silence limit (the instrument's
:class:`Waits`) ends it within one slice with :class:`InstrumentInterrupted`, not after the
whole timeout. No reply is lost between slices: pyvisa-py and the socket read keep what
arrived, and a slice only times out with nothing received.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable
from typing import Protocol, TypeVar

from drivers.interfaces import InstrumentError, InstrumentInterrupted, InstrumentTimeout
from drivers.meters.waits import SLICE_S, Waits

T = TypeVar("T")

VISA_FORMATS = ("TCPIP::<host>::<port>::SOCKET (LAN socket, e.g. TCPIP::192.168.1.20::10001::SOCKET)",
                "TCPIP::<host>::INSTR (VXI-11)", "USB0::0x0B21::0x0025::<serial>::INSTR (USB-TMC)",
                "GPIB0::<address>::INSTR", "ASRL/dev/ttyUSB0::INSTR or ASRL3::INSTR (serial)")


class Transport(Protocol):
    """What a driver needs from a connection: write a line, read a line, close."""

    resource: str

    def write(self, line: str) -> None: ...

    def read(self) -> str: ...

    def close(self) -> None: ...


def read_in_slices(resource: str, timeout_s: float, waits: Waits,
                   read_slice: Callable[[float], T]) -> T:
    """Call ``read_slice(seconds)`` (which raises :class:`InstrumentTimeout` when nothing
    arrived in ``seconds``) until a reply, ``timeout_s`` or the end of ``waits``."""
    start = time.monotonic()
    give_up = start + timeout_s
    while True:
        if waits.ended:
            raise InstrumentInterrupted(f"{resource}: stopped waiting for the reply after "
                                        f"{time.monotonic() - start:.1f} s ({waits.why()})")
        try:
            return read_slice(max(0.001, min(SLICE_S, give_up - time.monotonic())))
        except InstrumentTimeout:
            if time.monotonic() >= give_up:
                raise


def query(transport: Transport, line: str) -> str:
    transport.write(line)
    return transport.read()


def check_visa_resource(resource: str) -> str:
    """Validate a VISA resource string up front so a typo fails with the expected format."""
    from pyvisa import rname

    text = (resource or "").strip()
    try:
        parsed = rname.parse_resource_name(text)
        port = getattr(parsed, "port", "0")
        if parsed.resource_class == "SOCKET" and not str(port).isdigit():
            raise ValueError(f"port {port!r} is not a number")
    except (rname.InvalidResourceName, ValueError) as exc:
        raise InstrumentError(
            f"{resource!r} is not a VISA resource string ({exc}); expected one of: "
            + "; ".join(VISA_FORMATS)) from None
    return text


def parse_host_port(resource: str, default_port: int) -> tuple[str, int]:
    """PTDaemon address: ``host``, ``host:port`` or ``TCPIP::host::port::SOCKET``."""
    text = (resource or "").strip()
    if text.upper().startswith("TCPIP"):
        parts = text.split("::")
        if len(parts) == 4 and parts[3].upper() == "SOCKET" and parts[2].isdigit():
            return parts[1], int(parts[2])
    else:
        host, _, port = text.rpartition(":") if ":" in text else (text, "", str(default_port))
        if host and port.isdigit() and " " not in host:
            return host, int(port)
    raise InstrumentError(f"{resource!r} is not a PTDaemon address; expected host:port "
                          f"(e.g. 127.0.0.1:{default_port}) or TCPIP::host::port::SOCKET")


class VisaTransport:
    """A pyvisa resource with explicit terminations (pyvisa-py sockets need them, §8).

    pyvisa keeps one ``ResourceManager`` per backend and hands the same object to every
    caller, and closing it closes every session it opened. So a transport owns its resource
    only: closing (or reconnecting) the power meter must never end the thermometer's session.
    """

    def __init__(self, resource: str, *, backend: str = "@py", read_termination: str = "\n",
                 write_termination: str = "\n", timeout_s: float = 2.0,
                 waits: Waits | None = None) -> None:
        import pyvisa

        self.resource = check_visa_resource(resource)
        self.timeout_s = timeout_s
        self.waits = waits or Waits()
        try:
            self._res = pyvisa.ResourceManager(backend).open_resource(
                self.resource, read_termination=read_termination,
                write_termination=write_termination, timeout=int(timeout_s * 1000),
                open_timeout=int(timeout_s * 1000))
        except Exception as exc:  # noqa: BLE001 — pyvisa-py raises bare exceptions too
            raise InstrumentError(f"cannot open {self.resource} with VISA backend "
                                  f"{backend or 'default'!r}: {exc}; check the address, cable "
                                  "and that the meter's interface is enabled") from None

    def write(self, line: str) -> None:
        self._set_timeout(self.timeout_s)  # a read leaves its slice's timeout behind
        self._call(self._res.write, line)

    def read(self) -> str:
        return read_in_slices(self.resource, self.timeout_s, self.waits, self._read_slice)

    def _read_slice(self, seconds: float) -> str:
        self._set_timeout(seconds)
        return self._call(self._res.read)

    def _set_timeout(self, seconds: float) -> None:
        self._call(setattr, self._res, "timeout", max(1, int(seconds * 1000)))

    def _call(self, fn, *args):
        """One pyvisa call; whatever it raises is a transport failure for the driver.

        Besides ``VisaIOError`` (any status code) pyvisa raises ``InvalidSession`` for a
        session closed under it, and pyvisa-py lets bare socket, decoding and internal errors
        through; none of them may escape a driver as a traceback that ends the run.
        """
        import pyvisa

        try:
            return fn(*args)
        except pyvisa.errors.VisaIOError as exc:
            if exc.error_code == pyvisa.constants.StatusCode.error_timeout:
                raise InstrumentTimeout(f"{self.resource} did not answer within "
                                        f"{self.timeout_s:g} s; check power, cable and "
                                        "address, then reconnect") from None
            raise InstrumentError(f"{self.resource}: connection lost ({exc})") from None
        except pyvisa.errors.InvalidSession:
            raise InstrumentError(f"{self.resource}: the VISA session was closed; "
                                  "reconnect") from None
        except Exception as exc:  # noqa: BLE001 — pyvisa-py's bare errors, see above
            raise InstrumentError(f"{self.resource}: connection lost "
                                  f"({type(exc).__name__}: {exc})") from None

    def close(self) -> None:
        """Close this resource only (never the shared ResourceManager, see the class)."""
        try:
            self._res.close()
        except Exception:  # noqa: BLE001 — closing a dead session must not mask the cause
            pass


class SocketTransport:
    """A plain TCP line connection (PTDaemon is not a VISA instrument)."""

    def __init__(self, host: str, port: int, *, termination: str = "\r\n",
                 timeout_s: float = 2.0, waits: Waits | None = None) -> None:
        self.resource = f"{host}:{port}"
        self.timeout_s = timeout_s
        self.waits = waits or Waits()
        self._term = termination.encode()
        self._buffer = b""
        try:
            self._sock = socket.create_connection((host, port), timeout=timeout_s)
        except UnicodeError as exc:  # the resolver's IDNA step: a label over 63 characters
            raise InstrumentError(f"cannot connect to PTDaemon at {self.resource}: {host!r} "
                                  f"is not a valid host name ({exc})") from None
        except OSError as exc:
            raise InstrumentError(f"cannot connect to PTDaemon at {self.resource}: {exc}; is "
                                  "ptd running with -p on this port?") from None

    def write(self, line: str) -> None:
        try:
            self._sock.sendall(line.encode() + self._term)
        except OSError as exc:
            raise InstrumentError(f"{self.resource}: connection lost ({exc})") from None

    def read(self) -> str:
        while self._term not in self._buffer:
            self._buffer += read_in_slices(self.resource, self.timeout_s, self.waits,
                                           self._receive)
        line, _, self._buffer = self._buffer.partition(self._term)
        return line.decode(errors="replace")

    def _receive(self, seconds: float) -> bytes:
        self._sock.settimeout(seconds)
        try:
            chunk = self._sock.recv(4096)
        except TimeoutError:
            raise InstrumentTimeout(f"PTDaemon at {self.resource} did not answer within "
                                    f"{self.timeout_s:g} s; reconnect") from None
        except OSError as exc:
            raise InstrumentError(f"{self.resource}: connection lost ({exc})") from None
        finally:
            self._sock.settimeout(self.timeout_s)
        if not chunk:
            raise InstrumentError(f"PTDaemon at {self.resource} closed the connection")
        return chunk

    def close(self) -> None:
        try:
            self._sock.close()
        except OSError:
            pass
