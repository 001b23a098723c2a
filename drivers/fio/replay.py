"""Block-trace replay with fio ``read_iolog`` (docs/method-notes.md §6, docs/fio.md).

A trace is an fio iolog, version 2 (``file action [offset length]``, no timing: fio issues the
IOs as fast as ``iodepth`` allows) or version 3 (a timestamp first: fio paces the IOs as
recorded). Two facts measured on fio 3.33 shape this module:

* fio replays a trace **once**: neither ``time_based`` nor ``loops`` repeats it (a 400-IO
  trace ended after 400 IOs in both cases). A phase of the method lasts its planned intervals,
  so the station writes a looped copy of the trace — the IO lines repeated, v3 timestamps
  shifted by the trace's span plus its mean gap each time — long enough for the phase, and
  ``runtime`` stops fio at the phase's end.
* a v3 trace's timestamps pace the replay as microseconds (4 × 10⁶ between the first and the
  last of five IOs: 3.0 s of runtime), so copies = phase length / span with the span read in µs.
* with more than one IO queued, fio counts the wait for a v3 IO's time stamp as that IO's
  latency (1–3 s at iodepth 4, 20–200 µs at iodepth 1 for the same trace): the engine replays
  timed traces at iodepth 1, so a trace's own concurrency is not reproduced (docs/fio.md).

The copy names one file only; ``replay_redirect`` sends every IO to the station's target, so
a trace recorded on ``/dev/sdb`` can never touch ``/dev/sdb`` here. Every offset must fit
inside the target, or the replay is refused with the first line that does not.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from drivers import guarded_file
from drivers.interfaces import WorkloadError

HEADERS = {"fio version 2 iolog": 2, "fio version 3 iolog": 3}
IO_ACTIONS = ("read", "write", "trim", "sync", "datasync")
FILE_ACTIONS = ("add", "open", "close")
#: the looped copy's one file name (replay_redirect replaces it by the target)
REPLAY_FILE = "storwatt-replay-target"
#: the most IO lines a looped copy of an untimed (v2) trace may hold (~40 MB)
MAX_LOOPED_IOS = 1_000_000
#: the largest trace file read: room for more IO lines than a looped copy may hold (a file
#: beyond it is no trace, and a link to a device must not be read to the memory's end)
MAX_TRACE_BYTES = 64 << 20
#: a v3 timestamp unit in seconds, as fio 3.33 paces it (module notes)
V3_UNIT_S = 1e-6


@dataclass(frozen=True)
class TraceIO:
    t: int  # v3 timestamp (0 for v2)
    action: str  # read | write | trim | sync | datasync
    offset: int
    length: int


@dataclass(frozen=True)
class Trace:
    """A parsed trace: its version, IOs and the figures a profile table shows."""

    path: str
    version: int
    ios: tuple[TraceIO, ...]

    @property
    def span(self) -> int:
        """First to last timestamp (v3), in the trace's units; 0 for v2."""
        return self.ios[-1].t - self.ios[0].t if self.version == 3 else 0

    @property
    def read_pct(self) -> float:
        data = [io for io in self.ios if io.action in ("read", "write")]
        return 100 * sum(io.action == "read" for io in data) / len(data) if data else 0.0

    @property
    def mean_block(self) -> int:
        data = [io.length for io in self.ios if io.length]
        return round(sum(data) / len(data) / 512) * 512 if data else 512

    @property
    def end_offset(self) -> int:
        return max(io.offset + io.length for io in self.ios)

    @property
    def recorded_iops(self) -> float | None:
        """The IO rate the trace was recorded at (v3 only, module notes on units)."""
        if self.version != 3 or self.span <= 0:
            return None
        return (len(self.ios) - 1) / (self.span * V3_UNIT_S)


def _bad(path: str, number: int, why: str) -> WorkloadError:
    return WorkloadError(f"trace {path} line {number}: {why}")


