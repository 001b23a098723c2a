"""Typed errors of the measurement core: bad input is named, never turned into a number."""

from __future__ import annotations


class MetricsError(ValueError):
    """A metric cannot be computed from these samples; the message says why."""


class EmptySamplesError(MetricsError):
    """No (usable) samples where some were required."""


class NonMonotonicError(MetricsError):
    """Time stamps go backwards: samples were reordered or the clock jumped."""


class NonFiniteError(MetricsError):
    """NaN or infinity where a finite number is required."""


class NonPositivePowerError(MetricsError):
    """Average power is zero or negative: the meter or its wiring is wrong."""


class LengthMismatchError(MetricsError):
    """Parallel arrays (times and values) of different lengths."""


class UnitMixError(MetricsError):
    """A unit string is unknown or mixes decimal (GB) and binary (GiB) prefixes."""
