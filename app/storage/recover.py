"""Importing run journals into the database: at every open, and with ``storwatt db recover``.

A journal holds the events its writer could not commit (see :mod:`app.storage.writer`). The
import applies, in one transaction, the events numbered above the run's ``runs.stored_seq``
(all of them for a run the database does not have yet) with the writer's own code
(:mod:`app.storage.apply`), and deletes the file only after that transaction committed. So an
import interrupted at any point, or repeated, stores every event exactly once. A journal whose
writer is still running is locked and left alone. A damaged record is skipped and counted and
every intact record after it imported; a journal holding anything that could not be imported
(damaged records, an unreadable tail) is never deleted: it is renamed ``<name>.damaged``
beside the journals, out of the import's way, and the report names it.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.engine import Connection, make_url

from app.core.records import RunStatus
from app.sequencer import events as ev
from app.storage import schema as s
from app.storage.apply import Entry, RunState, apply_events
from app.storage.db import Database
from app.storage.errors import (CorruptDatabaseError, DatabaseLockedError,
                                DatabaseUnreachableError, DiskFullError, StorageError,
                                classify)
from app.storage.identity import database_id
from app.storage.interrupted import interrupt_run
from app.storage.journal import (SUFFIX, JournalContents, JournalError, JournalInUseError,
                                 database_key, journal_dir, open_for_import, read_header,
                                 read_journal)

log = logging.getLogger(__name__)

UNFINISHED = "its run journal, imported now, ends before the run did"


@dataclass(frozen=True)
class ImportResult:
    path: Path
    run_id: str
    applied: int  # events stored by this import
    already: int  # events the database had already
    power_samples: int  # power samples among the applied events
    torn_at: int | None  # byte offset of an unreadable tail
    damaged: tuple[tuple[int, int], ...] = ()  # (offset, bytes) of damaged records skipped
    kept_as: Path | None = None  # where the journal was kept because it was not all readable

    def describe(self) -> str:
        text = (f"run {self.run_id}: {self.applied} events ({self.power_samples} power samples) "
                f"imported from {self.path}")
        if self.already:
            text += f"; {self.already} were already in the database"
        if self.damaged:
            where = ", ".join(f"{n} bytes at byte {at}" for at, n in self.damaged[:5])
            more = f" and {len(self.damaged) - 5} more" if len(self.damaged) > 5 else ""
            text += (f"; {len(self.damaged)} damaged record stretch"
                     f"{'es' if len(self.damaged) > 1 else ''} could not be read and "
                     f"{'were' if len(self.damaged) > 1 else 'was'} skipped ({where}{more}): "
                     "every intact record after them was imported")
        if self.torn_at is not None:
            text += (f"; the bytes from byte {self.torn_at} on could not be read (cut short by "
                     "a crash while written, or damaged) and are not imported")
        if self.kept_as is not None:
            text += f"; the journal is kept as {self.kept_as}"
        return text


@dataclass(frozen=True)
class NotImported:
    """A journal the database could not take: which run, why, that the journal is kept
    (the import is one transaction: nothing of it was stored, nothing of the file removed),
    and what the technician can do next (issue 24: "never lost, with a clear message")."""

    path: Path
    why: str  # the storage error, as it was raised
    run_id: str = ""  # "" when the journal's header cannot be read
    started: str = ""  # when the run's journal was opened (its start), UTC
    advice: str = ""

    def describe(self) -> str:
        if not self.run_id:  # nothing names the run: the file is all there is to go by
            return f"{self.path}: NOT imported, the journal is kept: {self.why}"
        started = f" (started {self.started})" if self.started else ""
        return (f"run {self.run_id}{started}: NOT imported, the journal is kept unchanged at "
                f"{self.path} (nothing of the run is lost): {self.why}"
                + (f" — to store it: {self.advice}" if self.advice else ""))


def not_imported(path: Path, exc: Exception, url: str) -> NotImported:
    """What to tell about ``path`` that failed to import into the database at ``url``."""
    try:
        header = read_header(path)
    except (JournalError, OSError):
        return NotImported(path, str(exc))
    return NotImported(path, str(exc), header.run_id, header.created_wall,
                       _advice(exc, url, path))


def _advice(exc: Exception, url: str, path: Path) -> str:
    """The next step for each kind of storage error; '' where the error already says it
    (a journal of another database names the command itself)."""
    again = f"storwatt db recover --db {_shown(url)} --journal {path}"
    if isinstance(exc, JournalError):
        return ""
    if isinstance(exc, DatabaseLockedError):
        return f"close the program holding the database, then {again}"
    if isinstance(exc, DiskFullError):
        return f"free space on the database's disk, then {again}"
    if isinstance(exc, DatabaseUnreachableError):
        return f"once the database can be opened and written again, {again}"
    if isinstance(exc, CorruptDatabaseError):
        return f"restore the database from a backup (or move it aside), then {again}"
    if isinstance(exc, OSError):
        return f"make the journal file readable, then {again}"
    # the database refused the run's data: trying again changes nothing
    return ("the database refused the run's data, so importing again into it changes "
            "nothing; import the journal into a new station file instead (storwatt db "
            f"recover --db sqlite:///PATH/rescued.db --journal {path}), copy the run on with "
            "storwatt db copy once the cause is fixed, and keep the journal until then")


def _shown(url: str) -> str:
    """The URL as a command to retype may show it: a server password masked."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except sa.exc.ArgumentError:
        return url


