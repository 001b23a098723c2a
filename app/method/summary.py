"""Listing data for a method: what a technician compares before choosing one.

Plain frozen records (no behaviour) so the CLI, the GUI and JSON output show the same figures;
:meth:`app.method.model.Method.summary` fills them from the method's plans.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class PlanSummary:
    name: str
    categories: tuple[str, ...]
    #: phase names in execution order, without the per-COM checks (their number is the SUT's)
    phases: tuple[str, ...]
    #: the timed part for 0 declared COMs (``Method.plan_duration_s(plan)``)
    duration_s: float
    #: upper bound of the intensity search (every queue depth probed for every searched profile)
    search_max_s: float
    com_check_s_each: float
    #: what ``duration_s`` leaves out, in words
    note: str


@dataclass(frozen=True)
class MethodSummary:
    name: str
    version: str
    title: str
    label: str
    compliant: bool
    variant_of: str | None
    interval_s: float
    plans: tuple[PlanSummary, ...]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
