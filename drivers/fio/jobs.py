"""fio job files from a ``WorkloadProfile`` (SPEC-NOTES §2 profiles, §7 and §9 fio facts).

Every value that reaches the file is validated: a job file is a program, and a newline or a
stray ``=`` in a target name would inject options. Targets may be several files or devices
(``filename=a:b``); ``rate_iops`` is always given per direction (``R,W``) because a single
value caps *each* direction and loses the 70/30 mix (SPEC-NOTES §9).
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass

from drivers.interfaces import WorkloadError, WorkloadProfile

_SAFE_NAME = re.compile(r"^[A-Za-z0-9_.+-]{1,64}$")
_SAFE_PATH = re.compile(r"^[A-Za-z0-9_./+@-][A-Za-z0-9_./+@ -]*$")
#: data-reduction content of the COM check data sets (SPEC-NOTES §6, §9: verify by hashing)
COM_DATA = {"deduplication": ("dedupe_percentage", 50), "compression":
            ("buffer_compress_percentage", 50)}


@dataclass(frozen=True)
class JobOptions:
    """Station-wide settings that are not part of the method's profile."""

    targets: tuple[str, ...]
    ioengine: str | None = None  # default: libaio (Linux) / windowsaio (Windows)
    direct: bool = True
    size: int | None = None  # bytes per target; None = whole device / existing file
    allow_file_create: bool = False


def default_ioengine() -> str:
    return "windowsaio" if sys.platform.startswith("win") else "libaio"


def _check_name(value: str, what: str) -> str:
    if not _SAFE_NAME.match(value):
        raise WorkloadError(f"{what} {value!r} may only use letters, digits and _.+- (max 64)")
    return value


def _check_target(path: str) -> str:
    if not path or not _SAFE_PATH.match(path) or ":" in path or "\n" in path:
        raise WorkloadError(f"target {path!r} contains characters fio cannot take in a job "
                            "file (':' separates targets; no newlines or '=')")
    return path.replace(" ", "\\ ")


def _int_in(value: int, lo: int, hi: int, what: str) -> int:
    if not isinstance(value, int) or not lo <= value <= hi:
        raise WorkloadError(f"{what} {value!r} outside {lo}…{hi}")
    return value


def profile_lines(p: WorkloadProfile) -> list[str]:
    """The options of one profile's job section."""
    _check_name(p.name, "profile name")
    bs = _int_in(p.block_size, 512, 64 * 2**20, "block size")
    if bs % 512:
        raise WorkloadError(f"block size {bs} is not a multiple of 512 bytes")
    if not 0 <= p.read_pct <= 100:
        raise WorkloadError(f"read percentage {p.read_pct} outside 0…100")
    mode = {(True, 100.0): "randread", (True, 0.0): "randwrite", (False, 100.0): "read",
            (False, 0.0): "write"}.get((p.random, float(p.read_pct)))
    lines = [f"bs={bs}", f"blockalign={_int_in(p.align, 512, 64 * 2**20, 'alignment')}",
             f"iodepth={_int_in(p.queue_depth, 1, 4096, 'queue depth')}",
             f"numjobs={_int_in(p.jobs, 1, 256, 'jobs')}"]
    if mode:
        lines.insert(0, f"rw={mode}")
    else:
        lines[:0] = [f"rw={'randrw' if p.random else 'rw'}", f"rwmixread={round(p.read_pct)}"]
    if p.rate_iops is not None:
        r, w = (_int_in(v, 0, 10**8, "rate_iops") for v in p.rate_iops)
        lines.append(f"rate_iops={r},{w}")
    if p.duration_s is not None:
        if p.duration_s <= 0:
            raise WorkloadError(f"duration {p.duration_s} s is not positive")
        lines += ["time_based=1", f"runtime={max(1, round(p.duration_s * 1000))}ms"]
    if p.kind == "com":
        com = p.name.removeprefix("COM-")
        if com in COM_DATA:
            key, pct = COM_DATA[com]
            lines += [f"{key}={pct}", "refill_buffers=1"]
    return lines


def job_text(profile: WorkloadProfile, options: JobOptions) -> str:
    """A complete job file for one profile over all targets."""
    if not options.targets:
        raise WorkloadError("no fio target given")
    engine = _check_name(options.ioengine or default_ioengine(), "ioengine")
    lines = ["[global]", f"ioengine={engine}", f"direct={int(options.direct)}",
             "filename=" + ":".join(_check_target(t) for t in options.targets),
             "group_reporting=1", "percentile_list=99:99.9:99.99:99.999",
             f"allow_file_create={int(options.allow_file_create)}"]
    if options.size is not None:
        lines.append(f"size={_int_in(options.size, 4096, 2**62, 'size')}")
    if profile.kind == "prefill":
        lines.append("# pre-fill: 256 KiB sequential writes over the whole target (SPEC-NOTES §2)")
    lines += ["", f"[{_check_name(profile.name, 'profile name')}]", *profile_lines(profile)]
    return "\n".join(lines) + "\n"

