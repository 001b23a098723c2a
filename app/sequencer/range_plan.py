"""Range plans: which fixed voltage and current range each power input holds per profile.

A ranging pass on auto range records, per input and profile, the largest rms and peak volts
and amps; :func:`choose_range` turns them into the range the testing pass holds (the rule is
method-notes §3, "Ranging rule"): the smallest range whose rms rating covers the rms maximum
and whose rating × the meter's crest factor covers the peak, both with ``headroom_pct`` to
spare. A :class:`RangePlan` is stored with the run, so a later run of the same SUT may reuse
it (the range advisor) instead of ranging again.

Records only, no instrument: the controller that sets the ranges is
:mod:`app.sequencer.ranging`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

#: the key of the one power meter (``Lab.power_meter``) in a range plan; several inputs are
#: keyed by the names the SUT set-up gives them. A plan holds one kind or the other, never
#: both, so an input named "main" does not collide with it: the ranging pass tells them apart
#: by the set-up (``Ranger.several_inputs``), never by comparing names (issue 24)
MAIN_INPUT = "main"
#: range key of ready idle (no IO profile) and of phases no profile was ranged for
IDLE_KEY = "IDLE"
ENVELOPE_KEY = "*"


@dataclass(frozen=True)
class PeakRecord:
    """The largest readings one input showed while one profile ran on auto range."""

    rms_v: float = 0.0
    rms_a: float = 0.0
    peak_v: float = math.nan  # NaN: the meter reports no peaks
    peak_a: float = math.nan
    samples: int = 0

    def merged(self, rms_v: float, rms_a: float, peak_v: float, peak_a: float) -> PeakRecord:
        """This record with one more reading (NaN readings leave a maximum as it was)."""
        return PeakRecord(_larger(self.rms_v, rms_v), _larger(self.rms_a, rms_a),
                          _larger(self.peak_v, peak_v), _larger(self.peak_a, peak_a),
                          self.samples + 1)


def _larger(current: float, new: float) -> float:
    if not math.isfinite(new):
        return current
    return abs(new) if not math.isfinite(current) else max(current, abs(new))


@dataclass(frozen=True)
class RangeSetting:
    """One input's fixed ranges for one profile, with the readings they were chosen from."""

    volts: float
    amps: float
    evidence: PeakRecord = field(default_factory=PeakRecord)

    def describe(self) -> str:
        e = self.evidence
        peaks = (f", peaks {e.peak_v:.4g} V / {e.peak_a:.4g} A" if math.isfinite(e.peak_a)
                 else ", no peaks reported")
        return (f"{self.volts:g} V / {self.amps:g} A (rms max {e.rms_v:.4g} V / "
                f"{e.rms_a:.4g} A{peaks}, {e.samples} samples)")


@dataclass(frozen=True)
class RangePlan:
    """{input name → {profile → fixed ranges}}; ``source`` says where it came from ("ranging
    pass", "run <id>") and ``headroom_pct``/``crest_factor`` the rule's numbers."""

    settings: Mapping[str, Mapping[str, RangeSetting]]
    source: str = "ranging pass"
    headroom_pct: float = 0.0
    crest_factor: float = 3.0

    def setting(self, input_name: str, key: str) -> RangeSetting:
        """The ranges ``input_name`` holds for range key ``key`` (a profile, IDLE, or the
        envelope for phases no profile was ranged for)."""
        per_profile = self.settings[input_name]
        return per_profile.get(key) or per_profile[ENVELOPE_KEY]

    def describe(self) -> list[str]:
        """One line per input and profile, for the run log, the CLI and the wizard."""
        return [f"{name} {key}: {s.describe()}" for name, per in self.settings.items()
                for key, s in per.items()]

    def to_json(self) -> dict:
        return {"source": self.source, "headroom_pct": self.headroom_pct,
                "crest_factor": self.crest_factor,
                "settings": {name: {key: {"volts": s.volts, "amps": s.amps,
                                          "evidence": _evidence_json(s.evidence)}
                                    for key, s in per.items()}
                             for name, per in self.settings.items()}}

    @classmethod
    def from_json(cls, data: Mapping) -> RangePlan:
        settings = {name: {key: RangeSetting(float(v["volts"]), float(v["amps"]),
                                             _evidence_from(v.get("evidence", {})))
                           for key, v in per.items()}
                    for name, per in data["settings"].items()}
        return cls(settings, str(data.get("source", "")), float(data.get("headroom_pct", 0)),
                   float(data.get("crest_factor", 3.0)))


def _evidence_json(e: PeakRecord) -> dict:
    return {"rms_v": e.rms_v, "rms_a": e.rms_a, "samples": e.samples,
            "peak_v": e.peak_v if math.isfinite(e.peak_v) else None,
            "peak_a": e.peak_a if math.isfinite(e.peak_a) else None}


def _evidence_from(data: Mapping) -> PeakRecord:
    def number(key: str) -> float:
        value = data.get(key)
        return math.nan if value is None else float(value)

    return PeakRecord(number("rms_v") if "rms_v" in data else 0.0,
                      number("rms_a") if "rms_a" in data else 0.0,
                      number("peak_v"), number("peak_a"), int(data.get("samples", 0)))


def choose_range(ranges: tuple[float, ...], rms: float, peak: float, crest_factor: float,
                 headroom_pct: float) -> float:
    """The smallest range holding ``rms`` and ``peak`` with headroom (method-notes §3).

    ``ranges`` rising; empty means the meter takes any value (PTDaemon), which then is the
    needed value rounded up to three significant digits. A NaN ``peak`` (meter reports none)
    leaves the rms condition alone. Above the largest range the largest is returned: the
    testing pass then flags the over-range samples, which is the evidence.
    """
    margin = 1 + headroom_pct / 100
    needed = rms * margin
    if math.isfinite(peak):
        needed = max(needed, peak * margin / crest_factor)
    if not ranges:
        if needed <= 0:
            raise ValueError("the ranging pass saw no voltage or current on this input")
        digits = 2 - math.floor(math.log10(needed))
        return math.ceil(needed * 10 ** digits) / 10 ** digits
    return next((r for r in ranges if r >= needed), ranges[-1])


def setting_from(record: PeakRecord, volt_ranges: tuple[float, ...],
                 amp_ranges: tuple[float, ...], crest_factor: float,
                 headroom_pct: float) -> RangeSetting:
    return RangeSetting(
        choose_range(volt_ranges, record.rms_v, record.peak_v, crest_factor, headroom_pct),
        choose_range(amp_ranges, record.rms_a, record.peak_a, crest_factor, headroom_pct),
        record)


def envelope(records: Iterable[PeakRecord]) -> PeakRecord:
    """The largest of every record: what a phase no profile was ranged for must hold."""
    out = PeakRecord()
    for r in records:
        out = PeakRecord(max(out.rms_v, r.rms_v), max(out.rms_a, r.rms_a),
                         _larger(out.peak_v, r.peak_v), _larger(out.peak_a, r.peak_a),
                         out.samples + r.samples)
    return out
