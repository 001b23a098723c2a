"""What the workload page says about a target before anything writes to it."""

from __future__ import annotations

import importlib
import os
import stat
from pathlib import Path


def _safety_module():
    try:
        return importlib.import_module("drivers.fio.safety")
    except ImportError:
        return None


def target_safety(path: str) -> str:
    """One line for the technician: what the target is and whether a run may write to it."""
    module = _safety_module()
    checker = getattr(module, "describe_target", None) if module else None
    if checker is not None:
        return str(checker(path))
    p = Path(path)
    if not p.exists():
        return f"{path}: does not exist yet; fio will create a scratch file of the chosen size."
    mode = os.stat(p).st_mode
    if stat.S_ISBLK(mode):
        return (f"{path}: BLOCK DEVICE — a run overwrites all its data; the run asks you to "
                "type the device name to confirm.")
    if stat.S_ISREG(mode):
        size_gb = p.stat().st_size / 1e9
        return f"{path}: existing file ({size_gb:.3g} GB); its content is overwritten."
    return f"{path}: neither a file nor a block device; fio cannot use it."
