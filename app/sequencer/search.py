"""Choosing 'intensity 100' from the search probes (docs/method-notes.md §2).

Random profiles: the highest outstanding IO whose average response time stays within the
method's limit (default 30 ms, the SPC-1 threshold). The probe list is coarse (queue depths
doubling), so stopping at the last probe under the limit reads the SUT low: the simulated SUT's
MW1 gives 18.0 ms at 128 outstanding IOs and 33.5 ms at the next probe, and intensity 100 lies
between. The search therefore refines between the last probe within the limit and the first
over it, halving the queue-depth interval (outstanding IO = queue depth × jobs, so the step is
``jobs`` outstanding IOs) until a probe is within ``search.tolerance_pct`` of the limit or no
whole queue depth is left between the two (the project's reading, method-notes §2).

Sequential profiles: the probe with the highest throughput. Whatever the pattern, a search that
ends without reaching the limit (every probe within it, or throughput still rising at the
deepest probe) says "load generator limit reached": the figure is the load generator's, not
the SUT's. If even the lightest probe misses the limit, the lightest is used and the result
says so — the profile's metric will then be INVALID for its response time.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

from app.sequencer.events import SearchResult
from drivers.interfaces import GeneratorCeiling

#: (queue depth, ops rate, average response ms), as a probe reports it
Probe = tuple[int, float, float]
#: whether the SUT delivered what a probe asked (a rate-capped multi-stream profile)
Kept = Callable[[Probe], bool]
#: the total IOPS a multi-stream profile's search step asks (its steps are rates, not queue
#: depths: ``IntensitySearch.stream_rate``); None for a profile searched by queue depth
RateOf = Callable[[int], int]
#: a sequential probe that gains less than this over the previous one has levelled off
PLATEAU_GAIN = 1.02
LOAD_GENERATOR_LIMIT = "load generator limit reached"
NO_PROBE_WITHIN = "no probe within the"


def within(resp_ms: float, limit_ms: float) -> bool:
    """A probe meets the limit (NaN — no IO completed — never does)."""
    return resp_ms <= limit_ms


def meets(probe: Probe, limit_ms: float, kept: Kept | None = None) -> bool:
    """A probe meets the limit, and — for a rate-capped multi-stream profile — the SUT kept
    up with the rate it was asked (``kept``): one that falls short is saturated, over its
    intensity 100 whatever its response time (method-notes §2)."""
    return within(probe[2], limit_ms) and (kept is None or kept(probe))


def close_enough(resp_ms: float, limit_ms: float, tolerance_pct: float) -> bool:
    """Within the limit and no further below it than the method's tolerance."""
    return within(resp_ms, limit_ms) and resp_ms >= limit_ms * (1 - tolerance_pct / 100)


def probe_over_limit(probes: list[Probe], random: bool, limit_ms: float,
                     kept: Kept | None = None) -> bool:
    """Stop the probe list once a random profile crosses the response-time limit, or a
    sequential one stops gaining throughput (< 2 % over the previous probe)."""
    _, rate, resp = probes[-1]
    if random:
        return not meets(probes[-1], limit_ms, kept)
    return len(probes) > 1 and rate < probes[-2][1] * PLATEAU_GAIN


def bracket(probes: list[Probe], limit_ms: float,
            kept: Kept | None = None) -> tuple[Probe, Probe] | None:
    """The deepest probe within the limit and the shallowest deeper one over it (None when
    the probes do not straddle the limit)."""
    inside = [p for p in probes if meets(p, limit_ms, kept)]
    if not inside:
        return None
    low = max(inside, key=lambda p: p[0])
    over = [p for p in probes if p[0] > low[0] and not meets(p, limit_ms, kept)]
    return (low, min(over, key=lambda p: p[0])) if over else None


def next_refinement(probes: list[Probe], limit_ms: float, tolerance_pct: float,
                    kept: Kept | None = None) -> int | None:
    """The queue depth to probe next (bisection), or None when the search is done: a probe
    is within tolerance of the limit, the probes do not straddle it, or no whole queue depth
    is left between the two that do."""
    if any(close_enough(p[2], limit_ms, tolerance_pct) for p in probes):
        return None
    found = bracket(probes, limit_ms, kept)
    if found is None:
        return None
    low, high = found[0][0], found[1][0]
    return (low + high) // 2 if high - low > 1 else None


