"""A throw-away PostgreSQL server for tests: own data directory, loopback port, stopped after.

Issue 8 asks for the lab-wide database to be tested against a real PostgreSQL server, not a
mock. Debian's postgresql package provides ``initdb``/``pg_ctl``; the server refuses to run as
root, so when the tests run as root (CI) it runs as the ``postgres`` system user.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from tests.support.time_budget import budget_s


def _bin_dir() -> Path | None:
    found = shutil.which("initdb")
    if found:
        return Path(found).resolve().parent
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return Path(candidates[-1]).parent if candidates else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def available() -> str:
    """'' when a server can be started here, else the reason it cannot."""
    if _bin_dir() is None:
        return "PostgreSQL server binaries (initdb) not installed"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root and there is no 'postgres' user to run the server"
    return ""


def _run_as_server_user(argv: list[str], **kwargs) -> subprocess.CompletedProcess:
    if os.geteuid() == 0:
        argv = ["runuser", "-u", "postgres", "--", *argv]
    return subprocess.run(argv, check=True, capture_output=True, text=True, timeout=budget_s(120),
                          **kwargs)


@contextmanager
def postgres_server() -> Iterator[str]:
    """Start a server; yields a SQLAlchemy URL (psycopg 3 driver) for database 'storwatt'."""
    bindir = _bin_dir()
    assert bindir is not None, available()
    root = Path(tempfile.mkdtemp(prefix="storwatt-pg-"))
    data = root / "data"
    if os.geteuid() == 0:
        user = pwd.getpwnam("postgres")
        os.chown(root, user.pw_uid, user.pw_gid)
    port = _free_port()
    ctl = str(bindir / "pg_ctl")
    try:
        _run_as_server_user([str(bindir / "initdb"), "-D", str(data), "-U", "storwatt",
                             "--auth=trust", "-E", "UTF8"])
        _run_as_server_user([ctl, "-D", str(data), "-l", str(root / "server.log"), "-w", "-o",
                             f"-h 127.0.0.1 -p {port} -k {root} -F", "start"])
        _run_as_server_user([str(bindir / "createdb"), "-h", "127.0.0.1", "-p", str(port),
                             "-U", "storwatt", "storwatt"])
        yield f"postgresql+psycopg://storwatt@127.0.0.1:{port}/storwatt"
    finally:
        try:
            _run_as_server_user([ctl, "-D", str(data), "-m", "immediate", "-w", "stop"])
        except (subprocess.CalledProcessError, FileNotFoundError):
            pass
        shutil.rmtree(root, ignore_errors=True)
