"""What a job file really asks of the target, read back from fio's own per-IO log.

A profile's definition says "8 KiB random 70/30 over the whole target"; whether fio does that
with the job file the station writes is a fact about fio, so it is measured: the file runs on
the null engine (no IO behind it) with ``write_lat_log`` and ``log_offset=1``, and every
logged IO's direction, size and offset is read back (method-notes §2, "Every profile's access
pattern, proven"). The station does this in the pre-run before each search
(:func:`measure_pattern`, the report states it); the tests read the same log with the same
code. Random offsets are tested for uniformity with a chi-square goodness-of-fit over equal
slices of the range, its p-value from the Wilson–Hilferty normal approximation (accurate to
a few per mille at these degrees of freedom, enough for a pass/fail at p = 0.001).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from drivers.fio.ceiling import job_reports, null_engine_report, stream_of
from drivers.fio.hotband_curve import shares_below
from drivers.interfaces import MeasuredPattern, StreamPattern, WorkloadError, WorkloadProfile

#: the lines fio's per-IO latency log holds with ``log_offset=1``:
#: time (ms), latency (ns), direction (0 read, 1 write), size (bytes), offset (bytes), …
LOG_OPTIONS = ("log_offset=1",)
#: the IOs an uncapped job file is asked for in the pre-run (fio's ``number_ios``, over its
#: jobs): the read share to ±0.35 point (1 σ at 70 %), enough for a 64-slice uniformity test
PATTERN_IOS = 20_000
#: how long a capped (multi-stream) job file runs in the pre-run: at the rate the station asks
#: for (``pattern_rate``) the first hot band's reads are ~12,000 IOs, its curve to ±0.5 point
PATTERN_S = 1.0
#: where in a curved band its reads' share is reported (fractions of the band, taken down to
#: a whole block: fio's zones hold the curve at block edges): the reference shares at these
#: points are in method-notes §2
CURVE_POINTS = (0.001, 0.01, 0.1, 0.5)


@dataclass(frozen=True, slots=True)
class LoggedIO:
    job: str
    write: bool
    size: int
    offset: int
    host: str = ""  # the load host that ran it ("" on the station)
    #: which of the section's jobs (fio's log number): ``numjobs`` jobs share one name
    index: int = 0


@dataclass(frozen=True)
class LoggedRun:
    """One fio run of the pre-run: on the station (``host`` "") or a load host's client
    (``argv`` ends with its ``--client``), in its own folder: fio's client names a returned
    log after the host's address only, so two hosts on one address would collide."""

    argv: tuple[str, ...]
    folder: Path
    text: str  # the null-engine job file (drivers/fio/ceiling.py)
    host: str = ""


@dataclass(frozen=True)
class AccessPattern:
    """IOs as fio logged them, over one range."""

    ios: int
    read_pct: float
    #: share of the IOs that start where their job's previous IO ended (or back at the
    #: range's start after its end): sequential access
    sequential_pct: float
    #: every offset a whole number of blocks from the range's start
    aligned: bool
    lowest: int
    highest_end: int
    #: chi-square goodness of fit of the offsets over equal slices of the range (uniform)
    uniformity_p: float
    #: share of the IOs whose offset no other IO of the same pass touched, across every job
    #: and load host: a job's pass over its range ends where it wraps to its first offset
    distinct_pct: float = 100.0

    def within(self, start: int, end: int) -> bool:
        return start <= self.lowest and self.highest_end <= end


def read_lat_logs(folder: Path, prefix: str, sections: Sequence[str],
                  host: str = "") -> list[LoggedIO]:
    """The IOs of ``prefix_lat.N.log`` for each job N (1-based, in the order of the JSON
    report's jobs); a load host's client writes it as ``prefix_lat.N.log.ADDRESS``."""
    out: list[LoggedIO] = []
    for number, job in enumerate(sections, 1):
        name = f"{prefix}_lat.{number}.log"
        path = folder / name
        if not path.exists():
            path = next(iter(sorted(folder.glob(f"{name}.*"))), path)
        for line in path.read_text().splitlines():
            fields = line.split(",")
            out.append(LoggedIO(job, fields[2].strip() == "1", int(fields[3]), int(fields[4]),
                                host, number))
    return out


def chi_square_p(counts: Sequence[int]) -> float:
    """Upper-tail p of the chi-square statistic of ``counts`` against equal expectations."""
    k = len(counts) - 1
    total = sum(counts)
    if k < 1 or total == 0:
        return math.nan
    expected = total / len(counts)
    stat = sum((c - expected) ** 2 for c in counts) / expected
    z = ((stat / k) ** (1 / 3) - (1 - 2 / (9 * k))) / math.sqrt(2 / (9 * k))
    return 0.5 * math.erfc(z / math.sqrt(2))


