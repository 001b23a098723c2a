"""Capacity-optimisation (COM) heuristic checks, run after ready idle (method-notes §2 phase 4).

Data-reduction COMs (deduplication, compression) are verified by writing a data set with a
known reducible share and comparing the logical bytes written with the physical capacity the
SUT reports using (seed green-grid-coms-poms.txt: savings shown as before/after capacity). The
other COMs (snapshots, thin provisioning, parity RAID) need the array's management interface;
when the lab cannot observe capacity, the result says "not verified" instead of guessing, and
the technician records the heuristic result with its evidence as an audited entry
(``storwatt runs com``; the verdict is :mod:`app.rules.com_verdict`'s). A COM result stored with
no
ratio (``NaN``) therefore means "not verified", never "not passed".

Parity RAID is not a switch: it is on exactly when the declared RAID level keeps parity (the
Green Grid's COM table lists "RAID 5/6, Erasure Encoding" against mirroring, RAID 1).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from typing import Protocol

from app.core.records import MetricResult, PhaseInfo, SutDescription

DATA_REDUCTION_COMS = ("deduplication", "compression")
PARITY_RAID = "parity-raid"
#: a reduction ratio above this counts as "the COM is on and working"
MIN_REDUCTION_RATIO = 1.05
#: RAID levels that keep parity: 5, 6 and their nested forms 50, 60 (RAID 0/1/10 do not)
PARITY_LEVELS = ("5", "6", "50", "60")
RAID_LEVELS_KNOWN = ("0", "1", "10", *PARITY_LEVELS)
#: "RAID 6", "raid-60", "RAID6 (8+2)" (a group layout in brackets is allowed), or JBOD
_RAID = re.compile(r"^\s*(?:RAID[\s-]*(\d{1,2})(?:\s*\([^()]*(?:\([^()]*\)[^()]*)*\))?"
                   r"|(JBOD))\s*$", re.IGNORECASE)
#: how a technician records a heuristic result by hand (stored in the reason of the check)
RECORD_BY_HAND = ("record the heuristic result with its evidence (storwatt runs com, or "
                  "Record COM result in the run's history)")


def raid_level(raid: str) -> str | None:
    """The RAID level of a declared layout — ``"6"`` for ``RAID 6 (8+2)``, ``"JBOD"`` — or
    None when the text names no level the station knows (``banana``, ``RAID 7``)."""
    match = _RAID.match(raid or "")
    if match is None:
        return None
    if match.group(2):
        return "JBOD"
    return match.group(1) if match.group(1) in RAID_LEVELS_KNOWN else None


def check_raid(raid: str) -> None:
    """Refuse a RAID level the station cannot read (ValueError saying what it accepts): the
    parity-RAID COM follows the level, so a typo would silently change the disclosure."""
    if raid_level(raid) is None:
        raise ValueError(f"RAID level {raid!r} not understood: write RAID 0, 1, 5, 6, 10, 50 "
                         "or 60, optionally with the group layout in brackets "
                         "(\"RAID 6 (8+2)\"), or JBOD")


def parity_raid(raid: str) -> bool:
    """Whether the declared RAID level is a parity RAID (``RAID 6 (8+2)`` yes, ``RAID 10``
    no)."""
    return raid_level(raid) in PARITY_LEVELS


def available_coms(sut: SutDescription) -> tuple[str, ...]:
    """COMs available in the SUT: the declared ones, and parity RAID when the RAID level has
    parity (whether or not it was declared)."""
    found = list(sut.coms_declared)
    if parity_raid(sut.raid) and PARITY_RAID not in found:
        found.append(PARITY_RAID)
    return tuple(found)


def on_during_test(sut: SutDescription, com: str) -> bool:
    """Whether ``com`` was on during the active test (parity RAID: the RAID level decides)."""
    return parity_raid(sut.raid) if com == PARITY_RAID else com in sut.coms_on_during_test


def declare_coms(on: Iterable[str], off: Iterable[str]) -> tuple[tuple[str, ...],
                                                                  tuple[str, ...]]:
    """(available in the SUT, on during the test) from the COMs given as on and as off, each
    once in the order given; a COM given both ways is on. The CLI's ``--com``/``--com-off``
    and the wizard's two checkboxes both declare through this (the seed's Test Data Report
    discloses the two separately, docs/method-notes.md §2 phase 4)."""
    on = tuple(dict.fromkeys(on))
    return tuple(dict.fromkeys([*on, *off])), on


def coms_off_during_test(sut: SutDescription) -> tuple[str, ...]:
    """The declared COMs that were off during the test (available, not on)."""
    return tuple(c for c in sut.coms_declared if c not in sut.coms_on_during_test)


def check_declared_coms(known: Iterable[str], sut: SutDescription) -> None:
    """Refuse a set-up whose COMs the method does not know, one that is on but not available,
    or parity RAID declared on a RAID level without parity (ValueError naming the ids)."""
    known = list(known)
    if sut.raid:
        check_raid(sut.raid)
    unknown = [c for c in (*sut.coms_declared, *sut.coms_on_during_test) if c not in known]
    if unknown:
        raise ValueError(f"unknown COM id {', '.join(dict.fromkeys(unknown))}: the method "
                         f"knows {', '.join(known)}")
    stray = [c for c in sut.coms_on_during_test if c not in sut.coms_declared]
    if stray:
        raise ValueError(f"COM {', '.join(stray)} is on during the test but not declared "
                         "available in the SUT")
    if PARITY_RAID in sut.coms_declared and not parity_raid(sut.raid):
        raise ValueError(f"COM {PARITY_RAID} is declared but the SUT's RAID level "
                         f"{sut.raid!r} keeps no parity (RAID 5, 6, 50 or 60 do)")


class RatioMetric(Protocol):
    """A COM check's stored metric as far as :func:`observed` reads it."""

    @property
    def value(self) -> float: ...


