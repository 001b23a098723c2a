"""The run writer: turns sequencer events into rows without ever blocking the sequencer.

``RunWriter(database)`` is a :class:`~app.sequencer.events.RunListener`: calling it only puts
the event on a queue. One writer thread, with its own connection, takes everything queued,
applies it in one transaction (:mod:`app.storage.apply`) and commits at least every
``commit_interval_s`` — so a crash of the station loses at most about a second of samples.

Nothing is dropped when the database fails. When a run starts, its journal
(:mod:`app.storage.journal`) is pre-allocated for the planned run. If a commit fails (disk
full, database locked) the transaction is rolled back, the events stay pending **and are
written to the journal**, as is every event arriving while the failure lasts; :attr:`failed`
turns True, ``on_error`` is called once, and the writer retries the database until it works.
Once the database holds every event the journal is emptied, and deleted when its run ends.
:meth:`RunWriter.close` waits (bounded) for the database and returns a :class:`Durability`
saying where the run is: in the database, or in the journal for ``storwatt db recover`` (or
the next start, which imports it). Only events neither could take raise :class:`WriterError`.

Journalling only on failure (not ahead of every commit) keeps a healthy run at the ingest rate
it had before; bench/bench_storage.py measures both paths.

A write that neither completes nor fails (a disk that stopped completing writes: ``fsfreeze``,
a hung NFS or USB disk) raises nothing, so the writer also says how long its current write has
been under way (:meth:`RunWriter.stalled_s`, in real time) and how many samples it
holds that are not stored (:meth:`RunWriter.held`): the session announces a stall past its
bound (``app.station.storage_stall``, issue 40 §5).
"""

from __future__ import annotations

import logging
import queue
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from app.core.records import RunStatus
from app.sequencer import events as ev
from app.storage import schema as s
from app.storage.apply import STORAGE, Entry, RunState, apply_events, beat_run
from app.storage.db import Database
from app.storage.deleted import FileIdentity, let_go_of_replaced, restore_from_connection
from app.storage.errors import (DiskFullError, DurabilityLostError, StorageError, WriterError,
                                classify)
from app.storage.journal import (JournalError, JournalFile, journal_path, new_header,
                                 reserve_bytes)
from app.storage.liveness import HEARTBEAT_INTERVAL_S
from app.storage.identity import database_id
from app.storage.overwritten import DatabaseReplacedError, HeaderWatch, let_go_of_overwritten
from app.storage.run_lock import RunLock, RunLockError

log = logging.getLogger(__name__)

COMMIT_INTERVAL_S = 0.5  # ≤ 1 s of samples at risk in a crash (brief: "at most ~1 s")
RETRY_INTERVAL_S = 1.0
#: Sizes the journal reservation when the caller does not say (the demo method's 5 Hz).
DEFAULT_SAMPLES_PER_S = 5.0
ErrorCallback = Callable[[StorageError], None]
SAMPLE_EVENTS = (ev.PowerSamples, ev.TemperatureSamples)


@dataclass(frozen=True)
class Held:
    """Samples the writer received that no commit has stored yet, and how many of those its
    run journal holds (the rest are in memory only)."""

    samples: int
    in_journal: int


@dataclass(frozen=True)
class Durability:
    """Where :meth:`RunWriter.close` left the runs it was given."""

    database: str
    journals: tuple[Path, ...] = ()  # journals holding events the database does not have
    events: int = 0  # events only in those journals
    samples: int = 0  # power and temperature samples among them
    error: StorageError | None = None  # why the database did not take them

    @property
    def in_database(self) -> bool:
        return not self.journals

    def message(self) -> str:
        """One sentence for the technician: where the run is and what to do."""
        if self.in_database:
            return f"stored in {self.database}"
        where = ", ".join(str(p) for p in self.journals)
        if isinstance(self.error, DiskFullError):
            return (f"disk full: {self.samples} samples kept in JOURNAL {where}; free space on "
                    f"the disk holding {self.database}, then import with storwatt db recover")
        if isinstance(self.error, DatabaseReplacedError):
            return (f"run stored in JOURNAL {where}: {self.error}. Import it into the database "
                    f"it belongs in: storwatt db recover --db URL --journal {where}")
        return (f"run stored in JOURNAL {where}; import with storwatt db recover once the "
                f"database works again ({self.error})")


class _Flush:
    def __init__(self) -> None:
        self.done = threading.Event()


