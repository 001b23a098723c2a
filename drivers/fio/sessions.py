"""fio's job processes, each in a session of its own, found and ended with the run (issue 40).

fio forks one process per job and each calls ``setsid()``: signalling the process group of the
fio the station started reaches the main process only. A job that was stopped (SIGSTOP, ^Z)
then survives its parent, still stopped, holding the scratch target open. So the station
learns each job's session from ``/proc`` while fio runs (a job outlives a killed parent
re-parented to init, where its parent's pid no longer finds it) and, at the end, continues and
terminates every process of those sessions, killing after a bound.

Linux only (``/proc``); elsewhere nothing is found and nothing is signalled.
"""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass

PROC = "/proc"


@dataclass(frozen=True)
class ProcStat:
    """The fields of ``/proc/<pid>/stat`` the station needs."""

    pid: int
    state: str  # R, S, D, T (stopped), t (traced), Z …
    ppid: int
    session: int

    @property
    def stopped(self) -> bool:
        return self.state in ("T", "t")


def read_stat(pid: int) -> ProcStat | None:
    """``pid``'s stat, or None once it is gone. The command name may hold spaces and
    parentheses, so the fields are read after its last ``)``."""
    try:
        with open(f"{PROC}/{pid}/stat", "rb") as f:
            raw = f.read()
    except OSError:
        return None
    fields = raw[raw.rfind(b")") + 2:].split()
    if len(fields) < 4:
        return None
    return ProcStat(pid, fields[0].decode(), int(fields[1]), int(fields[3]))


def all_stats() -> list[ProcStat]:
    if not os.path.isdir(PROC):
        return []
    out = []
    for name in os.listdir(PROC):
        if name.isdigit() and (stat := read_stat(int(name))) is not None:
            out.append(stat)
    return out


def child_sessions(parent: int, own_session: int) -> set[int]:
    """The sessions, other than ``own_session``, of ``parent``'s descendants (fio's jobs; a
    ``fio --server`` forks a backend that forks the jobs)."""
    stats = all_stats()
    children: dict[int, list[ProcStat]] = {}
    for stat in stats:
        children.setdefault(stat.ppid, []).append(stat)
    found, todo = set(), [parent]
    while todo:
        for child in children.get(todo.pop(), ()):
            if child.session != own_session:
                found.add(child.session)
            todo.append(child.pid)
    return found


def members(sessions: set[int]) -> list[ProcStat]:
    """Every live process in ``sessions`` (zombies have ended: they only wait for reaping)."""
    if not sessions:
        return []
    return [s for s in all_stats() if s.session in sessions and s.state != "Z"]


def signal_all(stats: list[ProcStat], sig: signal.Signals) -> None:
    for stat in stats:
        try:
            os.kill(stat.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def end_sessions(sessions: set[int], term_s: float, kill_s: float) -> list[int]:
    """Continue (SIGCONT) and terminate (SIGTERM) every process of ``sessions``, SIGKILL what
    is left after ``term_s``, wait up to ``kill_s`` more; the pids still alive (none, unless
    the kernel holds one in uninterruptible IO)."""
    left = members(sessions)
    for sig, wait_s in ((signal.SIGCONT, 0.0), (signal.SIGTERM, term_s),
                        (signal.SIGKILL, kill_s)):
        if not left:
            return []
        signal_all(left, sig)
        deadline = time.monotonic() + wait_s
        while (left := members(sessions)) and time.monotonic() < deadline:
            time.sleep(0.05)
    return [s.pid for s in left]
