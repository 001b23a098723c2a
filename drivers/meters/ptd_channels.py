"""PTDaemon in multi-channel mode: one daemon session read by several power inputs.

A multi-element analyzer run by PTDaemon with ``-c`` (a WT333E with ``-c 1,3``) reports every
selected channel at each sample (docs/method-notes.md §8, facts and sources there):
``RL,*,*`` answers ``Last N samples from sum channel and channels A - B``, then N lines
``Time,<stamp>`` followed by one ``Watts,<w>,Volts,<v>,Amps,<a>,PF,<pf>`` block for the sum
and one per channel, unlabelled, in channel order; a bad sample has ``-1.000000`` everywhere.

``RL`` hands out the samples *since the last call*, so two inputs on one daemon cannot each
run a session of their own: the second would find the buffer emptied by the first. One
:class:`PtdMultiChannel` session (one ``Go``, one ``RL`` stream) is therefore shared, and each
input is a :class:`PtdChannel` view that takes its block from the line read once per sample
instant (the ``t`` every input of one instant is read with).

Two things no public source gives: a per-channel uncertainty and a per-channel range command.
So every channel carries the daemon's ``Uncertainty`` (its sum channel's): Σ u·P over the
daemon's channels is then exactly that sum's absolute uncertainty. And the ranges are the
daemon's, shared by its channels: the session sends the largest range any of its channels
asked for, so no channel is ranged below its own need.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from drivers.interfaces import (FLAG_GARBAGE, FLAG_INVALID, FLAG_NO_DATA, InstrumentError,
                                InstrumentIdentity, PowerSample)
from drivers.meters.power import POWER_FIELDS
from drivers.meters.ptd import PTDPower
from drivers.meters.values import NAN, PTD, Decoded, decode

#: the read of every selected channel and their sum (MLCommons power-dev's constant)
MULTI_CHANNEL_READ = "RL,*,*"
#: the block key PTDaemon sends → the power field it fills
BLOCK_KEYS = {"Watts": "watts", "Volts": "volts", "Amps": "amps", "PF": "pf"}
SUM_CHANNEL = 0
_HEADER = re.compile(r"Last (\d+) samples? from sum channel and channels (\d+) - (\d+)")
_NOT_MULTI_CHANNEL = "invalid number of parameters"

Channels = dict[int, dict[str, Decoded]]


@dataclass(frozen=True)
class ChannelsHeader:
    """The header of an ``RL,*,*`` reply: how many lines follow and which channels they hold."""

    samples: int
    channels: range


def parse_header(reply: str) -> ChannelsHeader | None:
    m = _HEADER.fullmatch(reply.strip())
    if m is None:
        return None
    first, last = int(m.group(2)), int(m.group(3))
    return ChannelsHeader(int(m.group(1)), range(first, last + 1))


def flagged(channels: range, flag: str) -> Channels:
    """Every field of the sum and of every channel NaN with ``flag``."""
    return {ch: {name: Decoded(NAN, frozenset({flag})) for name in POWER_FIELDS}
            for ch in (SUM_CHANNEL, *channels)}


def parse_line(line: str, channels: range) -> Channels:
    """One sample line → the sum's (key 0) and each channel's fields.

    Byte-exact: ``Time``, the stamp, then exactly one block per channel and the sum, each
    ``Watts,…,Volts,…,Amps,…,PF,…`` in that order; anything else is garbage in every field (or
    invalid when the line says ``Error``), never a guess at which number is whose."""
    tokens = line.rstrip("\r\n").split(",")
    blocks = 1 + len(channels)
    keys = list(BLOCK_KEYS)
    shaped = (len(tokens) == 2 + 2 * len(keys) * blocks and tokens[0] == "Time"
              and all(tokens[2 + 2 * (len(keys) * b + k)] == key
                      for b in range(blocks) for k, key in enumerate(keys)))
    if not shaped:
        return flagged(channels, FLAG_INVALID if "error" in line.lower() else FLAG_GARBAGE)
    out: Channels = {}
    for b, channel in enumerate((SUM_CHANNEL, *channels)):
        fields = {name: Decoded(NAN) for name in POWER_FIELDS}
        for k, key in enumerate(keys):
            fields[BLOCK_KEYS[key]] = decode(tokens[2 + 2 * (len(keys) * b + k) + 1], PTD)
        out[channel] = fields
    return out


class PtdMultiChannel(PTDPower):
    """One PTDaemon session in multi-channel mode, shared by the inputs on its channels."""

    DESCRIPTION = "SPEC PTDaemon power client, multi-channel mode (RL,*,*)"

    def __init__(self, resource: str, **options: Any) -> None:
        super().__init__(resource, **options)
        self._instant: float | None = None  # the sample instant the cached line belongs to
        self._line: Channels = {}
        self._stated: tuple[float | None, float | None] = (None, None)  # (instant, u %)
        self._reported: tuple[float | None, tuple[float | None, float | None]] = \
            (None, (None, None))  # (instant, RR's (V, A) on auto range)
        self._requested: dict[int, tuple[float, float]] = {}  # channel → its fixed ranges
        self._users: set[int] = set()

    # -- sharing -------------------------------------------------------------------------------
    def attach(self, channel: int) -> InstrumentIdentity:
        """A channel's input starts reading: the first one opens the session."""
        if not self._users:
            self.open()
        self._users.add(channel)
        return self.identify() if self._bound is None else self._bound

    def detach(self, channel: int) -> None:
        """The last channel's input to close ends the session (``Stop``)."""
        if channel in self._users:
            self._users.discard(channel)
            if not self._users:
                self.close()

    # -- reading -------------------------------------------------------------------------------
    def read_channel(self, t: float, channel: int) -> PowerSample:
        return self._exchange(lambda: self._channel_sample(t, channel))

    def _channel_sample(self, t: float, channel: int) -> PowerSample:
        if t != self._instant:
            self._line = self._fetch_channels()
            self._instant = t
        values = self._line.get(channel)
        if values is None:
            reported = sorted(c for c in self._line if c != SUM_CHANNEL)
            raise InstrumentError(f"PTDaemon at {self.resource} reports channels {reported}, "
                                  f"not channel {channel}; check its -c option and element=")
        return self._assemble(t, values)

    def _fetch_channels(self) -> Channels:
        reply = self._query(MULTI_CHANNEL_READ).strip()
        header = parse_header(reply)
        wanted = range(min(self._users, default=1), max(self._users, default=1) + 1)
        if header is None:
            if _NOT_MULTI_CHANNEL in reply.lower():
                raise InstrumentError(
                    f"PTDaemon at {self.resource} is not in multi-channel mode: it answered "
                    f"{MULTI_CHANNEL_READ!r} with {reply!r}; start it with -c <channels>, or "
                    "read it as one input without element=")
            return flagged(wanted, FLAG_INVALID if "error" in reply.lower() else FLAG_GARBAGE)
        lines = [self._require().read() for _ in range(header.samples)]
        if not lines:
            return flagged(header.channels, FLAG_NO_DATA)
        return parse_line(lines[-1], header.channels)

    def _uncertainty_pct(self, watts: float, range_v: float | None,
                         range_a: float | None) -> float | None:
        """The daemon's stated uncertainty, asked once per instant for all its channels."""
        if watts != watts:
            return None
        if self._stated[0] != self._instant:
            self._stated = (self._instant, self._stated_uncertainty_pct())
        return self._stated[1]

    def _present_ranges(self) -> tuple[float | None, float | None]:
        """The daemon's ranges are its channels' too: on auto range ``RR`` is asked once per
        instant for all of them."""
        if self._fixed is not None:
            return self._fixed
        if self._reported[0] != self._instant:
            self._reported = (self._instant, super()._present_ranges())
        return self._reported[1]

    # -- ranging -------------------------------------------------------------------------------
    def request_ranges(self, channel: int, volts: float, amps: float) -> None:
        """A channel's fixed ranges; the daemon gets the largest any channel asked for."""
        self._requested[channel] = self._validated(volts, amps)
        self.set_ranges(max(v for v, _ in self._requested.values()),
                        max(a for _, a in self._requested.values()))

    def request_auto(self) -> None:
        """Auto range is the daemon's, for every channel at once (the ranging pass)."""
        self._requested.clear()
        self.auto_range()


