"""What the Windows target rules decide by: the station's physical drives and the volumes in
use, as a record (:mod:`drivers.fio.windows_targets` judges by it, :mod:`drivers.fio.windows_api`
gathers it, tests inject one), and the byte form of the one reply the gathering parses.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

#: physical drive numbers probed when gathering facts
MAX_DRIVES = 64


@dataclass(frozen=True)
class PhysicalDrive:
    number: int
    size_bytes: int
    volumes: frozenset[str]  # drive letters ("D:") with an extent on this drive


@dataclass(frozen=True)
class WindowsFacts:
    """What decides a Windows verdict; ``volumes_in_use`` are letters with a file system."""

    system_drive: str = "C:"
    volumes_in_use: frozenset[str] = frozenset()
    drives: tuple[PhysicalDrive, ...] = ()

    def drive(self, number: int) -> PhysicalDrive | None:
        return next((d for d in self.drives if d.number == number), None)


def parse_disk_extents(raw: bytes) -> frozenset[int]:
    """Disk numbers in a ``VOLUME_DISK_EXTENTS`` reply (a DWORD count, 4 bytes of padding,
    then 24-byte ``DISK_EXTENT`` records whose first DWORD is the disk number)."""
    if len(raw) < 4:
        return frozenset()
    (count,) = struct.unpack_from("<I", raw, 0)
    return frozenset(struct.unpack_from("<I", raw, 8 + 24 * i)[0] for i in range(count)
                     if 8 + 24 * i + 4 <= len(raw))
