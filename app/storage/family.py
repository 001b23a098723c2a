"""A product family's stored runs, for the best-foot-forward view (issue 18 §6).

A family is one SUT model (vendor and model as described) measured with one method for one
taxonomy category: only such runs are comparable. Each run brings its range variables from its
configuration snapshot (drive count, drive type, RAID level) and its stored metrics as they are.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import dataclass

import sqlalchemy as sa

from app.metrics.best_foot_forward import RANGE_VARIABLES, FamilyRun
from app.core.records import RunStatus
from app.storage import schema as s
from app.storage.db import Database


@dataclass(frozen=True)
class Family:
    """Which runs are comparable: one model, one method, one taxonomy."""

    vendor: str
    model: str
    method: str
    taxonomy: str

    def describe(self) -> str:
        return f"{self.vendor} {self.model} ({self.taxonomy}, method {self.method})"


def product_families(database: Database) -> list[tuple[Family, int]]:
    """Every family with its number of COMPLETED runs, most runs first."""
    query = (sa.select(s.Sut.vendor, s.Sut.model, s.Run.method_name, s.Run.taxonomy)
             .join(s.Sut, s.Run.sut_id == s.Sut.id)
             .where(s.Run.status == str(RunStatus.COMPLETED)))
    with database.read() as conn:
        counts = Counter(Family(*row) for row in conn.execute(query).all())
    return sorted(counts.items(), key=lambda fc: (-fc[1], fc[0].describe()))


def family_runs(database: Database, family: Family) -> list[FamilyRun]:
    """The family's COMPLETED runs with their range variables and metrics, oldest first."""
    runs = (sa.select(s.Run.id, s.Run.uuid, s.Run.config)
            .join(s.Sut, s.Run.sut_id == s.Sut.id)
            .where(s.Sut.vendor == family.vendor, s.Sut.model == family.model,
                   s.Run.method_name == family.method, s.Run.taxonomy == family.taxonomy,
                   s.Run.status == str(RunStatus.COMPLETED))
            .order_by(s.Run.started_wall, s.Run.id))
    with database.read() as conn:
        rows = conn.execute(runs).all()
        metrics: dict[int, dict[str, tuple[float, str, bool]]] = defaultdict(dict)
        query = (sa.select(s.MetricRow.run_id, s.MetricRow.name, s.MetricRow.value,
                           s.MetricRow.unit, s.MetricRow.valid)
                 .where(s.MetricRow.run_id.in_([r.id for r in rows])))
        for pk, name, value, unit, valid in conn.execute(query).all():
            metrics[pk][name] = (math.nan if value is None else value, unit, bool(valid))
    return [FamilyRun(uuid, {k: config["sut"][k] for k in RANGE_VARIABLES}, metrics[pk])
            for pk, uuid, config in rows]
