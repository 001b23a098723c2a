"""The figures of a stepped-intensity sweep and the rule that ends it (docs/method-notes.md §6).

The SPC-1-like sweep (spc1-power-framework seed) raises the load in Business Scaling Units
until the SUT cannot keep up. A step's figures are the stored metric of its phase (the
sequencer stores ``SPC1_BSU_<n>`` through the ordinary metric path), so the live view, the
PDF and the xlsx read one set of numbers and nothing here re-measures anything.

The stop rule, chosen because the seed names both signs of saturation ("until the disk
bottlenecked"; SPC-1's 30 ms threshold) and a rule must be testable:

* the step's average response time is above the method's limit (``response_time.max_avg_ms``,
  30 ms), or
* its IOPS rose less than ``min_gain_pct`` (2 %) over the previous step's, or are not a number.

The step that trips the rule is kept and plotted: it is the evidence that the sweep ended.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from app.core.records import MetricResult


@dataclass(frozen=True)
class SweepPoint:
    """One measured step: load asked for, what the SUT did, what it drew."""

    units: int
    asked_iops: float
    iops: float
    avg_response_ms: float
    watts: float
    drives: int
    ep: float  # IOPS/W (NaN when the step's metric could not be computed)
    valid: bool
    reason: str

    @property
    def mw_per_iops(self) -> float:
        """The seed's power efficiency per IO request (mW/IOPS)."""
        return self.watts * 1000 / self.iops if self.iops > 0 else math.nan

    @property
    def w_per_drive(self) -> float:
        return self.watts / self.drives if self.drives > 0 else math.nan


def sweep_point(units: int, asked_iops: float, metric: MetricResult, drives: int) -> SweepPoint:
    return SweepPoint(units, asked_iops, metric.ops_rate, metric.avg_response_ms,
                      metric.avg_power_w, drives, metric.value, metric.valid, metric.reason)


def stop_reason(points: list[SweepPoint], limit_ms: float, min_gain_pct: float) -> str | None:
    """Why the sweep ends after ``points[-1]``, or None to go on (module docstring)."""
    last = points[-1]
    if not last.iops > 0:
        return f"{last.units} units: no IOPS measured"
    if last.avg_response_ms > limit_ms:
        return (f"average response time {last.avg_response_ms:.1f} ms at {last.units} units "
                f"passed the {limit_ms:g} ms limit")
    if len(points) >= 2 and points[-2].iops > 0:
        gain = (last.iops / points[-2].iops - 1) * 100
        if gain < min_gain_pct:
            return (f"IOPS rose {gain:.1f} % from {points[-2].units} to {last.units} units "
                    f"({points[-2].iops:.0f} → {last.iops:.0f}), less than {min_gain_pct:g} %")
    return None


def stored_points(metrics: Iterable[MetricResult], name: str, unit: str, unit_iops: float,
                  drives: int) -> list[SweepPoint]:
    """The steps of sweep ``name`` among a run's stored metrics, by rising unit count."""
    prefix = f"{name}_{unit}_"
    points = [sweep_point(int(m.name[len(prefix):]), unit_iops * int(m.name[len(prefix):]),
                          m, drives)
              for m in metrics if m.name.startswith(prefix) and m.name[len(prefix):].isdigit()]
    return sorted(points, key=lambda p: p.units)
