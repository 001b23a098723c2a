"""The interpreter's thread switch interval while a run samples (issue 27).

CPython lets one thread run Python code at a time and asks a running thread to hand over only
every ``sys.getswitchinterval()`` seconds (5 ms by default). The sequencer thread polls the
meters on their grid; while the run writer, the load hosts' output readers or the GUI hold the
interpreter, a sampler that wakes on time waits up to one such interval per hand-off. With 16
inputs and 8 load hosts at 1 Hz that alone put the poll lateness p99 at 13.3 ms (goal 10 ms),
and 8.3 ms with a 1 ms interval (docs/performance.md, ``bench/bench_load_hosts.py``). The
interval is process-wide: it is shortened while at least one run is under way and given back
when the last one ends.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

#: the switch interval while a run samples: a hand-off costs a few microseconds, so a
#: thousand a second are well under 1 % of a core
SAMPLING_SWITCH_INTERVAL_S = 0.001

_lock = threading.Lock()
_runs = 0
_before = sys.getswitchinterval()


@contextmanager
def sampling_switch_interval() -> Iterator[None]:
    """Hold the switch interval at ``SAMPLING_SWITCH_INTERVAL_S`` (or shorter, if it already
    was) while the block runs; the interval found before the first of any concurrent runs is
    restored when the last one ends."""
    global _runs, _before
    with _lock:
        if _runs == 0:
            _before = sys.getswitchinterval()
            sys.setswitchinterval(min(_before, SAMPLING_SWITCH_INTERVAL_S))
        _runs += 1
    try:
        yield
    finally:
        with _lock:
            _runs -= 1
            if _runs == 0:
                sys.setswitchinterval(_before)
