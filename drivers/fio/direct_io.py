"""Whether fio may write a file target with direct IO (``direct=1``), bypassing the page cache.

A scratch file written through the page cache measures the station's RAM, not the SUT: the
writes land in memory and reach the disk in bursts, so a profile's per-interval IOPS swing and
the stability rule fails (the README's scratch-file rehearsal, 6 of 7 metrics "not stable",
issue 24). Most file systems take ``O_DIRECT``; some (tmpfs, some network and FUSE file
systems) refuse it with EINVAL, and then only buffered IO is possible, which the run's report
discloses. Block devices always take it.
"""

from __future__ import annotations

import errno
import os


def refuses_direct_io(path: str) -> str:
    """Why the file system holding the existing file ``path`` refuses direct IO ("" when it
    takes it, or when this platform has no ``O_DIRECT`` flag to try and fio uses its own
    mechanism, as on Windows and macOS)."""
    flag = getattr(os, "O_DIRECT", 0)
    if not flag:
        return ""
    try:
        fd = os.open(path, os.O_RDONLY | flag)
    except OSError as exc:
        if exc.errno == errno.EINVAL:
            return f"the file system holding {path} refuses direct IO (O_DIRECT)"
        return ""  # another problem: the target check reports it, not this one
    os.close(fd)
    return ""
