"""The fio zones' own share of a band, for the tests that compare them with the reference
curve (tests/test_hotband_generator.py). Reading fio's per-IO log and judging a pattern is the
station's, in drivers/fio/access_log.py and app/sequencer/access_check.py: the tests use that
code."""

from __future__ import annotations

import bisect
from collections.abc import Sequence


def zone_share_below(zones: Sequence[tuple[int, int]], x: float) -> float:
    """Share of the IOs fio puts below ``x`` bytes with ``zones`` (uniform inside each): what
    the approximation gives, to compare with :func:`drivers.fio.access_log.share_below`."""
    edges = [0]
    for _, size in zones:
        edges.append(edges[-1] + size)
    k = bisect.bisect_right(edges, x) - 1
    done = sum(p for p, _ in zones[:k]) / 100
    if k >= len(zones):
        return done
    return done + zones[k][0] / 100 * (x - edges[k]) / zones[k][1]
