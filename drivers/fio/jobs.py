"""fio job files from a ``WorkloadProfile`` (method-notes §2 profiles, §7 and §9 fio facts).

Every value that reaches the file is validated: a job file is a program, and a newline or a
stray ``=`` in a target name would inject options. Targets may be several files or devices
(``filename=a:b``); ``rate_iops`` is always given per direction (``R,W``) because a single
value caps *each* direction and loses the 70/30 mix (docs/method-notes.md §9). The hot band is
one job section per stream with ``offset``/``size`` for its address range and its share of the
profile's total ``rate_iops`` (docs/method-notes.md §2: fio's ``flow`` weights, which held the
shares before, throttle fio itself to a few hundred IOPS); ``group_reporting`` folds them into
one reported job. A trace
replay is one ``read_iolog`` section redirected onto the target (drivers/fio/replay.py).

A profile's ``rate_iops`` is the rate the *whole* workload must run at, but fio applies
``rate_iops`` to each job, and every load host runs its own job file (measured on fio 3.33:
``numjobs=4, rate_iops=70,30`` ran 280/120 IOPS; method-notes §10). So the total is split
over jobs × hosts, integer shares that differ by at most one and add up to the total exactly
(70 over 4 jobs: 18, 18, 17, 17); jobs with the same share share a section (``numjobs``).

A sequential profile run by several jobs (or load hosts) gives each its own region of the
target (``offset``/``offset_increment``/``size``, :func:`region_lines`): jobs that all start at
offset 0 walk in lock-step and re-read the blocks another job has just read, which an array's
read cache serves and its write path coalesces (issue 38, measured on fio 3.33: 4 jobs, 25 %
distinct offsets). Each of jobs × hosts slots walks its own slice, so no block is touched twice
within one pass (docs/method-notes.md §2).

Response time is fio's total latency, submission to completion (``lat_ns``): fio only prints
its percentiles and bins with ``lat_percentiles=1``; ``clat_percentiles=0`` drops the
completion-only bins nobody reads. Random offsets come from ``tausworthe64`` with
``randrepeat=0``: uniform over [0, 2^64 − 1] and a new sequence each run (method-notes §10).
"""

from __future__ import annotations

import math
import re
import sys
from dataclasses import dataclass
from itertools import groupby

from drivers.fio.host_logs import HOST_LOG_OPTIONS
from drivers.fio.hotband_curve import curve_zones, zoned_abs
from drivers.interfaces import WorkloadError, WorkloadProfile

_SAFE_NAME = re.compile(r"^[A-Za-z0-9_.+-]{1,64}$")
_SAFE_PATH = re.compile(r"^[A-Za-z0-9_./+@-][A-Za-z0-9_./+@ -]*$")
#: a Windows physical drive, the one form with backslashes fio takes as is
WINDOWS_DRIVE = re.compile(r"^\\\\\.\\PhysicalDrive(\d{1,3})$", re.IGNORECASE)
#: data-reduction content of the COM check data sets (method-notes §6, §9: verify by hashing)
COM_DATA = {"deduplication": ("dedupe_percentage", 50), "compression":
            ("buffer_compress_percentage", 50)}
#: percentiles fio reports next to the bins: the confidence levels of method-notes §5
PERCENTILES = "99:99.9:99.99:99.999"
#: options of every job file: total-latency bins and percentiles (lat_ns), and the random
#: generator of method-notes §10
LATENCY_AND_RANDOM = ("lat_percentiles=1", "clat_percentiles=0",
                      "random_generator=tausworthe64", "randrepeat=0")


@dataclass(frozen=True)
class JobOptions:
    """Station-wide settings that are not part of the method's profile."""

    targets: tuple[str, ...]
    ioengine: str | None = None  # default: libaio (Linux) / windowsaio (Windows)
    direct: bool = True
    size: int | None = None  # bytes per target; None = whole device / existing file
    allow_file_create: bool = False
    host: int = 0  # this job file is for load host ``host`` of ``hosts`` (rate share)
    hosts: int = 1
    #: bytes of the one target when the station knows them (multi-stream ranges in bytes)
    span: int | None = None
    #: a load host's job: fio's per-second logs instead of json+ (drivers/fio/host_logs.py)
    host_logs: bool = False


