"""What the workload page says about a target before anything writes to it.

The verdict is the fio driver's own safety check (``drivers.fio.safety.check_target``: exists
or is created on purpose, not mounted, not the system disk, a block device only when its name
was typed to confirm), so the wizard refuses exactly what the run would refuse, before Start.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass


@dataclass(frozen=True)
class TargetVerdict:
    ok: bool
    text: str


def _module(name: str):
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def scratch_size_bytes(text: str) -> int:
    """'64M' → bytes, as fio reads sizes (binary multiples); ValueError when unreadable."""
    fio_lab = _module("app.fio_lab")
    if fio_lab is None:
        raise ValueError("local fio runs are not available in this build")
    return fio_lab.parse_size(text)


def target_safety(path: str, scratch_size: str = "64M", confirm_device: str = "") -> TargetVerdict:
    safety = _module("drivers.fio.safety")
    if safety is None:
        return TargetVerdict(False, f"{path}: cannot be checked (no fio driver in this build)")
    try:
        size = scratch_size_bytes(scratch_size)
    except ValueError as exc:
        return TargetVerdict(False, f"scratch size: {exc}")
    check = safety.check_target(path, writing=True, create_size=size,
                                confirm_device=confirm_device)
    mark = "✔" if check.ok else "✘"
    return TargetVerdict(check.ok, f"{mark} {path}: {check.reason}")
