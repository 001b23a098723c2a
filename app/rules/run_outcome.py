"""One wording for a run's outcome, wherever it is shown.

A run can end COMPLETED and still have metrics that are INVALID (unstable, over the
response-time rule, not enough samples …). Showing a bare green "COMPLETED" for such a run
reads as a pass; every screen (start page, run header, history) therefore asks this module
for the text and its tone, so they can never disagree (docs/method-notes.md §4).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from app.core.records import RunStatus
from app.sequencer.capacity_optimisation import is_com_metric, not_valid_word


class Tone(StrEnum):
    """How alarming the outcome is; the GUI maps each tone to one colour."""

    GOOD = "good"  # completed, every metric valid
    WARNING = "warning"  # completed with INVALID metrics, or aborted
    BAD = "bad"  # failed or interrupted
    NEUTRAL = "neutral"  # still running


@dataclass(frozen=True)
class RunVerdict:
    text: str
    tone: Tone


_STATUS_TONES = {RunStatus.COMPLETED: Tone.GOOD, RunStatus.ABORTED: Tone.WARNING,
                 RunStatus.FAILED: Tone.BAD, RunStatus.INTERRUPTED: Tone.BAD,
                 RunStatus.RUNNING: Tone.NEUTRAL}


def run_verdict(status: RunStatus, invalid_metrics: int = 0,
                coms: Sequence[str] = ()) -> RunVerdict:
    """``COMPLETED`` (good), ``COMPLETED — 2 metrics INVALID`` (warning), ``COMPLETED — 1 COM
    NOT VERIFIED`` (warning: a technician must record its result), ``FAILED`` (bad)…
    ``coms``: the state of each available COM that did not pass (``NOT VERIFIED``, ``NOT
    PASSED``, ``NOT TESTED``), counted per state in the order first named."""
    tone = _STATUS_TONES[status]
    parts = []
    if invalid_metrics > 0:
        parts.append(f"{invalid_metrics} {'metric' if invalid_metrics == 1 else 'metrics'} "
                     "INVALID")
    for state, n in Counter(coms).items():
        parts.append(f"{n} {'COM' if n == 1 else 'COMs'} {state}")
    if not parts:
        return RunVerdict(status.value, tone)
    return RunVerdict(f"{status.value} — {', '.join(parts)}",
                      Tone.WARNING if tone is Tone.GOOD else tone)


class _Metric(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def value(self) -> float: ...

    @property
    def valid(self) -> bool: ...


def run_outcome(status: RunStatus, metrics: Iterable[_Metric],
                coms: Sequence[str] | None = None) -> RunVerdict:
    """The verdict of a run with these metrics and COM states.

    ``coms``: each COM's state as the record derives it (``app.rules.com_verdict``: the station's
    check, else the technician's audited result, else NOT VERIFIED — parity RAID included),
    which every view of a stored run passes, so a COM QA has settled reads the same in the run
    header, the history, the start page, compare, ``runs show`` and the report. None only while
    a run ends, before its record exists: then the COM checks' own metrics are counted, a COM
    the lab could not observe as NOT VERIFIED, never as an INVALID measurement."""
    if coms is None:
        words = [not_valid_word(m) for m in metrics if not m.valid]
        return run_verdict(status, words.count("INVALID"),
                           ("NOT VERIFIED",) * words.count("NOT VERIFIED"))
    invalid = sum(not m.valid for m in metrics if not is_com_metric(m.name))
    return run_verdict(status, invalid, coms)
