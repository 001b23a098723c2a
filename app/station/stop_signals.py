"""Signals that stop a run the way Abort does, in the CLI and in the GUI.

Ctrl-C (SIGINT), a service stop or shutdown (SIGTERM) and a closed terminal or logout (SIGHUP)
all mean "stop now": the run must end ABORTED with everything measured so far stored and its
partial report written, not die half-way and be found INTERRUPTED at the next start.
"""

from __future__ import annotations

import os
import signal
import stat
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import TypeVar

StopHandler = Callable[[int, str], None]  # (signal number, reason to record)
T = TypeVar("T")
#: how often the waiting main thread wakes (Windows delivers Ctrl-C only between waits)
_JOIN_POLL_S = 0.5


def stop_signals() -> dict[int, str]:
    """The stop signals this platform has, each with the reason recorded on the run."""
    reasons: dict[int, str] = {signal.SIGINT: "interrupted from the terminal (Ctrl-C)",
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
        previous[signum] = signal.signal(signum, _handler(on_stop, reason))
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _handler(on_stop: StopHandler, reason: str) -> Callable[[int, FrameType | None], None]:
    """A signal handler calling ``on_stop`` with the signal and ``reason``."""
    return lambda signum, _frame: on_stop(signum, reason)


def run_until_stopped(work: Callable[[], T], on_stop: StopHandler, name: str = "run") -> T:
    """Run ``work`` on a worker thread while the main thread waits with the stop signals
    handled; return its result or raise its exception.

    Why not run ``work`` on the main thread: a Python signal handler runs on the main thread
    between two bytecodes of whatever it was doing. If that was inside a ``threading.Event``
    (the sequencer clears and waits on its wake event many times a second) the thread holds
    the event's lock, and a handler that sets the same event waits for that lock forever: the
    run hangs with its terminal gone. Reproduced 11 times in 20 with a tight clear/wait loop,
    and it was the cause of the hang-up defect in docs/reliability.md. Here the main thread
    only waits on the worker, so ``on_stop`` may take any lock the worker takes."""
    results: list[T] = []
    errors: list[BaseException] = []

    def target() -> None:
        try:
            results.append(work())
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread as is
            errors.append(exc)

    worker = threading.Thread(target=target, name=name, daemon=True)
    with stop_signals_handled(on_stop):
        worker.start()
        while worker.is_alive():
            worker.join(_JOIN_POLL_S)
    if errors:
        raise errors[0]
    return results[0]


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
