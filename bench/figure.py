"""The one record every benchmark returns: a measured figure against its goal.

Contract (bench/README.md): a module ``bench/bench_<area>.py`` exposes ``run() -> list[Figure]``
(``bench()`` is accepted too); ``python -m bench.run_all`` prints the figures and writes them to
docs/performance.md keyed by ``name``, so a name must be unique across all benches.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Figure:
    name: str  # unique across benches: rows of docs/performance.md are keyed by it
    value: float  # measured, never estimated; NaN when the measurement could not be made
    unit: str  # "ms", "s", "IOPS", "" for a ratio …
    goal: str  # human text: "≤ 200 ms", "reference", "informative"
    passed: bool | None  # None: no goal to meet (a reference figure)
    command: str = ""  # how to reproduce; run_all fills in its own command when empty


#: the name the first benches were written against; same type
BenchResult = Figure


def median_seconds(action: Callable[[], object], repeats: int = 5) -> float:
    """The median wall time of ``repeats`` calls: the build box is shared, and a single run
    mostly measures the neighbours."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times)