@dataclass(frozen=True)
class RecoveryReport:
    imported: tuple[ImportResult, ...] = ()
    in_use: tuple[Path, ...] = ()  # journals a running StorWatt still writes
    failed: tuple[NotImported, ...] = ()  # journals left in place, why, and what to do

    def lines(self) -> list[str]:
        out = [r.describe() for r in self.imported]
        out += [f"{p}: in use by a running StorWatt; imported after that run ends"
                for p in self.in_use]
        out += [f.describe() for f in self.failed]
        return out


def journals_for(url: str, directory: Path | None = None,
                 holds_run: Callable[[str], bool] = lambda run_id: False) -> list[Path]:
    """Journals in the station's journal folder that belong to the database at ``url``
    (and those whose header cannot be read, so they are reported rather than forgotten).

    A journal also belongs here when ``holds_run`` says this database has its run and the
    SQLite file its header names is gone: the database's folder was renamed or moved while the
    run went on (issue 25: ``db recover --db NEW`` found nothing, the journal naming the old
    path). Not while that file exists: a copy of a database must not take its journals."""
    folder = directory or journal_dir()
    if not folder.is_dir():
        return []
    key = database_key(url)
    found = []
    for path in sorted(folder.glob(f"*{SUFFIX}")):
        try:
            header = read_header(path)
        except (JournalError, OSError):
            found.append(path)
            continue
        if header.database == key or (_file_gone(header.database)
                                      and holds_run(header.run_id)):
            found.append(path)
    return found


def _file_gone(key: str) -> bool:
    """The SQLite file a journal header names no longer exists (False for a server URL)."""
    try:
        parsed = make_url(key)
    except sa.exc.ArgumentError:
        return False
    return (parsed.get_backend_name() == "sqlite" and parsed.database not in (None, "", ":memory:")
            and not Path(parsed.database).exists())


def _holds_run(database: Database) -> Callable[[str], bool]:
    def holds(run_id: str) -> bool:
        try:
            with database.engine.connect() as conn:
                return conn.execute(sa.select(s.Run.id).where(s.Run.uuid == run_id)).first() \
                    is not None
        except sa.exc.DBAPIError:
            return False
    return holds


def recover(database: Database, paths: Iterable[Path] | None = None) -> RecoveryReport:
    """Import ``paths`` (default: every journal of this database) into ``database``."""
    imported, in_use, failed = [], [], []
    found = journals_for(database.url, holds_run=_holds_run(database)) if paths is None else paths
    ours = _database_id(database) if paths is None else None
    for path in found:
        try:
            if ours is not None:
                _same_database(Path(path), ours, database.url)
            imported.append(import_journal(database, Path(path)))
        except JournalInUseError:
            in_use.append(Path(path))
        except (StorageError, OSError) as exc:
            failed.append(not_imported(Path(path), exc, database.url))
    return RecoveryReport(tuple(imported), tuple(in_use), tuple(failed))


