"""The sender: a station's runs flow from its own database to the lab's PostgreSQL (issue 26).

Each station keeps its own durable record (its SQLite file and run journal) and the lab's
database is a *replica target*: what QA reviews. The sender copies each run's rows from the
station's database to the lab copy, while the run goes on and after it ends, and never holds
the run up — it runs on its own thread, reads the station's database like any reader, and
every wait on the server is bounded (:mod:`app.storage.server_link`).

**Where the lab copy ends.** Each push is one lab transaction per run, so the lab copy of a run
is always a consistent prefix of the station's. Rows of the append-only tables (samples,
workload slices, intervals, histograms, search results, the log) are sent from the
station's ``n``-th row of the run on, ``n`` being how many the lab copy holds — so a push
after an outage, after a crash of the station, or repeated after a commit whose answer was
lost, sends exactly what is missing. The few rows that change during a run (the run row,
phases, attempts, resumptions, metrics, instrument identities, power inputs) are replaced
as a whole. ``runs.stored_seq`` (the writer's number of the last event it stored) travels
with the run row, so comparing it on both sides says how far behind the lab copy is.

**One writer per run.** A push takes PostgreSQL's transaction-scoped advisory lock on the
run id, so two senders never interleave on one run; and only the station holding a run's
record has it to send (:mod:`app.storage.run_lock`). QA's audit entries are never touched.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
import zlib
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection

from app.core.paths import data_dir
from app.core.records import RunStatus
from app.core.station_settings import lab_database
from app.storage import schema as s
from app.storage.db import Database
from app.storage.errors import StorageError, classify
from app.storage.lab_link import lab_schema_refusal
from app.storage.opening import open_database
from app.storage.rights import REPLACED as RIGHTS_REPLACED
from app.storage.rights import check_write_rights
from app.storage.server_link import WRITER_TIMEOUTS, shown

log = logging.getLogger(__name__)

#: tables a run only ever adds rows to: sent from where the lab copy's rows end
APPENDED = tuple(m.__table__ for m in (
    s.PowerSampleRow, s.TemperatureSampleRow, s.PowerInputSampleRow, s.WorkloadIntervalRow,
    s.IntervalRow, s.HistogramRow, s.SearchResultRow, s.EventRow))
#: tables whose rows of a run change while it goes on: replaced as a whole (a few rows each;
#: the rights check asks DELETE on exactly these)
REPLACED = tuple(s.Base.metadata.tables[name] for name in RIGHTS_REPLACED)
#: rows of one table sent per push and run (a long outage catches up in several pushes)
BATCH_ROWS = 50_000
PUSH_INTERVAL_S = 2.0
STATE_FILE = "sender.json"
#: who recorded a state: a run's sender thread, or the ``storwatt db sync`` command
SENDER, SYNC_COMMAND = "the sender", "storwatt db sync"


@dataclass(frozen=True)
class Lag:
    """How far the lab copy of one run is behind the station's."""

    run_id: str
    status: str
    station_seq: int
    lab_seq: int | None  # None: the lab has no copy yet

    @property
    def events_behind(self) -> int:
        return self.station_seq - (self.lab_seq or 0)


@dataclass(frozen=True)
class SenderState:
    """What the sender last did, for ``storwatt db status`` and the station's health."""

    lab: str = ""
    last_success: str = ""  # ISO time of the last push that reached the lab
    last_error: str = ""  # why the last push failed ("" after a success)
    events_behind: int = 0  # over every run, after the last attempt
    by: str = ""  # who made the last attempt: "the sender" (a run's) or "db sync"

    def summary(self) -> str:
        """One short line for the run's end and the run view (the error: :attr:`last_error`)."""
        if self.last_error:
            return (f"Lab copy: not reaching {self.lab} since "
                    f"{self.last_success or 'the run began'}; the run is safe on this station "
                    "and the lab copy catches up later (storwatt db sync)")
        if self.events_behind or not self.last_success:
            return f"Lab copy: {self.events_behind} events behind, sending to {self.lab}"
        return f"Lab copy: up to date in {self.lab}"

    def lines(self) -> list[str]:
        """The last sync's outcome as ``storwatt db status`` prints it under the lab database
        it names (the state is only ever shown for the database it was recorded about)."""
        if not (self.last_success or self.last_error):
            return ["last sync      none recorded to this database (storwatt db sync, or a "
                    "run with the sender)"]
        return [f"last success   {self.last_success or 'never'}",
                f"last error     {self.last_error or '—'}",
                f"last attempt   by {self.by or SENDER}, {self.events_behind} events behind "
                "after it"]


