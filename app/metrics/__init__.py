"""Measurement core: efficiency, stability, histograms, significant digits (pure numpy).

Every rule here comes from method-notes §4 (metrics), §5 (response-time quality) and §9 (fio's
bin layout); callers get a number, an explicit NaN with a reason, or a typed error.
"""

from app.metrics.efficiency import (StabilityVerdict, active_metric, efficiency_gaps,
                                    periodic_efficiency, ready_idle_metric, stability,
                                    weighted_moving_average)
from app.metrics.errors import (EmptySamplesError, LengthMismatchError, MetricsError,
                                NonFiniteError, NonPositivePowerError)
from app.metrics.formatting import format_figure
from app.metrics.histogram import DEFAULT_LEVELS, ResponseTimeHistogram
from app.metrics.steady_state import SteadyStateVerdict, steady_state

__all__ = ["DEFAULT_LEVELS", "EmptySamplesError", "LengthMismatchError", "MetricsError",
           "NonFiniteError", "NonPositivePowerError", "ResponseTimeHistogram", "StabilityVerdict",
           "SteadyStateVerdict", "active_metric", "efficiency_gaps", "periodic_efficiency",
           "ready_idle_metric", "format_figure", "stability", "steady_state",
           "weighted_moving_average"]