def _database_id(database: Database) -> str:
    try:
        with database.engine.connect() as conn:
            return database_id(conn) or ""
    except sa.exc.SQLAlchemyError:
        return ""


def _same_database(path: Path, ours: str, url: str) -> None:
    """Refuse to import, by itself, a journal written for another database that had this
    path: one copied over the running station's (issue 25) must not take the run."""
    try:
        theirs = read_header(path).database_id
    except (JournalError, OSError):
        return  # the import names what is wrong with it
    if theirs and ours and theirs != ours:
        raise JournalError(
            f"it belongs to database {theirs[:8]}, which was at this path when the run was "
            f"written; {url} is now database {ours[:8]} (another database was copied over "
            "it). Import it where the run belongs: storwatt db recover --db URL --journal "
            f"{path}")


def recover_at_open(database: Database) -> RecoveryReport:
    """What opening the station does: import, never fail the open, say what happened."""
    report = recover(database)
    for line in report.lines():
        log.warning("run journal: %s", line)
    return report


def import_journal(database: Database, path: Path) -> ImportResult:
    """Import one journal and delete it — or, when some of it could not be read, keep it as
    ``<name>.damaged`` (raises JournalInUseError if a writer holds it)."""
    fd = open_for_import(path)
    try:
        contents = read_journal(path, fd)
        result = _store(database, contents)
    finally:
        os.close(fd)
    if contents.intact:
        path.unlink(missing_ok=True)
        return result
    return replace(result, kept_as=_keep_damaged(path))


def _keep_damaged(path: Path) -> Path:
    """Move a journal that held unreadable bytes out of the import's way, never over
    another file: everything readable is imported, the rest stays for inspection."""
    for n in range(1000):
        kept = path.with_name(f"{path.name}.damaged" + (f".{n}" if n else ""))
        try:
            os.link(path, kept)  # fails if ``kept`` exists: nothing is replaced
        except FileExistsError:
            continue
        except OSError:  # no hard links on this file system (FAT): rename, if still free
            if kept.exists():
                continue
            try:
                path.rename(kept)
            except OSError:
                return path  # kept under its own name; every open says so again
            return kept
        path.unlink()
        return kept
    return path


def _store(database: Database, contents: JournalContents) -> ImportResult:
    run_id = contents.header.run_id
    try:
        with database.engine.begin() as conn:
            row = conn.execute(sa.select(s.Run.id, s.Run.t0, s.Run.started_wall,
                                         s.Run.stored_seq).where(s.Run.uuid == run_id)).first()
            if row is None:
                state, done = RunState(), 0
            else:
                state = RunState.of_stored_run(row.id, row.started_wall)
                done = row.stored_seq or 0
            todo = [Entry(r.seq, r.event) for r in contents.records if r.seq > done
                    and not (row is not None and isinstance(r.event, ev.RunStarted))]
            if row is None and todo and not isinstance(todo[0].event, ev.RunStarted):
                raise JournalError(
                    f"run journal {contents.path} continues run {run_id}, which is not in "
                    f"{database.url}: import it into the database that run was stored in "
                    "(storwatt db recover --db URL --journal FILE)")
            state = apply_events(conn, state, todo)
            if state.pk is not None and todo:  # a journal of committed events changes nothing
                _settle(conn, state.pk, len(todo))
    except sa.exc.DBAPIError as exc:
        raise classify(exc, database.url) from exc
    return ImportResult(contents.path, run_id, len(todo), len(contents.records) - len(todo),
                        sum(len(e.event.samples) for e in todo
                            if isinstance(e.event, ev.PowerSamples)),
                        contents.torn_at, contents.damaged)


def _settle(conn: Connection, pk: int, applied: int) -> None:
    """A run still without its RunFinished after the import is over — its writer released
    the journal —: INTERRUPTED, with the duration and the phase of what is now stored."""
    status = conn.execute(sa.select(s.Run.status).where(s.Run.id == pk)).scalar()
    if status == RunStatus.RUNNING.value or (status == RunStatus.INTERRUPTED.value and applied):
        interrupt_run(conn, pk, UNFINISHED)
