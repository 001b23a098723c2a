"""A real small filesystem for the disk-full tests: a size-capped tmpfs mounted for the test.

Injected ``ENOSPC`` proves the station's handling of the errors it is told about; a real full
filesystem proves the errors are the ones a full disk really gives (SQLite's, the journal's, in
the order the kernel gives them). Mounting needs root and mount rights (a container may refuse
them): the test is then skipped, saying why.
"""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


@contextmanager
def mounted_tmpfs(mount_point: Path, size: str) -> Iterator[Path]:
    """``mount_point`` as a tmpfs of ``size`` (``2m``, ``8m``), unmounted (lazily) after;
    skips the test where it cannot be mounted."""
    mount_point.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0 or subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mount_point)],
            capture_output=True).returncode != 0:
        pytest.skip(f"cannot mount a {size} tmpfs here (needs root and mount rights); the "
                    "injected ENOSPC tests cover the same paths")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], capture_output=True)


def fill(folder: Path) -> Path:
    """Fill the filesystem holding ``folder`` to its last byte; the filler file, to delete to
    free the space again."""
    filler = folder / "filler.bin"
    chunk = b"\0" * (64 << 10)
    with open(filler, "wb", buffering=0) as f:
        while True:
            try:
                f.write(chunk)
            except OSError as exc:
                if exc.errno != errno.ENOSPC:
                    raise
                chunk = chunk[:len(chunk) // 2]
                if not chunk:
                    return filler


@contextmanager
def mounted_ext4(mount_point: Path, image: Path, size_mib: int = 32) -> Iterator[Path]:
    """``mount_point`` as an ext4 loop mount of ``image`` (a filesystem ``fsfreeze`` can
    freeze; tmpfs cannot be), unmounted after; skips the test where it cannot be made."""
    tools = ("mkfs.ext4", "fsfreeze", "mount", "umount")
    mount_point.mkdir(parents=True, exist_ok=True)
    with open(image, "wb") as f:
        f.truncate(size_mib << 20)
    made = (os.geteuid() == 0 and all(shutil.which(t) for t in tools)
            and subprocess.run(["mkfs.ext4", "-q", "-F", str(image)],
                               capture_output=True).returncode == 0
            and subprocess.run(["mount", "-o", "loop", str(image), str(mount_point)],
                               capture_output=True).returncode == 0)
    if not made:
        pytest.skip("cannot make an ext4 loop mount here (needs root, loop devices, mkfs.ext4 "
                    "and fsfreeze); the in-process blocked commit covers the same path")
    try:
        yield mount_point
    finally:
        thaw(mount_point)
        subprocess.run(["umount", "-l", str(mount_point)], capture_output=True)


def freeze(mount_point: Path) -> None:
    """Stop the filesystem completing writes (a writer blocks until :func:`thaw`)."""
    subprocess.run(["fsfreeze", "-f", str(mount_point)], check=True, capture_output=True)


def thaw(mount_point: Path) -> None:
    """Let a frozen filesystem write again (harmless when it is not frozen)."""
    subprocess.run(["fsfreeze", "-u", str(mount_point)], capture_output=True)