def lag(station: Database, lab: Database) -> list[Lag]:
    """The station's runs the lab copy lacks, or holds only in part, oldest first."""
    with station.read() as conn:
        ours = conn.execute(sa.select(s.Run.uuid, s.Run.status, s.Run.stored_seq)
                            .order_by(s.Run.id)).all()
    with lab.read() as conn:
        theirs = {u: (st, q) for u, st, q in conn.execute(
            sa.select(s.Run.uuid, s.Run.status, s.Run.stored_seq)
            .where(s.Run.uuid.in_([r.uuid for r in ours])))}
    behind = []
    for uuid, status, seq in ours:
        copy = theirs.get(uuid)
        if copy is None or copy != (status, seq):
            behind.append(Lag(uuid, status, seq or 0, None if copy is None else copy[1] or 0))
    return behind


@dataclass(frozen=True)
class Push:
    """What one push of one run did."""

    rows: int  # rows sent (0: the lab copy was equal)
    more: bool  # rows are left for the next push (a batch was full)


def push_run(station: Database, lab: Database, run_id: str,
             memo: PushMemo | None = None) -> Push:
    """Send what the lab copy of ``run_id`` lacks (up to a batch per table), in one lab
    transaction. ``memo``: what this sender already sent (:class:`PushMemo`), kept only once
    the transaction committed."""
    seen = memo.begin(run_id) if memo is not None else _RunMemo()
    with station.read() as src:  # one snapshot of the station's record
        try:
            with lab.engine.begin() as dst:
                if dst.dialect.name == "postgresql":  # one sender per run at a time
                    dst.execute(sa.select(sa.func.pg_advisory_xact_lock(_lock_key(run_id))))
                push = _push(src, dst, run_id, seen)
        except sa.exc.SQLAlchemyError as exc:  # named after the lab, not the station
            if memo is not None:
                memo.forget(run_id)
            raise classify(exc, lab.url) from exc
    if memo is not None:
        memo.keep(run_id, seen)
    return push


def sync(station: Database, lab: Database, runs: Iterable[str] | None = None,
         memo: PushMemo | None = None) -> int:
    """Push every run the lab copy lacks (or ``runs``) until it holds them all; rows sent."""
    sent = 0
    for item in lag(station, lab):
        if runs is not None and item.run_id not in runs:
            continue
        while True:
            push = push_run(station, lab, item.run_id, memo)
            sent += push.rows
            if not push.more:
                break
    return sent


@dataclass
class _RunMemo:
    """What one sender last sent of one run: the rows of the replaced tables as the lab copy
    holds them, and the run row. Saves reading them back from the server at every push."""

    replaced: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    run_row: dict[str, Any] | None = None
    ids: dict[str, int | None] = field(default_factory=dict)  # station/SUT id → lab id


class PushMemo:
    """A sender's memory of what it sent, per run (issue 26, jitter): a push during a run
    then reads from the server only what it cannot know — the lab's row counts, in one
    statement — instead of every replaced row and the run row. It is dropped when a push
    fails (the server may have rolled back) and holds only what a committed push left; the
    lab copy of a run is written by this station's senders alone, from this same record."""

    def __init__(self) -> None:
        self._runs: dict[str, _RunMemo] = {}

    def begin(self, run_id: str) -> _RunMemo:
        known = self._runs.get(run_id)
        return _RunMemo(dict(known.replaced), known.run_row, dict(known.ids)) if known \
            else _RunMemo()

    def keep(self, run_id: str, memo: _RunMemo) -> None:
        self._runs[run_id] = memo

    def forget(self, run_id: str | None = None) -> None:
        if run_id is None:
            self._runs.clear()
        else:
            self._runs.pop(run_id, None)


def _lock_key(run_id: str) -> int:
    return zlib.crc32(run_id.encode("ascii")) - 2**31  # a signed 32-bit advisory lock key


