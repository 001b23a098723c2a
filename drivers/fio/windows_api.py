r"""Gather :class:`WindowsFacts` from kernel32 (Windows only; elsewhere there are none).

Drive letters come from ``GetLogicalDrives``; a letter on a fixed or removable drive whose
``GetVolumeInformationW`` succeeds has a mounted file system, so it is *in use*. Each volume's
physical drives come from ``IOCTL_VOLUME_GET_VOLUME_DISK_EXTENTS``; physical drives are found
by opening ``\\.\PhysicalDriveN`` with no access rights (a query needs none), their size from
``IOCTL_DISK_GET_LENGTH_INFO`` (read access, 0 when denied). ctypes only: no wmic, which newer
Windows releases no longer ship, and no extra package for the installer.
"""

from __future__ import annotations

import ctypes
import os
import struct
import sys
from ctypes import wintypes

from drivers.fio.windows_facts import MAX_DRIVES, PhysicalDrive, WindowsFacts, parse_disk_extents

GENERIC_READ = 0x80000000
FILE_SHARE_READ_WRITE = 0x3
OPEN_EXISTING = 3
IOCTL_VOLUME_GET_VOLUME_DISK_EXTENTS = 0x00560000
IOCTL_DISK_GET_LENGTH_INFO = 0x0007405C
DRIVE_REMOVABLE, DRIVE_FIXED = 2, 3
_EXTENTS_BYTES = 8 + 24 * 32


def _kernel32():  # pragma: no cover - Windows only
    k32 = ctypes.WinDLL("kernel32", use_last_error=True)  # type: ignore[attr-defined]  # Windows only
    k32.CreateFileW.restype = wintypes.HANDLE
    k32.CreateFileW.argtypes = [wintypes.LPCWSTR, wintypes.DWORD, wintypes.DWORD,
                                ctypes.c_void_p, wintypes.DWORD, wintypes.DWORD,
                                wintypes.HANDLE]
    k32.DeviceIoControl.restype = wintypes.BOOL
    k32.DeviceIoControl.argtypes = [wintypes.HANDLE, wintypes.DWORD, ctypes.c_void_p,
                                    wintypes.DWORD, ctypes.c_void_p, wintypes.DWORD,
                                    ctypes.POINTER(wintypes.DWORD), ctypes.c_void_p]
    k32.CloseHandle.argtypes = [wintypes.HANDLE]
    k32.GetLogicalDrives.restype = wintypes.DWORD
    k32.GetDriveTypeW.argtypes = [wintypes.LPCWSTR]
    k32.GetVolumeInformationW.argtypes = [wintypes.LPCWSTR, wintypes.LPWSTR, wintypes.DWORD,
                                          wintypes.LPDWORD, wintypes.LPDWORD, wintypes.LPDWORD,
                                          wintypes.LPWSTR, wintypes.DWORD]
    return k32


class _Api:  # pragma: no cover - Windows only
    def __init__(self) -> None:
        self.k32 = _kernel32()
        self.invalid = wintypes.HANDLE(-1).value

    def _open(self, name: str, access: int) -> int | None:
        handle = self.k32.CreateFileW(name, access, FILE_SHARE_READ_WRITE, None, OPEN_EXISTING,
                                      0, None)
        return None if handle in (None, self.invalid) else handle

    def exists(self, name: str) -> bool:
        handle = self._open(name, 0)
        if handle is None:
            return False
        self.k32.CloseHandle(handle)
        return True

    def ioctl(self, name: str, code: int, size: int, access: int = 0) -> bytes:
        """The reply of one DeviceIoControl query; b"" when the device or the call refuses."""
        handle = self._open(name, access)
        if handle is None:
            return b""
        try:
            buf, got = ctypes.create_string_buffer(size), wintypes.DWORD()
            ok = self.k32.DeviceIoControl(handle, code, None, 0, buf, size, ctypes.byref(got),
                                          None)
            return buf.raw[:got.value] if ok else b""
        finally:
            self.k32.CloseHandle(handle)

    def letters(self) -> list[str]:
        mask = self.k32.GetLogicalDrives()
        return [f"{chr(65 + i)}:" for i in range(26) if mask >> i & 1]

    def has_file_system(self, letter: str) -> bool:
        root = letter + "\\"
        if self.k32.GetDriveTypeW(root) not in (DRIVE_REMOVABLE, DRIVE_FIXED):
            return False
        return bool(self.k32.GetVolumeInformationW(root, None, 0, None, None, None, None, 0))


def gather() -> WindowsFacts:  # pragma: no cover - Windows only
    api = _Api()
    in_use = frozenset(v for v in api.letters() if api.has_file_system(v))
    on_disk: dict[int, set[str]] = {}
    for volume in in_use:
        raw = api.ioctl(f"\\\\.\\{volume}", IOCTL_VOLUME_GET_VOLUME_DISK_EXTENTS, _EXTENTS_BYTES)
        for disk in parse_disk_extents(raw):
            on_disk.setdefault(disk, set()).add(volume)
    drives = []
    for n in range(MAX_DRIVES):
        name = f"\\\\.\\PhysicalDrive{n}"
        if not api.exists(name):
            continue
        length = api.ioctl(name, IOCTL_DISK_GET_LENGTH_INFO, 8, GENERIC_READ)
        size = struct.unpack("<q", length)[0] if len(length) == 8 else 0
        drives.append(PhysicalDrive(n, size, frozenset(on_disk.get(n, ()))))
    system = os.environ.get("SystemDrive", "C:").upper()
    return WindowsFacts(system_drive=system, volumes_in_use=in_use, drives=tuple(drives))


def gather_windows_facts() -> WindowsFacts:
    """This station's drives and volumes; on other platforms: none (every drive is missing)."""
    if not sys.platform.startswith("win"):
        return WindowsFacts(system_drive="", volumes_in_use=frozenset(), drives=())
    return gather()  # pragma: no cover - needs Windows