def access_pattern(ios: Iterable[LoggedIO], start: int, length: int, block: int,
                   slices: int = 64) -> AccessPattern:
    """The pattern of ``ios`` over the range ``start`` … ``start + length``."""
    ios = list(ios)
    if not ios:
        raise ValueError("fio logged no IO")
    last_end: dict[tuple[str, str, int], int] = {}
    first: dict[tuple[str, str, int], int] = {}
    passes: dict[tuple[str, str, int], int] = {}
    touched: set[tuple[int, int]] = set()
    continuing = 0
    counts = [0] * slices
    aligned = True
    for io in ios:
        job = (io.host, io.job, io.index)
        previous = last_end.get(job)
        first.setdefault(job, io.offset)
        wrapped = previous is not None and io.offset < previous and (
            io.offset == first[job] or previous >= start + length and io.offset == start)
        if previous is not None and (io.offset == previous or wrapped):
            continuing += 1
        passes[job] = passes.get(job, 0) + wrapped
        touched.add((passes[job], io.offset))
        last_end[job] = io.offset + io.size
        aligned = aligned and (io.offset - start) % block == 0
        counts[min(slices - 1, max(0, (io.offset - start) * slices // length))] += 1
    firsts = len(last_end)  # each job's first IO continues nothing
    return AccessPattern(
        ios=len(ios), read_pct=100 * sum(not io.write for io in ios) / len(ios),
        sequential_pct=100 * continuing / max(1, len(ios) - firsts), aligned=aligned,
        lowest=min(io.offset for io in ios),
        highest_end=max(io.offset + io.size for io in ios),
        uniformity_p=chi_square_p(counts), distinct_pct=100 * len(touched) / len(ios))


def share_below(x: float, band_bytes: float, write: bool = False) -> float:
    """The reference curve's share of a band's IOs (0–1) below ``x`` bytes."""
    return float(shares_below(np.array([x]), band_bytes, write)[0])


def _stream_pattern(ios: list[LoggedIO], total: int, span: int, stream: tuple,
                    curved: bool) -> StreamPattern:
    name, offset_pct, size_pct, _share, _read, _random, block = stream
    start, length = int(span * offset_pct / 100), int(span * size_pct / 100)
    found = access_pattern(ios, start, length, block)
    curve: tuple[tuple[float, float, float], ...] = ()
    reads = [io for io in ios if not io.write]
    if curved and reads:  # the band's reads from its first whole block (jobs.stream_range)
        first = -(-start // block) * block
        band = (int(span * (offset_pct + size_pct) / 100) // block * block) - first
        offsets = np.array([io.offset - first for io in reads])
        edges = sorted({int(x * band) // block * block for x in CURVE_POINTS} - {0})
        curve = tuple((round(100 * edge / band, 4),  # at whole blocks, where fio's zones are
                       round(100 * float(np.mean(offsets < edge)), 3),
                       round(100 * share_below(edge, band), 3)) for edge in edges)
    return StreamPattern(name, round(100 * len(ios) / total, 3), round(found.read_pct, 3),
                         100 * found.lowest / span, 100 * found.highest_end / span,
                         round(found.sequential_pct, 3), found.uniformity_p, curve)


def pattern_of(ios: Sequence[LoggedIO], profile: WorkloadProfile, span: int, seconds: float,
               source: str) -> MeasuredPattern:
    """What ``ios`` (the logged IOs of ``profile``'s job file over a ``span``-byte range) say
    of its access pattern: the whole profile's, and each stream's (a hot band)."""
    if not ios:
        raise WorkloadError(f"fio logged no IO in the pre-run of {profile.name}")
    whole = access_pattern(ios, 0, span, profile.align or profile.block_size)
    by_stream: dict[str, list[LoggedIO]] = {s[0]: [] for s in profile.streams}
    for io in ios:
        by_stream.setdefault(stream_of(io.job, profile), []).append(io)
    streams = tuple(_stream_pattern(by_stream[s[0]], len(ios), span, s,
                                    s[0] in profile.curved_streams)
                    for s in profile.streams if by_stream[s[0]])
    return MeasuredPattern(profile.name, whole.ios, seconds, round(whole.read_pct, 3),
                           round(whole.sequential_pct, 3), whole.aligned, whole.uniformity_p,
                           100 * whole.lowest / span, 100 * whole.highest_end / span,
                           streams, source, round(whole.distinct_pct, 3))


def pattern_text(null_text: str, log_prefix: str, profile: WorkloadProfile) -> str:
    """A null-engine job file (:func:`drivers.fio.ceiling.null_engine_text`) made to log every
    IO: a capped file (its rate holds the streams' shares) for
    ``PATTERN_S``, an uncapped one for ``PATTERN_IOS`` IOs (fio's ``number_ios`` is ignored
    while ``time_based``). The ramp goes: every logged IO is counted."""
    extra = [f"write_lat_log={log_prefix}", *LOG_OPTIONS]
    text = "\n".join(line for line in null_text.splitlines()
                     if not line.startswith(("ramp_time=", "runtime="))) + "\n"
    if profile.rate_iops:
        extra.append(f"runtime={int(PATTERN_S * 1000)}ms")
    else:
        sections = max(1, text.count("\n[") - text.count("\n[global]"))
        extra.append(f"number_ios={math.ceil(PATTERN_IOS / sections / max(1, profile.jobs))}")
        text = text.replace("time_based=1\n", "")
    return text.replace("[global]\n", "[global]\n" + "\n".join(extra) + "\n", 1)


def _logged(run: LoggedRun, profile: WorkloadProfile) -> tuple[list[LoggedIO], float]:
    """Run one pre-run with the per-IO log on: its IOs and how long its jobs ran."""
    run.folder.mkdir(parents=True, exist_ok=True)
    text = pattern_text(run.text, "pattern", profile)
    job = run.folder / "pattern.fio"
    job.write_text(text, encoding="utf-8")
    where = f" on load host {run.host}" if run.host else ""
    report = null_engine_report(list(run.argv), job,
                                f"fio's pattern pre-run of {profile.name}{where}", 60)
    try:
        jobs = job_reports(report)
        names = [str(j["jobname"]) for j in jobs]
        ran = max(int(j.get("job_runtime", 0)) for j in jobs) / 1000
        return read_lat_logs(run.folder, "pattern", names, run.host), ran
    except (ValueError, KeyError, OSError) as exc:
        raise WorkloadError(f"fio's pattern pre-run of {profile.name}{where} left no readable "
                            f"log: {exc}") from None


def measure_pattern(runs: Sequence[LoggedRun], profile: WorkloadProfile, span: int,
                    version: str = "fio") -> MeasuredPattern:
    """Run each of ``runs`` (the profile's own job file on the null engine: one on the
    station, or one per load host with its share of the rate, all at once) with the per-IO
    log on, and read the pattern of all their IOs together. Raises WorkloadError."""
    with ThreadPoolExecutor(max(1, len(runs))) as pool:
        done = list(pool.map(lambda run: _logged(run, profile), runs))
    ios = [io for logged, _ in done for io in logged]
    ran = max(seconds for _, seconds in done)
    hosts = [run.host for run in runs if run.host]
    where = f" on load hosts {', '.join(hosts)}" if hosts else ""
    source = (f"{version} null engine{where}, per-IO log of the same job file "
              f"({len(ios)} IOs in {ran:g} s)")
    return pattern_of(ios, profile, span, PATTERN_S if profile.rate_iops else ran, source)


def modelled_pattern(profile: WorkloadProfile, span: int) -> MeasuredPattern:
    """The pattern a job file asks for, as a simulator reports it: no IO was logged, so
    ``ios`` is 0, ``uniformity_p`` NaN (nothing tested) and ``source`` says it is modelled."""
    def curve(s: tuple) -> tuple[tuple[float, float, float], ...]:
        if s[0] not in profile.curved_streams:
            return ()
        band = span * s[2] / 100
        return tuple((100 * x, ref, ref) for x in CURVE_POINTS
                     for ref in (round(100 * share_below(x * band, band), 3),))
    streams = tuple(StreamPattern(s[0], s[3], s[4], s[1], s[1] + s[2],
                                  0.0 if s[5] else 100.0, math.nan, curve(s))
                    for s in profile.streams)
    read = (sum(s[3] * s[4] for s in profile.streams) / 100 if profile.streams
            else profile.read_pct)
    sequential = (sum(s[3] for s in profile.streams if not s[5]) if profile.streams
                  else 0.0 if profile.random else 100.0)
    return MeasuredPattern(profile.name, 0, 0.0, read, sequential, True,
                           math.nan, 0.0, 100.0, streams,
                           "simulated engine: the job file's asked pattern, modelled (no fio "
                           "log)")
