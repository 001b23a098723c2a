"""The run's complete event log for the reports: its life cycle and its stored messages.

The storage keeps the sequencer's log messages (warnings, restarts, notes); the run's life
cycle — start, each phase's start and end with its status, each metric as computed, the run's
end — is stored as structured records instead. The GUI's live log shows both, so a report that
printed only the stored messages (6 lines against ~30) would hide when phases ran and ended;
this module merges both into one time-ordered log.
"""

from __future__ import annotations

from app.metrics.formatting import format_metric_value
from app.core.records import PhaseStatus, RunStatus
from app.sequencer.capacity_optimisation import not_valid_word
from app.storage.stored import StoredEvent, StoredRun

_OK_PHASE = (PhaseStatus.COMPLETED, PhaseStatus.SKIPPED)


def complete_log(run: StoredRun) -> tuple[StoredEvent, ...]:
    """Every event of ``run`` in time order (run-relative seconds)."""
    lines: list[StoredEvent] = [StoredEvent(
        0.0, "INFO", f"run started: {run.method_name} {run.method_version}, "
        f"{len(run.phases)} phases planned", None)]
    phase_end: dict[int, float] = {}
    for p in run.phases:
        if p.t_start is not None:
            again = f" (attempt {p.attempts}: restarted from its beginning)" \
                if p.attempts > 1 else ""
            lines.append(StoredEvent(p.t_start, "INFO", f"phase {p.info.name} started{again}",
                                     p.index))
        if p.status is PhaseStatus.PENDING or (p.t_end is None and p.t_start is None):
            continue
        t_end = p.t_end if p.t_end is not None else (run.duration_s or p.t_start or 0.0)
        phase_end[p.index] = t_end
        lines.append(StoredEvent(t_end, "INFO" if p.status in _OK_PHASE else "WARNING",
                                 f"phase {p.info.name} {p.status.value}"
                                 + (f": {p.error}" if p.error else ""), p.index))
    end = run.duration_s if run.duration_s is not None else max(
        [e.t for e in lines] + [e.t for e in run.events])
    for m in run.metrics:
        state = "VALID" if m.valid else f"{not_valid_word(m)} ({m.reason})"
        lines.append(StoredEvent(phase_end.get(m.phase_index, end), "INFO" if m.valid
                                 else "WARNING", f"{m.name} = {format_metric_value(m)} {m.unit} "
                                 f"{state}", m.phase_index))
    if run.status is not RunStatus.RUNNING:
        lines.append(StoredEvent(end, "INFO" if run.status is RunStatus.COMPLETED
                                 else "WARNING", f"run {run.status.value}"
                                 + (f": {run.error}" if run.error else ""), None))
    # stable: at equal times the life cycle line comes before the messages it explains
    return tuple(sorted([*lines, *run.events], key=lambda e: e.t))
