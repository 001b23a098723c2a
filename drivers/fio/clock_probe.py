"""Measure a load host's clock offset through fio's own client, before a run (docs/fio.md,
"Load-host clock check").

fio's client/server protocol carries no server time the client prints, and a client's JSON
``timestamp`` is the *client's* clock (``client.c: fio_client_json_init``). The one server time
that reaches the station is in fio's own IO logs: with ``log_unix_epoch=1`` every logged IO is
stamped in Unix milliseconds on the load host, and in client mode the log is sent back and
written beside the station's job file as ``NAME_iops.1.log.HOST``.

The probe runs a tiny job there (``ioengine=null``: no file is opened or written on the host;
1000 IOPS, every IO logged). Once the client's ETA line shows IO running, the station notes
its wall time ``A`` and stops the client (SIGINT: fio tells the server to end the job); the
client exits at wall time ``B`` after the log arrived. The host's last logged IO happened after
``A`` minus the largest gap between logged IOs (IO was running up to the stop request) and
before ``B``, so with ``T`` its host time the offset host − station lies in
``[T − B, T + 1 ms − A + gap]`` (1 ms: the log's resolution). Its middle is the offset, half
its width the uncertainty: about ± 60 ms on loopback (B − A ≈ 0.12 s), one round trip plus
fio's stop on a network.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from drivers.fio import clients
from drivers.fio.eta import EtaFormatError, eta_lines
from drivers.fio.process import FioProcess
from drivers.interfaces import HostClock, WorkloadError

PROBE_NAME = "storwatt-clock"
PROBE_IOPS = 1000
#: the probe job's own cap: fio ends it by itself if the station never stops it
PROBE_RUNTIME_S = 30
PROBE_JOB = f"""\
# StorWatt load-host clock probe: the null engine opens and writes nothing on the host
[{PROBE_NAME}]
ioengine=null
filename={PROBE_NAME}
size=1m
rw=read
bs=4k
rate_iops={PROBE_IOPS}
time_based=1
runtime={PROBE_RUNTIME_S}
write_iops_log={PROBE_NAME}
log_unix_epoch=1
"""


@dataclass(frozen=True)
class LogTimes:
    """What the probe needs from fio's IO log: the last IO's host time and the largest gap."""

    last_s: float  # Unix seconds on the host's clock
    max_gap_s: float
    entries: int


def read_log_times(text: str) -> LogTimes:
    """``1795400528883, 1, 0, 4096, 0`` lines (Unix ms first) → :class:`LogTimes`."""
    times_ms = []  # whole ms: Unix ms as floats in s would blur the gaps
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            times_ms.append(int(line.split(",", 1)[0]))
        except ValueError:
            raise WorkloadError(f"fio IO log line {number} does not start with a time in "
                                f"ms: {line[:60]!r}") from None
    if not times_ms:
        raise WorkloadError("the load host logged no IO: the probe job never ran IO")
    gap_ms = max((b - a for a, b in zip(times_ms, times_ms[1:])), default=0)
    return LogTimes(times_ms[-1] / 1000, gap_ms / 1000, len(times_ms))


def offset_of(log: LogTimes, stop_requested: float, exited: float) -> tuple[float, float]:
    """(offset host − station, half-width) from the log and the station's wall times."""
    low = log.last_s - exited
    high = log.last_s + 0.001 - stop_requested + log.max_gap_s
    return (low + high) / 2, (high - low) / 2


def _log_path(workdir: Path, host: str) -> Path:
    """Where fio's client writes the log it received: ``NAME_iops.1.log.<client host>``."""
    name, _ = clients.parse_host(host)
    return workdir / f"{PROBE_NAME}_iops.1.log.{name}"


class _EtaWatch:
    """Set ``running`` once an ETA line shows IO (called on the process's reader thread)."""

    def __init__(self) -> None:
        self.running = threading.Event()
        self._tail = ""
        self.error = ""

    def __call__(self, _t: float, chunk: str) -> None:
        text = self._tail + chunk
        self._tail = text[-400:]
        try:
            if any(s.iops > 0 for s in eta_lines(text)):
                self.running.set()
        except EtaFormatError as exc:
            self.error = str(exc)


def probe_host(binary: str, host: str, workdir: Path, *,
               wall: Callable[[], float] = time.time, start_timeout_s: float = 20.0,
               stop_timeouts: tuple[float, float] = (5.0, 3.0)) -> HostClock:
    """One host's clock offset against ``wall`` (the station's wall clock; tests shift it).
    A host that cannot be probed gives a :class:`HostClock` whose ``error`` says why."""
    job = workdir / f"{PROBE_NAME}.fio"
    job.write_text(PROBE_JOB)
    log_path = _log_path(workdir, host)
    log_path.unlink(missing_ok=True)
    watch = _EtaWatch()
    argv = [binary, f"--client={clients.client_argument(host)}", "--eta=always",
            "--eta-newline=1", str(job)]
    proc = FioProcess(argv, time.monotonic, cwd=str(workdir), on_text=watch)
    deadline = time.monotonic() + start_timeout_s
    while not watch.running.is_set() and not proc.exited and time.monotonic() < deadline:
        watch.running.wait(0.05)
    stop_requested = wall()
    code = proc.stop(*stop_timeouts)
    exited = wall()
    try:
        if not watch.running.is_set():
            why = watch.error or proc.stderr_text() or (
                f"no IO reported within {start_timeout_s:g} s" if code in (0, None)
                else f"fio exited with code {code}")
            return HostClock(host, error=f"clock probe did not run: {why}")
        log = read_log_times(log_path.read_text())
    except (OSError, WorkloadError) as exc:
        return HostClock(host, error=f"clock probe gave no IO log: {exc}")
    finally:
        log_path.unlink(missing_ok=True)
        job.unlink(missing_ok=True)
    offset, uncertainty = offset_of(log, stop_requested, exited)
    return HostClock(host, offset, uncertainty)
