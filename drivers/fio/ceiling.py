"""The load generator's own ceiling: a profile's job file run on fio's null engine.

fio's ``null`` engine completes every IO at once without touching a file or device, so what a
job file reaches there is what fio itself can generate — the figure a SUT's result must stay
well below to be the SUT's (method-notes §2, "The generator is never the bottleneck"). The hot
band's old job file reached ~570 IOPS there (fio's ``flow`` weights throttled fio itself);
``bench/bench_hotband.py`` measures it beside today's.

The file is the one the engine would run, with changes that keep the IO pattern and drop the
IO: ``ioengine=null``, ``direct=0``, ``group_reporting=0`` (each section's count is needed to
check every stream's share) and a ``ramp_time`` not counted. ``size`` tells the null engine how
large a range to
address (it never opens the targets).
"""

from __future__ import annotations

import json
import re
import subprocess
from collections import defaultdict
from pathlib import Path

from drivers.interfaces import GeneratorCeiling, WorkloadError, WorkloadProfile

_ENGINE_LINE = re.compile(r"^(ioengine|direct|group_reporting)=.*$", re.MULTILINE)


#: the null-engine run counts from this long after its jobs start: a hot band is 17 jobs, and
#: on a busy machine their start-up skew alone moved a 1 s run's shares by half a point
RAMP_S = 0.5


def null_engine_text(job_text: str) -> str:
    """``job_text`` with its IO dropped: the same sections, ranges, caps and mixes, counted
    after ``RAMP_S`` of ramp."""
    replacements = {"ioengine": "ioengine=null", "direct": "direct=0",
                    "group_reporting": "group_reporting=0"}
    text = _ENGINE_LINE.sub(lambda m: replacements[m.group(1)], job_text)
    return text.replace("[global]\n", f"[global]\nramp_time={int(RAMP_S * 1000)}ms\n", 1)


def stream_of(section: str, profile: WorkloadProfile) -> str:
    """The stream a job section belongs to: ``HOTBAND-hot1-read`` → ``hot1``."""
    rest = section.removeprefix(f"{profile.name}-")
    for name, *_ in profile.streams:
        if rest == name or rest.startswith(f"{name}-"):
            return name
    return rest


def job_reports(report: dict) -> list[dict]:
    """The per-job entries of a fio JSON report: ``jobs`` locally, ``client_stats`` from a load
    host's client (less the clients' sum, "All clients", when fio adds one)."""
    return [j for j in report.get("jobs") or report.get("client_stats") or []
            if j.get("jobname") != "All clients"]


def ceiling_from_reports(reports: list[dict], profile: WorkloadProfile, step: int,
                         seconds: float) -> GeneratorCeiling:
    """The ceiling of one null-engine run, or of one per load host run at once (each with its
    share of the rate, as the real run splits it): the hosts' IOs add up, the run lasted as
    long as the longest job, and the stream shares are of all the hosts' IOs together."""
    jobs = [job for report in reports for job in job_reports(report)]
    if not jobs:
        raise WorkloadError(f"fio's null-engine run of {profile.name} reported no job")
    ios: dict[str, int] = defaultdict(int)
    io_bytes = 0
    for job in jobs:
        name = stream_of(str(job.get("jobname", "")), profile)
        for direction in ("read", "write"):
            ios[name] += int(job[direction]["total_ios"])
            io_bytes += int(job[direction]["io_bytes"])
    runtime_s = max(int(job.get("job_runtime", 0)) for job in jobs) / 1000
    if runtime_s <= 0:
        raise WorkloadError(f"fio's null-engine run of {profile.name} ran for no time")
    total = sum(ios.values())
    error = 0.0
    if profile.streams and total:
        error = max(abs(100 * ios.get(name, 0) / total - share)
                    for name, _o, _s, share, *_ in profile.streams)
    asked = float(sum(profile.rate_iops)) if profile.rate_iops else None
    return GeneratorCeiling(profile.name, step, total / runtime_s, io_bytes / runtime_s / 2**20,
                            asked, round(error, 3), seconds)


def null_engine_report(argv: list[str], job_file: Path, what: str, timeout_s: float) -> dict:
    """Run fio (``argv``: the binary, and a load host's ``--client`` when it runs there) on
    ``job_file`` in its folder with a JSON report, and return the report. Raises
    WorkloadError naming ``what`` ran."""
    try:
        done = subprocess.run([*argv, "--output-format=json", str(job_file)],
                              capture_output=True, text=True, timeout=timeout_s,
                              cwd=str(job_file.parent))
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise WorkloadError(f"{what} failed: {exc}") from None
    if done.returncode != 0:
        lines = (done.stderr or done.stdout).strip().splitlines()
        raise WorkloadError(f"{what} failed: " + " / ".join(lines[-3:]))
    try:
        return json.loads(done.stdout[done.stdout.index("{"):])
    except ValueError:
        raise WorkloadError(f"{what} printed no JSON report") from None
