"""Whether the access pattern fio drew in a profile's pre-run is the one the method asks for.

Before each search the station runs the profile's own job file on fio's null engine with the
per-IO log on (drivers/fio/access_log.py) and keeps what it measured with the search result.
This module compares that with the profile's definition (docs/method-notes.md §2, "Every
profile's access pattern, proven"): a departure is a job file that does not make the method's
workload, so the verdict counts it (app/rules/compliance.py). The tolerances are the project's, set
from the statistics of a ~20,000-IO log (method-notes §2 gives them) — not method keys, so a
method file cannot loosen them.
"""

from __future__ import annotations

import math

from app.method.model import IOProfile, Method, Stream
from drivers.interfaces import MeasuredPattern, StreamPattern

#: the total rate a multi-stream profile's pre-run asks (its streams capped at their shares):
#: ~1.2 s of it holds ~12,000 reads of the first hot band, its curve to ±0.5 point
PATTERN_RATE_IOPS = 60_000
#: points a profile's (or a stream's) read share may differ from its mix, widened by the
#: log's own 3 σ (:func:`_sampling_pts`: 1 point for a 70/30 mix over 20,000 IOs, 2 for hot3's
#: ~4,000 IOs)
READ_PTS = 1.5
#: points a stream's share of all IOs may differ from its asked share (issue 30's goal)
SHARE_PTS = 0.5
#: points a curved band's measured share may differ from the reference curve's (issue 30's
#: goal), widened by the log's own sampling uncertainty (:func:`_sampling_pts`)
CURVE_PTS = 2.0
#: a random profile's offsets are uniform unless the chi-square p falls below this: fio draws
#: a new sequence each run (``randrepeat=0``), so a uniform file falls below p in that share
#: of runs — one in a million keeps a false NOT MET out of the verdict, while a file that
#: misses a slice of the range (p ≈ 0 at 20,000 IOs over 64 slices) is still caught
UNIFORM_P = 1e-6
#: a sequential profile's IOs that must continue their job's previous IO, %
SEQUENTIAL_PCT = 99.9
#: a sequential profile's IOs that must be at an offset no other IO of the same pass touched,
#: across every job and load host, % (the project's bound, method-notes §2: jobs in lock-step
#: on one region give 100/jobs %, a cache serving the followers; 1 % leaves room for a job's
#: last IO before its wrap meeting the next slice's first)
DISTINCT_PCT = 99.0
#: a random profile's IOs that may happen to continue the previous one, %
RANDOM_SEQUENTIAL_PCT = 1.0
#: a random profile's offsets must reach within this % of both ends of the range
COVERAGE_PCT = 5.0
#: % of the range an offset may lie outside a stream's slice (fio aligns to whole blocks)
EDGE_PCT = 0.01


def pattern_departures(pattern: MeasuredPattern, profile: IOProfile) -> list[str]:
    """Every way ``pattern`` contradicts ``profile``'s definition, each naming the rule and
    the measured figure; [] when it matches."""
    out = _mix_and_order(pattern, profile) if not profile.streams else []
    wanted = {s.name: s for s in profile.streams}
    seen = {s.name for s in pattern.streams}
    out += [f"stream {name}: no IO logged" for name in wanted if name not in seen]
    for found in pattern.streams:
        stream = wanted.get(found.name)
        out += (_stream_departures(found, stream, pattern.ios) if stream is not None
                else [f"stream {found.name}: not in the method"])
    return out


def _stream_departures(found: StreamPattern, stream: Stream, ios: int) -> list[str]:
    """One stream's share, mix, slice, order and curve against its definition (``ios``: the
    whole profile's logged IOs, 0 when modelled)."""
    out = []
    name = f"stream {found.name}"
    if abs(found.share_pct - stream.share_pct) > SHARE_PTS:
        out.append(f"{name}: {found.share_pct:.2f} % of the IOs, asked {stream.share_pct:g} % "
                   f"(±{SHARE_PTS:g} point)")
    allowed = READ_PTS + _sampling_pts(stream.read_pct, ios * found.share_pct / 100)
    if abs(found.read_pct - stream.read_pct) > allowed:
        out.append(f"{name}: {found.read_pct:.1f} % reads, asked {stream.read_pct:g} % "
                   f"(±{allowed:.1f} points)")
    end = stream.offset_pct + stream.size_pct
    if found.low_pct < stream.offset_pct - EDGE_PCT or found.high_pct > end + EDGE_PCT:
        out.append(f"{name}: offsets over {found.low_pct:.3f}–{found.high_pct:.3f} % of the "
                   f"range, asked {stream.offset_pct:g}–{end:g} %")
    if stream.pattern == "sequential" and ios and found.sequential_pct < SEQUENTIAL_PCT:
        out.append(f"{name}: {found.sequential_pct:.2f} % sequential IOs, asked sequential "
                   f"(≥ {SEQUENTIAL_PCT:g} %)")
    reads = ios * found.share_pct * found.read_pct / 1e4
    for x, measured, reference in found.curve:
        allowed = CURVE_PTS + _sampling_pts(reference, reads)
        if abs(measured - reference) > allowed:
            out.append(f"{name}: {measured:.1f} % of the band's reads in its first {x:g} %, "
                       f"the reference curve {reference:.1f} % (±{allowed:.1f} points: "
                       f"{CURVE_PTS:g} and the log's 3 σ)")
    if stream.curved and not found.curve:
        out.append(f"{name}: no in-band curve measured (asked the reference curve)")
    return out


