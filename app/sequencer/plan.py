"""Turn a method's phase plan into the concrete list of phases a run executes.

Order (method-notes §2): pre-fill → intensity search (first pass) → ranging pass when the
method asks for a dedicated one (method-notes §3) → conditioning → active profiles in the
method's order → sweep steps, then demand-intensity cells (method-notes §6) → ready idle → one COM
check per declared COM. The search runs
after pre-fill so it probes a filled SUT, and before conditioning because conditioning runs MW1
at the intensity the search found.
"""

from __future__ import annotations

from app.method.model import STEADY_STATE_PHASE, Method, PhasePlan
from app.core.records import PhaseInfo, PhaseKind, RunConfig


def search_profiles(method: Method, plan: PhasePlan) -> list[str]:
    """Profiles that need a search probe (:meth:`Method.search_profiles`)."""
    return list(method.search_profiles(plan))


def build_phases(method: Method, config: RunConfig) -> tuple[PhaseInfo, ...]:
    plan = method.plan_for(config.category)
    L = method.interval_s
    phases: list[PhaseInfo] = []

    def add(kind: PhaseKind, name: str, profile: str | None, planned_s: float,
            stab: int = 0, meas: int = 0) -> None:
        phases.append(PhaseInfo(len(phases), kind, name, profile, planned_s, stab, meas))

    if plan.prefill:
        add(PhaseKind.PREFILL, "Pre-fill", "PREFILL", plan.prefill_max_intervals * L
            if plan.prefill_max_intervals else 0.0)
    search_s = method.search_max_s(plan)
    if search_s:
        add(PhaseKind.SEARCH, "Intensity search", None, search_s)
    if method.ranging_pass_s(plan) and not config.range_plan_from:  # advised: no pass again
        add(PhaseKind.RANGING, "Ranging pass", None, method.ranging_pass_s(plan))
    if plan.conditioning_intervals:
        add(PhaseKind.CONDITIONING, "Conditioning", plan.conditioning_profile,
            plan.conditioning_intervals * L)
    for step in plan.active:
        n = step.stabilisation_intervals + step.measurement_intervals
        add(PhaseKind.ACTIVE, step.profile, step.profile, n * L,
            step.stabilisation_intervals, step.measurement_intervals)
    if plan.sweep is not None:  # every step planned; the stop rule skips the rest (§6)
        sweep = plan.sweep
        for units in sweep.units:
            add(PhaseKind.SWEEP, sweep.phase_name(units), sweep.profile,
                sweep.step_intervals() * L, sweep.stabilisation_intervals,
                sweep.measurement_intervals)
    if plan.demand_intensity is not None:  # the PTS matrix runs whole (§6)
        di = plan.demand_intensity
        if di.steady_state_rounds:  # ends early at steady state (app/sequencer/sweep.py)
            add(PhaseKind.CONDITIONING, STEADY_STATE_PHASE, di.profile,
                di.steady_state_rounds * L)
        for threads, qd in di.cells():
            add(PhaseKind.SWEEP, di.phase_name(threads, qd), di.profile,
                di.step_intervals() * L, di.stabilisation_intervals, di.measurement_intervals)
    add(PhaseKind.READY_IDLE, "Ready idle", None, plan.ready_idle_intervals * L,
        0, plan.ready_idle_intervals)
    for com in config.sut.coms_declared:
        add(PhaseKind.COM_CHECK, f"COM {com}", f"COM-{com}", plan.com_check_intervals * L)
    return tuple(phases)


def latest_extension_s(method: Method, phase: PhaseInfo) -> float:
    """How much longer than planned ``phase`` may run: an active profile's stabilisation
    extends until the WMA criterion holds, up to ``stability.max_stabilisation_intervals``
    (method-notes §4). The engine gets this room; the review page shows the latest end."""
    if phase.kind is not PhaseKind.ACTIVE:
        return 0.0
    extra = method.stability.max_stabilisation_intervals - phase.stabilisation_intervals
    return max(0, extra) * method.interval_s