_STOP = object()


class RunWriter:
    """Durable, non-blocking storage of one or more runs' events (see module docstring)."""

    def __init__(self, database: Database, *, on_error: ErrorCallback | None = None,
                 commit_interval_s: float = COMMIT_INTERVAL_S,
                 retry_interval_s: float = RETRY_INTERVAL_S,
                 samples_per_s: float = DEFAULT_SAMPLES_PER_S,
                 journal_dir: Path | None = None, lock_dir: Path | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.database = database
        #: a disk stalls in real seconds, whatever clock the run is on (a test's fake clock
        #: runs a plan at CPU speed: a commit's milliseconds would be whole seconds of it)
        self.clock = clock
        self.on_error = on_error
        self.commit_interval_s = commit_interval_s
        self.retry_interval_s = retry_interval_s
        self.samples_per_s = samples_per_s
        self.journal_dir = journal_dir
        self.lock_dir = lock_dir
        self._locks: dict[str, RunLock] = {}  # runs this writer owns (app.storage.run_lock)
        self._finished: set[str] = set()  # runs whose RunFinished was received
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._pending: list[tuple[str | None, Entry]] = []  # (run id, entry)
        self._seq = 0
        self._samples_in = 0  # samples received (listener side)
        self._samples_stored = 0  # samples committed (writer side)
        self._writing_since: float | None = None  # clock() when the write under way began
        self._writes = 0  # writes begun: names the one under way
        self._spilled = 0  # highest sequence number written to a journal
        self._run: str | None = None  # run of the last RunStarted taken
        self._journals: dict[str, JournalFile] = {}
        self._reserve: dict[str, int] = {}  # run id → bytes to pre-allocate
        self._journal_error: JournalError | None = None
        self._state = RunState()
        self._error: StorageError | None = None
        self._failed = False
        self._closed = False
        self._wait_s = 0.0  # how long close() waits for a failing database
        self._durability: Durability | None = None
        self._abandon = threading.Event()
        self._engine = database.writer_engine()
        self._file = FileIdentity.of(database.url)  # to notice the file deleted under us
        #: to notice another database copied over ours (same inode; app.storage.overwritten)
        self._header: HeaderWatch | None = None
        self._replaced: DatabaseReplacedError | None = None  # set once: never written again
        self._database_id = ""  # named in the run's journal
        self._identify()
        self._crash: BaseException | None = None
        self._lost: DurabilityLostError | None = None  # reported once (see _durability_lost)
        self._thread = threading.Thread(target=self._run_thread, name="run-writer",
                                        daemon=True)
        self._thread.start()

    # --- listener side (sequencer thread) ----------------------------------------------------
    def __call__(self, event: ev.RunEvent) -> None:
        if STORAGE.ignores(type(event)):
            return  # the record keeps nothing of it (app.storage.apply says why)
        if self._closed:
            raise WriterError("the run writer is closed: the event was not stored")
        if isinstance(event, SAMPLE_EVENTS):
            self._samples_in += len(event.samples)
        self._queue.put(event)

    def stalled_s(self) -> float:
        """How long the writer's round of writes under way (commit, journal, heartbeat) has
        taken so far (:attr:`clock` seconds); 0 while it waits for events."""
        since = self._writing_since
        return 0.0 if since is None else max(self.clock() - since, 0.0)

    @property
    def write_under_way(self) -> int:
        """The number of the write under way (each write has its own), 0 between writes: a
        stall ends when this changes, even if the next write starts at once."""
        return self._writes if self._writing_since is not None else 0

    def held(self) -> Held:
        """The samples received and not yet committed, and those of them in the journal
        (read from another thread while the writer is blocked: a snapshot, not a lock)."""
        journaled = sum(len(e.event.samples) for run, e in list(self._pending)
                        if run is not None and e.seq <= self._spilled
                        and isinstance(e.event, SAMPLE_EVENTS))
        held = max(self._samples_in - self._samples_stored, 0)
        return Held(held, min(journaled, held))

    @contextmanager
    def _writing(self) -> Iterator[None]:
        """A round of writes (:meth:`stalled_s` counts from its start)."""
        self._writes += 1
        self._writing_since = self.clock()
        try:
            yield
        finally:
            self._writing_since = None

    @contextmanager
    def _waiting(self) -> Iterator[None]:
        """A pause inside a round of writes; what follows it is a round of its own."""
        self._writing_since = None
        try:
            yield
        finally:
            self._writes += 1
            self._writing_since = self.clock()

    @property
    def failed(self) -> bool:
        """True while the last commit attempt failed (events are pending, being retried)."""
        return self._failed

    @property
    def error(self) -> StorageError | None:
        """The most recent storage error (kept after recovery for the log)."""
        return self._error

    @property
    def journal_error(self) -> JournalError | None:
        """The most recent journal problem (no reservation, unwritable journal), if any."""
        return self._journal_error

    @property
    def lost(self) -> DurabilityLostError | None:
        """Set once neither the database nor a journal can keep the run (or the thread died)."""
        return self._lost

    def reserve_journal(self, run_id: str, planned_s: float) -> Path:
        """Create and pre-allocate the run's journal now, on the caller's thread, before the
        run starts: a run that could not be kept should the database fail is refused here
        (:class:`JournalError` naming the space needed, where, and what is free) instead of
        measuring on with its events in memory only (issue 40 §1)."""
        self._reserve[run_id] = reserve_bytes(planned_s, self.samples_per_s)
        try:
            journal = self._journal(run_id)
        except JournalError as exc:
            free = _free_space(journal_path(run_id, self.journal_dir).parent)
            raise JournalError(f"the run was not started: {exc}{free}; a run never measures "
                               "without the space to keep its data — free space on that "
                               "disk, or set STORWATT_DATA_DIR to a folder on a larger "
                               "one") from exc
        return journal.path

    def adopt_lock(self, lock: RunLock) -> None:
        """Own the run whose lock the caller took (a continuation takes it before claiming
        the run); call before the run's first event. Released when the writer closes."""
        self._locks[lock.run_id] = lock

    @property
    def backlog(self) -> int:
        """Events received but not yet committed."""
        return self._queue.qsize() + len(self._pending)

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until everything queued so far is committed; False on timeout or failure."""
        marker = _Flush()
        self._queue.put(marker)
        return marker.done.wait(timeout) and not self._failed

    def close(self, timeout: float = 10.0) -> Durability:
        """Store everything queued and stop the thread, waiting up to ``timeout`` s for the
        database; what it did not take by then stays in the journal (see :class:`Durability`).
        Raises :class:`WriterError` only for events that are in neither."""
        if self._durability is not None:
            return self._durability
        self._wait_s, self._closed = timeout, True
        if self._failed:
            log.warning("run writer: waiting up to %.0f s for the database (%s); %s",
                        timeout, self._error, self._where_kept())
        self._queue.put(_STOP)
        self._thread.join(timeout)
        if self._thread.is_alive():
            self._abandon.set()
            self._thread.join(self.retry_interval_s + self.database.longest_wait_s + 5.0)
        self._engine.dispose()
        self._durability = self._outcome()
        return self._durability

    def _outcome(self) -> Durability:
        url = self.database.url
        # events before any RunStarted are never stored (the database ignores them too)
        left = [entry for run, entry in self._pending if run is not None]
        stuck = self._thread.is_alive() or self._crash is not None
        if not left and not stuck:
            return Durability(url)
        unjournaled = sum(1 for e in left if e.seq > self._spilled) + self._queue.qsize()
        if unjournaled or stuck:
            why = self._error or self._crash or "the writer did not finish in time"
            raise WriterError(
                f"{max(unjournaled, 1)} run events could not be stored in {url} nor in the run "
                f"journal: {why}"
                + (f"; journal: {self._journal_error}" if self._journal_error else ""))
        journals = tuple(sorted({journal_path(run, self.journal_dir)
                                 for run, e in self._pending if run is not None}))
        samples = sum(len(e.event.samples) for e in left
                      if isinstance(e.event, (ev.PowerSamples, ev.TemperatureSamples)))
        return Durability(url, journals, len(left), samples, self._error)

    # --- writer thread ---------------------------------------------------------------------
    def _where_kept(self) -> str:
        """Where the events not yet in the database are, as far as this writer checked."""
        held = self.backlog
        journaled = sum(1 for run, e in self._pending if run is not None and e.seq <= self._spilled)
        journal = self._journals.get(self._run) if self._run else None
        if journal is not None and journaled and journaled == held:
            return f"{held} events are in the run journal {journal.path} meanwhile"
        why = f" ({self._journal_error})" if self._journal_error else ""
        if journal is not None and journaled:
            return (f"{journaled} of {held} events are in the run journal {journal.path}, the "
                    f"rest in memory only{why}")
        return f"{held} events are held in memory only{why}"

    def _run_thread(self) -> None:
        try:
            self._loop()
        except BaseException as exc:  # close() must learn that events are stuck
            log.exception("run writer: stopped by an unexpected error")
            self._crash = exc
            self._durability_lost(f"the run writer stopped: {type(exc).__name__}: {exc}")
        finally:
            self._release_locks()

    def _durability_lost(self, why: str) -> None:
        """Nothing can keep the run's events any more: say so once, through ``on_error`` (the
        session stops the run FAILED with this message; every committed sample stays)."""
        if self._lost is not None:
            return
        self._lost = DurabilityLostError(
            f"run stopped: its data can no longer be kept: {why}; {self._where_kept()}")
        log.error("run writer: %s", self._lost)
        self._notify(self._lost)

    def _loop(self) -> None:
        last_commit = time.monotonic()
        flushes: list[_Flush] = []
        stopping = False
        while True:
            wait = self.commit_interval_s - (time.monotonic() - last_commit)
            idle_wait = HEARTBEAT_INTERVAL_S if self._state.pk is not None else None
            # once stopping nothing more is coming: a retry waits retry_interval_s (below),
            # not the rest of a commit interval on an empty queue
            stopping |= self._take(0.01 if stopping else max(wait, 0.01) if self._pending
                                   else idle_wait, flushes)
            with self._writing():  # every write of this round: commit, journal, beat
                if self._failed:
                    self._spill()  # while the database fails, every event goes to the journal
                now = time.monotonic()
                due = now - last_commit >= self.commit_interval_s or flushes or stopping
                if self._pending and due:
                    if self._commit():
                        last_commit = now
                    else:
                        self._spill()
                        if self._replaced is not None and stopping:
                            break  # never writable again: the run is whole in its journal
                        with self._waiting():  # a retry's pause is no write under way
                            abandoned = self._abandon.wait(self.retry_interval_s)
                        if abandoned:
                            self._take(0.001, flushes)
                            self._spill()
                            break
                elif self._state.pk is not None and now - last_commit >= HEARTBEAT_INTERVAL_S:
                    self._beat()  # idle (a paused run): still alive, not to be taken for crashed
                    last_commit = now
                if not self._pending:
                    for marker in flushes:
                        marker.done.set()
                    flushes.clear()
                    if stopping:
                        self._release_run()
                        break
        for journal in self._journals.values():
            try:
                journal.close()  # kept for the import: it holds events the database lacks
            except JournalError as exc:
                self._journal_problem(exc)
        for marker in flushes:
            marker.done.set()

    def _take(self, timeout: float | None, flushes: list[_Flush]) -> bool:
        """Move queued events to ``_pending`` (waiting up to ``timeout`` for the first);
        returns True when a stop request was seen."""
        stopping = False
        try:
            item = self._queue.get(timeout=timeout)
            while True:
                if item is _STOP:
                    stopping = True
                elif isinstance(item, _Flush):
                    flushes.append(item)
                else:
                    self._add(item)
                item = self._queue.get_nowait()
        except queue.Empty:
            pass
        return stopping

    def _add(self, event: ev.RunEvent) -> None:
        if isinstance(event, ev.RunResumed):  # numbered above what the record holds
            self._seq = max(self._seq, event.after_seq)
        started = event.started if isinstance(event, ev.RunResumed) else event
        if isinstance(started, ev.RunStarted):
            self._run = started.run_id
            self._own(started.run_id, resumed=isinstance(event, ev.RunResumed))
            self._reserve[started.run_id] = reserve_bytes(started.planned_s, self.samples_per_s)
            try:
                self._journal(started.run_id)  # reserve the space now, before a disk fills up
            except JournalError:
                pass  # reported; a later spill tries again
        if isinstance(event, ev.RunFinished) and self._run is not None:
            self._finished.add(self._run)
        self._seq += 1
        self._pending.append((self._run, Entry(self._seq, event)))

    def _own(self, run_id: str, *, resumed: bool) -> None:
        """Hold the run's lock for its life before its first row is stored: it is what makes
        this process the run's one writer (:mod:`app.storage.run_lock`)."""
        if run_id in self._locks:
            return
        try:
            take = RunLock.take if resumed else RunLock.create
            self._locks[run_id] = take(run_id, self.lock_dir)
        except RunLockError as exc:
            log.error("run writer: %s; without its lock no process of this station can "
                      "later mark the run INTERRUPTED or resume it", exc)

    def _release_locks(self) -> None:
        """Give up the locks still held: a finished run's file goes, a run cut short keeps
        it so that this station can mark it INTERRUPTED and resume it."""
        stored = not self._pending
        for run_id, lock in list(self._locks.items()):
            lock.release(finished=stored and run_id in self._finished)
            del self._locks[run_id]

    def _journal(self, run_id: str) -> JournalFile:
        journal = self._journals.get(run_id)
        if journal is None:
            size = self._reserve[run_id]
            try:
                journal = JournalFile.create(journal_path(run_id, self.journal_dir),
                                             new_header(run_id, self.database.url, size,
                                                        self._database_id))
            except JournalError as exc:
                self._journal_problem(exc)
                raise
            self._journals[run_id] = journal
        return journal

    def _journal_problem(self, exc: JournalError) -> None:
        if str(exc) != str(self._journal_error):
            log.error("run writer: %s; should the database fail, events are kept in memory "
                      "only", exc)
        self._journal_error = exc

    def _spill(self, *, durable: bool = True) -> None:
        """Write pending events not yet journaled to their run's journal, in order
        (``durable``: on the disk before returning)."""
        todo = [(run, e) for run, e in self._pending if e.seq > self._spilled]
        start = 0
        while start < len(todo):
            run = todo[start][0]
            end = start
            while end < len(todo) and todo[end][0] == run:
                end += 1
            if run is not None:  # events before any RunStarted are not stored at all
                try:
                    self._journal(run).append(((e.seq, _journal_form(e.event))
                                               for _, e in todo[start:end]), durable=durable)
                except JournalError as exc:
                    self._journal_problem(exc)
                    if self._failed:  # the database failed too: nothing keeps the run now
                        self._durability_lost(f"{self._error}; and {exc}")
                    return
            self._spilled = todo[end - 1][1].seq
            start = end

    def _commit(self) -> bool:
        """Apply all pending events in one transaction; on failure keep them for a retry."""
        try:
            self._check_file()
            with self._engine.begin() as conn:
                state = apply_events(conn, self._state, [e for _, e in self._pending])
        except DatabaseReplacedError as exc:
            self._report(exc)
            return False
        except Exception as exc:  # noqa: BLE001 - any failure must keep the events
            self._report(classify(exc, self.database.url))
            return False
        recovered = self._failed
        self._state = state
        self._samples_stored += sum(len(e.event.samples) for _, e in self._pending
                                    if isinstance(e.event, SAMPLE_EVENTS))
        if not self._database_id:
            self._identify()  # the database failed when the writer started
        self._failed = False  # before the write-behind: its journal is not the only copy
        if self._header is not None:
            self._header.seen()
            self._write_behind()
        self._pending.clear()
        self._retire_journals()
        for run_id in self._finished & self._locks.keys():  # its end is stored
            self._locks.pop(run_id).release(finished=True)
        if recovered:
            log.warning("run writer: the database works again; every kept event is stored")
        return True

    def _identify(self) -> None:
        """Learn which database this is (its id, and for a SQLite file what its header
        says); a database failing now leaves it to the first commit that works."""
        try:
            with self._engine.connect() as conn:
                self._database_id = database_id(conn) or ""
            self._header = HeaderWatch.of(self._file.path if self._file else None,
                                          self._engine)
        except Exception as exc:  # noqa: BLE001 - any failure: the commit path reports it
            log.debug("run writer: the database's identity not read yet: %s", exc)

    def _check_file(self) -> None:
        """Put a database file deleted under the run back before committing into it
        (``app.storage.deleted``); raises :class:`DatabaseDeletedError` if it cannot be.
        Raises :class:`DatabaseReplacedError`, now and at every later commit, once another
        database was copied over ours (``app.storage.overwritten``)."""
        if self._replaced is not None:
            raise self._replaced
        if self._file is None:
            return
        if self._file.still_there():
            if self._header is not None:
                try:
                    self._header.check()
                except DatabaseReplacedError as exc:
                    self._replaced = exc
                    let_go_of_overwritten(self._file.path, self._engine, self.database.engine)
                    raise
            return
        if self._file.replaced():  # another file moved in: never let our WAL touch it
            let_go_of_replaced(self._file, self._engine, self.database.engine)
        self._file = restore_from_connection(self._engine, self._file)
        self.database.engine.dispose()  # readers too: the unlinked file is left behind
        log.warning("run writer: the database file %s was deleted under the running station; "
                    "restored from the open connection, nothing lost", self._file.path)

    def _write_behind(self) -> None:
        """A SQLite file can be overwritten in place (``cp other.db``) and take the run's
        committed rows with it; so its journal also keeps what was committed, written after
        the commit without waiting for the disk (only a live process needs it: a crash or
        power cut leaves the file itself). ``_pending`` is what was just committed."""
        self._spill(durable=False)

    def _retire_journals(self) -> None:
        """Everything is in the database: empty the current run's journal (its reservation
        stays for the next failure) — unless it keeps the committed events too
        (:meth:`_write_behind`) —, delete those of earlier runs."""
        for run, journal in list(self._journals.items()):
            try:
                if run == self._run:
                    if self._header is None:
                        journal.reset()
                    continue
                del self._journals[run]
                journal.discard()
            except JournalError as exc:  # the database has the events: only said
                self._journal_problem(exc)

    def _report(self, error: StorageError) -> None:
        first = not self._failed or (isinstance(error, DatabaseReplacedError)
                                     and not isinstance(self._error, DatabaseReplacedError))
        self._failed, self._error = True, error
        if first:
            journal = self._journals.get(self._run)
            where = (f"JOURNAL {journal.path}" if journal else
                     f"memory only (no journal: {self._journal_error})")
            if isinstance(error, DiskFullError):
                samples = sum(len(e.event.samples) for _, e in self._pending
                              if isinstance(e.event, (ev.PowerSamples, ev.TemperatureSamples)))
                kept = f"disk full: {samples} samples kept in {where} ({error})"
            else:
                kept = f"{error} — {len(self._pending)} events kept in {where}"
            # failing while the run ends: the wait for it is said before it begins (issue 40)
            waits = (f"; the run's end waits up to {self._wait_s:.0f} s for the database before "
                     "leaving the rest where it is kept") if self._closed else ""
            log.error("run writer: %s; retrying every %g s%s", kept, self.retry_interval_s,
                      waits)
            self._notify(error)

    def _notify(self, error: StorageError) -> None:
        if self.on_error:
            try:
                self.on_error(error)
            except Exception:  # a broken callback must not stop storage
                log.exception("run writer error callback failed")

    def _beat(self) -> None:
        """Refresh the heartbeat of a run with nothing to store; a failure here is left to
        the next real commit to report."""
        try:
            with self._engine.begin() as conn:
                beat_run(conn, self._state.pk)
        except Exception as exc:  # noqa: BLE001 - retried at the next beat
            log.debug("run writer: heartbeat not stored: %s", exc)

    def _release_run(self) -> None:
        """Closing: delete emptied journals; a run closed before RunFinished is given up so
        the next open marks it INTERRUPTED."""
        for journal in self._journals.values():
            try:
                journal.discard()
            except JournalError as exc:  # every event is in the database: only said
                self._journal_problem(exc)
        self._journals.clear()
        if self._state.pk is None:
            return
        try:
            with self._engine.begin() as conn:
                conn.execute(sa.update(s.Run).where(s.Run.id == self._state.pk)
                             .where(s.Run.status == RunStatus.RUNNING.value)
                             .values(writer_pid=None))
        except Exception as exc:  # noqa: BLE001 - reopening recovers it by pid anyway
            log.warning("run writer: could not release the run: %s", exc)


def _free_space(folder: Path) -> str:
    """" (N MiB free in FOLDER)" for a refused reservation, when the folder can be asked."""
    try:
        return f" ({shutil.disk_usage(folder).free / 2**20:.1f} MiB free in {folder})"
    except OSError:
        return ""


def _journal_form(event: ev.RunEvent) -> ev.RunEvent:
    """What the database stores of an event: workload slices without their latency bins
    (never stored, and up to kilobytes per slice)."""
    if isinstance(event, ev.WorkloadIntervals):
        return replace(event, intervals=tuple(replace(w, latency_bins={})
                                              for w in event.intervals))
    return event


__all__ = ["RunWriter", "Durability", "Held", "COMMIT_INTERVAL_S"]
