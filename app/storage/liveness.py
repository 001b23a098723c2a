"""Is a RUNNING run still being written? Writer identity, boot identity and the orphan rule.

The writer records on its run who writes it (host, process id, boot id) and refreshes a
heartbeat with every commit (and while idle). A process id alone cannot tell a live run from a
crashed one: after a reboot the same number often belongs to another process, and the run would
then stay RUNNING for ever. So a run on this host is orphaned when the machine booted since
(boot id differs), or its process is gone, or it has shown no sign of life for too long; a run
written on another host can only be judged by its heartbeat.
"""

from __future__ import annotations

import os
import socket
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: A RUNNING run whose writer has not committed for this long is orphaned (the writer beats
#: every ``HEARTBEAT_INTERVAL_S`` even while a run is paused, so only a dead one goes quiet).
STALE_HEARTBEAT_S = 120.0
HEARTBEAT_INTERVAL_S = 10.0
#: Boot times derived from the clocks wobble by clock corrections; a reboot moves them by at
#: least the previous boot's uptime, which is longer than this for any run worth recovering.
BOOT_TIME_TOLERANCE_S = 60.0
LINUX_BOOT_ID = Path("/proc/sys/kernel/random/boot_id")


def boot_id() -> str:
    """An identity of the current boot: the kernel's random boot id on Linux, elsewhere the
    boot time (wall clock minus the monotonic clock, which starts at boot) to the second."""
    try:
        return "linux:" + LINUX_BOOT_ID.read_text(encoding="ascii").strip()
    except OSError:
        return f"boot-time:{round(time.time() - time.monotonic())}"


def same_boot(recorded: str, current: str) -> bool:
    """Whether two boot identities name the same boot (boot times within a tolerance)."""
    if recorded == current:
        return True
    kind_a, _, value_a = recorded.partition(":")
    kind_b, _, value_b = current.partition(":")
    if kind_a == kind_b == "boot-time":
        try:
            return abs(float(value_a) - float(value_b)) <= BOOT_TIME_TOLERANCE_S
        except ValueError:
            return False
    return False


def pid_alive(pid: int) -> bool:
    """Whether a process with this id exists on this machine (never signals it)."""
    if sys.platform == "win32":  # os.kill(pid, 0) would terminate the process on Windows
        import ctypes

        handle = ctypes.windll.kernel32.OpenProcess(0x1000, False, pid)  # QUERY_LIMITED_INFO
        if not handle:
            return False
        code = ctypes.c_ulong()
        ctypes.windll.kernel32.GetExitCodeProcess(handle, ctypes.byref(code))
        ctypes.windll.kernel32.CloseHandle(handle)
        return code.value == 259  # STILL_ACTIVE
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@dataclass(frozen=True)
class Machine:
    """The machine judging the runs; tests inject another boot, clock or process table."""

    host: str = field(default_factory=socket.gethostname)
    boot: str = field(default_factory=boot_id)
    pid_alive: Callable[[int], bool] = pid_alive
    now: Callable[[], float] = time.time


def writer_identity(machine: Machine | None = None) -> dict[str, Any]:
    """The ``runs`` columns naming this process as the run's writer."""
    machine = machine or Machine()
    return {"writer_host": machine.host, "writer_pid": os.getpid(),
            "writer_boot": machine.boot}


@dataclass(frozen=True)
class WriterMark:
    """What a RUNNING run says about its writer (any of it may be missing on old rows)."""

    host: str | None
    pid: int | None
    boot: str | None
    heartbeat: float | None


def orphan_reason(mark: WriterMark, machine: Machine) -> str:
    """Why no live writer owns the run any more, or "" while one may still write it."""
    if mark.pid is None:
        return "its writer closed without finishing it"
    silent = None if mark.heartbeat is None else machine.now() - mark.heartbeat
    stale = silent is None or silent > STALE_HEARTBEAT_S
    if mark.host != machine.host:
        return _silence(f"host {mark.host}", silent) if stale else ""
    if mark.boot and not same_boot(mark.boot, machine.boot):
        return "the computer restarted since"
    if not machine.pid_alive(mark.pid):
        return f"its process {mark.pid} ended"
    return _silence(f"its process {mark.pid}", silent) if stale else ""


def _silence(writer: str, seconds: float | None) -> str:
    if seconds is None:
        return f"no heartbeat from {writer}"
    return f"no sign of life from {writer} for {seconds:.0f} s"
