"""The QA history's run list a page at a time: counted, filtered and sorted by the database.

Why: a lab's history holds 100,000 runs, and building every one in Python took seconds at
open and a pass over all of them per filter change (issue 27). Here the database answers
"how many runs match", "which runs are rows 400–599 in this order" and "which taxonomies,
SUTs, stations and metrics exist", with the indexes of schema revision 0016; only the rows of
one page become :class:`~app.storage.stored.RunSummary` objects (with their metrics, QA
disposition and verdict facts, so the verdict is derived for the rows shown).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from app.core.records import in_metric_order
from app.storage import schema as s
from app.storage.db import Database
from app.storage.planner_stats import refresh_statistics
from app.storage.history import HistoryFilter, HistoryOrder, narrowed
from app.storage.repository import run_list_query, summaries
from app.storage.stored import RunSummary


@dataclass(frozen=True)
class HistoryChoices:
    """What the history's filter lists offer, from the runs stored: each sorted."""

    runs: int  # every stored run
    taxonomies: tuple[str, ...]
    suts: tuple[str, ...]  # "vendor model s/n serial", as RunSummary.sut
    stations: tuple[str, ...]
    metrics: tuple[tuple[str, str], ...]  # (name, unit) in report order


def _joined(query: sa.Select) -> sa.Select:
    return (query.outerjoin(s.Station, s.Run.station_id == s.Station.id)
            .outerjoin(s.Sut, s.Run.sut_id == s.Sut.id))


def count_runs(database: Database, wanted: HistoryFilter = HistoryFilter()) -> int:
    """How many stored runs ``wanted`` shows."""
    query = _joined(sa.select(sa.func.count()).select_from(s.Run))
    with database.read() as conn:
        dialect = database.engine.dialect.name
        return int(conn.execute(narrowed(query, wanted, dialect=dialect)).scalar_one())


def run_page(database: Database, wanted: HistoryFilter, order: HistoryOrder, offset: int,
             limit: int) -> list[RunSummary]:
    """Rows ``offset`` … ``offset + limit − 1`` of the list ``wanted`` shows in ``order``.

    The page's runs are chosen by id first, then only they are read whole: sorting 100,000
    runs by a column then reads the columns it sorts by (on SQLite, an index), not every
    run's row with its configuration and method JSON."""
    dialect = database.engine.dialect.name
    chosen = narrowed(_joined(sa.select(s.Run.id).select_from(s.Run)), wanted, order,
                      dialect).offset(offset).limit(limit)
    with database.read() as conn:
        pks = list(conn.execute(chosen).scalars())
        found = {r.id: r for r in conn.execute(run_list_query().where(s.Run.id.in_(pks)))}
        return summaries(conn, [found[pk] for pk in pks], pks)


def run_ids(database: Database, wanted: HistoryFilter, order: HistoryOrder) -> list[str]:
    """The ids of every run ``wanted`` shows, in ``order`` (no summaries built)."""
    query = _joined(sa.select(s.Run.uuid).select_from(s.Run))
    with database.read() as conn:
        dialect = database.engine.dialect.name
        return list(conn.execute(narrowed(query, wanted, order, dialect)).scalars())


def _distinct(conn: Connection, column: Any) -> Iterator[Any]:
    """The distinct values of an indexed column, one index seek each (a loose index scan:
    neither SQLite nor PostgreSQL skips through an index for ``DISTINCT`` by itself)."""
    value = conn.execute(sa.select(sa.func.min(column))).scalar()
    while value is not None:
        yield value
        value = conn.execute(sa.select(sa.func.min(column)).where(column > value)).scalar()


def history_choices(database: Database) -> HistoryChoices:
    """How many runs are stored, the taxonomies, SUTs and stations that have runs, and every
    metric with its unit."""
    runs = count_runs(database)
    refresh_statistics(database, runs)
    with database.read() as conn:
        taxonomies = tuple(t for t in _distinct(conn, s.Run.taxonomy) if t)
        used = sa.select(s.Run.id)
        stations = conn.execute(sa.select(s.Station.name).where(
            used.where(s.Run.station_id == s.Station.id).exists())).scalars().all()
        suts = conn.execute(sa.select(s.Sut.vendor, s.Sut.model, s.Sut.serial).where(
            used.where(s.Run.sut_id == s.Sut.id).exists())).all()
        units = {name: conn.execute(sa.select(s.MetricRow.unit)
                                    .where(s.MetricRow.name == name)
                                    .order_by(s.MetricRow.id.desc()).limit(1)).scalar_one()
                 for name in _distinct(conn, s.MetricRow.name)}
    sut_texts = {" ".join(filter(None, (v, m, serial and f"s/n {serial}")))
                 for v, m, serial in suts}
    return HistoryChoices(runs, taxonomies, tuple(sorted(t for t in sut_texts if t)),
                          tuple(sorted(n for n in stations if n)),
                          tuple((n, units[n]) for n in in_metric_order(sorted(units))))