def choose_intensity(profile: str, probes: list[Probe], random: bool, ops_unit: str,
                     jobs: int, limit_ms: float, tolerance_pct: float,
                     listed_depths: int, generator: tuple[GeneratorCeiling, ...] = (),
                     generator_max_share_pct: float = 50.0,
                     kept: Kept | None = None, rate_of: RateOf | None = None) -> SearchResult:
    """``probes`` in probing order, the first ``listed_depths`` from the method's list and any
    after them refinements; ``generator`` what the load generator alone reached at the listed
    steps (:func:`generator_note`); ``rate_of`` names a rate step's asked IOPS in the notes."""
    if not probes:
        raise ValueError(f"no search probes ran for {profile}")
    listed = probes[:listed_depths]
    if random:
        inside = [p for p in probes if meets(p, limit_ms, kept)]
        chosen = max(inside, key=lambda p: p[1]) if inside else probes[0]
        note = _random_note(chosen, listed, probes, jobs, limit_ms, tolerance_pct, kept,
                            rate_of)
    else:
        chosen = max(probes, key=lambda p: p[1])
        rising = len(listed) == listed_depths and not probe_over_limit(listed, False, limit_ms)
        note = (f"{LOAD_GENERATOR_LIMIT}: throughput still rising at the deepest probe "
                f"({_depth(listed[-1][0], jobs, rate_of)})" if rising else "")
    qd, rate, resp = chosen
    limited = generator_note(chosen, ops_unit, generator, generator_max_share_pct)
    note = "; ".join(n for n in (limited, note) if n)
    return SearchResult(profile, qd, jobs, rate, ops_unit, resp, None, tuple(probes), note,
                        generator)


def generator_note(chosen: Probe, ops_unit: str, generator: tuple[GeneratorCeiling, ...],
                   max_share_pct: float) -> str:
    """"load generator limit reached: …" when the chosen figure is not clearly the SUT's, or
    ``""`` (method-notes §2, "The generator is never the bottleneck"). The ceiling is the one
    of the listed step at or above the chosen one (the generator does more with more IO in
    flight). An uncapped job file fails when the figure is above ``max_share_pct`` of what
    fio alone reached with it; a capped one (a multi-stream profile, checked at its rate ×
    100 / ``max_share_pct``) when fio alone could not keep that rate in the asked shares."""
    if not generator:
        return ""
    step, rate, _ = chosen
    at = min((g for g in generator if g.step >= step), key=lambda g: g.step,
             default=max(generator, key=lambda g: g.step))
    if at.asked_iops is not None:
        if at.kept_up():
            return ""
        return (f"{LOAD_GENERATOR_LIMIT}: fio alone, with no IO behind it, ran the same job "
                f"file at {at.iops:.0f} of {at.asked_iops:.0f} IOPS asked (step {at.step}, the "
                f"streams' shares off by up to {at.share_error_pts:.2f} points), so it cannot "
                f"hold {100 / max_share_pct:g}× the chosen rate")
    ceiling = at.iops if ops_unit == "IOPS" else at.mib_s
    if rate <= ceiling * max_share_pct / 100:
        return ""
    return (f"{LOAD_GENERATOR_LIMIT}: {rate:.1f} {ops_unit} is above {max_share_pct:g} % of "
            f"the {ceiling:.1f} {ops_unit} fio alone generated from the same job file with no "
            f"IO behind it (null engine, step {at.step})")


def _depth(qd: int, jobs: int, rate_of: RateOf | None = None) -> str:
    """A probe's intensity in the words of its search: a queue depth's outstanding IOs, or a
    rate step's asked IOPS (a multi-stream profile, each stream capped at its share)."""
    if rate_of is not None:
        return _at(qd, rate_of)
    return f"queue depth {qd} × {jobs} job(s), {qd * jobs} outstanding IOs"


