"""One run from configuration to stored result: method, lab, sequencer and storage together.

The CLI, the GUI and ``--self-test`` all start runs through :class:`RunSession`, so a run is
stored, identified and closed the same way whoever started it. :meth:`RunSession.run` runs on
the caller's thread; the GUI calls it on a worker of its own (``ui/widgets/worker.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from app.labs.builder import build_lab
from app.method.loader import load_method
from app.method.model import Method
from app.method.taxonomy import load_taxonomy, parse_taxonomy_id
from app.core.protected import station_paths
from app.core.records import RunConfig, RunStatus
from app.sequencer.capacity_optimisation import check_declared_coms
from app.sequencer.events import RunListener
from app.sequencer.continuation import Continuation
from app.sequencer.equipment import Lab
from app.sequencer.sequencer import Sequencer
from app.storage.db import Database
from app.storage.opening import open_database
from app.storage.errors import DurabilityLostError, StorageError
from app.storage.overwritten import DatabaseReplacedError
from app.storage.range_advisor import advise
from app.storage.rights import check_write_rights
from app.storage.writer import Durability, RunWriter
from drivers.clock import Clock, MonotonicClock
from app.station.instrument_profile import StationProfile, StationProfileError
from app.station.storage_stall import StallWatch, commit_stall_limit

#: How long the end of a run waits for a failing database before leaving the run in its
#: journal (a backup tool's lock or a short outage clears in this time; a full disk does not).
DURABLE_WAIT_S = 60.0


@dataclass
class RunSession:
    config: RunConfig
    method: Method
    database: Database
    lab: Lab
    sequencer: Sequencer
    writer: RunWriter
    #: where the run ended up, set when the session closes (database, or the run journal)
    stored: Durability | None = None

    @property
    def run_id(self) -> str:
        return self.sequencer.run_id

    def run(self) -> RunStatus:
        """Run on the calling thread (CLI, tests, the GUI's run worker); always closes the lab
        and flushes storage."""
        try:
            return self.sequencer.run()
        finally:
            self.close()

    def close(self) -> None:
        """Close the lab, then make the run durable: in the database, or after
        :data:`DURABLE_WAIT_S` in its journal (raises WriterError if neither took it)."""
        self.sequencer.report_teardown(self.lab.close())  # stored with the run, shown
        self.stored = self.writer.close(DURABLE_WAIT_S)


def open_session(config: RunConfig, *, db_url: str | None = None,
                 listeners: Iterable[RunListener] = (), clock: Clock | None = None,
                 method: Method | None = None, report_folder: Path | None = None,
                 continuation: Continuation | None = None,
                 run_id: str | None = None) -> RunSession:
    """Prepare a run: validate the method and taxonomy, open storage, build the lab.

    ``report_folder``: where the caller will write the reports; like the database and the data
    directory, the lab's workload must never write there. ``continuation`` and ``run_id``:
    continue that stored INTERRUPTED run instead
    (:func:`app.station.resume.open_resumed_session`)."""
    method = method or load_method(config.method)
    parse_taxonomy_id(load_taxonomy(method), config.taxonomy)  # names the valid ids
    method.plan_for(config.category)  # raises with the list of testable categories
    check_declared_coms((c.id for c in method.coms), config.sut)  # names the known ids
    clock = clock or MonotonicClock()
    database = open_database(db_url)
    try:
        check_write_rights(database)  # before anything starts, not after the whole plan
    except StorageError:
        database.close()
        raise
    stall_limit_s = commit_stall_limit()
    writer = RunWriter(database, samples_per_s=1.0 / method.sample_period_s)
    lab: Lab | None = None
    try:  # a refused target or a lab that cannot be built must not leave the writer running
        lab = build_lab(config, clock, protected=station_paths(database.url, report_folder),
                        fio_stall_s=method.fio.stall_s, sample_period_s=method.sample_period_s,
                        silence_limit_s=method.sampling.meter_silence_limit_s,
                        limits=method.instruments.reading_limits())
        advised = (advise(database, config, config.range_plan_from).plan
                   if config.range_plan_from else None)
        sequencer = Sequencer(method, config, lab, clock, [writer, *listeners], run_id,
                              continuation, range_plan=advised)
        writer.reserve_journal(sequencer.run_id, sequencer.planned_s)  # or refuse the run
    except Exception:
        if lab is not None:
            lab.close()
        writer.close()
        raise
    writer.on_error = _fail_when_not_durable(sequencer)
    sequencer.add_watch(StallWatch(writer, stall_limit_s))
    _remember_instruments(config)
    return RunSession(config, method, database, lab, sequencer, writer)


def _fail_when_not_durable(sequencer: Sequencer) -> Callable[[StorageError], None]:
    """Two storage faults are not passing ones the writer can wait out, so the run stops
    FAILED with the reason at once instead of measuring on for nothing: a database file
    replaced under the run (``cp other.db``: the station's record of the run is gone from it;
    everything it measured stays in its journal), and durability lost — the database failing
    while the journal cannot be written, or the writer's thread dead (issue 40 §1: the run
    measured for hours after its writer died). Every committed sample stays."""
    def on_error(error: StorageError) -> None:
        if isinstance(error, DatabaseReplacedError):
            sequencer.fail(f"run stopped: {error}")
        elif isinstance(error, DurabilityLostError):
            sequencer.fail(str(error))
    return on_error


def _remember_instruments(config: RunConfig) -> None:
    """The station profile keeps the calibration this accepted run declared for each real
    instrument (``app.station.instrument_profile``). A convenience for the next run: a profile that
    cannot be written never stops this one (the next run's fill reports a broken file)."""
    try:
        StationProfile().remember(config)
    except StationProfileError:
        pass
