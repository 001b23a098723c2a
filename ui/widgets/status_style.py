"""Colours of a run's verdict (:mod:`app.rules.run_outcome`): one mapping for every screen, so an
INVALID result is never green in one place and amber in another."""

from __future__ import annotations

from PySide6.QtGui import QColor

from app.rules.run_outcome import RunVerdict, Tone

TONE_COLOURS = {Tone.GOOD: QColor(40, 150, 70), Tone.WARNING: QColor(200, 120, 20),
                Tone.BAD: QColor(200, 50, 50), Tone.NEUTRAL: QColor(47, 143, 208)}


def verdict_colour(verdict: RunVerdict) -> QColor:
    return TONE_COLOURS[verdict.tone]


def verdict_style(verdict: RunVerdict) -> str:
    """Style sheet for a label that shows ``verdict`` (bold, in the tone's colour)."""
    return f"font-weight: bold; color: {verdict_colour(verdict).name()};"