def observed(metric: RatioMetric | None) -> bool:
    """The station observed the COM itself: a check result with a ratio. Without one the COM
    is not verified (never "not passed"), whatever the lab."""
    return metric is not None and math.isfinite(metric.value)


def is_com_metric(name: str) -> bool:
    """Whether a stored metric is a COM check (``COM_<id>``): its state is a COM verdict
    (``app.rules.com_verdict``), not a measurement's VALID/INVALID."""
    return name.startswith("COM_")


class NamedMetric(RatioMetric, Protocol):
    """A stored metric as far as :func:`not_valid_word` reads it (a record's or a run list's)."""

    @property
    def name(self) -> str: ...


def not_valid_word(metric: NamedMetric) -> str:
    """How a metric that is not VALID is named in logs and summaries: a COM check the lab could
    not observe is NOT VERIFIED, any other (a COM ratio too low, an EP) INVALID."""
    return ("NOT VERIFIED" if is_com_metric(metric.name) and not observed(metric)
            else "INVALID")


def com_result(phase: PhaseInfo, com: str, written_bytes: int,
               before: tuple[int, int] | None, after: tuple[int, int] | None) -> MetricResult:
    """The heuristic outcome of one COM check as a metric row named ``COM_<id>``.

    ``before``/``after`` are the SUT's (logical, physical) used bytes around the check's data
    set (None when the lab cannot observe them). Value: logical/physical ratio of the data set.
    """
    name = f"COM_{com}"
    if com not in DATA_REDUCTION_COMS:
        return MetricResult(name, math.nan, "ratio", False,
                            f"needs the array's management interface: {RECORD_BY_HAND}",
                            phase.planned_s,
                            phase_index=phase.index)
    if before is None or after is None:
        return MetricResult(name, math.nan, "ratio", False,
                            "this lab has no capacity probe (it cannot observe the SUT's used "
                            f"capacity): {RECORD_BY_HAND}",
                            phase.planned_s, phase_index=phase.index)
    logical, physical = after[0] - before[0], after[1] - before[1]
    ratio = logical / physical if physical > 0 else math.nan
    ok = ratio == ratio and ratio >= MIN_REDUCTION_RATIO and written_bytes > 0
    reason = "" if ok else (f"no data reduction observed (ratio {ratio:.3f} after "
                            f"{written_bytes / 1e9:.3f} GB written)")
    return MetricResult(name, ratio, "ratio", ok, reason, phase.planned_s,
                        ops_rate=written_bytes / 1e9, ops_unit="GB written",
                        phase_index=phase.index)
