"""Measurement core: intervals, efficiency, stability, histograms, formatting (pure numpy).

Every rule here comes from method-notes §4 (metrics), §5 (response-time quality) and §9 (fio's
bin layout); callers get a number, an explicit NaN with a reason, or a typed error.
"""

from app.metrics.efficiency import (StabilityVerdict, active_metric, efficiency_gaps,
                                    periodic_efficiency, ready_idle_metric, stability,
                                    weighted_moving_average)
from app.metrics.errors import (EmptySamplesError, LengthMismatchError, MetricsError,
                                NonFiniteError, NonMonotonicError, NonPositivePowerError,
                                UnitMixError)
from app.metrics.formatting import (bytes_to_gb, bytes_to_gib, format_capacity, format_quantity,
                                    format_figure)
from app.metrics.histogram import DEFAULT_LEVELS, ResponseTimeHistogram
from app.metrics.intervals import (IntervalFigures, PhaseIntervals, build_intervals,
                                   complete_intervals, interval_means, interval_ops,
                                   operations_rate)
from app.metrics.steady_state import SteadyStateVerdict, steady_state

__all__ = ["DEFAULT_LEVELS", "EmptySamplesError", "IntervalFigures", "LengthMismatchError",
           "MetricsError", "NonFiniteError", "NonMonotonicError", "NonPositivePowerError",
           "PhaseIntervals", "ResponseTimeHistogram", "StabilityVerdict", "SteadyStateVerdict",
           "UnitMixError", "active_metric", "build_intervals", "bytes_to_gb", "bytes_to_gib",
           "complete_intervals", "efficiency_gaps", "format_capacity", "format_quantity",
           "interval_means", "interval_ops", "operations_rate", "periodic_efficiency",
           "ready_idle_metric", "format_figure", "stability", "steady_state",
           "weighted_moving_average"]
