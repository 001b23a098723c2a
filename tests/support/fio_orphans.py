"""No fio left behind by a test (issue 40): a stopped fio job, in a session of its own, outlived
its phase with the target open. ``tests/conftest.py`` wraps every ``fio`` test in
:func:`no_fio_left_behind`. Light on purpose: conftest imports it in every worker.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from drivers.fio import sessions
from tests.support.time_budget import budget_s

#: set in this test process's environment, so inherited by every fio it starts: the machine may
#: run other suites whose fio are none of this one's business
OWNER = "STORWATT_TEST_FIO_OWNER"
os.environ.setdefault(OWNER, str(os.getpid()))


def orphaned_fio(started_after: float) -> list[str]:
    """fio processes re-parented to init (their parent, the station's fio or the station, is
    gone) that started after ``started_after`` (seconds since boot): a job or a fio the station
    left behind (issue 40: a stopped job, in a session of its own, outlived its phase)."""
    ticks = os.sysconf("SC_CLK_TCK")
    found = []
    for stat in sessions.all_stats():
        try:
            with open(f"{sessions.PROC}/{stat.pid}/stat", "rb") as f:
                raw = f.read()
        except OSError:
            continue
        comm = raw[raw.find(b"(") + 1:raw.rfind(b")")]
        start = int(raw[raw.rfind(b")") + 2:].split()[19]) / ticks
        if (comm == b"fio" and stat.ppid == 1 and start >= started_after
                and _owned(stat.pid)):
            found.append(f"pid {stat.pid} (state {stat.state}, session {stat.session})")
    return found


def _owned(pid: int) -> bool:
    """Whether ``pid`` was started by this test process (it carries :data:`OWNER`)."""
    try:
        with open(f"{sessions.PROC}/{pid}/environ", "rb") as f:
            return f"{OWNER}={os.environ[OWNER]}".encode() in f.read().split(b"\0")
    except OSError:
        return False


def seconds_since_boot() -> float:
    with open("/proc/uptime") as f:
        return float(f.read().split()[0])


@contextmanager
def no_fio_left_behind(grace_s: float = 5.0) -> Iterator[None]:
    """Fail the test if a fio it started is left running re-parented to init once it ends (a
    station killed on purpose gives its fio a moment: they end on their death signal)."""
    if not os.path.isdir(sessions.PROC):
        yield
        return
    began = seconds_since_boot() - 1.0  # /proc/uptime and the start ticks round differently
    yield
    deadline = time.monotonic() + budget_s(grace_s)
    while (left := orphaned_fio(began)) and time.monotonic() < deadline:
        time.sleep(0.1)
    if left:
        for pid in (int(entry.split()[1]) for entry in left):
            for sig in (signal.SIGCONT, signal.SIGKILL):
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    pass
        pytest.fail(f"fio left behind after the test (now killed): {', '.join(left)}")


def kill_server(pid: int) -> None:
    """SIGKILL a ``fio --server`` the test started, with the job processes it forked: each is
    in a session of its own, which the server's process group does not reach (found by
    :func:`no_fio_left_behind`: a killed server's job ran on, re-parented to init)."""
    jobs = sessions.child_sessions(pid, pid)
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    sessions.end_sessions(jobs, term_s=0.0, kill_s=budget_s(5))
