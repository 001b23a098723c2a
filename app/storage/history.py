"""The history list's filter and order, and their translation to SQL.

A lab's history holds 100,000 runs: the history never reads them all. A filter and an order
become one query's joins, ``WHERE`` and ``ORDER BY`` (:func:`narrowed`, run by
:mod:`app.storage.run_pages` a page at a time), served by the indexes of schema
revision 0016. :meth:`HistoryFilter.matches` states the same filter over a
:class:`~app.storage.stored.RunSummary` already in memory; a test holds the SQL to it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

import sqlalchemy as sa

from app.core.records import AuditKind, Disposition
from app.storage import schema as s
from app.storage.errors import StorageError
from app.storage.schema import AuditEntryRow
from app.storage.stored import RunSummary

#: the history's own status for a run with any INVALID metric (shown beside its RunStatus)
INVALID = "INVALID"
#: the longest search text and SUT fragment the history takes: a few words of an id, a SUT,
#: a method or an error are far shorter; SQLite refuses a LIKE pattern of 50,000 bytes
#: ("pattern too complex", issue 40), and a pasted page would only be a slow search
MAX_FILTER_CHARS = 1000


class HistoryFilterError(StorageError):
    """A filter the history does not search (one line: what is too long, and the bound); a
    StorageError so every reader of the history shows it where it shows a refused read."""


@dataclass(frozen=True)
class HistoryFilter:
    """What the QA engineer narrowed the list to; empty fields match everything.

    ``statuses`` may hold RunStatus values and :data:`INVALID` (any invalid metric); dates are
    inclusive and compared with the run's UTC start date.
    """

    text: str = ""
    date_from: date | None = None
    date_to: date | None = None
    statuses: frozenset[str] = frozenset()
    taxonomy: str = ""
    sut: str = ""
    station: str = ""  # the station that recorded the run (exact name)

    def refusal(self) -> str | None:
        """Why the history does not search this filter, or None: a text or SUT fragment
        longer than :data:`MAX_FILTER_CHARS` (found by pasting 50,000 characters, which
        reached the person as SQLite's "LIKE or GLOB pattern too complex")."""
        for what, text in (("search text", self.text), ("SUT filter", self.sut)):
            if len(text) > MAX_FILTER_CHARS:
                return (f"the {what} is {len(text):,} characters long; the history searches "
                        f"at most {MAX_FILTER_CHARS:,} (a few words of a run's id, SUT, "
                        "method, operator or error)")
        return None

    def matches(self, row: RunSummary) -> bool:
        if self.statuses and not (row.status.value in self.statuses
                                  or (INVALID in self.statuses and row.any_invalid)):
            return False
        day = row.started_wall[:10]
        if self.date_from is not None and day < self.date_from.isoformat():
            return False
        if self.date_to is not None and day > self.date_to.isoformat():
            return False
        if self.taxonomy and row.taxonomy != self.taxonomy:
            return False
        if self.sut and self.sut.lower() not in row.sut.lower():
            return False
        if self.station and row.station != self.station:
            return False
        return all(word in row.haystack for word in self.text.lower().split())

    def mask(self, rows: list[RunSummary]) -> list[bool]:
        return [self.matches(r) for r in rows]


@dataclass(frozen=True)
class HistoryOrder:
    """The list's order: a column's key (run, started, sut, taxonomy, method, station, operator,
    duration, status, qa, lab) or, for a metric column, the metric's name (``metric``).
    Rows without a value (no such metric) stay last whichever way the column sorts; ties keep
    the newest run first."""

    key: str = "started"
    descending: bool = True
    metric: str = ""


# --- SQL --------------------------------------------------------------------------------------

def _like(word: str) -> str:
    escaped = word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _text(column: Any) -> Any:
    return sa.func.coalesce(column, "")


def _sut_text() -> Any:
    """``vendor model s/n serial`` as :func:`app.storage.repository` words it."""
    serial = sa.case((_text(s.Sut.serial) != "", "s/n " + s.Sut.serial), else_="")
    parts = (_text(s.Sut.vendor), _text(s.Sut.model), serial)
    text = parts[0]
    for part in parts[1:]:  # words joined by one space, empty ones left out
        text = sa.case((text == "", part), (part == "", text), else_=text + " " + part)
    return text


def _verdicts() -> Any:
    """Per run with a measured metric that is not VALID: the words the history searches and
    sorts on after its status (`` — 2 metrics INVALID``, ``RunSummary.searched_status``). The
    COM checks' metrics are left out: a COM's state comes from the SUT description, its check
    and QA's entries, and is shown, not searched. Only those metrics are read (index
    ``valid, run_id``)."""
    invalid = sa.func.count()

    def part(count: Any, one: str, many: str, then: str) -> Any:
        return sa.case((count == 1, f"1 {one} {then}"),
                       else_=sa.cast(count, sa.String) + f" {many} {then}")

    suffix = " — " + part(invalid, "metric", "metrics", "INVALID")
    return (_invalid_measured().add_columns(suffix.label("suffix"))
            .group_by(s.MetricRow.run_id)
            .subquery("verdicts"))


def _invalid_measured() -> sa.Select:
    """The run of each measured metric that is not VALID (the COM checks' left out, as in
    :func:`_verdicts`)."""
    return sa.select(s.MetricRow.run_id).where(
        s.MetricRow.valid == sa.false(), sa.not_(s.MetricRow.name.like("COM\\_%", escape="\\")))


def _verdict_runs(word: str, found: Any) -> sa.Select:
    """The runs whose verdict words (`` — N metric(s) INVALID``) hold ``word``. A typed word has
    no space, so one without digits lies within "—", "metric(s)" or "invalid": found for every
    run with an INVALID measured metric, or, when only "metrics" holds it, for every run with
    two or more. Only a word with digits needs each run's count written out and matched: on
    PostgreSQL that took ~20–40 ms of a search for "invalid" over 100,000 runs (issue 27)."""
    if not re.search(r"\d", word):
        if word in _SUFFIX_WORDS[0]:
            return _invalid_measured()
        return _invalid_measured().group_by(s.MetricRow.run_id).having(sa.func.count() > 1)
    verdicts = _verdicts()
    return sa.select(verdicts.c.run_id).where(found(verdicts.c.suffix))


def _dispositions() -> Any:
    """Each run's latest QA disposition (runs QA never decided on have none)."""
    latest = (sa.select(sa.func.max(AuditEntryRow.id))
              .where(AuditEntryRow.kind == AuditKind.DISPOSITION.value)
              .group_by(AuditEntryRow.run_id))
    return (sa.select(AuditEntryRow.run_id, AuditEntryRow.disposition, AuditEntryRow.author)
            .where(AuditEntryRow.id.in_(latest)).subquery("dispositions"))


#: every suffix :func:`_verdicts` can give, digits as ``1``: a typed word found in none of
#: them cannot match a run's verdict words, and the query does not read them
_SUFFIX_WORDS = (" — 1 metric invalid", " — 1 metrics invalid")


def _may_name_verdict(word: str) -> bool:
    return any(re.sub(r"\d+", "1", word) in text for text in _SUFFIX_WORDS)


def _may_name_disposition(word: str) -> bool:
    return any(word in d.value for d in Disposition)


def narrowed(query: sa.Select, wanted: HistoryFilter, order: HistoryOrder | None = None,
             dialect: str = "sqlite") -> sa.Select:
    """``query`` over ``runs`` outer-joined with its station and SUT, narrowed to the runs
    ``wanted`` shows and sorted in ``order`` (None: unsorted, for counting).

    Text is matched without regard to case by the database (SQLite's ``LIKE``, PostgreSQL's
    ``ILIKE``); SQLite folds ASCII letters only, so there an accented capital in the stored
    text matches only as typed.
    """
    refused = wanted.refusal()
    if refused is not None:
        raise HistoryFilterError(refused)
    words = wanted.text.lower().split()
    verdicts = dispositions = None
    if order is not None and order.key == "status":
        verdicts = _verdicts()
        query = query.outerjoin(verdicts, verdicts.c.run_id == s.Run.id)
    if order is not None and order.key == "qa":
        dispositions = _dispositions()
        query = query.outerjoin(dispositions, dispositions.c.run_id == s.Run.id)
    if wanted.statuses:  # no empty arm: an OR of the INVALID runs alone kept PostgreSQL
        # from joining them and made it test all 100,000 runs (issue 27)
        plain = sorted(wanted.statuses - {INVALID})
        either = [s.Run.status.in_(plain)] if plain else []
        if INVALID in wanted.statuses:
            either.append(s.Run.id.in_(sa.select(s.MetricRow.run_id)
                                       .where(s.MetricRow.valid == sa.false())))
        query = query.where(sa.or_(*either))
    if wanted.date_from is not None:
        query = query.where(s.Run.started_wall >= wanted.date_from.isoformat())
    if wanted.date_to is not None:
        query = query.where(s.Run.started_wall
                            < (wanted.date_to + timedelta(days=1)).isoformat())
    if wanted.taxonomy:
        query = query.where(s.Run.taxonomy == wanted.taxonomy)
    if wanted.sut:
        query = query.where(s.Run.sut_id.in_(sa.select(s.Sut.id).where(  # the few SUTs
            sa.func.lower(_sut_text()).like(_like(wanted.sut.lower()), escape="\\"))))
    if wanted.station:
        query = query.where(s.Run.station_id.in_(  # index ix_runs_station_id, not a join scan
            sa.select(s.Station.id).where(s.Station.name == wanted.station)))
    query = query.where(*(_word_found(w, dialect) for w in words))
    return query if order is None else query.order_by(*_order_by(order, verdicts,
                                                                 dispositions))


#: PostgreSQL only (revision 0019): the run's searched columns joined by spaces and
#: lower-cased, a generated column the server keeps; not in the ORM model, SQLite has none
SEARCHED_TEXT = sa.literal_column("runs.searched_text", sa.Text)


def _word_found(word: str, dialect: str) -> Any:
    """The run's searched text holds ``word``: the fields :func:`app.storage.repository` joins
    (a typed word has no space, so it cannot span two), the SUT's and the station's looked up
    in their own small tables, the verdict words and QA disposition only when the word could be
    one of them. SQLite tests each column with its ASCII-folding ``LIKE`` (through the covering
    index ``ix_runs_listing``); PostgreSQL reads the columns joined and lower-cased once, when
    the row was written (:data:`SEARCHED_TEXT`): lower-casing them on every search cost
    ~150–250 ms per 100,000 runs (issue 27)."""
    pattern = _like(word)

    def found(column: Any) -> Any:
        return (column.like(pattern, escape="\\") if dialect == "sqlite"
                else sa.func.lower(column).like(pattern, escape="\\"))

    serial = sa.case((_text(s.Sut.serial) != "", "s/n " + s.Sut.serial), else_="")
    columns = (s.Run.uuid, s.Run.method_name, s.Run.method_version, s.Run.taxonomy, s.Run.lab,
               s.Run.operator, s.Run.status, s.Run.error)
    if dialect == "sqlite":
        either = [found(c) for c in columns]
    else:
        either = [SEARCHED_TEXT.like(pattern, escape="\\")]
    either.append(s.Run.sut_id.in_(sa.select(s.Sut.id).where(
        sa.or_(found(s.Sut.vendor), found(s.Sut.model), found(serial)))))
    either.append(s.Run.station_id.in_(sa.select(s.Station.id).where(found(s.Station.name))))
    if _may_name_verdict(word):
        either.append(s.Run.id.in_(_verdict_runs(word, found)))
    if _may_name_disposition(word):
        decided = _dispositions()
        either.append(s.Run.id.in_(sa.select(decided.c.run_id)
                                   .where(found(decided.c.disposition))))
    return sa.or_(*either)


def metric_value(name: str) -> Any:
    """A run's value of metric ``name`` (NULL: none, or not a number)."""
    return (sa.select(s.MetricRow.value)
            .where(s.MetricRow.run_id == s.Run.id, s.MetricRow.name == name)
            .correlate(s.Run).scalar_subquery())


def _order_by(order: HistoryOrder, verdicts: Any, dispositions: Any) -> list[Any]:
    """``ORDER BY`` terms for ``order``; the newest run first among equals."""
    if order.metric:
        value = metric_value(order.metric)
        terms = [sa.case((value.is_(None), 1), else_=0),  # no value: last either way
                 value.desc() if order.descending else value.asc()]
    else:
        keys = {"run": (s.Run.uuid,), "started": (s.Run.started_wall,),
                "sut": tuple(sa.func.lower(_text(c)) for c in (s.Sut.vendor, s.Sut.model,
                                                               s.Sut.serial)),
                "taxonomy": (s.Run.taxonomy,),
                "method": (s.Run.method_name, s.Run.method_version),
                "station": (sa.func.lower(_text(s.Station.name)),),
                "operator": (sa.func.lower(_text(s.Run.operator)),),
                "duration": (sa.func.coalesce(s.Run.duration_s, -1.0),),
                "lab": (s.Run.lab,)}
        if verdicts is not None:
            keys["status"] = (s.Run.status + _text(verdicts.c.suffix),)
        if dispositions is not None:
            keys["qa"] = (sa.func.coalesce(dispositions.c.disposition + " ("
                                           + dispositions.c.author + ")", "—"),)
        terms = [k.desc() if order.descending else k.asc() for k in keys[order.key]]
    return [*terms, s.Run.started_wall.desc(), s.Run.id.desc()]

