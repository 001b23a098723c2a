"""What a real SPEC PTDaemon answers to ``Identify``, ``Uncertainty`` and ``RR``, parsed
byte-exactly (docs/method-notes.md §8 has each field, its evidence and its source).

The layouts are those of PTDaemon 1.10.0 in public MLCommons captures
(``tests/fixtures/ptd/``). A reply that does not have exactly that layout is refused with
the reply quoted, never read by guessing which number is which: the earlier driver took the
*last* field of ``Uncertainty``, a sample count, for the uncertainty.
"""

from __future__ import annotations

from dataclasses import dataclass

from drivers.interfaces import InstrumentError

#: ``mode=`` value of a daemon measuring power (the captures); a temperature daemon's value is
#: in no public capture, so the temperature client only refuses this one
POWER_MODE = "power"


@dataclass(frozen=True)
class DaemonIdentity:
    """An ``Identify`` reply: ``<device>,…,version=<v>,OS=…,mode=<m>,…,<meter identity>``.

    ``device`` is the daemon's name for its meter driver (``YokogawaWT330_multichannel``);
    ``meter`` is the analyzer's own identity with ``;`` for ``,`` (the daemon's log shows the
    analyzer answering ``YOKOGAWA,WT333E,C2XL24034V,F1.04`` and Identify ends with
    ``YOKOGAWA;WT333E;C2XL24034V;F1.04``). The numeric fields between are not named by any
    public source and are not read."""

    device: str
    version: str
    mode: str
    meter: str


def parse_identify(reply: str) -> DaemonIdentity | None:
    """None when the reply lacks the ``version=`` and ``mode=`` fields every captured
    PTDaemon Identify has (so it is not a PTDaemon, or a layout this driver does not know)."""
    fields = reply.strip().split(",")
    keyed = dict(f.split("=", 1) for f in fields if "=" in f)
    if not fields[0] or "version" not in keyed or "mode" not in keyed:
        return None
    return DaemonIdentity(fields[0], keyed["version"], keyed["mode"],
                          fields[-1].replace(";", " ") if len(fields) > 1 else "")


@dataclass(frozen=True)
class UncertaintyStats:
    """An ``Uncertainty`` reply: statistics of the samples since ``Go``.

    ``Uncertainty,<mean>,<min>,<max>,<samples>,<unexplained>,<evaluated>,<unknown>``; the
    three statistics are fractions of the reading (``0.002410`` is 0.241 %) over the evaluated
    samples, ``-1.0`` mean when none was evaluated. In every capture the three counts add up
    to ``samples``; ``unknown`` counts the samples the daemon logged "Can't evaluate
    uncertainty of this sample!" for (all of them on auto range). ``unexplained`` is 0 in
    every public capture and its meaning is not established; the driver reads any increase of
    it as "cannot vouch for this sample" (the conservative reading)."""

    mean: float
    minimum: float
    maximum: float
    samples: int
    unexplained: int
    evaluated: int
    unknown: int


def parse_uncertainty(reply: str) -> UncertaintyStats:
    """The 8-field reply, or :class:`InstrumentError` naming the reply."""
    fields = reply.strip().split(",")
    try:
        if len(fields) != 8 or fields[0] != "Uncertainty":
            raise ValueError("not 8 fields headed 'Uncertainty'")
        return UncertaintyStats(float(fields[1]), float(fields[2]), float(fields[3]),
                                *(int(f) for f in fields[4:]))
    except ValueError as exc:
        raise InstrumentError(
            f"PTDaemon answered Uncertainty with {reply.strip()!r}, not "
            "'Uncertainty,<mean>,<min>,<max>,<samples>,<n>,<evaluated>,<unknown>' "
            f"({exc}); the per-sample uncertainty cannot be read from it") from exc


def interval_uncertainty_pct(before: UncertaintyStats | None,
                             after: UncertaintyStats) -> float | None:
    """The uncertainty (%) to state for the samples taken between two ``Uncertainty`` replies
    of one ``Go``, or None when it cannot be vouched for.

    The daemon gives no single sample's value, only statistics since ``Go``. The maximum since
    ``Go`` bounds every sample in it, so it is what a sample is given (conservative: it may
    overstate, never understate). None when a sample of the interval could not be evaluated
    (``unknown`` grew), the unexplained count grew, or nothing was evaluated yet."""
    unknown, unexplained = (0, 0) if before is None else (before.unknown, before.unexplained)
    if after.unknown > unknown or after.unexplained > unexplained:
        return None
    if after.evaluated == 0 or after.mean < 0:
        return None
    return after.maximum * 100.0


@dataclass(frozen=True)
class DaemonRanges:
    """An ``RR`` reply: ``Ranges,<amps auto>,<amps range>,<volts auto>,<volts range>``.

    Auto flag 1 on, 0 off, -1 unknown; a range -1 when unknown (MLCommons power-dev's reading
    of the reply, ``_get_initial_range``; the captured ``Ranges,1,10.000000,1,300.000000`` is
    10 A and 300 V on auto range)."""

    amps_auto: int
    amps: float
    volts_auto: int
    volts: float

    def present(self) -> tuple[float | None, float | None]:
        """(V, A) ranges in use, None where the daemon does not know."""
        return (self.volts if self.volts > 0 else None, self.amps if self.amps > 0 else None)


def parse_ranges(reply: str) -> DaemonRanges:
    fields = reply.strip().split(",")
    try:
        if len(fields) != 5 or fields[0] != "Ranges":
            raise ValueError("not 5 fields headed 'Ranges'")
        return DaemonRanges(int(fields[1]), float(fields[2]), int(fields[3]), float(fields[4]))
    except ValueError as exc:
        raise InstrumentError(
            f"PTDaemon answered RR with {reply.strip()!r}, not "
            f"'Ranges,<amps auto>,<amps>,<volts auto>,<volts>' ({exc})") from exc