def _at(qd: int, rate_of: RateOf | None) -> str:
    """``queue depth 4``, or ``rate step 4: 4000 IOPS asked``."""
    return f"queue depth {qd}" if rate_of is None else \
        f"rate step {qd}: {rate_of(qd)} IOPS asked"


def _random_note(chosen: Probe, listed: list[Probe], probes: list[Probe], jobs: int,
                 limit_ms: float, tolerance_pct: float, kept: Kept | None = None,
                 rate_of: RateOf | None = None) -> str:
    """Why the chosen probe is not within tolerance of the limit, or ``""`` when it is."""
    qd, _, resp = chosen
    if not within(resp, limit_ms):
        return (f"{NO_PROBE_WITHIN} {limit_ms:g} ms limit: the lightest "
                f"({_depth(qd, jobs, rate_of)}) gave {resp:.1f} ms")
    if close_enough(resp, limit_ms, tolerance_pct):
        return ""
    if all(meets(p, limit_ms, kept) for p in listed):
        return (f"{LOAD_GENERATOR_LIMIT}: the deepest probe "
                f"({_depth(listed[-1][0], jobs, rate_of)}) "
                f"gave {listed[-1][2]:.1f} ms, below the {limit_ms:g} ms limit")
    found = bracket(probes, limit_ms, kept)
    above = f" and {found[1][2]:.1f} ms at {_at(found[1][0], rate_of)}" if found else ""
    step = "queue depth" if rate_of is None else "rate step"
    return (f"no whole {step} left between the probes: {resp:.1f} ms at {_at(qd, rate_of)}"
            f"{above}, not within {tolerance_pct:g} % of the {limit_ms:g} ms limit")


@dataclass(frozen=True)
class Recheck:
    """What the re-check of one profile found (:func:`recheck`)."""

    message: str  # the run-log line
    passed: bool  # the response time met the limit
    retry: SearchResult | None = None  # restart the profile with this intensity


def recheck(found: SearchResult, rate: float, resp_ms: float, limit_ms: float,
            rate_of: RateOf | None = None) -> Recheck:
    """Judge the first interval of a searched random profile, run at the chosen intensity
    (the re-check before its stabilisation, method-notes §2): the log line, and the search
    result to restart the profile with when the response time is over the limit — the next
    bisection step below the failing depth (between it and the deepest shallower probe that
    met the limit) — or None to go on."""
    qd, jobs, profile = found.queue_depth, found.jobs, found.profile
    head = (f"intensity re-check before {profile}'s stabilisation: {resp_ms:.1f} ms in its "
            f"first interval at {_depth(qd, jobs, rate_of)}")
    if within(resp_ms, limit_ms):
        return Recheck(f"{head}, within the {limit_ms:g} ms limit", True)
    if math.isnan(resp_ms):  # no IO completed yet (a load host still starting): no evidence
        return Recheck(f"{head}: no IO completed in that interval (the load generator was "
                       "still starting), so the intensity is not re-checked", False)
    low = max((p[0] for p in found.probes if p[0] < qd and within(p[2], limit_ms)), default=0)
    lower = (low + qd) // 2 if qd - low > 1 else low
    if lower < 1:
        step = "queue depth" if rate_of is None else "rate step"
        return Recheck(f"{head}, over the {limit_ms:g} ms limit; no lower {step} to try, "
                       "the profile runs on", False)
    note = (f"re-check before {profile}: {resp_ms:.1f} ms over the {limit_ms:g} ms limit at "
            f"{_at(qd, rate_of)}; re-refined to {_at(lower, rate_of)}")
    # the new depth is not measured yet: its figures come from the restarted profile's metric.
    # The same job file's null-engine pre-run carries over: it ran at every listed step, the
    # ceiling rule reads the listed step at or above the new one, and the pattern does not
    # depend on the depth (method-notes §2, "A re-check or a resumed run")
    retry = replace(found, queue_depth=lower, ops_rate=math.nan, avg_response_ms=math.nan,
                    rate_iops=None, probes=found.probes + ((qd, rate, resp_ms),), note=note)
    return Recheck(f"{head}, over the {limit_ms:g} ms limit: {profile} restarts at "
                   f"{_depth(lower, jobs, rate_of)}", False, retry)
