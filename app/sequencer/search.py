"""Choosing 'intensity 100' from the search probes (method-notes §2).

Random profiles: the highest outstanding IO whose average response time stays within the
method's limit (default 30 ms, the SPC-1 threshold). Sequential profiles: the probe with the
highest throughput. If even the lightest probe misses the limit, the lightest is used and the
result says so — the profile's metric will then be INVALID for its response time.
"""

from __future__ import annotations

from app.sequencer.events import SearchResult


def choose_intensity(profile: str, probes: list[tuple[int, float, float]], random: bool,
                     ops_unit: str, jobs: int, limit_ms: float) -> SearchResult:
    """``probes`` are (queue depth, ops rate, average response ms) in probing order."""
    if not probes:
        raise ValueError(f"no search probes ran for {profile}")
    if random:
        within = [p for p in probes if p[2] <= limit_ms]
        chosen = max(within, key=lambda p: p[1]) if within else probes[0]
    else:
        chosen = max(probes, key=lambda p: p[1])
    qd, rate, resp = chosen
    return SearchResult(profile, qd, jobs, rate, ops_unit, resp, None, tuple(probes))