@lru_cache(maxsize=8)
def read_trace(path: str) -> Trace:
    """Parse and check an fio iolog (v2 or v3); WorkloadError names the line and why."""
    try:
        lines = guarded_file.read_text(path, "trace", MAX_TRACE_BYTES).splitlines()
    except guarded_file.GuardedFileError as exc:
        raise WorkloadError(str(exc)) from None
    version = HEADERS.get(lines[0].strip() if lines else "")
    if version is None:
        raise _bad(path, 1, f"not an fio iolog: the first line must be one of "
                            f"{', '.join(repr(h) for h in HEADERS)} (a blktrace binary is "
                            "converted first, docs/fio.md)")
    ios: list[TraceIO] = []
    for number, line in enumerate(lines[1:], 2):
        fields = line.split()
        if not fields:
            continue
        t = 0
        if version == 3:
            if not fields[0].isdigit():
                raise _bad(path, number, f"timestamp {fields[0]!r} is not a whole number")
            t, fields = int(fields[0]), fields[1:]
        if len(fields) == 2 and fields[1] in FILE_ACTIONS:
            continue
        if len(fields) != 4 or fields[1] not in IO_ACTIONS:
            raise _bad(path, number, f"expected '<file> <{'|'.join(IO_ACTIONS)}> <offset> "
                                     f"<length>', got {line.strip()!r}")
        if not (fields[2].isdigit() and fields[3].isdigit()):
            raise _bad(path, number, "offset and length must be whole numbers of bytes")
        if ios and t < ios[-1].t:
            raise _bad(path, number, f"timestamp {t} is earlier than the line before")
        ios.append(TraceIO(t, fields[1], int(fields[2]), int(fields[3])))
    if not ios:
        raise WorkloadError(f"trace {path}: holds no read or write")
    return Trace(path, version, tuple(ios))


def copies_for(trace: Trace, duration_s: float | None) -> int:
    """How many times the trace must run back to back to last ``duration_s``."""
    if duration_s is None:
        return 1
    if trace.version == 3 and trace.span > 0:
        period_s = trace.span * V3_UNIT_S * len(trace.ios) / max(1, len(trace.ios) - 1)
        return max(1, math.ceil(duration_s / period_s) + 1)
    return max(1, MAX_LOOPED_IOS // len(trace.ios))


def looped_text(trace: Trace, copies: int) -> str:
    """The trace ``copies`` times over, on one file; v3 timestamps keep rising."""
    period = trace.span + (trace.span // max(1, len(trace.ios) - 1) if trace.span else 0)
    stamp = (lambda t: f"{t} ") if trace.version == 3 else (lambda t: "")
    lines = [next(h for h, v in HEADERS.items() if v == trace.version),
             f"{stamp(0)}{REPLAY_FILE} add", f"{stamp(0)}{REPLAY_FILE} open"]
    t0 = trace.ios[0].t
    last = 0
    for k in range(copies):
        for io in trace.ios:
            last = io.t - t0 + k * period
            lines.append(f"{stamp(last)}{REPLAY_FILE} {io.action} {io.offset} {io.length}")
    lines.append(f"{stamp(last)}{REPLAY_FILE} close")
    return "\n".join(lines) + "\n"


def write_looped_trace(source: str, destination: Path, duration_s: float | None,
                       target_bytes: int | None) -> Path:
    """Check ``source`` fits the target and write its looped copy to ``destination``."""
    trace = read_trace(source)
    if target_bytes is not None and trace.end_offset > target_bytes:
        bad = next(io for io in trace.ios if io.offset + io.length > target_bytes)
        raise WorkloadError(f"trace {source}: an IO at offset {bad.offset} + {bad.length} "
                            f"bytes runs past the end of the {target_bytes}-byte target; "
                            "replay it on a target at least "
                            f"{trace.end_offset} bytes large")
    destination.write_text(looped_text(trace, copies_for(trace, duration_s)), encoding="utf-8")
    return destination