@dataclass
class PtdChannel:
    """One power input: channel ``channel`` of a shared :class:`PtdMultiChannel` session.

    A :class:`~drivers.interfaces.RangingMeter` like the single-channel driver; opening and
    closing attach to and detach from the session, so the daemon sees one ``Go`` and one
    ``Stop`` however many of its channels the run reads."""

    session: PtdMultiChannel
    channel: int

    def open(self) -> InstrumentIdentity:
        return self.session.attach(self.channel)

    def close(self) -> None:
        self.session.detach(self.channel)

    def identify(self) -> InstrumentIdentity:
        return self.session.identify()

    def reconnect(self) -> InstrumentIdentity:
        return self.session.reconnect()

    def interrupt(self) -> None:
        self.session.interrupt()

    def end_waits_after(self, seconds: float | None) -> None:
        self.session.end_waits_after(seconds)

    def read(self, t: float) -> PowerSample:
        return self.session.read_channel(t, self.channel)

    @property
    def ranges(self) -> tuple[float, float] | None:
        return self.session.ranges

    @property
    def accuracy(self) -> None:
        return None  # PTDaemon states each sample's uncertainty

    @property
    def volt_ranges(self) -> tuple[float, ...]:
        return self.session.volt_ranges

    @property
    def amp_ranges(self) -> tuple[float, ...]:
        return self.session.amp_ranges

    @property
    def crest_factor(self) -> float:
        return self.session.crest_factor

    def auto_range(self) -> None:
        self.session.request_auto()

    def set_ranges(self, volts: float, amps: float) -> None:
        self.session.request_ranges(self.channel, volts, amps)

    def peaks(self) -> tuple[float, float]:
        return self.session.peaks()


class PtdDaemons:
    """The multi-channel PTDaemon sessions of one run, one per daemon address: the inputs
    that name a channel (``element=N``) of the same daemon share its session."""

    def __init__(self) -> None:
        self._sessions: dict[str, PtdMultiChannel] = {}
        self._taken: dict[str, set[int]] = {}  # daemon → channels given to inputs

    def channel(self, resource: str, channel: int, **options: Any) -> PtdChannel:
        """Channel ``channel`` of the daemon at ``resource``; the first input of a daemon sets
        the session's options (mark, interval)."""
        session = PtdMultiChannel(resource, **options)
        session = self._sessions.setdefault(session.resource, session)
        if channel in self._taken.setdefault(session.resource, set()):
            raise InstrumentError(f"PTDaemon at {session.resource}: channel {channel} is "
                                  "named by two power inputs; give each input its own channel")
        self._taken[session.resource].add(channel)
        return PtdChannel(session, channel)
