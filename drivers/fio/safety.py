"""Refuse targets whose data a write phase would destroy, or that fio would invent.

Writing to a block device destroys its data, and a mistyped path with ``size=`` is silently
*created* and benchmarked by fio (method-notes §9). So before any write phase every target is
checked: it must exist (or be a scratch file the station creates on purpose), must not be
mounted, must not hold mounted partitions, and must not be the disk holding ``/``; a block
device additionally needs the operator to type its name to confirm.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class TargetCheck:
    """The verdict on one target, as the GUI shows it before anything writes."""

    path: str
    kind: str  # "file" | "block" | "missing" | "other"
    size_bytes: int
    mounted_at: str
    is_system: bool
    ok: bool
    reason: str


def read_mounts(mounts_path: str = "/proc/mounts") -> dict[str, str]:
    """Mounted source device → mount point (public: the GUI shows it next to a target)."""
    return _mounts(mounts_path)


def _mounts(mounts_path: str) -> dict[str, str]:
    """Mounted source device → mount point, from /proc/mounts."""
    table: dict[str, str] = {}
    try:
        with open(mounts_path, encoding="utf-8") as fh:
            for line in fh:
                parts = line.split()
                if len(parts) >= 2 and parts[0].startswith("/"):
                    table[os.path.realpath(parts[0])] = parts[1]
    except OSError:
        pass
    return table


def _disk_of(device: str, sys_block: str) -> str:
    """``/dev/sda2`` → ``sda`` (the whole disk a partition belongs to)."""
    name = os.path.basename(device)
    for disk in os.listdir(sys_block) if os.path.isdir(sys_block) else ():
        if name == disk or os.path.exists(os.path.join(sys_block, disk, name)):
            return disk
    return name


def _block_size(path: str) -> int:
    try:
        with open(path, "rb") as fh:
            return fh.seek(0, os.SEEK_END)
    except OSError:
        return 0


def check_target(path: str, *, writing: bool, create_size: int | None = None,
                 mounts_path: str = "/proc/mounts", sys_block: str = "/sys/block",
                 confirm_device: str = "", allow_destructive: bool = True) -> TargetCheck:
    """Check one target; ``allow_destructive=False`` refuses every write to a block device
    (the station's setting), ``confirm_device`` must repeat the device's path exactly."""
    real = os.path.realpath(path)
    try:
        st = os.stat(real)
    except FileNotFoundError:
        if create_size:
            return TargetCheck(path, "missing", create_size, "", False, True,
                               f"scratch file of {create_size} bytes will be created")
        return TargetCheck(path, "missing", 0, "", False, False,
                           "does not exist (fio would silently create and benchmark a new "
                           "file: give a scratch size to create one on purpose)")
    if stat.S_ISREG(st.st_mode):
        return TargetCheck(path, "file", st.st_size, "", False, True, "regular file")
    if not stat.S_ISBLK(st.st_mode):
        return TargetCheck(path, "other", 0, "", False, False, "neither a file nor a block device")
    return block_check(path, real, _block_size(real), mounts=_mounts(mounts_path),
                       sys_block=sys_block, writing=writing, confirm_device=confirm_device,
                       allow_destructive=allow_destructive)


def block_check(path: str, real: str, size: int, *, mounts: dict[str, str], sys_block: str,
                writing: bool, confirm_device: str, allow_destructive: bool) -> TargetCheck:
    """The verdict on a block device from the mount table and the /sys/block tree (both
    injectable, so tests never touch a real device)."""
    root_dev = next((dev for dev, mnt in mounts.items() if mnt == "/"), "")
    disk = _disk_of(real, sys_block)
    mounted_here = mounts.get(real, "")
    mounted_parts = sorted(mnt for dev, mnt in mounts.items() if _disk_of(dev, sys_block) == disk
                           and dev != real)
    is_system = bool(root_dev) and _disk_of(root_dev, sys_block) == disk
    problems = []
    if mounted_here:
        problems.append(f"mounted at {mounted_here}")
    if mounted_parts and os.path.basename(real) == disk:
        problems.append("holds mounted partitions (" + ", ".join(mounted_parts) + ")")
    if is_system:
        problems.append("is on the system disk")
    if writing and not problems and not allow_destructive:
        problems.append("destructive runs on block devices are not enabled for this station")
    elif writing and not problems and confirm_device != path:
        problems.append(f"writing destroys its data: type the device name ({path}) to confirm")
    ok = not problems
    return TargetCheck(path, "block", size, mounted_here, is_system, ok,
                       "; ".join(problems) if problems else "block device, confirmed")


def check_targets(paths: list[str] | tuple[str, ...], *, writing: bool,
                  create_size: int | None = None, **kwargs) -> list[TargetCheck]:
    return [check_target(p, writing=writing, create_size=create_size, **kwargs) for p in paths]


def create_scratch_file(path: str, size: int) -> None:
    """Allocate a scratch target (the station's own decision, never fio's)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("wb") as fh:
        fh.truncate(size)


def describe(check: TargetCheck) -> str:
    """"/tmp/x.dat (file, 64 MiB)" for the engine's check line."""
    size = check.size_bytes
    text = f"{size / 2**30:.1f} GiB" if size >= 2**30 else f"{size / 2**20:g} MiB"
    kind = "scratch file to create" if check.kind == "missing" else check.kind
    return f"{check.path} ({kind}, {text})"
