"""One wording for a run's outcome, wherever it is shown.

A run can end COMPLETED and still have metrics that are INVALID (unstable, over the
response-time rule, not enough samples …). Showing a bare green "COMPLETED" for such a run
reads as a pass; every screen (start page, run header, history) therefore asks this module
for the text and its tone, so they can never disagree (docs/method-notes.md §4).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from app.records import RunStatus


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


def run_verdict(status: RunStatus, invalid_metrics: int = 0) -> RunVerdict:
    """``COMPLETED`` (good), ``COMPLETED — 2 metrics INVALID`` (warning), ``FAILED`` (bad)…"""
    tone = _STATUS_TONES[status]
    if invalid_metrics <= 0:
        return RunVerdict(status.value, tone)
    noun = "metric" if invalid_metrics == 1 else "metrics"
    return RunVerdict(f"{status.value} — {invalid_metrics} {noun} INVALID",
                      Tone.WARNING if tone is Tone.GOOD else tone)
