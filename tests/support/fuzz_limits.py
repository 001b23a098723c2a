"""Bounds for the fuzz tests: a runaway case must fail the test, not take the machine down
(a fuzz script once grew to 13 GB). The address space is capped at what the process uses now
plus a margin, and given back afterwards; pytest-timeout bounds the time."""

from __future__ import annotations

import os
import resource
from collections.abc import Iterator
from contextlib import contextmanager

#: how much more address space a fuzz test may take than the process had when it started
FUZZ_MARGIN_BYTES = 3 * 2**30


@contextmanager
def memory_cap(margin: int = FUZZ_MARGIN_BYTES) -> Iterator[None]:
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    with open("/proc/self/statm") as statm:
        used = int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    cap = used + margin if hard == resource.RLIM_INFINITY else min(used + margin, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
