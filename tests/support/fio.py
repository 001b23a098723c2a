"""Real fio for the workload-engine tests: whether it is installed, an engine on a scratch
file, free loopback ports and fio servers on them (a load host's ``fio --server``).

Ports come from the kernel (bind to port 0), never a fixed number, so tests running side by
side in pytest-xdist workers do not collide.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from drivers.clock import MonotonicClock
from drivers.fio.engine import FioEngine
from drivers.fio.safety import TargetPolicy
from drivers.interfaces import WorkloadProfile
from tests.support.fio_orphans import kill_server
from tests.support.time_budget import budget_s

KIB = 1024

needs_fio = pytest.mark.skipif(not any(os.access(os.path.join(p, "fio"), os.X_OK)
                                       for p in os.environ["PATH"].split(os.pathsep)),
                               reason="fio is not installed (CI installs it)")

# method-notes §2 hot band: 13 streams
HOT = (tuple((f"sr{i}", 0, 100, 5, 100, False, 256 * KIB) for i in range(5))
       + tuple((f"sw{i}", 0, 100, 5, 0, False, 256 * KIB) for i in range(3))
       + (("uni", 0, 100, 6, 50, True, 8 * KIB), ("hot1", 10, 8, 28, 70, True, 8 * KIB),
          ("hot2", 32, 8, 14, 70, True, 8 * KIB), ("hot3", 55, 8, 7, 70, True, 8 * KIB),
          ("hot4", 80, 8, 5, 70, True, 8 * KIB)))
HOTBAND = WorkloadProfile("HOTBAND", 8 * KIB, 70, True, 8 * KIB, duration_s=30,
                          kind="conditioning", streams=HOT)


def engine_for(tmp_path: Path, **kw) -> FioEngine:
    """A real fio engine on an 8 MiB scratch file in ``tmp_path`` (psync, real clock)."""
    return FioEngine([str(tmp_path / "target.dat")], clock=MonotonicClock(),
                     policy=TargetPolicy(create_size=8 << 20), ioengine="psync",
                     workdir=tmp_path, **kw)


def free_port() -> int:
    """A loopback port nothing listens on (the kernel's choice)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def fio_servers(folder: Path, count: int = 2) -> Iterator[list[str]]:
    """``count`` fio servers on free loopback ports, as load hosts ``HOST:PORT``; killed after."""
    ports = [free_port() for _ in range(count)]
    servers = [subprocess.Popen(["fio", f"--server=ip:127.0.0.1,{p}"], cwd=folder,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True) for p in ports]
    try:
        for port in ports:
            deadline = time.monotonic() + budget_s(10)
            while socket.socket().connect_ex(("127.0.0.1", port)) and time.monotonic() < deadline:
                time.sleep(0.1)
        yield [f"127.0.0.1:{p}" for p in ports]
    finally:
        for s in servers:
            kill_server(s.pid)
            s.wait()
