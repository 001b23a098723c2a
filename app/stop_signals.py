"""Signals that stop a run the way Abort does, in the CLI and in the GUI.

Ctrl-C (SIGINT), a service stop or shutdown (SIGTERM) and a closed terminal or logout (SIGHUP)
all mean "stop now": the run must end ABORTED with everything measured so far stored and its
partial report written, not die half-way and be found INTERRUPTED at the next start.
"""

from __future__ import annotations

import os
import signal
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager

StopHandler = Callable[[int, str], None]  # (signal number, reason to record)


def stop_signals() -> dict[int, str]:
    """The stop signals this platform has, each with the reason recorded on the run."""
    reasons = {signal.SIGINT: "interrupted from the terminal (Ctrl-C)",
               signal.SIGTERM: "stopped by SIGTERM (service stop or shutdown)"}
    if hasattr(signal, "SIGHUP"):  # not on Windows
        reasons[signal.SIGHUP] = "the terminal closed (SIGHUP: logout or hang-up)"
    return reasons


def is_hang_up(signum: int) -> bool:
    return signum == getattr(signal, "SIGHUP", None)


@contextmanager
def stop_signals_handled(on_stop: StopHandler) -> Iterator[None]:
    """Call ``on_stop(signum, reason)`` for each stop signal while the block runs (main thread
    only, as Python requires); the previous handlers are restored afterwards."""
    previous = {}
    for signum, reason in stop_signals().items():
        previous[signum] = signal.signal(
            signum, lambda sig, _frame, reason=reason: on_stop(sig, reason))
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def leave_terminal() -> None:
    """After a hang-up the terminal is gone and every write to it fails (EIO): send what is
    still printed to the null device so the run can finish and store its result.

    A hung-up terminal no longer answers ``isatty`` (its ioctls fail too), so any character
    device on stdout/stderr is taken for it; files and pipes (a log, a service) are kept."""
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        for fd in (1, 2):
            try:
                is_device = stat.S_ISCHR(os.fstat(fd).st_mode)
            except OSError:
                continue  # closed: nothing will be written there anyway
            if is_device:
                os.dup2(null, fd)
    finally:
        os.close(null)
