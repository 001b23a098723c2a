"""The verdict record on one fio target and the rules every platform shares.

Kept apart from the platform checks (``safety`` for POSIX, ``windows_targets`` for Windows) so
both give the same record and ask for a typed confirmation in the same words.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TargetCheck:
    """The verdict on one target, as the GUI shows it before anything writes."""

    path: str
    kind: str  # "file" | "scratch" | "block" | "missing" | "other"
    size_bytes: int
    mounted_at: str
    is_system: bool
    ok: bool
    reason: str
    #: (device, inode) of what was checked, None when nothing exists there yet (or on
    #: Windows): the engine opens exactly this before fio starts (``drivers.fio.pinned``)
    identity: tuple[int, int] | None = None


@dataclass(frozen=True)
class TargetPolicy:
    """What the caller decides for a run, handed to the driver (which never imports the app).

    ``protected``: paths a run must never write, whatever was typed (the station's database and
    its journals, the report folder, the data directory); a folder protects everything in it.
    ``confirmed``: the target paths the operator typed to allow overwriting them.
    ``allow_destructive``: the station's setting for block devices (False refuses every write
    to one). ``create_size``: bytes of a scratch file to create for a missing target; None
    means the operator asked for no creation.
    """

    protected: tuple[str, ...] = ()
    confirmed: tuple[str, ...] = ()
    allow_destructive: bool = True
    create_size: int | None = None


def confirmation_problem(path: str, what: str, *, writing: bool, policy: TargetPolicy) -> str:
    """"" when writing to ``path`` is allowed; else the rule that refuses it, naming the fix."""
    if not writing:
        return ""
    if what == "block device" and not policy.allow_destructive:
        return "destructive runs on block devices are not enabled for this station"
    if path not in policy.confirmed:
        noun = "device name" if what == "block device" else "path"
        return f"writing destroys its data: type the {noun} ({path}) to confirm"
    return ""


def refused(path: str, kind: str, reason: str, size: int = 0) -> TargetCheck:
    return TargetCheck(path, kind, size, "", False, False, reason)