def _push(src: Connection, dst: Connection, run_id: str, seen: _RunMemo) -> Push:
    run = src.execute(sa.select(s.Run.__table__).where(s.Run.uuid == run_id)).mappings().one()
    values = dict(run)
    local_pk = values.pop("id")
    values["station_id"] = _same_row(src, dst, s.Station.__table__, run["station_id"],
                                     ("name",), seen)
    values["sut_id"] = _same_row(src, dst, s.Sut.__table__, run["sut_id"],
                                 ("vendor", "model", "serial"), seen)
    lab_pk = dst.execute(sa.select(s.Run.id).where(s.Run.uuid == run_id)).scalar()
    sent = 0
    if lab_pk is None:  # says RUNNING at event 0 until every row up to its event is there
        first = {**values, "status": RunStatus.RUNNING.value, "stored_seq": 0}
        lab_pk = dst.execute(sa.insert(s.Run).values(**first).returning(s.Run.id)).scalar_one()
        seen.replaced.clear()
        seen.run_row = None
        sent += 1
    for table in REPLACED:
        sent += _replace(src, dst, table, local_pk, lab_pk, seen)
    complete = True
    held = _held(dst, lab_pk)
    for table in APPENDED:
        added, more = _append(src, dst, table, local_pk, lab_pk, held[table.name])
        sent += added
        complete = complete and not more
    if complete:  # the run row says "up to event N": only once every row up to N is there
        theirs = seen.run_row
        if theirs is None:
            theirs = dict(dst.execute(sa.select(s.Run.__table__).where(s.Run.id == lab_pk))
                          .mappings().one())
            theirs.pop("id")
        if theirs != values:
            dst.execute(sa.update(s.Run).where(s.Run.id == lab_pk).values(**values))
            sent += 1
        seen.run_row = values
    return Push(sent, not complete)


def _held(dst: Connection, lab_pk: int) -> dict[str, int]:
    """How many rows of each appended table the lab copy holds: one statement (a push in a
    running run costs the server one round trip here, not one per table)."""
    counts = [sa.select(sa.func.count()).select_from(t).where(t.c.run_id == lab_pk)
              .scalar_subquery().label(t.name) for t in APPENDED]
    return dict(dst.execute(sa.select(*counts)).mappings().one())


def _replace(src: Connection, dst: Connection, table: sa.Table, local_pk: int,
             lab_pk: int, seen: _RunMemo) -> int:
    rows = _rows(src, table, local_pk, lab_pk)
    theirs = seen.replaced.get(table.name)
    if theirs is None:
        theirs = _rows(dst, table, lab_pk, lab_pk)
    seen.replaced[table.name] = rows
    if rows == theirs:
        return 0
    dst.execute(table.delete().where(table.c.run_id == lab_pk))
    if rows:
        dst.execute(table.insert(), rows)
    return len(rows)


def _rows(conn: Connection, table: sa.Table, pk: int, as_pk: int) -> list[dict[str, Any]]:
    """A run's rows of ``table`` without their ids, in stored order, as run ``as_pk``'s."""
    out = []
    for row in conn.execute(sa.select(table).where(table.c.run_id == pk)
                            .order_by(table.c.id)).mappings():
        values = dict(row)
        values.pop("id", None)
        values["run_id"] = as_pk
        out.append(values)
    return out


def _append(src: Connection, dst: Connection, table: sa.Table, local_pk: int,
            lab_pk: int, held: int) -> tuple[int, bool]:
    """Send the run's rows of ``table`` after the lab copy's ``held`` rows; (rows sent, more
    left). A table without new rows costs one cheap station query."""
    newest = src.execute(sa.select(sa.func.count()).select_from(table)
                         .where(table.c.run_id == local_pk)).scalar_one()
    if newest <= held:
        return 0, False
    rows = []
    for row in src.execute(sa.select(table).where(table.c.run_id == local_pk)
                           .order_by(table.c.id).offset(held).limit(BATCH_ROWS + 1)).mappings():
        values = dict(row)
        values.pop("id", None)
        values["run_id"] = lab_pk
        rows.append(values)
    more = len(rows) > BATCH_ROWS
    rows = rows[:BATCH_ROWS]
    if rows:
        dst.execute(table.insert(), rows)
    return len(rows), more


def _same_row(src: Connection, dst: Connection, table: sa.Table, row_id: int | None,
              key: tuple[str, ...], seen: _RunMemo) -> int | None:
    """The lab's id of the station's row ``row_id`` (a station or SUT), created if missing;
    several stations sending at once may create it together, which ``ON CONFLICT`` absorbs."""
    if row_id is None:
        return None
    known = f"{table.name}:{row_id}"
    if known in seen.ids:
        return seen.ids[known]
    row = dict(src.execute(sa.select(table).where(table.c.id == row_id)).mappings().one())
    row.pop("id")
    where = [table.c[k] == row[k] for k in key]
    pk = dst.execute(sa.select(table.c.id).where(*where)).scalar()
    if pk is None:
        insert = (postgresql.insert if dst.dialect.name == "postgresql" else sqlite.insert)
        dst.execute(insert(table).values(**row).on_conflict_do_nothing())
        pk = dst.execute(sa.select(table.c.id).where(*where)).scalars().first()
    seen.ids[known] = pk
    return pk


# --- the sender thread -------------------------------------------------------------------------

def state_path() -> Path:
    return data_dir() / STATE_FILE


