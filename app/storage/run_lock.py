"""The run lock: which station is the one writer of a run (issue 25 §1).

A run has exactly one writer: the station that holds its local record. What proves it is an
operating-system lock (``flock`` on POSIX, ``msvcrt.locking`` on Windows) on a small file in
the station's data folder, ``<data dir>/run-locks/<run id>.lock``, created when the run starts
and held by the writer for the whole life of the run. The kernel drops the lock when the
process ends, however it ends (crash, ``kill -9``, power cut), and never while it lives — even
frozen (``SIGSTOP``) or silent for hours in a pause. So, unlike a heartbeat, the lock needs no
comparison of clocks, and unlike a process id it cannot be confused by a reboot or by another
computer with the same host name.

The rules that follow (``app/storage/db.py`` and ``app/station/resume.py`` apply them):

* A process that finds **no lock file** for a ``RUNNING`` run is not that run's station (a QA PC,
  another bench sharing the lab database): it never changes the run.
* A process that finds the file **locked** leaves the run alone: its writer is alive.
* Only a process that **takes** the lock — on the run's own station, once the writer's process
  is gone — may mark the run ``INTERRUPTED``, and only such a process may resume it; the
  continuation keeps the lock for its whole life.

The file is deleted once the run's ``RunFinished`` is stored; a run cut short keeps it, so its
station can still resume it. Its content (host, process id, time) is for people only: the lock
decides, never the text.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from app.core.paths import data_dir

SUFFIX = ".lock"


class RunLockError(Exception):
    """The run's lock could not be taken; the message says why in the technician's words."""


class RunLockMissing(RunLockError):
    """This station holds no record of the run: another station (or none) writes it."""


class RunLockHeld(RunLockError):
    """A live process holds the run's lock: it is the run's writer."""


def lock_dir() -> Path:
    """The station's run locks, in its data folder beside the run journals."""
    return data_dir() / "run-locks"


def lock_path(run_id: str, directory: Path | None = None) -> Path:
    return (directory or lock_dir()) / f"{run_id}{SUFFIX}"


def recorded_here(directory: Path | None = None) -> set[str]:
    """Ids of the runs this station holds a local record of (a lock file, held or not)."""
    folder = directory or lock_dir()
    try:
        return {p.name[:-len(SUFFIX)] for p in folder.iterdir() if p.name.endswith(SUFFIX)}
    except OSError:
        return set()


def _try_lock(fd: int) -> bool:
    """Take an exclusive lock on ``fd`` without waiting; False when another holds it. A lock
    belongs to this open file description, so a second open in the same process conflicts as
    another process would (what lets a test stand in for a live station)."""
    if sys.platform == "win32":
        import msvcrt

        os.lseek(fd, 0, os.SEEK_SET)
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


@dataclass
class RunLock:
    """A held run lock; :meth:`release` gives it up (the kernel does it if the process dies)."""

    run_id: str
    path: Path
    fd: int | None

    @classmethod
    def create(cls, run_id: str, directory: Path | None = None, *,
               host: str | None = None) -> RunLock:
        """Take the lock of a run starting now on this station."""
        return cls._acquire(run_id, directory, host, new=True)

    @classmethod
    def take(cls, run_id: str, directory: Path | None = None, *,
             host: str | None = None) -> RunLock:
        """Take over the lock of a run this station recorded, once its writer is gone."""
        return cls._acquire(run_id, directory, host, new=False)

    @classmethod
    def _acquire(cls, run_id: str, directory: Path | None, host: str | None, *,
                 new: bool) -> RunLock:
        path = lock_path(run_id, directory)
        flags = os.O_RDWR | getattr(os, "O_BINARY", 0) | (os.O_CREAT if new else 0)
        try:
            if new:
                path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, flags, 0o644)
        except FileNotFoundError:
            raise RunLockMissing(
                f"this station holds no record of run {run_id[:8]} (no run lock {path}): it "
                "was recorded by another station, and only that station may change or resume "
                "it") from None
        except OSError as exc:
            raise RunLockError(f"cannot open the run lock {path}: {exc.strerror}") from exc
        try:
            if not _try_lock(fd):
                raise RunLockHeld(f"run {run_id[:8]} is being written by a running StorWatt on "
                                  f"this station (it holds {path}): only that process may "
                                  "change it")
        except BaseException:
            os.close(fd)
            raise
        lock = cls(run_id, path, fd)
        lock._describe(host or socket.gethostname())
        return lock

    def _describe(self, host: str) -> None:
        """Who holds the lock, for a person looking at the file (the lock itself decides)."""
        text = json.dumps({"run_id": self.run_id, "host": host, "pid": os.getpid(),
                           "since": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
        assert self.fd is not None
        try:
            os.ftruncate(self.fd, 0)
            os.lseek(self.fd, 0, os.SEEK_SET)
            os.write(self.fd, text.encode("utf-8"))
        except OSError:
            pass  # the note is optional; the lock is held

    def release(self, *, finished: bool) -> None:
        """Give the lock up; ``finished``: the run's end is stored, so the file goes too."""
        if self.fd is None:
            return
        fd, self.fd = self.fd, None
        gone = not finished
        if finished:
            try:
                self.path.unlink()  # while still held: nobody takes over a finished run
                gone = True
            except OSError:
                pass  # Windows deletes no open file: again once it is closed
        os.close(fd)  # closing the descriptor releases its lock
        if not gone:
            self.path.unlink(missing_ok=True)


__all__ = ["RunLock", "RunLockError", "RunLockHeld", "RunLockMissing", "lock_dir",
           "lock_path", "recorded_here"]