def method_departures(pattern: MeasuredPattern, method: Method | None) -> list[str]:
    """:func:`pattern_departures` against the profile of ``method`` the pattern names."""
    profile = next((q for q in method.profiles if q.name == pattern.profile), None) \
        if method else None
    if profile is None:
        return [f"{pattern.profile} is not a profile of the method the run holds"]
    return pattern_departures(pattern, profile)


def _sampling_pts(share_pct: float, ios: float) -> float:
    """Three standard deviations, in points, of a share measured over ``ios`` random IOs: a
    short log of a small band (hot4's ~2,000 reads) carries ~1 point of its own."""
    if ios < 1:
        return 0.0
    p = share_pct / 100
    return 300 * math.sqrt(p * (1 - p) / ios)


def _mix_and_order(pattern: MeasuredPattern, profile: IOProfile) -> list[str]:
    out = []
    allowed = READ_PTS + _sampling_pts(profile.read_pct, pattern.ios)
    if abs(pattern.read_pct - profile.read_pct) > allowed:
        out.append(f"{pattern.read_pct:.1f} % reads, asked {profile.read_pct:g} % "
                   f"(±{allowed:.1f} points)")
    if not pattern.aligned:
        out.append(f"offsets not aligned to {profile.align_kib:g} KiB")
    if profile.pattern == "sequential":
        if pattern.sequential_pct < SEQUENTIAL_PCT:
            out.append(f"{pattern.sequential_pct:.2f} % sequential IOs, asked sequential "
                       f"(≥ {SEQUENTIAL_PCT:g} %)")
        if pattern.distinct_pct is not None and pattern.distinct_pct < DISTINCT_PCT:
            out.append(f"{pattern.distinct_pct:.2f} % of the IOs at an offset no other job or "
                       f"host touched in the same pass, asked sequential (≥ {DISTINCT_PCT:g} %"
                       "): the jobs re-read or re-write each other's blocks")
        return out
    if pattern.sequential_pct > RANDOM_SEQUENTIAL_PCT:
        out.append(f"{pattern.sequential_pct:.2f} % of the IOs continue the previous one, "
                   f"asked random (≤ {RANDOM_SEQUENTIAL_PCT:g} %)")
    if not math.isnan(pattern.uniformity_p) and pattern.uniformity_p < UNIFORM_P:
        out.append(f"offsets not uniform over the range (chi-square p = "
                   f"{pattern.uniformity_p:.2g} < {UNIFORM_P:g})")
    if pattern.low_pct > COVERAGE_PCT or pattern.high_pct < 100 - COVERAGE_PCT:
        out.append(f"offsets over {pattern.low_pct:.1f}–{pattern.high_pct:.1f} % of the range, "
                   "asked the whole range")
    return out


def describe(pattern: MeasuredPattern) -> str:
    """One short line for the run log and the PDF: the measured figures, each stream's share
    and slice, and how far the bands' curves came from the reference (the xlsx has every
    figure)."""
    where = ("" if pattern.streams else
             f", offsets {pattern.low_pct:.1f}–{pattern.high_pct:.1f} % of the range")
    head = (f"{pattern.read_pct:.1f} % reads, {pattern.sequential_pct:.1f} % sequential{where}, "
            + ("aligned" if pattern.aligned else "NOT aligned")
            + ("" if math.isnan(pattern.uniformity_p) or pattern.streams else
               f", uniformity p = {pattern.uniformity_p:.3g}"))
    streams = ", ".join(f"{s.name} {s.share_pct:.2f} % @ {s.low_pct:.1f}–{s.high_pct:.1f} %"
                        for s in pattern.streams)
    curved = [s for s in pattern.streams if s.curve]
    curve = (f"; band reads on the reference curve within "
             f"{max(abs(m - r) for s in curved for _x, m, r in s.curve):.1f} points "
             f"({', '.join(s.name for s in curved)})" if curved else "")
    count = f"{pattern.ios} IOs" if pattern.ios else "modelled"
    return f"{head}{'; streams ' + streams if streams else ''}{curve} ({count})"
