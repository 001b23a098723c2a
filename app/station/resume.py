"""Resuming an INTERRUPTED run: where it may continue, what it keeps, and starting it.

The method's phases are one continuous sequence (method-notes §2), so a continuation can only
restart at a phase boundary the method allows: pre-fill, the intensity search, conditioning,
ready idle and each COM check can be redone alone; an active profile cannot, because the
active profiles are "an uninterrupted sequence of workloads" — an interrupted active sequence
restarts at its first profile, and the profiles it had completed run again.

The continuation writes into the **same run record** (a resumption row, not a new run), so the
record stays the one authority for the run: the completed phases' samples, intervals, metrics
and histograms stay exactly where they were stored and the report reads them from there — by
reference, never copied into another run and never re-derived. Each phase run again is a new
*attempt* of that phase (the mechanism a pause already uses), so the earlier attempt stays
stored as evidence and the last attempt's figures count. A resumed run is always
NON-COMPLIANT ("Resumed after interruption", :mod:`app.rules.compliance`); its figures stay useful
for engineering.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.method.loader import MethodError, load_method
from app.method.model import Method
from app.method.record import method_sha256, resolved_method
from app.core.records import PhaseKind, PhaseStatus, RunConfig, RunStatus
from app.sequencer.continuation import Continuation
from app.sequencer.events import RunListener
from app.sequencer.plan import build_phases
from app.station.session import RunSession, open_session
from app.storage.db import Database
from app.storage.journal import journal_path
from app.storage.repository import load_run
from app.storage.resumption import claim_run, stored_seq
from app.storage.run_lock import RunLock, RunLockError
from app.storage.stored import StoredPhase, StoredRun
from drivers.clock import Clock


DONE = (PhaseStatus.COMPLETED, PhaseStatus.SKIPPED)


class ResumeRefused(ValueError):
    """This run cannot be resumed; the message names the run, the rule and the evidence."""


@dataclass(frozen=True)
class ResumePlan:
    """How one INTERRUPTED run will continue (see the module docstring)."""

    run_id: str
    config: RunConfig  # the run's own, as stored
    method: Method  # the installed method, proven identical to the one the run recorded
    continuation: Continuation
    phase_names: tuple[str, ...]  # by phase index

    def _names(self, indices: Iterable[int]) -> str:
        return ", ".join(self.phase_names[i] for i in indices) or "none"

    @property
    def to_run(self) -> tuple[int, ...]:
        return tuple(range(self.continuation.restart_phase, len(self.phase_names)))

    def lines(self) -> list[str]:
        """What resuming will do, in the words the CLI prints and the GUI asks with."""
        c = self.continuation
        where = (f"during {self.phase_names[c.cut_phase]}" if c.cut_phase is not None
                 else "between two phases")
        again = [i for i in self.to_run if i in c.redone or i == c.cut_phase]
        return [
            f"Run {self.run_id[:8]} stopped {where}: {c.interruption or 'no reason recorded'}",
            f"Redone from its beginning: {self._names(again)}"
            + (" (the active profiles are one uninterrupted sequence, so it restarts at its "
               "first profile)" if c.redone else ""),
            f"Then run: {self._names(i for i in self.to_run if i not in again)}",
            f"Kept as stored (not run again): {self._names(c.carried)}",
            "The resumed run is NON-COMPLIANT (resumed after interruption: the method's phases "
            "are continuous); its figures stay useful for engineering."]


def restart_phase(phases: Sequence[StoredPhase]) -> int | None:
    """The phase a continuation starts at (None: nothing left to do): the first phase not
    done, or the first active profile when that phase is part of the active sequence."""
    first = next((p for p in phases if p.status not in DONE), None)
    if first is None:
        return None
    if first.info.kind is PhaseKind.ACTIVE:
        return min(p.index for p in phases if p.info.kind is PhaseKind.ACTIVE)
    return first.index


def flat_config(snapshot: Mapping[str, Any]) -> dict[str, Any]:
    """A configuration snapshot as ``key.sub → JSON value`` (tuples and lists alike)."""
    def walk(value: Any, key: str) -> Iterable[tuple[str, Any]]:
        if isinstance(value, Mapping) and (value or not key):
            for k, v in value.items():
                yield from walk(v, f"{key}.{k}" if key else str(k))
        else:
            yield key, value

    return dict(walk(json.loads(json.dumps(snapshot)), ""))


def config_differences(stored: Mapping[str, Any], given: Mapping[str, Any]) -> list[str]:
    """``key: run VALUE, given VALUE`` for every given setting (flat keys) the run differs in."""
    ours = flat_config(stored)
    return [f"{key}: the run has {ours.get(key)!r}, given {value!r}"
            for key, value in flat_config(given).items() if ours.get(key) != value]


def plan_resume(run: StoredRun, method: Method, *, given: Mapping[str, Any] | None = None,
                journal: Path | None = None, after_seq: int = 0) -> ResumePlan:
    """Where ``run`` continues with the installed ``method``, or :class:`ResumeRefused`.

    ``given``: settings the operator typed (flat keys, :func:`flat_config`) — each must equal
    the run's; ``journal``: the run's journal file if one is still waiting to be imported."""
    short = run.run_id[:8]
    if run.status is not RunStatus.INTERRUPTED:
        raise ResumeRefused(
            f"run {short} is {run.status.value}, not INTERRUPTED: only a run whose station "
            "stopped mid-way can be resumed" + (" (a RUNNING run may still be written by its "
                                                "station)" if run.status is RunStatus.RUNNING
                                                else ""))
    differences = config_differences(run.config_snapshot, given or {})
    if differences:
        raise ResumeRefused(f"run {short}: the configuration differs from the run's, and a "
                            "resumed run must continue the same one: " + "; ".join(differences))
    if run.method_sha256 is None:
        raise ResumeRefused(f"run {short} did not record the method it ran (stored before "
                            "StorWatt kept it), so a continuation could not prove it uses the "
                            "same method")
    installed = method_sha256(resolved_method(method))
    if installed != run.method_sha256:
        raise ResumeRefused(
            f"run {short}: method {run.config.method!r} as installed now (SHA-256 "
            f"{installed[:12]}…) differs from the method the run used ({run.method_sha256[:12]}…)"
            ": restore that method file, or start a new run")
    config = run.config
    if build_phases(method, config) != tuple(p.info for p in run.phases):
        raise ResumeRefused(f"run {short}: this StorWatt plans the run's phases differently "
                            "from the stored plan; start a new run")
    if journal is not None:
        raise ResumeRefused(f"run {short}: its run journal {journal} is not imported yet "
                            "(storwatt db recover), so the record may be incomplete")
    start = restart_phase(run.phases)
    if start is None:
        raise ResumeRefused(f"run {short}: every phase completed before the station stopped; "
                            f"nothing is left to do (its report: storwatt report {short})")
    return ResumePlan(run.run_id, config, method,
                      _continuation(run, start, after_seq),
                      tuple(p.info.name for p in run.phases))


def _continuation(run: StoredRun, start: int, after_seq: int) -> Continuation:
    cut = next((p.index for p in run.phases if p.status is PhaseStatus.INTERRUPTED), None)
    last = {p.index: max([p.attempts, *(a.attempt for a in run.attempts
                                        if a.phase_index == p.index)])
            for p in run.phases}
    return Continuation(
        number=len(run.resumptions) + 1, restart_phase=start, cut_phase=cut,
        carried=tuple(p.index for p in run.phases[:start]),
        redone=tuple(p.index for p in run.phases[start:] if p.status in DONE),
        interruption=run.error,
        attempts=tuple((p.index, last[p.index] + 1) for p in run.phases[start:]),
        search=tuple(r for r in run.search_results if r.searched),  # not MW2's pre-run
        started_wall_iso=run.started_wall,
        last_t=_last_time(run), after_seq=after_seq, range_plan=run.range_plan)


def _last_time(run: StoredRun) -> float:
    """The latest run time anything in the record carries."""
    times = [run.duration_s or 0.0, *run.power.t[-1:], *run.temperature.t[-1:],
             *(e.t for e in run.events), *(w.interval.t_end for w in run.workload),
             *(a.t_end or a.t_start for a in run.attempts), *(r.end_s for r in run.intervals)]
    return max((float(t) for t in times if math.isfinite(t)), default=0.0)


# --- starting the continuation ------------------------------------------------------------

def prepare_resume(database: Database, run_id: str,
                   given: Mapping[str, Any] | None = None,
                   lock_dir: Path | None = None) -> ResumePlan:
    """Load ``run_id`` (an id or unique prefix) and plan its continuation with the method
    installed now (or :class:`ResumeRefused`, also when this station did not record the run
    or a live process of it still holds it: ``lock_dir``, its run locks, for tests)."""
    run = load_run(database, run_id)
    try:
        method = load_method(run.config.method)
    except MethodError as exc:
        raise ResumeRefused(f"run {run.run_id[:8]}: its method {run.config.method!r} cannot be "
                            f"loaded now: {exc}") from exc
    journal = journal_path(run.run_id)
    plan = plan_resume(run, method, given=given,
                       journal=journal if journal.exists() else None,
                       after_seq=stored_seq(database, run.run_id))
    take_run_lock(run.run_id, lock_dir).release(finished=False)  # may this station resume it?
    return plan


def take_run_lock(run_id: str, lock_dir: Path | None = None) -> RunLock:
    """The run's lock, proof that this station recorded the run and that no process of it
    writes it any more (``app/storage/run_lock.py``); :class:`ResumeRefused` otherwise."""
    try:
        return RunLock.take(run_id, lock_dir)
    except RunLockError as exc:
        raise ResumeRefused(f"run {run_id[:8]} cannot be resumed here: {exc}") from exc


def open_resumed_session(plan: ResumePlan, *, db_url: str | None = None,
                         listeners: Iterable[RunListener] = (), clock: Clock | None = None,
                         report_folder: Path | None = None,
                         lock_dir: Path | None = None) -> RunSession:
    """Take the run's lock (only its own station can), build the lab and the writer for
    ``plan`` and claim the run for this process (:func:`app.storage.resumption.claim_run`);
    ``session.run()`` then continues it, and its writer holds the lock to the end."""
    c = plan.continuation
    lock = take_run_lock(plan.run_id, lock_dir)
    try:
        session = open_session(plan.config, db_url=db_url, listeners=listeners, clock=clock,
                               method=plan.method, report_folder=report_folder,
                               continuation=c, run_id=plan.run_id)
    except BaseException:
        lock.release(finished=False)
        raise
    session.writer.adopt_lock(lock)  # released when the session's writer closes
    try:
        claimed = claim_run(session.database, plan.run_id, c.after_seq)
    except Exception:
        session.close()
        raise
    if not claimed:
        session.close()
        raise ResumeRefused(f"run {plan.run_id[:8]} changed since it was read (another station "
                            "may have resumed it): list the runs again")
    return session
