"""Read a file a person named — a method, a SUT description, a trace, the station's profile, a
run journal — with the same three guards everywhere.

Issue 25 found a FIFO named as a method file hanging every command and a link to
``/dev/zero`` reading to a MemoryError; issue 40 found the same two faults in the SUT file,
because each reader had its own ``read_text``. So every reader of a named file goes through
:func:`read_bytes` / :func:`read_text`: the file is opened without waiting (a FIFO's open
would block for a writer), must be a regular file (a folder, device, pipe or socket is named
as such), at most ``limit`` bytes are read through that one descriptor (bounded memory and
time), and text must be UTF-8. Every refusal is one line naming the file, what it should have
been and the limit.

It lives in ``drivers`` because the lowest layer that reads a named file (the fio trace
reader) is there, and ``app`` may import ``drivers`` but not the other way round.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

#: open flags that never wait for a FIFO's writer (and read binary on Windows)
NON_BLOCKING = getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)


class GuardedFileError(ValueError):
    """A named file that is missing, unreadable, no regular file, too large or not UTF-8;
    ``str()`` is one line naming the file and the limit."""


def size_text(limit: int) -> str:
    """A byte bound as a person reads it ("1 MiB", "64 KiB", "100 bytes")."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if limit >= 1 << shift and limit % (1 << shift) == 0:
            return f"{limit >> shift} {unit}"
    return f"{limit} bytes"


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a device or other special file"


def open_regular(path: Path | str, what: str) -> int:
    """A read-only descriptor on ``path``, known to be a regular file (the caller closes it).
    Opened without waiting, so a FIFO is refused instead of hanging the station."""
    try:
        fd = os.open(path, os.O_RDONLY | NON_BLOCKING)
    except FileNotFoundError:
        raise GuardedFileError(f"{what} {path}: not found") from None
    except IsADirectoryError:  # Windows refuses to open a folder at all
        raise GuardedFileError(f"{what} {path}: is a folder, not a file") from None
    except OSError as exc:
        raise GuardedFileError(f"{what} {path}: cannot be read: {exc.strerror or exc}") from None
    try:
        require_regular(fd, path, what)
    except GuardedFileError:
        os.close(fd)
        raise
    return fd


def require_regular(fd: int, path: Path | str, what: str) -> None:
    """Refuse the descriptor ``fd`` (opened from ``path``) unless it is a regular file: for a
    reader that must open the file its own way (a run journal is opened to be locked)."""
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        raise GuardedFileError(f"{what} {path}: not a regular file but {_kind(mode)}: a {what} "
                               "is a file")


def read_bytes(path: Path | str, what: str, limit: int) -> bytes:
    """The whole content of the regular file ``path``, refused past ``limit`` bytes."""
    fd = open_regular(path, what)
    try:
        with os.fdopen(fd, "rb") as fh:
            raw = fh.read(limit + 1)
    except OSError as exc:
        raise GuardedFileError(f"{what} {path}: cannot be read: {exc.strerror or exc}") from None
    if len(raw) > limit:
        raise GuardedFileError(f"{what} {path}: larger than {size_text(limit)}, the most a "
                               f"{what} can be")
    return raw


def read_text(path: Path | str, what: str, limit: int) -> str:
    """:func:`read_bytes` decoded as UTF-8; other bytes are refused naming the first one."""
    raw = read_bytes(path, what, limit)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise GuardedFileError(f"{what} {path}: not UTF-8 text (byte {exc.start}): a {what} "
                               "is UTF-8 text") from None
