"""A load host's log-derived figures against json+ on the same fio job (docs/fio.md, "Final
figures of a load host").

One local fio job writes json+ *and* the logs a load host's job file asks for
(``host_logs.HOST_LOG_OPTIONS``): the json+ document is what the station counted before, the
logs what it counts on a load host now. Local fio writes plain per-window hist logs (only the
client's copy needs ``client_windows``), so they are read as they are. The figures: the IOs
no log line holds (the tail after the last full window), the logged completion bins against
json+'s, and what completion latency moves against total latency at the 99 % level.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from bench.figure import Figure
from drivers.fio.host_logs import LOG_PREFIX, HostLogs, read_hist_log, read_mean_log
from drivers.fio.host_seconds import logged_intervals
from drivers.fio.jobs import JobOptions, job_text
from drivers.fio.normal_report import NormalReport
from drivers.fio.safety import create_scratch_file
from drivers.interfaces import WorkloadProfile

COMMAND = ".venv/bin/python -m bench.run_all host_logs"
PROFILE = WorkloadProfile("MW", 8192, 70, True, 8192, queue_depth=4, jobs=2, duration_s=10.0,
                          rate_iops=(1400, 600))


def _level_ns(bins: dict[int, int], level: float) -> float:
    keys = np.array(sorted(bins), dtype=float)
    counts = np.cumsum([bins[int(k)] for k in keys])
    return float(keys[np.searchsorted(counts, level * counts[-1])])


def _bins(direction: dict, kind: str) -> dict[int, int]:
    return {int(k): v for k, v in direction.get(kind, {}).get("bins", {}).items()}


def _merged(*parts: dict[int, int]) -> dict[int, int]:
    out: dict[int, int] = {}
    for part in parts:
        for k, v in part.items():
            out[k] = out.get(k, 0) + v
    return out


def side_by_side(folder: Path, ioengine: str = "libaio") -> dict[str, float]:
    """Run the job once; the json+ and log figures of the same IOs."""
    target = folder / "target.dat"
    create_scratch_file(str(target), 64 << 20)
    options = JobOptions((str(target),), ioengine, True, None, host_logs=True)
    job = folder / "mw.fio"
    job.write_text(job_text(PROFILE, options))
    out = subprocess.run(["fio", "--output-format=json+", str(job)], capture_output=True,
                         text=True, check=True, cwd=folder).stdout
    entry = json.loads(out[out.index("{"):])["jobs"][0]
    read, write = entry["read"], entry["write"]
    total = read["total_ios"] + write["total_ios"]
    windows = [w for f in sorted(folder.glob(f"{LOG_PREFIX}_clat_hist.*.log"))
               for w in read_hist_log(f.read_text(), int(f.name.split(".")[1]), f.name)]
    means = [m for f in sorted(folder.glob(f"{LOG_PREFIX}_lat.*.log"))
             for m in read_mean_log(f.read_text(), int(f.name.split(".")[1]), f.name)]
    logged = _merged(*(w.bins for w in windows))
    clat = _merged(_bins(read, "clat_ns"), _bins(write, "clat_ns"))
    lat = _merged(_bins(read, "lat_ns"), _bins(write, "lat_ns"))
    over = sum(max(0, v - clat.get(k, 0)) for k, v in logged.items())
    report = NormalReport(read["total_ios"], write["total_ios"], entry["job_runtime"] // 2,
                          (read["lat_ns"]["mean"], write["lat_ns"]["mean"]))
    seconds = logged_intervals(HostLogs(tuple(windows), tuple(means)), report, 100.0, "bench",
                               PROFILE.block_size)
    counted = sum(s.ios for s in seconds)
    json_mean = (read["lat_ns"]["mean"] * read["total_ios"]
                 + write["lat_ns"]["mean"] * write["total_ios"]) / total
    log_mean = sum(s.avg_resp_ms * 1e6 * s.ios for s in seconds) / counted
    return {"ios": total, "tail_ios": total - sum(logged.values()), "counted": counted,
            "bins_over_json": over, "windows": len(windows),
            "p99_lat_us": _level_ns(lat, 0.99) / 1e3, "p99_clat_us": _level_ns(clat, 0.99) / 1e3,
            "mean_lat_us": json_mean / 1e3, "mean_log_us": log_mean / 1e3}


def run() -> list[Figure]:
    with tempfile.TemporaryDirectory(prefix="storwatt-bench-") as tmp:
        got = side_by_side(Path(tmp))
    tail_pct = 100 * got["tail_ios"] / got["ios"]
    shift = 100 * (got["p99_clat_us"] / got["p99_lat_us"] - 1)
    return [
        Figure(f"host logs: IOs after the last hist window ({got['ios']:.0f} IOs, 10 s)",
               tail_pct, "%", "≤ 15 % (one window of 10 s + start)", tail_pct <= 15, COMMAND),
        Figure("host logs: logged bins above json+'s completion bins", got["bins_over_json"],
               "IOs", "0", got["bins_over_json"] == 0, COMMAND),
        Figure("host logs: 99 % level, completion vs total latency (libaio qd 4)", shift, "%",
               "reference", None, COMMAND),
        Figure("host logs: intervals' IOs minus json+'s total_ios", got["counted"] - got["ios"],
               "IOs", "0", got["counted"] == got["ios"], COMMAND),
        Figure("host logs: mean total latency from the lat log vs json+'s lat_ns mean",
               100 * (got["mean_log_us"] / got["mean_lat_us"] - 1), "%", "|x| ≤ 1 %",
               abs(got["mean_log_us"] / got["mean_lat_us"] - 1) <= 0.01, COMMAND),
    ]
