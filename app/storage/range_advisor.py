"""The range advisor: reuse the range plan of an earlier run of the same SUT (method-notes §3).

A ranging pass runs every profile once more before the active sequence; on a day-long run of
a large array that is time a lab would rather not spend twice. A plan is offered only from a
completed run whose SUT has the same vendor, model, drives, capacity, RAID, supply and
capacity optimisations (what decides the power it draws), measured in the same lab with the
same power meter (driver and resource: another meter has other ranges, and the simulated lab's
plan says nothing about a real one), and the operator confirms it (the wizard's review page,
``storwatt run --ranging advisor`` or ``--range-plan-from RUN_ID``).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

import sqlalchemy as sa

from app.core.records import RunConfig, RunStatus, SutDescription
from app.sequencer.range_plan import RangePlan
from app.storage import schema as s
from app.storage.db import Database
from app.storage.run_ids import resolve_run_id
from app.storage.stored import config_from_snapshot

class RangeAdvisorError(ValueError):
    """No earlier run offers a plan for this SUT, or the named run is not of this SUT."""


@dataclass(frozen=True)
class SutProfile:
    """The SUT fields that decide its power draw: two runs share a range plan only when all
    of them are equal."""

    vendor: str
    model: str
    raw_capacity_bytes: int
    drive_count: int
    drive_type: str
    raid: str
    supply: str
    coms_on_during_test: tuple[str, ...]

    @classmethod
    def of(cls, sut: SutDescription) -> SutProfile:
        return cls(*(getattr(sut, f.name) for f in fields(cls)))

    def differences(self, other: SutProfile) -> list[str]:
        return _differences(self, other)


@dataclass(frozen=True)
class MeterProfile:
    """Where a plan's ranges were found: the lab and the power meter (its ranges are its own)."""

    lab: str
    meter_driver: str
    meter_resource: str

    @classmethod
    def of(cls, config: RunConfig) -> MeterProfile:
        return cls(config.lab, config.power_meter.driver, config.power_meter.resource)

    def differences(self, other: MeterProfile) -> list[str]:
        return _differences(self, other)


def _differences(wanted: SutProfile | MeterProfile,
                 found: SutProfile | MeterProfile) -> list[str]:
    return [f"{f.name} {getattr(found, f.name)!r} (this run: {getattr(wanted, f.name)!r})"
            for f in fields(wanted) if getattr(wanted, f.name) != getattr(found, f.name)]


@dataclass(frozen=True)
class AdvisedPlan:
    """A range plan offered from an earlier run, with what the operator must see to confirm."""

    run_id: str
    started_wall: str
    plan: RangePlan

    def lines(self) -> list[str]:
        return [f"range plan of run {self.run_id[:8]} ({self.started_wall}):",
                *(f"  {line}" for line in self.plan.describe())]


def advise(database: Database, config: RunConfig, run_id: str = "") -> AdvisedPlan:
    """The plan of ``run_id`` (checked to be of the same SUT profile, lab and power meter), or
    of the latest completed run of this SUT profile, lab and meter that stored one."""
    sut = config.sut
    wanted, rig = SutProfile.of(sut), MeterProfile.of(config)
    with database.read() as conn:
        query = sa.select(s.Run.uuid, s.Run.config, s.Run.range_plan, s.Run.started_wall,
                          s.Run.status)
        if run_id:
            query = query.where(s.Run.uuid == resolve_run_id(database, run_id))
        else:
            query = query.where(s.Run.status == RunStatus.COMPLETED.value,
                                s.Run.range_plan.is_not(None))
        rows = conn.execute(query.order_by(s.Run.started_wall.desc(), s.Run.id.desc())).all()
    for row in rows:
        found = config_from_snapshot(row.config)
        differences = (wanted.differences(SutProfile.of(found.sut))
                       + rig.differences(MeterProfile.of(found)))
        if run_id:
            return _named(row, differences)
        if not differences:
            return _advised(row)
    raise RangeAdvisorError(
        f"no completed run of SUT {sut.vendor} {sut.model} ({sut.drive_count} × "
        f"{sut.drive_type}, {sut.raid}, supply {sut.supply}) in lab {config.lab} with power "
        f"meter {config.power_meter.driver} {config.power_meter.resource}".rstrip()
        + " stored a range plan; run with its own ranging pass (--ranging method)")


def _named(row: sa.Row, differences: list[str]) -> AdvisedPlan:
    if differences:
        raise RangeAdvisorError(f"run {row.uuid[:8]} tested another SUT profile or used "
                                "another lab or power meter: "
                                + "; ".join(differences))
    if row.range_plan is None:
        raise RangeAdvisorError(f"run {row.uuid[:8]} stored no range plan (it did not range "
                                "its meter)")
    if row.status != RunStatus.COMPLETED.value:
        raise RangeAdvisorError(f"run {row.uuid[:8]} is {row.status}, not COMPLETED: its "
                                "ranges were not proven by a whole testing pass")
    return _advised(row)


def _advised(row: sa.Row) -> AdvisedPlan:
    plan = RangePlan.from_json(row.range_plan)
    return AdvisedPlan(row.uuid, row.started_wall, replace(plan, source=f"run {row.uuid}"))
