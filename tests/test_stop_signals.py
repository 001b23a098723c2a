"""A stop signal must reach a run whatever its thread is doing (the hang-up defect of issue 15).

The sequencer clears and waits on a ``threading.Event`` many times a second. When it ran on
the main thread, a signal handler could run while that thread held the event's lock; the
handler's abort then waited for the same lock forever. ``run_until_stopped`` keeps the work on
a worker so the handler, on the waiting main thread, can always take it.
"""

from __future__ import annotations

import errno
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from app.cli.console import ConsoleReporter
from app.sequencer import events as ev
from app.station.stop_signals import run_until_stopped
from tests.support.time_budget import budget_s

ROOT = Path(__file__).resolve().parent.parent

#: each trial: a worker spinning on Event.clear()/wait(0) (the sequencer's pattern, as tight
#: as it gets), SIGTERM after a random delay; the stop handler sets the same event
_TRIALS = textwrap.dedent("""
    import os, random, signal, sys, threading, time
    sys.path.insert(0, {root!r})
    from app.station.stop_signals import {runner}

    def trial(i):
        wake, stopped = threading.Event(), threading.Event()

        def work():
            while not stopped.is_set():
                wake.clear()
                wake.wait(0)
            return i

        def on_stop(signum, reason):
            stopped.set()
            wake.set()

        def send():
            time.sleep(random.uniform(0.01, 0.05))
            os.kill(os.getpid(), signal.SIGTERM)

        threading.Thread(target=send, daemon=True).start()
        return {runner}(work, on_stop)

    def watchdog():
        time.sleep(20)
        print("HUNG", flush=True)
        os._exit(3)

    threading.Thread(target=watchdog, daemon=True).start()
    for i in range({trials}):
        assert trial(i) == i
    print("OK", flush=True)
""")


@pytest.mark.realtime("a real station process stopped by a signal")
@pytest.mark.process
@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_a_stop_signal_never_deadlocks_a_run_that_spins_on_its_wake_event() -> None:
    """40 SIGTERMs into a tight clear/wait loop: every one stops the work. The same script
    with the work on the main thread (the old ``storwatt run``) hung in 11 of 20 tries."""
    script = _TRIALS.format(root=str(ROOT), runner="run_until_stopped", trials=40)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=budget_s(60))
    assert proc.stdout.strip() == "OK", (proc.returncode, proc.stdout, proc.stderr)


def test_the_worker_s_exception_reaches_the_caller() -> None:
    def work() -> None:
        raise LookupError("from the worker")

    with pytest.raises(LookupError, match="from the worker"):
        run_until_stopped(work, lambda signum, reason: None)


class _GoneTerminal:
    """A terminal after its hang-up: every write fails with EIO."""

    def __init__(self) -> None:
        self.writes = 0

    def write(self, text: str) -> int:
        self.writes += 1
        raise OSError(errno.EIO, "Input/output error")

    def flush(self) -> None:
        raise OSError(errno.EIO, "Input/output error")


def test_a_console_whose_terminal_went_away_stops_printing_without_failing_the_run() -> None:
    terminal = _GoneTerminal()
    reporter = ConsoleReporter(terminal)
    message = ev.LogMessage("WARNING", "meter reconnected", 1.0, None)
    reporter(message)  # raised OSError before: the run then ended FAILED, not ABORTED
    reporter(message)
    reporter.print_final("stored in the database")
    assert terminal.writes == 1  # tried once, then the console is detached
