"""Each capacity-optimisation method's disclosure and verdict, from the record and its trail.

The seed's Test Data Report discloses per COM "Available in SUT?" and "On during test?"
separately (its sample: thin provisioning available, not on), and a yes/no for each COM tested
(docs/method-notes.md §2 phase 4). The verdict is derived, like compliance, from the stored run
alone: the COM check the station ran (:mod:`app.sequencer.capacity_optimisation`) and the
technician's latest audited heuristic result for that COM (``storwatt runs com``), which the
report names. A check the lab could not observe is NOT VERIFIED with its reason — a missing
capacity probe is not evidence that the COM failed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from app.method.model import Method
from app.metrics.formatting import format_figure
from app.core.records import (AuditEntry, AuditKind, ComOutcome, MetricResult, PhaseInfo, PhaseKind,
                              PhaseStatus, RunStatus, SutDescription)
from app.sequencer.capacity_optimisation import (RECORD_BY_HAND, available_coms, observed,
                                                 on_during_test)


class ComMetric(Protocol):
    """A stored COM check's metric as the verdict reads it (a run's ``MetricResult``, or a
    run list's ``KeyMetric``)."""

    @property
    def name(self) -> str: ...
    @property
    def value(self) -> float: ...
    @property
    def valid(self) -> bool: ...
    @property
    def reason(self) -> str: ...


class ComPhase(Protocol):
    """A stored phase as the verdict reads it (``app.storage.stored.StoredPhase``)."""

    @property
    def info(self) -> PhaseInfo: ...
    @property
    def status(self) -> PhaseStatus: ...
    @property
    def error(self) -> str: ...


class ComState(StrEnum):
    PASSED = "PASSED"
    NOT_PASSED = "NOT PASSED"
    NOT_VERIFIED = "NOT VERIFIED"
    NOT_TESTED = "NOT TESTED"
    NOT_AVAILABLE = "not available"


@dataclass(frozen=True)
class ComVerdict:
    """One row of the COM disclosure."""

    com_id: str
    title: str
    available: bool  # Available in SUT?
    on_during_test: bool  # On during test?
    state: ComState
    detail: str  # the ratio, the evidence, or why not verified / not tested
    metric: MetricResult | ComMetric | None  # the station's check, if it ran one
    entry: AuditEntry | None  # the technician's result the verdict rests on

    @property
    def result(self) -> str:
        """``PASSED (data-reduction ratio 1.8)``, ``NOT VERIFIED: this lab has no …``."""
        if self.state is ComState.NOT_AVAILABLE:
            return "not available in the SUT: not tested"
        return f"{self.state.value}: {self.detail}" if self.detail else self.state.value


class ComRecord(Protocol):
    """What a COM verdict reads of a run: a loaded run (``StoredRun``) or a run list's
    facts (:class:`app.storage.run_facts.RunFacts`) — so the report, the run header, the
    history list, the start page, compare and ``runs show`` derive the same state."""

    @property
    def sut(self) -> SutDescription: ...
    @property
    def method(self) -> Method | None: ...
    @property
    def metrics(self) -> Sequence[ComMetric]: ...
    @property
    def phases(self) -> Sequence[ComPhase]: ...
    @property
    def status(self) -> RunStatus: ...
    @property
    def audit(self) -> Sequence[AuditEntry]: ...


def com_verdicts(run: ComRecord) -> tuple[ComVerdict, ...]:
    """Every COM the method lists (then any other the record names), in the method's order."""
    sut = run.sut
    method = run.method
    titles = {c.id: c.title for c in method.coms} if method else {}
    stored = {m.name.removeprefix("COM_"): m for m in run.metrics if m.name.startswith("COM_")}
    available = available_coms(sut)
    ids = dict.fromkeys([*titles, *available, *sut.coms_on_during_test, *stored])
    entries = _latest_entries(run.audit)
    return tuple(_verdict(run, com, titles.get(com, com), com in available,
                          on_during_test(sut, com), stored.get(com), entries.get(com))
                 for com in ids)


#: the states a run's outcome counts (a COM PASSED or not available says nothing against it)
OPEN_STATES = (ComState.NOT_PASSED, ComState.NOT_VERIFIED, ComState.NOT_TESTED)


def open_com_states(verdicts: Iterable[ComVerdict]) -> tuple[ComState, ...]:
    """The states of the available COMs that did not pass, in the method's order: what a
    run's one-line outcome counts (``app.rules.run_outcome``)."""
    return tuple(v.state for v in verdicts if v.state in OPEN_STATES)


def _latest_entries(trail: Sequence[AuditEntry]) -> dict[str, AuditEntry]:
    return {e.subject: e for e in trail if e.kind is AuditKind.COM_RESULT and e.subject}


def _verdict(run: ComRecord, com: str, title: str, available: bool, on: bool,
             metric: ComMetric | None, entry: AuditEntry | None) -> ComVerdict:
    def verdict(state: ComState, detail: str, used: AuditEntry | None = None) -> ComVerdict:
        return ComVerdict(com, title, available, on, state, detail, metric, used)

    if not available:
        return verdict(ComState.NOT_AVAILABLE, "")
    if observed(metric):
        ratio = f"data-reduction ratio {format_figure(metric.value)}"
        if metric.valid:
            return verdict(ComState.PASSED, ratio)
        return verdict(ComState.NOT_PASSED, metric.reason or ratio)
    if entry is not None:
        state = ComState.PASSED if entry.outcome is ComOutcome.PASSED else ComState.NOT_PASSED
        return verdict(state, f"recorded by {entry.author} on {entry.when} (audit entry "
                              f"#{entry.entry_id}): {entry.text}", entry)
    if metric is not None:
        return verdict(ComState.NOT_VERIFIED, metric.reason or "no result stored")
    return verdict(*_untested(run, com))


def _untested(run: ComRecord, com: str) -> tuple[ComState, str]:
    """An available COM without a station check: either the plan had no check phase for it
    (parity RAID follows the RAID level, the technician verifies it) or the phase did not
    end with a result."""
    phase = next((p for p in run.phases if p.info.kind is PhaseKind.COM_CHECK
                  and (p.info.profile or "").removeprefix("COM-") == com), None)
    if phase is None:
        return ComState.NOT_VERIFIED, f"no station check for this COM: {RECORD_BY_HAND}"
    if phase.status is PhaseStatus.PENDING:
        return ComState.NOT_TESTED, (f"phase {phase.info.name} never started: the run ended "
                                     f"{run.status.value}")
    ended = f"phase {phase.info.name} {phase.status.value}"
    return ComState.NOT_TESTED, ended + (f": {phase.error}" if phase.error else "")
