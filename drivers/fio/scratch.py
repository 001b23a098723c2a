"""Scratch files the station created itself, recognised later by a sidecar beside them.

A write phase destroys a target's contents, so an existing regular file may only be used when
the station made it (or the operator typed its path to confirm). The proof of authorship is a
sidecar ``<file>.storwatt`` (JSON) holding the file's device, inode and size at creation: a
header block inside the file would be overwritten by the very write phases it guards, and a
name pattern proves nothing. A file replaced or resized since then no longer matches.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

SIDECAR_SUFFIX = ".storwatt"
_AUTHOR = "StorWatt scratch file"


@dataclass(frozen=True)
class ScratchRecord:
    """What the sidecar says about the file the station created."""

    device: int
    inode: int
    size: int
    created_by: str = _AUTHOR


def sidecar_path(path: str) -> Path:
    return Path(path + SIDECAR_SUFFIX)


def read_sidecar(path: str) -> ScratchRecord | None:
    """The record beside ``path``; None when there is none or it is not the station's."""
    try:
        data = json.loads(sidecar_path(path).read_text(encoding="utf-8"))
        record = ScratchRecord(**data)
    except (OSError, ValueError, TypeError):
        return None
    return record if record.created_by == _AUTHOR else None


def scratch_mismatch(path: str, st: os.stat_result) -> str:
    """"" when ``path`` (stat ``st``) is the station's scratch file; else why it is not."""
    record = read_sidecar(path)
    if record is None:
        return f"no {sidecar_path(path).name} beside it: the station did not create it"
    if (record.device, record.inode) != (st.st_dev, st.st_ino):
        return (f"{sidecar_path(path).name} records another file (device {record.device}, "
                f"inode {record.inode}; this one is {st.st_dev}, {st.st_ino}): it was replaced")
    if record.size != st.st_size:
        return (f"{sidecar_path(path).name} records {record.size:,} bytes, the file has "
                f"{st.st_size:,}: it was changed since the station created it")
    return ""


def stale_sidecar(path: str) -> bool:
    """A sidecar left beside a deleted scratch file may be replaced; any other file may not."""
    return not sidecar_path(path).exists() or read_sidecar(path) is not None


def create_scratch_file(path: str, size: int) -> ScratchRecord:
    """Allocate a scratch target (sparse, ``size`` bytes) and record it in its sidecar.

    ``O_EXCL``: if something appeared at ``path`` since the check, nothing is overwritten. The
    parent folder must exist (the check demands it): the station creates no folders.
    """
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o644)
    try:
        os.ftruncate(fd, size)
        st = os.fstat(fd)
    finally:
        os.close(fd)
    record = ScratchRecord(st.st_dev, st.st_ino, st.st_size)
    sidecar_path(path).write_text(json.dumps(asdict(record), indent=1) + "\n", encoding="utf-8")
    return record
