"""A stored run's figures for the COM savings comparison (:mod:`app.metrics.com_savings`).

Capacity and idle power come from the ready-idle metric (EP_RI: raw capacity in GB over the
ready-idle average power), the IO rate and active power from one active profile's metric —
EP_MW1 by default, the 70/30 random workload the seed's tables use. A metric that is missing
or INVALID is refused with the run, the metric and the reason: a saving computed from an
unstable phase would be a number nobody can defend (docs/method-notes.md §4).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.metrics.com_savings import DEFAULT_ACTIVE_METRIC, ComSavings, ConfigFigures, CostRates
from app.metrics.errors import MetricsError
from app.core.records import IDLE_METRIC, MetricResult
from app.rules.comparability import comparison_caveats

if TYPE_CHECKING:  # the storage layer is only needed where a run was loaded
    from app.storage.stored import StoredRun



def _metric(run: StoredRun, name: str) -> MetricResult:
    found = next((m for m in run.metrics if m.name == name), None)
    if found is None:
        have = ", ".join(m.name for m in run.metrics) or "none"
        raise MetricsError(f"run {run.run_id[:8]} has no {name} (its metrics: {have})")
    if not found.valid:
        raise MetricsError(f"run {run.run_id[:8]}: {name} is INVALID ({found.reason}); "
                           "a saving needs valid figures")
    return found


def figures_from_run(run: StoredRun, active_metric: str = DEFAULT_ACTIVE_METRIC,
                     enclosures: int = 0) -> ConfigFigures:
    """The run's capacity, idle and active power, IO rate and drive count."""
    idle, active = _metric(run, IDLE_METRIC), _metric(run, active_metric)
    if active.ops_unit != "IOPS":
        raise MetricsError(f"run {run.run_id[:8]}: {active_metric} is measured in "
                           f"{active.ops_unit or 'no unit'}, not IOPS; choose a random profile")
    sut = run.config.sut
    label = f"{run.run_id[:8]} {sut.model} {sut.raid}".strip()
    return ConfigFigures(label, idle.ops_rate, idle.avg_power_w, active.avg_power_w,
                         active.ops_rate, sut.drive_count, enclosures)


def savings_of_runs(baseline: StoredRun, optimised: StoredRun, rates: CostRates,
                    active_metric: str = DEFAULT_ACTIVE_METRIC, base_enclosures: int = 0,
                    opt_enclosures: int = 0) -> ComSavings:
    """The savings of two stored runs, with every reason they are weak (a SIMULATED or
    NON-COMPLIANT run, different methods) carried to each view and file that shows them."""
    return ComSavings(figures_from_run(baseline, active_metric, base_enclosures),
                      figures_from_run(optimised, active_metric, opt_enclosures), rates,
                      comparison_caveats((baseline, optimised)))
