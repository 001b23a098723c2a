"""Refuse targets whose data a write phase would destroy, or that fio would invent.

Writing destroys a target's data, and a mistyped path with ``size=`` is silently *created* and
benchmarked by fio (docs/method-notes.md §9). So before anything is created or written, every
target is checked, and only these are accepted:

* a missing path whose folder exists, when the operator gave a scratch size: the station
  creates the file itself (after every check passed) and records it in a sidecar
  ``<file>.storwatt`` (``scratch``);
* a file the station created before, recognised by that sidecar;
* any other existing regular file, or a block device that is not mounted, holds no mounted
  partition and is not the system disk, only when the operator typed its path to confirm.

Never: a path under /dev that is not an existing block device, anything under /proc, /sys,
/etc, /boot or /usr (after resolving symlinks), and the ``protected`` paths the caller names
(the station's database, its journals, the report folder, the data directory). Windows device
paths and drive letters follow the same rules (``windows_targets``).
"""

from __future__ import annotations

import os
import shutil
import stat
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from drivers.fio.jobs import target_problem
from drivers.fio.scratch import (create_scratch_file, scratch_mismatch, sidecar_path,
                                 stale_sidecar)
from drivers.fio.verdict import TargetCheck, TargetPolicy, confirmation_problem, refused
from drivers.fio.windows_facts import WindowsFacts
from drivers.fio.windows_targets import is_windows_form, windows_check

__all__ = ["TargetCheck", "TargetPolicy", "HostFacts", "check_target", "check_targets",
           "block_check", "create_scratch_file", "describe", "read_mounts"]

#: system folders no run may write into, whatever was typed
SYSTEM_ROOTS = ("/proc", "/sys", "/etc", "/boot", "/usr")
#: fio's smallest ``size=`` (drivers.fio.jobs checks the same bound)
MIN_SCRATCH_BYTES = 4096


def _on_windows() -> bool:
    return sys.platform.startswith("win")


def _default_system_roots() -> tuple[str, ...]:
    return (os.environ.get("SystemRoot", r"C:\Windows"),) if _on_windows() else SYSTEM_ROOTS


def _default_dev_root() -> str:
    """No /dev on Windows (``realpath('/dev')`` would be ``C:/dev``, an ordinary folder)."""
    return "" if _on_windows() else "/dev"


@dataclass(frozen=True)
class HostFacts:
    """Where this machine's facts are read; tests point them at fakes so no device is touched.

    ``windows``: the Windows drive facts; None gathers them when a Windows device path or a
    drive letter is checked (on other platforms that finds no drives).
    """

    mounts_path: str = "/proc/mounts"
    sys_block: str = "/sys/block"
    dev_root: str = field(default_factory=_default_dev_root)
    system_roots: tuple[str, ...] = field(default_factory=_default_system_roots)
    windows: WindowsFacts | None = None


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


def check_target(path: str, *, writing: bool, policy: TargetPolicy = TargetPolicy(),
                 facts: HostFacts = HostFacts()) -> TargetCheck:
    """The verdict on one target; nothing is created or opened for writing here. An accepted
    existing target carries the (device, inode) the verdict is about."""
    if "\x00" in path:  # no file system takes it; os.stat would raise instead of answering
        return refused(path.replace("\x00", "\\0"), "other",
                       "contains a NUL character: no file or device has that name")
    if is_windows_form(path):
        return _verdict(path, writing=writing, policy=policy, facts=facts)
    before = _identity(path)
    check = _verdict(path, writing=writing, policy=policy, facts=facts)
    if not check.ok or check.kind == "missing":
        return check
    if before is None or _identity(path) != before:
        return refused(path, check.kind, "was replaced while it was checked")
    return replace(check, identity=before)


