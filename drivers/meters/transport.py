"""Line transports to instruments: VISA (pyvisa, any backend) and a plain TCP socket (PTDaemon).

Drivers talk in text lines and never see pyvisa or socket errors: every failure becomes an
:class:`InstrumentTimeout` (no answer in time — a reconnect may help) or an
:class:`InstrumentError` (cannot open, connection lost) whose message names the resource.

A read waits for its reply in slices of :data:`~drivers.meters.waits.SLICE_S` up to the
transport's timeout, so a stop request or the sampler's silence limit (the instrument's
:class:`Waits`) ends it within one slice with :class:`InstrumentInterrupted`, not after the
whole timeout. Both transports receive raw chunks and frame replies themselves
(:class:`ReplyFramer`), so every read is bounded twice: a reply must end (its terminator)
within the timeout *and* within :data:`MAX_REPLY_BYTES` — a meter streaming bytes without a
line end costs one error and a reconnect, never the station's memory. A pause inside a reply
is not its end (only the terminator is), and bytes nobody asked for (a late or doubled reply)
are dropped before each command is sent, so a reply always answers the query before it.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable
from typing import Protocol

from drivers.interfaces import InstrumentError, InstrumentInterrupted, InstrumentTimeout
from drivers.meters.waits import SLICE_S, Waits


#: the longest reply any supported meter sends is a few hundred bytes (a PTDaemon multi-channel
#: ``RL,*,*`` line grows by ~60 bytes a channel); past this many bytes without a terminator
#: the link is streaming, not answering
MAX_REPLY_BYTES = 64 * 1024
#: bytes asked for per receive call
CHUNK_BYTES = 4096
#: how long a drain of unasked-for bytes waits for more (seconds)
DRAIN_WAIT_S = 0.001

VISA_FORMATS = ("TCPIP::<host>::<port>::SOCKET "
                "(LAN socket, e.g. TCPIP::192.168.1.20::10001::SOCKET)",
                "TCPIP::<host>::INSTR (VXI-11)", "USB0::0x0B21::0x0025::<serial>::INSTR (USB-TMC)",
                "GPIB0::<address>::INSTR", "ASRL/dev/ttyUSB0::INSTR or ASRL3::INSTR (serial)")


class Transport(Protocol):
    """What a driver needs from a connection: write a line, read a line, close."""

    resource: str

    def write(self, line: str) -> None: ...

    def read(self) -> str: ...

    def close(self) -> None: ...


class ReplyFramer:
    """Cuts replies out of a byte stream at ``termination``, bounded in bytes and time.

    ``receive(seconds)`` returns the next chunk (at least one byte) or raises
    :class:`InstrumentTimeout` when nothing arrived in ``seconds``."""

    def __init__(self, resource: str, termination: bytes,
                 receive: Callable[[float], bytes], max_bytes: int = MAX_REPLY_BYTES) -> None:
        self.resource = resource
        self.termination = termination
        #: replies are cut at the termination's last byte, and the rest of it (CR of CRLF)
        #: taken off when present: a meter ending its lines with LF alone still answers
        self._end = termination[-1:]
        self.max_bytes = max_bytes
        self._receive = receive
        self._buffer = b""
        #: bytes dropped because nobody asked for them (late or doubled replies)
        self.discarded_bytes = 0

    def read(self, timeout_s: float, waits: Waits) -> str:
        """The next reply, without its terminator. One deadline for the whole reply: bytes
        trickling in never extend it."""
        start = time.monotonic()
        give_up = start + timeout_s
        while self._end not in self._buffer:
            if len(self._buffer) > self.max_bytes:
                size, self._buffer = len(self._buffer), b""
                raise InstrumentError(
                    f"{self.resource} sent {size} bytes without a line end "
                    f"({self.termination!r}), more than any reply ({self.max_bytes} bytes): "
                    "the link is streaming or the termination is wrong; reconnecting")
            if waits.ended:
                raise InstrumentInterrupted(
                    f"{self.resource}: stopped waiting for the reply after "
                    f"{time.monotonic() - start:.1f} s ({waits.why()})")
            left = give_up - time.monotonic()
            if left <= 0:
                partial = f" ({len(self._buffer)} bytes of an unfinished reply)" \
                    if self._buffer else ""
                self._buffer = b""
                raise InstrumentTimeout(f"{self.resource} did not answer within {timeout_s:g} s"
                                        f"{partial}; check power, cable and address, then "
                                        "reconnect")
            try:
                self._buffer += self._receive(max(0.001, min(SLICE_S, left)))
            except InstrumentTimeout:
                continue
        line, _, self._buffer = self._buffer.partition(self._end)
        return line.removesuffix(self.termination[:-1]).decode(errors="replace")

    def discard_pending(self) -> int:
        """Drop what arrived unasked (kept or waiting on the link) before a command is sent;
        the count of bytes dropped. A link that never stops sending is an error."""
        dropped, self._buffer = len(self._buffer), b""
        while dropped <= self.max_bytes:
            try:
                dropped += len(self._receive(DRAIN_WAIT_S))
            except InstrumentTimeout:
                self.discarded_bytes += dropped
                return dropped
        raise InstrumentError(f"{self.resource} keeps sending without being asked (over "
                              f"{self.max_bytes} bytes); reconnecting")


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
        self._framer = ReplyFramer(self.resource, read_termination.encode(), self._read_chunk)
        try:
            self._res = pyvisa.ResourceManager(backend).open_resource(
                self.resource, read_termination=read_termination,
                write_termination=write_termination, timeout=int(timeout_s * 1000),
                open_timeout=int(timeout_s * 1000))
        except Exception as exc:  # noqa: BLE001 — pyvisa-py raises bare exceptions too
            raise InstrumentError(f"cannot open {self.resource} with VISA backend "
                                  f"{backend or 'default'!r}: {exc}; check the address, cable "
                                  "and that the meter's interface is enabled") from None
        self._hand_over_partial_replies()

    def _hand_over_partial_replies(self) -> None:
        """pyvisa-py's LAN sockets default to "suppress END": bytes without the termination
        are kept back until a read times out, and then dropped with the timeout error. Off,
        a read hands over what arrived once the link goes quiet, and the framer joins the
        pieces (a reply split by a pause stays one reply). A backend without the attribute
        keeps its own behaviour."""
        from pyvisa import constants

        try:
            self._res.set_visa_attribute(constants.ResourceAttribute.suppress_end_enabled,
                                         constants.VI_FALSE)
        except Exception:  # noqa: BLE001 — optional attribute; reads still work without it
            pass

    def write(self, line: str) -> None:
        self._framer.discard_pending()
        self._set_timeout(self.timeout_s)  # a read leaves its slice's timeout behind
        self._call(self._res.write, line)

    def read(self) -> str:
        return self._framer.read(self.timeout_s, self.waits)

    def _read_chunk(self, seconds: float) -> bytes:
        """Up to :data:`CHUNK_BYTES` as the VISA library hands them over (pyvisa-py: up to
        the termination character, or what arrived before a quiet moment); never pyvisa's
        own ``read``, which gathers without a bound until the termination."""
        from pyvisa.constants import StatusCode

        self._set_timeout(seconds)
        with self._res.ignore_warning(StatusCode.success_max_count_read):  # a full chunk
            data, _ = self._call(self._res.visalib.read, self._res.session, CHUNK_BYTES)
        if not data:
            raise InstrumentTimeout(f"{self.resource}: nothing received")
        return bytes(data)

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
        except ConnectionRefusedError:  # pyvisa-py connects a LAN socket on first use
            raise InstrumentError(f"{self.resource} refused the connection: nothing listens "
                                  "on that port; check the address and that the meter's LAN "
                                  "interface is enabled") from None
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
        self._framer = ReplyFramer(self.resource, termination.encode(), self._receive)
        try:
            self._sock = socket.create_connection((host, port), timeout=timeout_s)
        except UnicodeError as exc:  # the resolver's IDNA step: a label over 63 characters
            raise InstrumentError(f"cannot connect to PTDaemon at {self.resource}: {host!r} "
                                  f"is not a valid host name ({exc})") from None
        except OSError as exc:
            raise InstrumentError(f"cannot connect to PTDaemon at {self.resource}: {exc}; is "
                                  "ptd running with -p on this port?") from None

    def write(self, line: str) -> None:
        self._framer.discard_pending()
        try:
            self._sock.sendall(line.encode() + self._framer.termination)
        except OSError as exc:
            raise InstrumentError(f"{self.resource}: connection lost ({exc})") from None

    def read(self) -> str:
        return self._framer.read(self.timeout_s, self.waits)

    def _receive(self, seconds: float) -> bytes:
        self._sock.settimeout(seconds)
        try:
            chunk = self._sock.recv(CHUNK_BYTES)
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
