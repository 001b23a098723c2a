"""Measurement core: intervals, efficiency, stability, histograms, formatting (pure numpy)."""

from app.metrics.efficiency import (StabilityVerdict, active_metric, periodic_efficiency,
                                    ready_idle_metric, stability, weighted_moving_average)
from app.metrics.errors import MetricsError
from app.metrics.formatting import sig_digits
from app.metrics.histogram import ResponseTimeHistogram
from app.metrics.intervals import build_intervals, interval_means, interval_ops

__all__ = ["MetricsError", "ResponseTimeHistogram", "StabilityVerdict", "active_metric",
           "build_intervals", "interval_means", "interval_ops", "periodic_efficiency",
           "ready_idle_metric", "sig_digits", "stability", "weighted_moving_average"]
