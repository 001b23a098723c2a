"""Value types of a method file: every number finite and in a range the station can run, every
list non-empty.

Method files are edited by hand. A NaN, an ``inf``, a 0 or three extra zeros must stop at load
time with the key named, not crash a run or spin it in a loop hours later. The bounds are what
the station can execute: fio's limits (block sizes 512 B to 64 MiB in 512 B steps, queue depth
1–4096, 1–256 jobs), 0.1 s as the fastest useful meter sampling, 1 s as the shortest interval
(fio reports once a second) and one week as the longest plan (docs/method.md lists them all).
Integers and booleans are strict: ``true`` is no count and ``1`` no boolean.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Annotated, TypeVar

from pydantic import AfterValidator, Field, Strict

from app.core import plain_text

T = TypeVar("T")

#: one interval count in a plan (100 000 one-second intervals is already 28 h)
MAX_INTERVALS = 100_000
#: the fastest sampling a meter is asked for, and the shortest interval
MIN_PERIOD_S, MIN_INTERVAL_S = 0.1, 1.0
#: the shortest fio stall limit (``[fio] stall_s``): three of fio's one-second status reports
MIN_STALL_S = 3.0
#: the shortest meter silence limit (``[sampling] meter_silence_limit_s``); the default is in
#: app.method.model (longer than one full reconnect, docs/reliability.md)
MIN_SILENCE_S = 1.0
#: the longest time one setting may ask for (an interval, a probe, a sampling limit)
MAX_SETTING_S = 3600.0
#: the longest plan (timed part, intensity search and every COM check): a week
MAX_PLAN_S = 7 * 24 * 3600.0
#: fio's block-size limits (drivers/fio/jobs.py), in KiB
MIN_BLOCK_KIB, MAX_BLOCK_KIB = 0.5, 64 * 1024.0


def _whole_sectors(kib: float) -> float:
    if (kib * 2) % 1:
        raise ValueError(f"{kib:g} KiB is not a whole multiple of 512 B (0.5 KiB)")
    return kib


Count = Annotated[int, Strict(), Field(ge=0, le=MAX_INTERVALS)]
PositiveCount = Annotated[int, Strict(), Field(ge=1, le=MAX_INTERVALS)]
Flag = Annotated[bool, Strict()]


def _one_line(text: str) -> str:
    """A method's name or title by the rule of every typed text (``app.core.plain_text``):
    the method file is typed too, and its title reaches every terminal that lists runs."""
    why = plain_text.refusal(text, "the text")
    if why is not None:
        raise ValueError(why)
    return text


def _lines(text: str) -> str:
    why = plain_text.refusal(text, "the text", multiline=True)
    if why is not None:
        raise ValueError(why)
    return text


#: a one-line text of a method file (a title) and a multi-line one (a description)
Title = Annotated[str, AfterValidator(_one_line)]
Lines = Annotated[str, AfterValidator(_lines)]
Name = Annotated[str, Field(min_length=1), AfterValidator(_one_line)]
#: the characters of a method's name and version: a name that only *looks* registered
#: (U+2010 hyphens, a trailing space, a zero-width or bidi character) is refused at load, as
#: the verifier refuses it (issue 38, seen 7; verifier/storwatt_verify.py ``SAFE_IDENT``)
SAFE_IDENT = re.compile(r"[A-Za-z0-9._+-]{1,64}")


def _safe_ident(text: str) -> str:
    if SAFE_IDENT.fullmatch(text):
        return text
    odd = next((c for c in text if not SAFE_IDENT.fullmatch(c)), "")
    what = (f"{odd!r} (U+{ord(odd):04X} {unicodedata.name(odd, 'unnamed')}) at position "
            f"{text.index(odd) + 1}" if odd else f"{len(text)} characters")
    raise ValueError(f"{text!r} has {what}: a method's name and version use only letters "
                     "A–Z a–z, digits and . _ + - (1 to 64 characters)")


#: a method's name or version (:data:`SAFE_IDENT`)
Ident = Annotated[str, AfterValidator(_safe_ident)]
#: a name that becomes part of an fio job-section header (drivers/fio/jobs.py takes no others)
JobName = Annotated[str, Field(pattern=r"^[A-Za-z0-9_.+-]{1,32}$")]
Number = Annotated[float, Strict()]  # finite: the models set allow_inf_nan=False
Percent = Annotated[float, Strict(), Field(ge=0, le=100)]
#: a tolerance or limit in percent: 0 and 100 would accept nothing or everything
OpenPercent = Annotated[float, Strict(), Field(gt=0, lt=100)]
Positive = Annotated[float, Strict(), Field(gt=0)]
#: a slice of the target's address range: above 0, at most all of it
RangePercent = Annotated[float, Strict(), Field(gt=0, le=100)]
IntervalSeconds = Annotated[float, Strict(), Field(ge=MIN_INTERVAL_S, le=MAX_SETTING_S)]
Period = Annotated[float, Strict(), Field(ge=MIN_PERIOD_S, le=MAX_SETTING_S)]
#: fio reports once a second: a stall limit under MIN_STALL_S would fail a healthy fio
StallSeconds = Annotated[float, Strict(), Field(ge=MIN_STALL_S, le=MAX_SETTING_S)]
SilenceSeconds = Annotated[float, Strict(), Field(ge=MIN_SILENCE_S, le=MAX_SETTING_S)]
BlockKiB = Annotated[float, Strict(), Field(ge=MIN_BLOCK_KIB, le=MAX_BLOCK_KIB),
                     AfterValidator(_whole_sectors)]
QueueDepth = Annotated[int, Strict(), Field(ge=1, le=4096)]
Jobs = Annotated[int, Strict(), Field(ge=1, le=256)]
WmaPoints = Annotated[int, Strict(), Field(ge=1, le=1000)]
Rounds = Annotated[int, Strict(), Field(ge=2, le=100)]  # a PTS steady-state window
Passes = Annotated[int, Strict(), Field(ge=1, le=100)]  # whole-target pre-fill passes
Milliseconds = Annotated[float, Strict(), Field(gt=0, le=60_000)]
#: an air temperature a data centre can have (inlet class bounds)
Celsius = Annotated[float, Strict(), Field(ge=-40, le=85)]

#: a list in the file that must hold at least one entry
NonEmpty = Annotated[tuple[T, ...], Field(min_length=1)]