def _identity(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(os.path.realpath(path))
    except OSError:
        return None
    return st.st_dev, st.st_ino


def _verdict(path: str, *, writing: bool, policy: TargetPolicy,
             facts: HostFacts) -> TargetCheck:
    if is_windows_form(path):
        return windows_check(path, facts.windows, writing=writing, policy=policy)
    problem = target_problem(path)
    if problem:
        return refused(path, "other", problem)
    real = os.path.realpath(path)
    try:
        st: os.stat_result | None = os.stat(real)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        return refused(path, "other", f"cannot be inspected: {exc.strerror or exc}")
    is_block = st is not None and stat.S_ISBLK(st.st_mode)
    kind = "missing" if st is None else "file" if stat.S_ISREG(st.st_mode) else \
        "block" if is_block else "other"
    forbidden = _forbidden_place(real, facts, policy.protected)
    if forbidden:
        return refused(path, kind, forbidden)
    if facts.dev_root and _inside(real, facts.dev_root) and not is_block:
        return refused(path, kind, f"is under {facts.dev_root} but is not an existing block "
                       "device (a mistyped device name must never become a file there)")
    if st is None:
        return _missing(path, real, policy)
    if kind == "file":
        return _existing_file(path, real, st, writing=writing, policy=policy)
    if not is_block:
        return refused(path, kind, "neither a file nor a block device")
    return block_check(path, real, _block_size(real), mounts=_mounts(facts.mounts_path),
                       sys_block=facts.sys_block, writing=writing, policy=policy)


def _inside(path: str, folder: str) -> bool:
    """``path`` is ``folder`` or lies inside it (both resolved, compared as the OS does)."""
    path = os.path.normcase(path)
    folder = os.path.normcase(os.path.realpath(folder))
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _forbidden_place(real: str, facts: HostFacts, protected: Sequence[str]) -> str:
    for root in facts.system_roots:
        if _inside(real, root):
            return f"is under {root} (a system folder): never a target"
    for place in protected:
        if place and _inside(real, place):
            return (f"belongs to the station ({place}: its database, reports or data "
                    "folder): never a target")
    return ""


#: how a missing target is made on purpose; each front end says where it is typed (the
#: wizard's field sits beside this text, the command line names its option)
GIVE_A_SIZE = "give a scratch size to create one on purpose"


def _missing(path: str, real: str, policy: TargetPolicy) -> TargetCheck:
    size = policy.create_size
    if not size:
        return refused(path, "missing", "does not exist (fio would silently create and "
                       f"benchmark a new file: {GIVE_A_SIZE})")
    folder = os.path.dirname(real)
    if not os.path.isdir(folder):
        return refused(path, "missing", f"its folder {folder} does not exist (the station "
                       "creates scratch files, never folders: create it first)")
    if size < MIN_SCRATCH_BYTES:
        return refused(path, "missing", f"a scratch size of {size:,} bytes is below fio's "
                       f"minimum of {MIN_SCRATCH_BYTES:,}")
    free = _free_bytes(folder)
    if free is not None and size > free:
        return refused(path, "missing", f"a scratch size of {size:,} bytes is more than the "
                       f"{free:,} bytes free in {folder} (fio would fill the file system)")
    if len(sidecar_path(real).name.encode()) > _name_max(folder):
        return refused(path, "missing", f"its name is too long for the station's record of "
                       f"it ({sidecar_path(real).name[:40]}…): the file system takes names of "
                       f"at most {_name_max(folder)} bytes; choose a shorter name")
    if not stale_sidecar(real):
        return refused(path, "missing", f"{sidecar_path(real)} exists and is not a StorWatt "
                       "sidecar: move it away first")
    return TargetCheck(path, "missing", size, "", False, True,
                       f"scratch file of {size:,} bytes will be created")


def _name_max(folder: str) -> int:
    """Longest file name ``folder``'s file system takes (255 where it cannot be asked)."""
    try:
        return os.pathconf(folder, "PC_NAME_MAX")
    except (OSError, ValueError, AttributeError):  # no pathconf on Windows
        return 255


def _free_bytes(folder: str) -> int | None:
    """Free bytes in ``folder``'s file system; None if it cannot be asked (then fio's own
    error names the problem when the file is made)."""
    try:
        return shutil.disk_usage(folder).free
    except OSError:
        return None


def _existing_file(path: str, real: str, st: os.stat_result, *, writing: bool,
                   policy: TargetPolicy) -> TargetCheck:
    """The station's own scratch file, or someone's file that only a typed path unlocks."""
    mismatch = scratch_mismatch(real, st)
    size = policy.create_size
    if not mismatch:
        if size and size != st.st_size:
            return refused(path, "scratch", f"the station's scratch file has {st.st_size:,} "
                           f"bytes but the scratch size asks {size:,}: give the same size or "
                           f"none, or delete it and {sidecar_path(real).name}", st.st_size)
        return TargetCheck(path, "scratch", st.st_size, "", False, True,
                           f"the station's scratch file ({sidecar_path(real).name})")
    problem = confirmation_problem(path, "file", writing=writing, policy=policy)
    if problem:
        return refused(path, "file", f"an existing file ({mismatch}); {problem}", st.st_size)
    reason = "existing file, confirmed: its contents will be overwritten" if writing else \
        "existing file, read only"
    return TargetCheck(path, "file", st.st_size, "", False, True, reason)


def block_check(path: str, real: str, size: int, *, mounts: dict[str, str], sys_block: str,
                writing: bool, policy: TargetPolicy) -> TargetCheck:
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
    if not problems:
        problems += filter(None, [confirmation_problem(path, "block device", writing=writing,
                                                       policy=policy)])
    ok = not problems
    return TargetCheck(path, "block", size, mounted_here, is_system, ok,
                       "; ".join(problems) if problems else "block device, confirmed")


def check_targets(paths: Sequence[str], *, writing: bool, policy: TargetPolicy = TargetPolicy(),
                  facts: HostFacts = HostFacts()) -> list[TargetCheck]:
    return [check_target(p, writing=writing, policy=policy, facts=facts) for p in paths]


_KIND_WORDS = {"missing": "scratch file to create", "scratch": "scratch file"}


def describe(check: TargetCheck) -> str:
    """"/tmp/x.dat (scratch file, 64 MiB)" for the engine's check line."""
    size = check.size_bytes
    text = f"{size / 2**30:.1f} GiB" if size >= 2**30 else f"{size / 2**20:g} MiB"
    return f"{check.path} ({_KIND_WORDS.get(check.kind, check.kind)}, {text})"
