"""Who writes a RUNNING run, and who may declare it stopped (issue 25 §1).

The writer records on its run who writes it (host, process id, boot id) and refreshes a
heartbeat with every commit (and while idle): facts for people reading the run. They never
decide whether the run is alive. A heartbeat is a reading of one machine's clock compared with
another's (a QA PC 3 minutes ahead took live runs for dead), and a process that is frozen or
paused beats no more than a dead one. What decides is the run's lock on its own station
(:mod:`app.storage.run_lock`): only a process that can take it — on the station that holds the
run's local record, once the writer's process is gone — marks the run INTERRUPTED. Every other
reader leaves the run as it finds it.
"""

from __future__ import annotations

import logging
import os
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.storage.run_lock import RunLock, RunLockError, RunLockHeld, RunLockMissing, lock_dir

log = logging.getLogger(__name__)

#: The writer refreshes the heartbeat this often even while a run is paused (for display).
HEARTBEAT_INTERVAL_S = 10.0
LINUX_BOOT_ID = Path("/proc/sys/kernel/random/boot_id")


def boot_id() -> str:
    """An identity of the current boot: the kernel's random boot id on Linux, elsewhere the
    boot time (wall clock minus the monotonic clock, which starts at boot) to the second."""
    try:
        return "linux:" + LINUX_BOOT_ID.read_text(encoding="ascii").strip()
    except OSError:
        return f"boot-time:{round(time.time() - time.monotonic())}"


@dataclass(frozen=True)
class Machine:
    """The station a process acts as; tests inject another host name, clock or data folder
    (a QA PC, a second bench) without root tricks."""

    host: str = field(default_factory=socket.gethostname)
    boot: str = field(default_factory=boot_id)
    now: Callable[[], float] = time.time
    locks: Path | None = None  # its run locks (default: the data folder's, run_lock.lock_dir)

    def lock_dir(self) -> Path:
        return self.locks or lock_dir()


def writer_identity(machine: Machine | None = None) -> dict[str, Any]:
    """The ``runs`` columns naming this process as the run's writer."""
    machine = machine or Machine()
    return {"writer_host": machine.host, "writer_pid": os.getpid(),
            "writer_boot": machine.boot, "heartbeat_wall": machine.now()}


def take_over(run_id: str, machine: Machine) -> RunLock | None:
    """The run's lock when ``machine`` recorded the run and its writer is gone; None when
    another station recorded it or its writer still lives (then nobody here may change it)."""
    try:
        return RunLock.take(run_id, machine.lock_dir(), host=machine.host)
    except (RunLockMissing, RunLockHeld):
        return None
    except RunLockError as exc:
        log.warning("run %s left as it is: %s", run_id[:8], exc)
        return None


def stop_reason(host: str | None, pid: int | None) -> str:
    """Why the run's writer is known to be gone (its lock was free), in the run's error."""
    if pid is None:
        return "its writer closed without finishing it"
    return f"its process {pid} on {host or 'this station'} ended"