def read_state() -> SenderState:
    """The sender's last state as it saved it (another process may have run it)."""
    try:
        return SenderState(**json.loads(state_path().read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        return SenderState()


def state_for(url: str) -> SenderState:
    """The last recorded outcome of a sync to the lab database ``url``: what ``sender.json``
    holds when it was written about ``url``, else "never" — a state about another lab
    database (the one named before, or another ``--lab-db``) says nothing about this one."""
    state = read_state()
    return state if state.lab == shown(url) else SenderState(lab=shown(url))


def save_state(state: SenderState) -> None:
    """Record ``state`` for ``storwatt db status`` and the station's health; the sender's
    pushes and ``storwatt db sync`` both record their outcome here (another process reads it,
    so it is replaced whole). A state that cannot be saved is logged, never raised."""
    try:
        path = state_path()
        partial = path.with_name(path.name + f".{os.getpid()}.{threading.get_ident()}.partial")
        partial.write_text(json.dumps(asdict(state)), encoding="utf-8")
        partial.replace(path)
    except OSError as exc:
        log.warning("lab sender: its state could not be saved: %s", exc)


class Sender:
    """Pushes the station's runs to the lab database every ``interval_s`` on its own thread.

    Nothing here ever waits on the run: the run writer stores into the station's database and
    the sender reads from it. A failed push (server down, frozen, refused) is recorded in
    :attr:`state` and tried again at the next interval; :meth:`stop` makes a last push and
    returns within ``final_wait_s`` whatever the server does.
    """

    def __init__(self, station: Database, lab_url: str, *,
                 interval_s: float = PUSH_INTERVAL_S,
                 opener: Callable[[str], Database] | None = None) -> None:
        self.station = station
        self.lab_url = lab_url
        self.interval_s = interval_s
        self._open_lab = opener or open_lab
        self._lab: Database | None = None
        self._stop = threading.Event()
        self._state = SenderState(lab=shown(lab_url), by=SENDER)
        self._memo = PushMemo()  # what it sent: read back from the server only once
        self._thread = threading.Thread(target=self._loop, name="lab-sender", daemon=True)

    @property
    def state(self) -> SenderState:
        return self._state

    def start(self) -> Sender:
        self._thread.start()
        return self

    def stop(self, final_wait_s: float = 10.0) -> SenderState:
        """A last push (the run's end), bounded; returns the state it left."""
        self.request_stop()
        self._thread.join(final_wait_s)
        return self._state

    def request_stop(self) -> None:
        """Make the last push and end, without waiting here (a GUI thread must not)."""
        self._stop.set()

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def _loop(self) -> None:
        self.push_once()
        while not self._stop.wait(self.interval_s):
            self.push_once()
        self.push_once()  # asked to stop: the run's last rows
        if self._lab is not None:
            self._lab.close()

    def push_once(self) -> None:
        """One round over every run behind; records the outcome (never raises)."""
        try:
            if self._lab is None:
                lab = self._open_lab(self.lab_url)
                try:
                    check_write_rights(lab)  # a role that cannot write: said at once
                except StorageError:
                    lab.close()
                    raise
                self._lab = lab
            sync(self.station, self._lab, memo=self._memo)
            behind = 0  # every run is in the lab copy as of this push's snapshot of it
            self._record(SenderState(shown(self.lab_url), _now(), "", behind, SENDER))
        except (StorageError, sa.exc.SQLAlchemyError, OSError) as exc:
            log.warning("lab sender: %s", exc)
            self._memo.forget()
            if self._lab is not None:
                self._lab.close()
                self._lab = None
            self._record(replace_error(self._state, str(exc)))

    def _record(self, state: SenderState) -> None:
        self._state = state
        save_state(state)


def sender_for(database: Database, url: str | None = None) -> Sender | None:
    """A started sender copying the runs recorded in ``database`` to ``url`` (default: the
    station's lab database); None when none is named, or when the run is recorded in the lab
    database directly (``--db`` naming it)."""
    url = lab_database() if url is None else url
    if not url or url == database.url:
        return None
    return Sender(database, url).start()


def replace_error(state: SenderState, error: str, by: str = SENDER) -> SenderState:
    return SenderState(state.lab, state.last_success, error, state.events_behind, by)


def open_lab(url: str) -> Database:
    """The lab database as the sender writes it: the writer's short bounds on the server, no
    journal import (the station's journals belong to its own database), no status changes
    (the lab copy follows the station's record)."""
    try:
        return open_database(url, recover_journals=False, interrupt_orphans=False,
                             server_timeouts=WRITER_TIMEOUTS)
    except StorageError as exc:  # an older lab schema the station role may not upgrade
        raise lab_schema_refusal(url, exc) from exc


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())

