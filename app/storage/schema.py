"""ORM models of the run database (SQLAlchemy 2, typed ``Mapped[]``).

Design choices, so the sample tables stay small and fast:

* every table references runs by the integer ``runs.id``; the public UUID lives once, in
  ``runs.uuid`` (a 36-character key on 100 000 sample rows would double their size);
* times in child tables are **run-relative seconds** (stamped so by the sequencer), so a
  report never needs the station clock of the PC that recorded the run;
* a float column that is ``NULL`` means "not a number / not reported" (SQLite stores NaN as
  NULL anyway), and sample flags are a short code string (see :mod:`app.storage.codec`);
* sample tables are indexed on ``(run_id, t)``: every read is "this run, in time order";
* every sample, slice and interval carries its *placement* as the recorder tagged it (phase
  attempt, interval index, window: ``app.core.records.Window``), so a report selects the samples a
  figure came from by these tags and never re-derives a boundary;
* the run keeps the resolved method it ran (``method_json``, base and variant merged) and its
  SHA-256, so a report never depends on the method files installed later.

Migrations in ``app/storage/migrations/versions`` create the same schema; a test compares them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from sqlalchemy import (JSON, BigInteger, Boolean, Float, ForeignKey, Index, Integer,
                        SmallInteger, String, Table, Text, UniqueConstraint)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


class Base(DeclarativeBase):
    # every model here maps a Table (none a join or a select), so the storage code may call
    # Table's insert()/delete() on ``__table__``, which DeclarativeBase types as a FromClause
    if TYPE_CHECKING:
        __table__: ClassVar[Table]


def run_fk() -> ForeignKey:
    """A fresh foreign key to ``runs.id`` (a ForeignKey object belongs to one column only)."""
    return ForeignKey("runs.id", ondelete="CASCADE")


class Station(Base):
    """A test station (the PC and its instruments), named in RunConfig.station."""

    __tablename__ = "stations"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)


class Sut(Base):
    """A system under test, identified by vendor, model and serial; latest description kept."""

    __tablename__ = "suts"
    __table_args__ = (UniqueConstraint("vendor", "model", "serial", name="uq_suts_identity"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    vendor: Mapped[str] = mapped_column(String(200))
    model: Mapped[str] = mapped_column(String(200))
    serial: Mapped[str] = mapped_column(String(200))
    raw_capacity_bytes: Mapped[int] = mapped_column(BigInteger)
    drive_count: Mapped[int] = mapped_column(Integer)
    drive_type: Mapped[str] = mapped_column(String(20))


class Run(Base):
    __tablename__ = "runs"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    uuid: Mapped[str] = mapped_column(String(64), unique=True)
    station_id: Mapped[int | None] = mapped_column(ForeignKey("stations.id"))
    sut_id: Mapped[int | None] = mapped_column(ForeignKey("suts.id"))
    config: Mapped[dict] = mapped_column(JSON)  # RunConfig.snapshot(), never edited
    method_name: Mapped[str] = mapped_column(String(100))
    method_version: Mapped[str] = mapped_column(String(50))
    method_compliant: Mapped[bool] = mapped_column(Boolean)
    #: the resolved method as run (canonical JSON of app.method.model.Method) and its SHA-256
    method_json: Mapped[dict | None] = mapped_column(JSON)
    method_sha256: Mapped[str | None] = mapped_column(String(64))
    taxonomy: Mapped[str] = mapped_column(String(50))
    lab: Mapped[str] = mapped_column(String(50))
    operator: Mapped[str] = mapped_column(String(200), default="")
    __table_args__ = (Index("ix_runs_taxonomy", "taxonomy"),  # the history's filters (0016)
                      Index("ix_runs_station_id", "station_id"),
                      Index("ix_runs_sut_id", "sut_id"),
                      # SQLite only: the history's search reads this, not ~10 KB rows (0016)
                      Index("ix_runs_listing", "started_wall", "uuid", "method_name",
                            "method_version", "taxonomy", "lab", "operator", "status", "error",
                            "station_id", "sut_id", "duration_s").ddl_if(dialect="sqlite"))
    status: Mapped[str] = mapped_column(String(20), index=True)  # RunStatus
    started_wall: Mapped[str] = mapped_column(String(40), index=True)  # ISO 8601, UTC
    finished_wall: Mapped[str | None] = mapped_column(String(40))
    t0: Mapped[float] = mapped_column(Float)  # station clock at run start
    planned_s: Mapped[float] = mapped_column(Float)
    duration_s: Mapped[float | None] = mapped_column(Float)  # run-relative finish time
    error: Mapped[str] = mapped_column(Text, default="")
    workload_engine: Mapped[str] = mapped_column(Text, default="")
    # Who is writing the run right now: lets open_database tell a live run in another
    # process from one whose station crashed (see app.storage.liveness).
    writer_host: Mapped[str | None] = mapped_column(String(200))
    writer_pid: Mapped[int | None] = mapped_column(Integer)
    writer_boot: Mapped[str | None] = mapped_column(String(100))  # liveness.boot_id()
    heartbeat_wall: Mapped[float | None] = mapped_column(Float)  # unix time of last commit
    # The writer's sequence number of the last event of this run in the database: importing
    # the run journal applies only later events, so an import never duplicates rows.
    stored_seq: Mapped[int | None] = mapped_column(BigInteger)
    #: the testing pass's fixed ranges (app.sequencer.range_plan.RangePlan.to_json); NULL when
    #: the run did not range the meter
    range_plan: Mapped[dict | None] = mapped_column(JSON)
    #: revision 0021: the login that inserted the run, set by the lab server's guard (0022);
    #: NULL on a station's SQLite file
    writer_role: Mapped[str | None] = mapped_column(Text)


class Phase(Base):
    __tablename__ = "phases"
    __table_args__ = (UniqueConstraint("run_id", "idx", name="uq_phases_run_idx"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[int] = mapped_column(run_fk())
    idx: Mapped[int] = mapped_column(Integer)
    kind: Mapped[str] = mapped_column(String(20))  # PhaseKind
    name: Mapped[str] = mapped_column(String(100))
    profile: Mapped[str | None] = mapped_column(String(50))
    planned_s: Mapped[float] = mapped_column(Float)
    stabilisation_intervals: Mapped[int] = mapped_column(Integer, default=0)
    measurement_intervals: Mapped[int] = mapped_column(Integer, default=0)
    status: Mapped[str] = mapped_column(String(20))  # PhaseStatus
    attempts: Mapped[int] = mapped_column(Integer, default=0)  # >1: restarted after a pause
    t_start: Mapped[float | None] = mapped_column(Float)
    t_end: Mapped[float | None] = mapped_column(Float)
    error: Mapped[str] = mapped_column(Text, default="")
    # WorkloadResult of the phase (NULL when the phase ran no workload)
    read_ios: Mapped[int | None] = mapped_column(BigInteger)
    write_ios: Mapped[int | None] = mapped_column(BigInteger)
    read_bytes: Mapped[int | None] = mapped_column(BigInteger)
    write_bytes: Mapped[int | None] = mapped_column(BigInteger)
    runtime_s: Mapped[float | None] = mapped_column(Float)
    exit_code: Mapped[int | None] = mapped_column(Integer)
    engine: Mapped[str | None] = mapped_column(Text)
    job_text: Mapped[str | None] = mapped_column(Text)
    workload_error: Mapped[str | None] = mapped_column(Text)
    #: the PTS steady-state verdict of a preconditioning phase's rounds as the sequencer judged
    #: it last (codec.steady_to_json); NULL for other phases and runs stored before 0020
    steady_state: Mapped[dict | None] = mapped_column(JSON)


class PhaseAttemptRow(Base):
    """One attempt of a phase (a pause restarts the phase as a new attempt, method-notes §2);
    ``window_start_s``/``window_end_s`` bound its planned measurement window."""

    __tablename__ = "phase_attempts"
    __table_args__ = (UniqueConstraint("run_id", "phase_index", "attempt",
                                       name="uq_phase_attempts_run_phase_attempt"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[int] = mapped_column(run_fk())
    phase_index: Mapped[int] = mapped_column(Integer)
    attempt: Mapped[int] = mapped_column(Integer)
    t_start: Mapped[float] = mapped_column(Float)
    t_end: Mapped[float | None] = mapped_column(Float)
    status: Mapped[str] = mapped_column(String(20))  # PhaseStatus
    error: Mapped[str] = mapped_column(Text, default="")
    window_start_s: Mapped[float] = mapped_column(Float)
    window_end_s: Mapped[float] = mapped_column(Float)


class RunResumptionRow(Base):
    """One continuation of an INTERRUPTED run in the same run record (``app/station/resume.py``):
    where it restarted, which phases' stored results it kept, why the run had stopped."""

    __tablename__ = "run_resumptions"
    __table_args__ = (UniqueConstraint("run_id", "number",
                                       name="uq_run_resumptions_run_number"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[int] = mapped_column(run_fk())
    number: Mapped[int] = mapped_column(Integer)  # 1 for the run's first resumption
    t: Mapped[float] = mapped_column(Float)  # run time at which it continued
    wall: Mapped[str] = mapped_column(String(40))  # ISO 8601, UTC
    restart_phase: Mapped[int] = mapped_column(Integer)
    cut_phase: Mapped[int | None] = mapped_column(Integer)
    carried: Mapped[list] = mapped_column(JSON)  # phase indices whose results stand
    redone: Mapped[list] = mapped_column(JSON)  # completed phase indices run again
    interruption: Mapped[str] = mapped_column(Text, default="")


class PowerSampleRow(Base):
    __tablename__ = "power_samples"
    __table_args__ = (Index("ix_power_samples_run_t", "run_id", "t"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[int] = mapped_column(run_fk())
    phase_index: Mapped[int] = mapped_column(Integer)
    t: Mapped[float] = mapped_column(Float)
    watts: Mapped[float | None] = mapped_column(Float)
    volts: Mapped[float | None] = mapped_column(Float)
    amps: Mapped[float | None] = mapped_column(Float)
    pf: Mapped[float | None] = mapped_column(Float)
    freq: Mapped[float | None] = mapped_column(Float)
    range_v: Mapped[float | None] = mapped_column(Float)
    range_a: Mapped[float | None] = mapped_column(Float)
    uncertainty_pct: Mapped[float | None] = mapped_column(Float)
    flags: Mapped[str | None] = mapped_column(String(40))  # codec.encode_flags; NULL = none
    attempt: Mapped[int] = mapped_column(Integer, default=1)
    interval_idx: Mapped[int] = mapped_column(Integer, default=-1)
    window_code: Mapped[int] = mapped_column(SmallInteger, default=0)  # app.core.records.Window


class TemperatureSampleRow(Base):
    __tablename__ = "temperature_samples"
    __table_args__ = (Index("ix_temperature_samples_run_t", "run_id", "t"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[int] = mapped_column(run_fk())
    phase_index: Mapped[int] = mapped_column(Integer)
    t: Mapped[float] = mapped_column(Float)
    celsius: Mapped[float | None] = mapped_column(Float)
    flags: Mapped[str | None] = mapped_column(String(40))
    attempt: Mapped[int] = mapped_column(Integer, default=1)
    interval_idx: Mapped[int] = mapped_column(Integer, default=-1)
    window_code: Mapped[int] = mapped_column(SmallInteger, default=0)


class WorkloadIntervalRow(Base):
    """Per-slice workload counters; the latency bins are kept per phase in ``histograms``."""

    __tablename__ = "workload_intervals"
    __table_args__ = (Index("ix_workload_intervals_run_t", "run_id", "t_start"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[int] = mapped_column(run_fk())
    phase_index: Mapped[int] = mapped_column(Integer)
    t_start: Mapped[float] = mapped_column(Float)
    t_end: Mapped[float] = mapped_column(Float)
    read_ios: Mapped[int] = mapped_column(BigInteger)
    write_ios: Mapped[int] = mapped_column(BigInteger)
    read_bytes: Mapped[int] = mapped_column(BigInteger)
    write_bytes: Mapped[int] = mapped_column(BigInteger)
    avg_resp_ms: Mapped[float | None] = mapped_column(Float)
    max_resp_ms: Mapped[float | None] = mapped_column(Float)
    host: Mapped[str] = mapped_column(String(200), default="")
    attempt: Mapped[int] = mapped_column(Integer, default=1)
    window_code: Mapped[int] = mapped_column(SmallInteger, default=0)  # histogram rule


class HistogramRow(Base):
    __tablename__ = "histograms"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[int] = mapped_column(run_fk(), index=True)
    phase_index: Mapped[int] = mapped_column(Integer)
    profile: Mapped[str] = mapped_column(String(50))
    bins: Mapped[dict] = mapped_column(JSON)  # {"ns": [...], "count": [...]} sorted by ns
    confidence_ms: Mapped[dict] = mapped_column(JSON)  # {"99.0": 12.3, ...}
    ceiling_ms: Mapped[float | None] = mapped_column(Float)
    above_ceiling: Mapped[int] = mapped_column(Integer)
    #: the phase attempt it belongs to: a resumed run may redo a completed phase, and the
    #: earlier attempt's histogram stays stored (its per-slice bins are not kept)
    attempt: Mapped[int] = mapped_column(Integer, default=1)


class IntervalRow(Base):
    """IntervalRecord: one closed measurement interval (method-notes §4)."""

    __tablename__ = "intervals"
    __table_args__ = (Index("ix_intervals_run_phase", "run_id", "phase_index", "idx"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[int] = mapped_column(run_fk())
    phase_index: Mapped[int] = mapped_column(Integer)
    profile: Mapped[str | None] = mapped_column(String(50))
    idx: Mapped[int] = mapped_column(Integer)
    start_s: Mapped[float] = mapped_column(Float)
    end_s: Mapped[float] = mapped_column(Float)
    avg_power_w: Mapped[float | None] = mapped_column(Float)
    n_power_samples: Mapped[int] = mapped_column(Integer)
    ops_rate: Mapped[float | None] = mapped_column(Float)
    ops_unit: Mapped[str] = mapped_column(String(20))
    avg_response_ms: Mapped[float | None] = mapped_column(Float)
    ep: Mapped[float | None] = mapped_column(Float)
    wma: Mapped[float | None] = mapped_column(Float)
    in_measurement: Mapped[bool] = mapped_column(Boolean)
    stable: Mapped[bool | None] = mapped_column(Boolean)
    attempt: Mapped[int] = mapped_column(Integer, default=1)


class MetricRow(Base):
    """MetricResult; one row per metric name (RunFinished repeats MetricComputed's)."""

    __tablename__ = "metrics"
    __table_args__ = (UniqueConstraint("run_id", "name", name="uq_metrics_run_name"),
                      # the history's metric columns and INVALID filter (0016)
                      Index("ix_metrics_name_value", "name", "value"),
                      Index("ix_metrics_valid_run", "valid", "run_id"))
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[int] = mapped_column(run_fk())
    name: Mapped[str] = mapped_column(String(50))
    value: Mapped[float | None] = mapped_column(Float)
    unit: Mapped[str] = mapped_column(String(20))
    valid: Mapped[bool] = mapped_column(Boolean)
    reason: Mapped[str] = mapped_column(Text, default="")
    run_length_s: Mapped[float] = mapped_column(Float)
    avg_power_w: Mapped[float | None] = mapped_column(Float)
    ops_rate: Mapped[float | None] = mapped_column(Float)
    ops_unit: Mapped[str] = mapped_column(String(20))
    avg_response_ms: Mapped[float | None] = mapped_column(Float)
    phase_index: Mapped[int | None] = mapped_column(Integer)


class SearchResultRow(Base):
    __tablename__ = "search_results"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[int] = mapped_column(run_fk(), index=True)
    profile: Mapped[str] = mapped_column(String(50))
    queue_depth: Mapped[int] = mapped_column(Integer)
    jobs: Mapped[int] = mapped_column(Integer)
    ops_rate: Mapped[float | None] = mapped_column(Float)
    ops_unit: Mapped[str] = mapped_column(String(20))
    avg_response_ms: Mapped[float | None] = mapped_column(Float)
    rate_read_iops: Mapped[int | None] = mapped_column(Integer)
    rate_write_iops: Mapped[int | None] = mapped_column(Integer)
    probes: Mapped[list] = mapped_column(JSON)  # [[qd, ops_rate, avg_resp_ms], ...]
    note: Mapped[str] = mapped_column(Text, default="", server_default="")  # SearchResult.note
    #: SearchResult.generator: [{step, iops, mib_s, asked_iops, share_error_pts, seconds}, …]
    generator: Mapped[list | None] = mapped_column(JSON)
    #: SearchResult.pattern: the access pattern of the same null-engine pre-run (codec)
    access_pattern: Mapped[dict | None] = mapped_column(JSON)
    #: SearchResult.pre_run_basis: why a pre-run-only row ran instead of a search (0018)
    pre_run_basis: Mapped[str | None] = mapped_column(Text)


class InstrumentRow(Base):
    """Identity of an instrument used by a run (role: power_meter | temperature_meter)."""

    __tablename__ = "instruments"
    __table_args__ = (UniqueConstraint("run_id", "role", name="uq_instruments_run_role"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[int] = mapped_column(run_fk())
    role: Mapped[str] = mapped_column(String(30))
    #: as the instrument reported it: TEXT, never bounded (migration 0011)
    vendor: Mapped[str] = mapped_column(Text)
    model: Mapped[str] = mapped_column(Text)
    serial: Mapped[str] = mapped_column(Text, default="")
    firmware: Mapped[str] = mapped_column(Text, default="")
    resource: Mapped[str] = mapped_column(Text, default="")
    driver: Mapped[str] = mapped_column(Text, default="")
    calibration_date: Mapped[str] = mapped_column(Text, default="")


class EventRow(Base):
    """The run log (LogMessage events), run-relative time."""

    __tablename__ = "events"
    __table_args__ = (Index("ix_events_run_t", "run_id", "t"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[int] = mapped_column(run_fk())
    t: Mapped[float] = mapped_column(Float)
    level: Mapped[str] = mapped_column(String(10))
    message: Mapped[str] = mapped_column(Text)
    phase_index: Mapped[int | None] = mapped_column(Integer)


class PowerInputRow(Base):
    """One of the SUT's power inputs in a run: who read it and the accuracy formula its
    uncertainty was judged by (method-notes §10, several power inputs)."""

    __tablename__ = "power_inputs"
    __table_args__ = (UniqueConstraint("run_id", "name", name="uq_power_inputs_run_name"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[int] = mapped_column(run_fk())
    position: Mapped[int] = mapped_column(Integer)  # the configured order
    name: Mapped[str] = mapped_column(String(100))
    element: Mapped[int | None] = mapped_column(Integer)
    wiring: Mapped[str] = mapped_column(String(10))
    accuracy: Mapped[str] = mapped_column(Text)
    #: as the instrument reported it: TEXT, never bounded (migration 0011)
    vendor: Mapped[str] = mapped_column(Text)
    model: Mapped[str] = mapped_column(Text)
    serial: Mapped[str] = mapped_column(Text, default="")
    firmware: Mapped[str] = mapped_column(Text, default="")
    resource: Mapped[str] = mapped_column(Text, default="")
    driver: Mapped[str] = mapped_column(Text, default="")
    calibration_date: Mapped[str] = mapped_column(Text, default="")


class PowerInputSampleRow(Base):
    """One input's reading at one sample instant; ``t_total`` is the instant of the total
    (``power_samples.t``) it belongs to, ``t`` the input's own read time."""

    __tablename__ = "power_input_samples"
    __table_args__ = (Index("ix_power_input_samples_run_t", "run_id", "t_total"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[int] = mapped_column(run_fk())
    input: Mapped[str] = mapped_column(String(100))
    t_total: Mapped[float] = mapped_column(Float)
    t: Mapped[float] = mapped_column(Float)
    watts: Mapped[float | None] = mapped_column(Float)
    volts: Mapped[float | None] = mapped_column(Float)
    amps: Mapped[float | None] = mapped_column(Float)
    pf: Mapped[float | None] = mapped_column(Float)
    freq: Mapped[float | None] = mapped_column(Float)
    range_v: Mapped[float | None] = mapped_column(Float)
    range_a: Mapped[float | None] = mapped_column(Float)
    uncertainty_pct: Mapped[float | None] = mapped_column(Float)
    flags: Mapped[str | None] = mapped_column(String(40))


class DatabaseIdentity(Base):
    """The database's own random id, written once (revision 0017): which database a file or
    server holds, whatever its path (``app.storage.overwritten``), and on which database an
    audit entry was made."""

    __tablename__ = "database_identity"
    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    created_wall: Mapped[str] = mapped_column(String(40))


#: the longest author name an audit entry takes
MAX_AUTHOR = 200


class AuditEntryRow(Base):
    """One audit entry of a run's QA trail (created by revision 0002; read and written by
    :mod:`app.storage.audit`)."""

    __tablename__ = "audit_entries"
    __table_args__ = (Index("ix_audit_entries_run_id", "run_id", "id"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(String(20))  # AuditKind
    disposition: Mapped[str | None] = mapped_column(String(20))  # Disposition
    text: Mapped[str] = mapped_column(Text)
    author: Mapped[str] = mapped_column(String(MAX_AUTHOR))
    created_wall: Mapped[str] = mapped_column(String(40))  # ISO 8601 UTC
    # revision 0006: COM results and approvals (NULL on notes and dispositions)
    subject: Mapped[str | None] = mapped_column(String(50))  # the COM id
    outcome: Mapped[str | None] = mapped_column(String(20))  # ComOutcome
    revision: Mapped[int | None] = mapped_column(Integer)  # the record revision approved
    record_sha256: Mapped[str | None] = mapped_column(String(64))  # … and its hash
    # revision 0011: what an approval bound besides the hash, and a sign-off's confirmation
    hash_format: Mapped[str | None] = mapped_column(String(40))  # NULL: storwatt-record/1
    verdict_shown: Mapped[str | None] = mapped_column(Text)  # the verdict QA saw
    rules_version: Mapped[int | None] = mapped_column(Integer)  # … derived under these rules
    confirmation: Mapped[str | None] = mapped_column(Text)  # why, when the run was not clean
    # revision 0017: on which database the entry was made (app.storage.identity)
    made_on: Mapped[str | None] = mapped_column(Text)
    #: revision 0021: who inserted it — the login (PostgreSQL, set by the server's guard of
    #: revision 0022) or ``station NAME, OS account USER`` (a station's SQLite file)
    db_role: Mapped[str | None] = mapped_column(Text)


class RecordHashRow(Base):
    """One revision's record hash as computed on one basis (revision 0015; kept by
    :mod:`app.storage.record_cache`)."""

    __tablename__ = "record_hashes"
    __table_args__ = (UniqueConstraint("run_id", "revision", "hash_format", "basis_sha256",
                                       "seal", name="uq_record_hashes_revision_basis_seal"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[int] = mapped_column(run_fk())
    revision: Mapped[int] = mapped_column(Integer)
    hash_format: Mapped[str] = mapped_column(String(40))
    basis_sha256: Mapped[str] = mapped_column(String(64))
    facts_sha256: Mapped[str] = mapped_column(String(64))
    record_sha256: Mapped[str] = mapped_column(String(64))
    computed_wall: Mapped[str] = mapped_column(String(40))  # ISO 8601 UTC
    #: revision 0021: HMAC under this PC's key (app.storage.record_seal); NULL: not trusted
    seal: Mapped[str | None] = mapped_column(String(64))
