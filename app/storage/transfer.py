"""Copy runs between databases: a station's SQLite file into the lab-wide PostgreSQL store.

Runs are identified by their UUID, so copying twice (or copying from several stations that
share runs) never duplicates one. Child rows are read and inserted in their id order, so the
copy keeps the order each run's rows were recorded in (read without ORDER BY, SQLite returned
them in an index's order and ``db copy`` reordered a run's metrics, issue 24 item 8); the
record's hash does not depend on it either way (storwatt-record/2, app/storage/record_hash.py). Each
run is copied in one destination transaction: a copy
interrupted half-way leaves the destination without that run, never with half of it. Runs
still RUNNING at the source are skipped — they are not evidence yet.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection, Table, insert, select, update

from app.core.records import RunStatus
import app.storage.audit  # noqa: F401  (registers audit_entries: QA records travel with runs)
from app.storage.db import Database
from app.storage.schema import Base, Run, Station, Sut

#: tables whose rows belong to one run (they carry ``run_id``), in dependency order
RUN_CHILD_TABLES: tuple[Table, ...] = tuple(
    t for t in Base.metadata.sorted_tables if "run_id" in t.c and t.name != "runs")


@dataclass
class CopyReport:
    copied: list[str] = field(default_factory=list)
    skipped_existing: list[str] = field(default_factory=list)
    skipped_running: list[str] = field(default_factory=list)

    def summary(self) -> str:
        return (f"{len(self.copied)} run(s) copied, {len(self.skipped_existing)} already present, "
                f"{len(self.skipped_running)} still running (skipped)")


def copy_runs(source: Database, destination: Database,
              run_ids: Iterable[str] | None = None) -> CopyReport:
    """Copy every run (or the given UUIDs) missing from ``destination``."""
    report = CopyReport()
    wanted = set(run_ids) if run_ids is not None else None
    with source.engine.connect() as src:
        runs = src.execute(select(Run.__table__).order_by(Run.id)).mappings().all()
        for run in runs:
            if wanted is not None and run["uuid"] not in wanted:
                continue
            if run["status"] == RunStatus.RUNNING:
                report.skipped_running.append(run["uuid"])
                continue
            with destination.engine.begin() as dst:
                if dst.execute(select(Run.id).where(Run.uuid == run["uuid"])).first():
                    report.skipped_existing.append(run["uuid"])
                    continue
                _copy_one(src, dst, dict(run))
            report.copied.append(run["uuid"])
    return report


def _copy_one(src: Connection, dst: Connection, run: dict[str, Any]) -> None:
    old_id = run.pop("id")
    run["station_id"] = _same_row(src, dst, Station.__table__, run["station_id"], ("name",))
    run["sut_id"] = _same_row(src, dst, Sut.__table__, run["sut_id"],
                              ("vendor", "model", "serial"))
    # stored unfinished, then given its status once every row is there, so a guard that makes
    # a finished run's rows immutable (issue 39) holds in the destination too
    unfinished = {**run, "status": RunStatus.RUNNING.value}
    new_id = dst.execute(insert(Run.__table__).values(**unfinished).returning(Run.id)
                         ).scalar_one()
    for table in RUN_CHILD_TABLES:
        query = select(table).where(table.c.run_id == old_id)
        if "id" in table.c:
            query = query.order_by(table.c.id)
        rows = [dict(r) for r in src.execute(query).mappings()]
        for row in rows:
            row.pop("id", None)
            row["run_id"] = new_id
        if rows:
            dst.execute(insert(table), rows)
    dst.execute(update(Run.__table__).where(Run.id == new_id).values(status=run["status"]))


def _same_row(src: Connection, dst: Connection, table: Table, row_id: int | None,
              key: tuple[str, ...]) -> int | None:
    """The destination id of the row identified by ``key`` (created if missing)."""
    if row_id is None:
        return None
    row = dict(src.execute(select(table).where(table.c.id == row_id)).mappings().one())
    row.pop("id")
    cond = [table.c[k] == row[k] for k in key]
    found = dst.execute(select(table.c.id).where(*cond)).scalar()
    if found is not None:
        return found
    return dst.execute(insert(table).values(**row).returning(table.c.id)).scalar_one()
