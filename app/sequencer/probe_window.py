"""A search probe's figures over the time its IO ran (docs/method-notes.md §2).

A load generator does not start IO the moment it is started: fio in client/server mode takes
~1.5–2 s on loopback to connect, send the job and lay out the file before a host's IO begins
(docs/fio.md). The sequencer therefore lets the engine time the probe itself (fio's
``runtime`` counts from the job's start, after that start-up) and waits for it, bounded by
``[search] startup_s``; here the slices before a host's first IO are left out, so start-up is
never counted as probe time. A probe that measured no IO is refused rather than read as 0 IOPS:
an intensity chosen from it would be meaningless.

Load hosts run in parallel, each with its own slices over the same wall-clock time, so the
probe's rate is the sum of the hosts' rates (each host's IO over its own IO time), not all IO
over the sum of their spans.
"""

from __future__ import annotations

from collections.abc import Sequence

from app.sequencer.search import Probe
from drivers.interfaces import WorkloadError, WorkloadInterval


def io_slices(slices: Sequence[WorkloadInterval]) -> list[WorkloadInterval]:
    """Each host's slices from its first one with IO on (the start-up before it dropped)."""
    kept: list[WorkloadInterval] = []
    started: set[str] = set()
    for s in slices:
        if s.ios or s.host in started:
            started.add(s.host)
            kept.append(s)
    return kept


def probe_figures(profile: str, qd: int, slices: Sequence[WorkloadInterval], unit: str,
                  waited_s: float, startup_s: float, probe_s: float) -> Probe:
    """(queue depth, ops rate, average response ms) of one probe; WorkloadError when it
    measured no IO in the ``waited_s`` it ran (naming the profile, depth and the limit).
    ``probe_s``, the probe's timed length, stands in for a host whose slices carry no time."""
    measured = io_slices(slices)
    ios = sum(s.ios for s in measured)
    if not ios:
        raise WorkloadError(
            f"probe {profile} at queue depth {qd} measured no IO in {waited_s:.1f} s: the load "
            f"generator did not start IO within [search] startup_s = {startup_s:g} s (a load "
            "host slow to start, or its target unreachable); no intensity is chosen from it")
    rate = 0.0
    for host in dict.fromkeys(s.host for s in measured):
        mine = [s for s in measured if s.host == host]
        span = sum(s.duration_s for s in mine)
        amount = (sum(s.ios for s in mine) if unit == "IOPS"
                  else sum(s.read_bytes + s.write_bytes for s in mine) / 2**20)
        rate += amount / (span or probe_s)
    resp = sum(s.avg_resp_ms * s.ios for s in measured) / ios
    return qd, rate, resp
