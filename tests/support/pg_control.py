"""Stop, kill and start again a throw-away PostgreSQL server of ``tests/pg_server.py`` by its
URL, for the tests of a server going away under a running station. Only the test's own server
is touched: its postmaster is found in its data directory's ``postmaster.pid``."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.engine import make_url

from tests.support import pg_server
from tests.support.time_budget import budget_s


class ServerControl:
    def __init__(self, url: str) -> None:
        self.url = url
        engine = sa.create_engine(url)
        with engine.connect() as conn:
            self.data = Path(conn.exec_driver_sql("SHOW data_directory").scalar_one())
        engine.dispose()
        self.port = make_url(url).port
        bindir = pg_server._bin_dir()
        assert bindir is not None
        self.ctl = str(bindir / "pg_ctl")

    def _postmaster(self) -> int:
        return int((self.data / "postmaster.pid").read_text().split()[0])

    def stop(self) -> None:
        """An orderly shutdown that ends every session (`pg_ctl stop -m fast`)."""
        pg_server._run_as_server_user([self.ctl, "-D", str(self.data), "-m", "fast", "-w",
                                       "stop"])

    def kill(self) -> None:
        """SIGKILL to the postmaster and every one of its processes."""
        parent = self._postmaster()
        children = [int(p) for p in os.listdir("/proc") if p.isdigit()
                    and _parent_of(int(p)) == parent]
        for pid in [parent, *children]:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + budget_s(10)
        while any(_alive(pid) for pid in [parent, *children]) and time.monotonic() < deadline:
            time.sleep(0.05)

    def start(self) -> None:
        """Start it again on its port; a few tries, since a killed server's shared memory and
        port are released a moment after its processes are gone."""
        root = self.data.parent
        for attempt in range(5):
            try:
                pg_server._run_as_server_user([self.ctl, "-D", str(self.data), "-l",
                                               str(root / "server.log"), "-w", "-o",
                                               f"-h 127.0.0.1 -p {self.port} -k {root} -F",
                                               "start"])
                return
            except subprocess.CalledProcessError:
                if attempt == 4:
                    log = (root / "server.log").read_text(errors="replace")[-1500:]
                    raise AssertionError(f"the server did not start again:\n{log}") from None
                time.sleep(0.5)


def _parent_of(pid: int) -> int:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return -1
    return int(stat.rsplit(")", 1)[1].split()[1])


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
