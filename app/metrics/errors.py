"""Typed errors of the measurement core: bad input is named, never turned into a number.

method-notes §3 (flagged samples are never averaged silently) and §4 (an invalid phase is shown
as invalid) are why the core raises or returns an explicit NaN instead of guessing.
"""

from __future__ import annotations


class MetricsError(ValueError):
    """A metric cannot be computed from these samples; the message says why (method-notes §4)."""


class EmptySamplesError(MetricsError):
    """No (usable) samples where some were required (§4: a figure needs its samples)."""


class NonFiniteError(MetricsError):
    """NaN or infinity where a finite number is required (§3: NaN/over-range are flags)."""


class NonPositivePowerError(MetricsError):
    """Average power is zero or negative: the meter or its wiring is wrong (§4: EP = O / P)."""


class LengthMismatchError(MetricsError):
    """Parallel arrays (times and values) of different lengths (§4: one value per sample)."""
