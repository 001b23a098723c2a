"""What the workload page says about a target before anything writes to it.

The verdict is the run's own (``app.labs.local_fio.target_check``, i.e. the fio driver's safety
check with the same scratch size, typed confirmations and protected paths), so the wizard
refuses exactly what the run would refuse, before Start.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from app.labs.local_fio import target_check
from app.sequencer.equipment import LabError


@dataclass(frozen=True)
class TargetVerdict:
    ok: bool
    text: str


def target_safety(path: str, scratch_size: str = "", confirm: str = "",
                  protected: Sequence[str] = ()) -> TargetVerdict:
    """``confirm``: the typed paths, comma separated; ``protected``: the station's own files."""
    if "\x00" in path:  # no file system takes it (os.stat raised ValueError on the page)
        return TargetVerdict(False, f"✘ {path!r}: a path cannot contain a NUL character")
    try:
        check = target_check(path, target_size=scratch_size, confirm=confirm,
                             protected=protected)
    except LabError as exc:
        return TargetVerdict(False, f"scratch size: {exc}")
    mark = "✔" if check.ok else "✘"
    return TargetVerdict(check.ok, f"{mark} {path}: {check.reason}")
