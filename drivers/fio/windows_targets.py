r"""The target rules for Windows device paths and drive letters, decided from platform facts.

On Windows a raw disk is ``\\.\PhysicalDriveN``; it is refused when it holds the system volume
or any volume in use (a drive letter with a mounted file system), otherwise it needs its path
typed to confirm, exactly like a Linux block device. Volumes and drive-letter paths (``D:``,
``\\.\D:``, ``D:\x.dat``) are refused: fio reads ':' as the separator between targets, and a
volume with a letter is in use by definition. Which drives and volumes exist is a
:class:`WindowsFacts` record: tests inject one (these checks run on Linux build machines), the
station gathers the real one with kernel32 calls (no wmic, no extra package;
:mod:`drivers.fio.windows_api`).
"""

from __future__ import annotations

import re

from drivers.fio.jobs import WINDOWS_DRIVE, target_problem
from drivers.fio.verdict import TargetCheck, TargetPolicy, confirmation_problem, refused
from drivers.fio.windows_api import gather_windows_facts
from drivers.fio.windows_facts import WindowsFacts

_DRIVE_LETTER = re.compile(r"^(?:\\\\[.?]\\)?([A-Za-z]):")
_VOLUME = re.compile(r"^(?:\\\\[.?]\\)?[A-Za-z]:\\?$")
def is_windows_form(path: str) -> bool:
    r"""``\\.\…``, ``\\server\…`` or ``D:…``: paths only the Windows rules can judge."""
    return path.startswith("\\\\") or bool(_DRIVE_LETTER.match(path))


def windows_check(path: str, facts: WindowsFacts | None, *, writing: bool,
                  policy: TargetPolicy) -> TargetCheck:
    """The verdict on a Windows device path or drive letter (``facts`` None: gather them)."""
    facts = facts if facts is not None else gather_windows_facts()
    drive = WINDOWS_DRIVE.match(path)
    if drive:
        return _physical_drive(path, int(drive.group(1)), facts, writing=writing, policy=policy)
    letter = _DRIVE_LETTER.match(path)
    if letter is None:
        return refused(path, "other", "network shares and other device paths are not fio "
                       r"targets: give a \\.\PhysicalDriveN or a relative file path")
    volume = letter.group(1).upper() + ":"
    if _VOLUME.match(path):
        if volume == facts.system_drive.upper():
            return refused(path, "block", f"{volume} is the system volume")
        if volume in facts.volumes_in_use:
            return refused(path, "block", f"volume {volume} is in use (it has a file system)")
        return refused(path, "block", "raw volumes are not fio targets here (fio reads ':' as a "
                       r"target separator): give the \\.\PhysicalDriveN that holds it")
    return refused(path, "other", target_problem(path) + ": give the path relative to the "
                   "current folder, with '/'")


def _physical_drive(path: str, number: int, facts: WindowsFacts, *, writing: bool,
                    policy: TargetPolicy) -> TargetCheck:
    found = facts.drive(number)
    if found is None:
        present = ", ".join(str(d.number) for d in facts.drives) or "none"
        return refused(path, "missing", f"no such physical drive on this station (present: "
                       f"{present})")
    system = facts.system_drive.upper()
    in_use = sorted(v for v in found.volumes if v in facts.volumes_in_use and v != system)
    problems = []
    if system in found.volumes:
        problems.append(f"is the system disk (holds {system})")
    if in_use:
        problems.append("holds volumes in use (" + ", ".join(in_use) + ")")
    if not problems:
        problems += filter(None, [confirmation_problem(path, "block device", writing=writing,
                                                       policy=policy)])
    return TargetCheck(path, "block", found.size_bytes, ", ".join(in_use), system in found.volumes,
                       not problems, "; ".join(problems) or "block device, confirmed")
