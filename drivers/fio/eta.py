"""fio's ETA status line, as its client prints it while jobs run (docs/fio.md, "What fio's
client prints while a job runs").

fio prints ``Jobs: 1 (f=1), 0-1000 IOPS: [R(1)][14.3%][r=4003k][r=1000 IOPS][eta 00m:18s]``
about once a second, ending each line with ``\\r`` (``--eta-newline=N`` adds a ``\\n`` every N
seconds). Measured on fio 3.33 and read in its source (``eta.c: display_thread_status``,
``client.c: client_display_thread_status``): a client prints these lines only when its
``--output-format`` holds no JSON, even with ``--eta=always`` and ``--output=FILE``; the line of
one client process sums every ``--client`` it drives, so it is per host only when the process
drives one host (as the station does). The rates are fio's display rates over the last ETA
period, rounded to 4 significant figures: good to show, never to count IOs with.

Bandwidth is printed by ``num2str(KiB/s, 4, 1024, pow2, unit_base)``: the number is in KiB/s
times 1000 per SI prefix step past ``k`` (``4003k`` = 4003 KiB/s, ``10.8M`` = 10 800 KiB/s), or
1024 per IEC step past ``Ki`` when the job's block sizes are powers of two in IEC units.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from drivers.interfaces import DirectionRates

_RATES = re.compile(r"\]\[(?P<bw>[rwt]=[^\]]*)\]\[(?P<iops>[rwt]=[^\]]*) IOPS\]")
_JOBS = re.compile(r"^Jobs: (?P<running>\d+) \(f=\d+\)")
_NUMBER = re.compile(r"^(?P<value>\d+(?:\.\d+)?)(?P<prefix>[kKMGTPE]i?)?(?:B/s|B)?$")
_PREFIXES = "KMGTPE"  # SI writes k, IEC Ki


class EtaFormatError(ValueError):
    """An ETA field this parser does not know (the text is quoted in the message)."""


@dataclass(frozen=True)
class EtaStatus(DirectionRates):
    """One ETA line: running jobs and per-direction rates (0 for a direction not shown)."""

    jobs_running: int
    read_iops: float = 0.0
    write_iops: float = 0.0
    read_kib_s: float = 0.0
    write_kib_s: float = 0.0


def _scaled(text: str, first_step: int) -> float:
    """``12.3k`` → 12300 (IOPS, ``first_step`` 0) or KiB/s: ``4003k`` → 4003 (``first_step``
    1, fio's bandwidth number already counts KiB)."""
    match = _NUMBER.match(text)
    if not match:
        raise EtaFormatError(f"fio ETA rate {text!r} is not a number with a unit prefix")
    value, prefix = float(match["value"]), match["prefix"] or ""
    if not prefix:
        return value
    step = _PREFIXES.index(prefix[0].upper()) + 1 - first_step
    return value * (1024 if prefix.endswith("i") else 1000) ** step


def _directions(field: str, first_step: int) -> dict[str, float]:
    out = {}
    for part in field.split(","):
        key, sep, value = part.partition("=")
        if not sep or key not in ("r", "w", "t"):
            raise EtaFormatError(f"fio ETA field {field!r} is not r=…,w=…,t=…")
        out[key] = _scaled(value.strip(), first_step)
    return out


def parse_eta_line(line: str) -> EtaStatus | None:
    """The status of one ETA line; None for any other line (job reports, banners)."""
    line = line.strip()
    jobs = _JOBS.match(line)
    if not jobs:
        return None
    rates = _RATES.search(line)
    if not rates:  # no IO done yet ("Jobs: 2 (f=2), 0-3000 IOPS") or between jobs
        return EtaStatus(int(jobs["running"]))
    kib, iops = _directions(rates["bw"], 1), _directions(rates["iops"], 0)
    return EtaStatus(int(jobs["running"]), iops.get("r", 0.0), iops.get("w", 0.0),
                     kib.get("r", 0.0), kib.get("w", 0.0))


def eta_lines(text: str) -> list[EtaStatus]:
    """Every ETA status in a stretch of client output (lines end with ``\\r`` or ``\\n``)."""
    return [s for part in re.split(r"[\r\n]", text) if (s := parse_eta_line(part))]