def default_ioengine(platform: str = sys.platform) -> str:
    """The asynchronous engine of the platform (the engine checks libaio is loadable)."""
    return "windowsaio" if platform.startswith("win") else "libaio"


def _check_name(value: str, what: str) -> str:
    if not isinstance(value, str) or not _SAFE_NAME.match(value):
        raise WorkloadError(f"{what} {value!r} may only use letters, digits and _.+- (max 64)")
    return value


def target_problem(path: str) -> str:
    """Why ``path`` cannot go into a job file's ``filename=`` ("" when it can).

    ':' separates fio targets, so a Windows drive-letter path (``D:\\x.dat``) is refused rather
    than escaped: give it relative to the current folder, with '/' (docs/fio.md).
    """
    if isinstance(path, str) and path and (_SAFE_PATH.match(path) or WINDOWS_DRIVE.match(path)):
        return ""
    return (f"target {path!r} contains characters fio cannot take in a job file (':' "
            "separates targets, so no drive letters; no backslashes, newlines or '=')")


def _check_target(path: str) -> str:
    problem = target_problem(path)
    if problem:
        raise WorkloadError(problem)
    return path.replace(" ", "\\ ")


def _int_in(value: int, lo: int, hi: int, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise WorkloadError(f"{what} {value!r} outside {lo}…{hi}")
    return value


def _pct(value: float, what: str) -> float:
    if not isinstance(value, (int, float)) or not math.isfinite(value) or not 0 <= value <= 100:
        raise WorkloadError(f"{what} {value!r} outside 0…100 %")
    return float(value)


def _block_size(value: int) -> int:
    bs = _int_in(value, 512, 64 * 2**20, "block size")
    if bs % 512:
        raise WorkloadError(f"block size {bs} is not a multiple of 512 bytes")
    return bs


def rw_lines(read_pct: float, random: bool) -> list[str]:
    """``rw=`` (and ``rwmixread=`` for a mix) of a read percentage and pattern."""
    read_pct = _pct(read_pct, "read percentage")
    pure = {100.0: "randread" if random else "read", 0.0: "randwrite" if random else "write"}
    if read_pct in pure:
        return [f"rw={pure[read_pct]}"]
    return [f"rw={'randrw' if random else 'rw'}", f"rwmixread={round(read_pct)}"]


def _duration_lines(p: WorkloadProfile) -> list[str]:
    if p.duration_s is None:
        return []
    if not isinstance(p.duration_s, (int, float)) or not 0 < p.duration_s < 10**7:
        raise WorkloadError(f"duration {p.duration_s!r} s is not a positive number of seconds")
    runtime = f"runtime={max(1, round(p.duration_s * 1000))}ms"
    # pre-fill ends when the target is written once; a duration only caps it
    return [runtime] if p.kind == "prefill" else ["time_based=1", runtime]


def profile_lines(p: WorkloadProfile) -> list[str]:
    """The options of one profile's job sections (streams, job count and rate excluded)."""
    _check_name(p.name, "profile name")
    bs = _block_size(p.block_size)
    if p.kind == "prefill":  # method-notes §2: sequential writes over the whole capacity
        lines = ["rw=write"]  # ``loops``: PTS writes it twice (method-notes §5)
        if p.passes != 1:
            lines.append(f"loops={_int_in(p.passes, 1, 100, 'pre-fill passes')}")
    else:
        lines = rw_lines(p.read_pct, p.random)
    lines += [f"bs={bs}", f"blockalign={_int_in(p.align, 512, 64 * 2**20, 'alignment')}",
              f"iodepth={_int_in(p.queue_depth, 1, 4096, 'queue depth')}"]
    lines += _duration_lines(p)
    if p.kind == "com":
        com = p.name.removeprefix("COM-")
        if com in COM_DATA:
            key, pct = COM_DATA[com]
            lines += [f"{key}={pct}", "refill_buffers=1"]
    return lines


def split_evenly(total: int, parts: int) -> list[int]:
    """``total`` as ``parts`` integers that differ by at most one and add up to it exactly,
    larger shares first (70 over 4 → 18, 18, 17, 17)."""
    whole, rest = divmod(total, parts)
    return [whole + 1] * rest + [whole] * (parts - rest)


def rate_shares(p: WorkloadProfile, host: int = 0, hosts: int = 1) -> list[tuple[int, int]]:
    """The (read, write) ``rate_iops`` of each of load host ``host``'s jobs: the profile's
    total split over jobs × hosts, so fio's per-job caps add up to the total.

    fio reads a 0 as "no limit", so a direction the profile uses must give every job at
    least one IOPS; a rate too low for that many jobs is refused rather than run unlimited.
    """
    if p.rate_iops is None or len(p.rate_iops) != 2:
        raise WorkloadError(f"rate_iops {p.rate_iops!r} must be (read, write)")
    rate = [_int_in(v, 0, 10**8, "rate_iops") for v in p.rate_iops]
    jobs, hosts = _int_in(p.jobs, 1, 256, "jobs"), _int_in(hosts, 1, 256, "load hosts")
    slots = slice(_int_in(host, 0, hosts - 1, "load host index") * jobs, (host + 1) * jobs)
    reads, writes = (split_evenly(v, jobs * hosts)[slots] for v in rate)
    used = (("read", rate[0], reads, p.read_pct > 0), ("write", rate[1], writes, p.read_pct < 100))
    for what, total, shares, in_use in used:
        if in_use and min(shares) == 0:
            raise WorkloadError(
                f"rate_iops {what} {total} cannot be split over {jobs} jobs × {hosts} load "
                f"hosts: a job would get 0, which fio reads as no limit; use fewer jobs")
    return list(zip(reads, writes))


def region_lines(p: WorkloadProfile, first: int, span: int | None, host: int = 0,
                 hosts: int = 1) -> list[str]:
    """``offset``/``offset_increment``/``size`` giving a sequential section's jobs, the first
    of them job ``first`` of load host ``host``'s ``p.jobs``, each its own slice of the target
    (one of jobs × hosts slices); [] for a random profile, a single job on one host, or the
    pre-fill (it must write every block, and nothing is measured while it runs).

    With the target's size known the slices are whole blocks; without it (a load host's
    device) whole percentages, as fio takes no fraction of a percent in ``size`` (fio 3.33:
    ``size=12.5%`` reads as 12 bytes), so up to ``slots − 1`` % at the end is not walked."""
    slots = _int_in(p.jobs, 1, 256, "jobs") * _int_in(hosts, 1, 256, "load hosts")
    if p.random or p.kind == "prefill" or slots == 1:
        return []
    slot = host * p.jobs + first
    if span is None:
        pct = 100 // slots
        if pct < 1:
            raise WorkloadError(f"{p.name} is sequential over {p.jobs} jobs × {hosts} load "
                                f"hosts: each needs its own slice, and more than 100 slices "
                                "need the target's size in bytes (give the target size)")
        return [f"offset={slot * pct}%", f"offset_increment={pct}%", f"size={pct}%"]
    bs = _block_size(p.block_size)
    region = span // slots // bs * bs
    if region < bs:
        raise WorkloadError(f"{p.name} is sequential over {slots} jobs and load hosts: a "
                            f"{span}-byte target holds no whole {bs}-byte block for each")
    return [f"offset={slot * region}", f"offset_increment={region}", f"size={region}"]


def rated_sections(p: WorkloadProfile, host: int, hosts: int,
                   span: int | None = None) -> list[str]:
    """One section per distinct per-job rate share, with ``numjobs`` jobs at that share (a
    sequential profile's jobs each on their own slice, :func:`region_lines`)."""
    groups = [(share, len(list(same))) for share, same in groupby(rate_shares(p, host, hosts))]
    name = _check_name(p.name, "profile name")
    out: list[str] = []
    first = 0
    for k, ((reads, writes), count) in enumerate(groups, 1):
        header = name if len(groups) == 1 else f"{name}-{k}"
        out += ["", f"[{header}]", *profile_lines(p), f"numjobs={count}",
                f"rate_iops={reads},{writes}",  # per direction: method-notes §9
                *region_lines(p, first, span, host, hosts)]
        first += count
    return out


def stream_range(offset_pct: float, size_pct: float, bs: int, span: int | None) -> list[str]:
    """``offset=``/``size=`` of a stream's slice of the target.

    fio aligns a percentage ``offset`` *up* to the block size but keeps the percentage
    ``size``, so a band could end up to one block past its range (measured on fio 3.33: the
    10–18 % band of a 64 MiB file reached 12083200 > 12079595 bytes). With the target's size
    known the slice is given in whole blocks inside the range; without it (a load host's
    device) in percentages, at most one block over (docs/method-notes.md §2).
    """
    if span is None:
        return [f"offset={offset_pct:g}%", f"size={size_pct:g}%"]
    first = -(-math.floor(span * offset_pct / 100) // bs) * bs  # aligned up
    end = math.floor(span * (offset_pct + size_pct) / 100) // bs * bs  # aligned down
    if end - first < bs:
        raise WorkloadError(f"a {size_pct:g} % slice of a {span}-byte target holds no whole "
                            f"{bs}-byte block; use a larger target")
    return [f"offset={first}", f"size={end - first}"]


def stream_sections(p: WorkloadProfile, span: int | None = None, host: int = 0,
                    hosts: int = 1) -> list[str]:
    """One job section per stream: its range, its mix and its share of the profile's total
    rate as its own ``rate_iops`` (:func:`stream_rate`). The total is always given (the
    search's step, method-notes §2): a share held by fio's ``flow`` weights instead costs the
    generator three orders of magnitude (measured on the null engine, docs/performance.md)."""
    total = sum(_pct(s[3], "stream share") for s in p.streams)
    if not 99.0 <= total <= 101.0:
        raise WorkloadError(f"hot-band shares of {p.name} add up to {total:g} %, not 100 %")
    if p.rate_iops is None:
        raise WorkloadError(f"{p.name} runs several streams: it needs a total rate_iops to give "
                            "each stream its share (method-notes §2)")
    common = [f"iodepth={_int_in(p.queue_depth, 1, 4096, 'queue depth')}", *_duration_lines(p)]
    out: list[str] = []
    for name, offset, size, share, read_pct, random, bs in p.streams:
        offset, size = _pct(offset, "stream offset"), _pct(size, "stream size")
        if offset + size > 100 or size <= 0:
            raise WorkloadError(f"stream {name!r} covers {offset:g} % + {size:g} % of the target")
        bsv = _block_size(bs)
        section = f"{_check_name(p.name, 'profile name')}-{_check_name(name, 'stream name')}"
        where = [f"bs={bsv}", f"blockalign={bsv}", *stream_range(offset, size, bsv, span)]
        if name in p.curved_streams:
            out += curved_stream_sections(p, section, where, share, read_pct, host, hosts)
            continue
        out += ["", f"[{section}]", *rw_lines(read_pct, bool(random)), *where,
                *stream_rate(p, name, share, read_pct, host, hosts), *common]
    return out


def curved_stream_sections(p: WorkloadProfile, section: str, where: list[str], share: float,
                           read_pct: float, host: int, hosts: int) -> list[str]:
    """A stream whose offsets follow the mandated generator's in-band curve: a section per
    direction it uses (``-read``, ``-write``), each with its share of the stream's rate and
    its own ``zoned_abs`` zones — writes land 1 % of the band later, and fio 3.33 refuses a
    distribution per direction in one section (drivers/fio/hotband_curve.py)."""
    band = next((int(w[5:]) for w in where if w.startswith("size=") and w[5:].isdigit()), None)
    if band is None:
        raise WorkloadError(f"{section} follows the reference in-band curve, which needs the "
                            "target's size in bytes (give the target size, also for load "
                            "hosts: the station cannot read a load host's device size)")
    bs = int(where[0][3:])
    out: list[str] = []
    for direction, rw, pct, mix in (("read", "randread", read_pct, 100.0),
                                    ("write", "randwrite", 100 - read_pct, 0.0)):
        if pct <= 0:
            continue
        zones = curve_zones(band, bs, write=direction == "write")
        out += ["", f"[{section}-{direction}]", f"rw={rw}", *where,
                f"random_distribution={zoned_abs(zones)}",
                *stream_rate(p, section, share * pct / 100, mix, host, hosts),
                f"iodepth={_int_in(p.queue_depth, 1, 4096, 'queue depth')}",
                *_duration_lines(p)]
    return out


def stream_rate(p: WorkloadProfile, name: str, share: float, read_pct: float, host: int,
                hosts: int) -> list[str]:
    """``rate_iops=R,W`` of one stream of a multi-stream profile (the hot band at a search
    step, a sweep step of method-notes §6): its share of the profile's total rate, split by
    the *stream's* mix and over the load hosts. A direction the stream uses gets at least
    1 IOPS (fio reads 0 as no limit), so a very low total runs a little above its ask."""
    assert p.rate_iops is not None
    if not 0 <= host < hosts:
        raise WorkloadError(f"stream {name!r}: load host {host} is not one of {hosts}")
    total = sum(_int_in(v, 0, 10**8, "rate_iops") for v in p.rate_iops) * share / 100
    reads = split_evenly(round(total * read_pct / 100), hosts)[host]
    writes = split_evenly(round(total * (100 - read_pct) / 100), hosts)[host]
    reads = max(reads, 1) if read_pct > 0 else 0
    writes = max(writes, 1) if read_pct < 100 else 0
    return [f"rate_iops={reads},{writes}"]  # per direction: method-notes §9


def replay_section(p: WorkloadProfile, options: JobOptions) -> list[str]:
    """Replay ``p.trace`` (the station's looped copy, drivers/fio/replay.py) onto the one
    target: ``replay_redirect`` sends every IO there whatever file the trace names, and
    ``runtime`` without ``time_based`` stops it at the phase's end."""
    if len(options.targets) != 1:
        raise WorkloadError(f"a trace replay ({p.name}) runs on exactly one target, not "
                            f"{len(options.targets)}: replay_redirect takes one file or device")
    trace = p.trace or ""
    if not _SAFE_PATH.match(trace):
        raise WorkloadError(f"trace path {trace!r} contains characters fio cannot take")
    if p.rate_iops is not None:
        raise WorkloadError(f"{p.name}: a trace replay runs at the trace's own pace; "
                            "a rate limit is not supported")
    lines = ["", f"[{_check_name(p.name, 'profile name')}]", f"read_iolog={trace}",
             f"replay_redirect={_check_target(options.targets[0])}",
             f"iodepth={_int_in(p.queue_depth, 1, 4096, 'queue depth')}"]
    return lines + [line for line in _duration_lines(p) if line != "time_based=1"]


def job_text(profile: WorkloadProfile, options: JobOptions) -> str:
    """A complete job file for one profile over all targets, for load host
    ``options.host`` of ``options.hosts`` (each host runs its share of a rate cap)."""
    if not options.targets:
        raise WorkloadError("no fio target given")
    engine = _check_name(options.ioengine or default_ioengine(), "ioengine")
    lines = ["[global]", f"ioengine={engine}", f"direct={int(options.direct)}",
             "filename=" + ":".join(_check_target(t) for t in options.targets),
             "group_reporting=1", f"percentile_list={PERCENTILES}", *LATENCY_AND_RANDOM,
             f"allow_file_create={int(options.allow_file_create)}"]
    if options.host_logs:  # fio takes an option's last value: clat_percentiles=1 wins
        lines += HOST_LOG_OPTIONS
    if options.size is not None:
        lines.append(f"size={_int_in(options.size, 4096, 2**62, 'size')}")
    if profile.kind == "prefill":
        lines.append("# pre-fill: sequential writes over the whole target (method-notes §2)")
    if profile.trace:
        lines += replay_section(profile, options)
    elif profile.streams:
        lines += stream_sections(profile, options.span or options.size, options.host,
                                 options.hosts)
    elif profile.rate_iops is not None:
        lines += rated_sections(profile, options.host, options.hosts,
                                options.span or options.size)
    else:
        lines += ["", f"[{_check_name(profile.name, 'profile name')}]", *profile_lines(profile),
                  f"numjobs={_int_in(profile.jobs, 1, 256, 'jobs')}",
                  *region_lines(profile, 0, options.span or options.size, options.host,
                                options.hosts)]
    return "\n".join(lines) + "\n"
