"""The file fio writes is the file the checks passed: held open by the station, handed to fio.

A target is checked by name (``safety``), and fio opens it by name later: whoever can rename
in the target's folder can swap the checked scratch file for a symbolic link to another file
in between, and fio then writes into that file (issue 25: 377 of 1000 lines of a user's file
destroyed when MW1 started). So immediately before each start the station opens every checked
local target itself — the resolved path, never through a link in its last component — and
requires the open file to be the (device, inode) the check passed. On Linux fio is then given
``/dev/fd/N`` of that descriptor, inherited: opening it reopens the very file the descriptor
holds, whatever the name now points to. Elsewhere fio still opens the name (no such reopen),
so there the check immediately before and the one after are what guard it. After the phase
the name must still lead to that file; if not, the phase fails naming the swap.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
from collections.abc import Sequence
from dataclasses import dataclass

from drivers.fio.verdict import TargetCheck
from drivers.interfaces import WorkloadError

#: fio reopens the station's descriptor through /dev/fd (Linux: the file itself, not a name)
REOPENS_BY_DESCRIPTOR = sys.platform.startswith("linux")


@dataclass(frozen=True)
class PinnedTarget:
    """One checked local target held open for the phase."""

    path: str  # as typed
    real: str  # resolved when it was opened
    fd: int
    identity: tuple[int, int]  # (device, inode)

    @property
    def fio_name(self) -> str:
        """What fio's ``filename=`` names: the descriptor's file, or the name if it cannot."""
        return f"/dev/fd/{self.fd}" if REOPENS_BY_DESCRIPTOR else self.path

    def describe(self) -> str:
        device, inode = self.identity
        return f"{self.fio_name} = {self.path} (device {device}, inode {inode})"


def pin_targets(checks: Sequence[TargetCheck]) -> list[PinnedTarget]:
    """Open every checked target that has an identity; WorkloadError (nothing left open) if
    one is now a link or another file than the one its check passed."""
    pins: list[PinnedTarget] = []
    try:
        for check in checks:
            if check.identity is not None:
                pins.append(_pin(check))
    except BaseException:
        release(pins)
        raise
    return pins


def _pin(check: TargetCheck) -> PinnedTarget:
    """``check``'s target opened and proved the same file (only checks with an identity come
    here: :func:`pin_targets` skips the others)."""
    assert check.identity is not None
    device, inode = check.identity
    real = os.path.realpath(check.path)
    flags = (os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
             | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))
    try:
        fd = os.open(real, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise WorkloadError(f"refusing fio target {check.path}: it became a symbolic link "
                                "after it was checked; fio was not started") from None
        if exc.errno == errno.ENOENT:
            raise WorkloadError(f"the fio target {check.path} was deleted after it was "
                                "checked; fio was not started") from None
        raise WorkloadError(f"cannot open fio target {check.path}: "
                            f"{exc.strerror or exc}") from None
    st = os.fstat(fd)
    if (st.st_dev, st.st_ino) != check.identity or not _same_kind(check, st):
        os.close(fd)
        raise WorkloadError(
            f"refusing fio target {check.path}: it is another file (device {st.st_dev}, inode "
            f"{st.st_ino}) than the one checked (device {device}, inode "
            f"{inode}): it was replaced after its check; fio was not started")
    return PinnedTarget(check.path, real, fd, (device, inode))


def _same_kind(check: TargetCheck, st: os.stat_result) -> bool:
    return stat.S_ISBLK(st.st_mode) if check.kind == "block" else stat.S_ISREG(st.st_mode)


def replaced(pins: Sequence[PinnedTarget]) -> str:
    """"" when every pinned target's name still leads, without a final link, to its file;
    else what changed (checked after each phase)."""
    problems = []
    for pin in pins:
        now = os.path.realpath(pin.path)
        try:
            st = os.lstat(now)
            found = (st.st_dev, st.st_ino)
        except OSError as exc:
            problems.append(f"{pin.path} is gone ({exc.strerror})")
            continue
        if now != pin.real or found != pin.identity:
            problems.append(f"{pin.path} now leads to another file ({now}, device {found[0]}, "
                            f"inode {found[1]})")
    if not problems:
        return ""
    return ("the fio target was replaced while the phase ran: " + "; ".join(problems)
            + (". fio wrote only into the file the station had checked and held open"
               if REOPENS_BY_DESCRIPTOR else "")
            + "; the phase fails and the next start refuses the target")


def release(pins: Sequence[PinnedTarget]) -> None:
    for pin in pins:
        try:
            os.close(pin.fd)
        except OSError:
            pass
