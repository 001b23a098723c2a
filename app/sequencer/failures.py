"""One line saying why something failed, the same for a run, a phase and a lab's tear-down.

Its own module so that the lab (``app.sequencer.equipment``), which the sequencer imports, words its
tear-down failures as the sequencer words a run's.
"""

from __future__ import annotations

from drivers.interfaces import InstrumentError, WorkloadError


def failure_reason(exc: BaseException) -> str:
    """One line saying why a run or phase failed: an instrument or workload error's own
    message, or for anything else (a bug) the exception type too, since its message alone
    ("division by zero", "list index out of range") names no cause."""
    if isinstance(exc, (InstrumentError, WorkloadError)):
        return str(exc)
    first = str(exc).strip().splitlines()
    return f"unexpected error {type(exc).__name__}" + (f": {first[0]}" if first else "")
