"""fio as the station's workload engine, locally or on several load hosts.

Local: one ``fio --output-format=json+ --status-interval=1`` process; each cumulative
document is differenced against the previous one into a slice ending when the document
arrived (station clock). Several load hosts: fio's own client/server mode, one client
process per host so every ``--client=HOST`` is paired with its job file (SPEC-NOTES §9: an
unpaired list silently runs on the last host only). In client mode fio 3.33 prints its
per-second snapshots only when the run ends (as ``client_stats``), so those figures are not
live: ``live`` is False and the sequencer closes the phase's intervals after the run.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

from drivers.clock import Clock
from drivers.fio.jobs import JobOptions, job_text
from drivers.fio.process import FioProcess
from drivers.fio.safety import TargetCheck, check_targets, create_scratch_file
from drivers.fio.stream import (EMPTY, Snapshot, client_snapshots, difference,
                                snapshot_of_document)
from drivers.interfaces import WorkloadError, WorkloadInterval, WorkloadProfile, WorkloadResult

MIN_VERSION = (3, 0)
DEFAULT_PORT = 8765


def fio_version(binary: str) -> tuple[str, tuple[int, int]]:
    """("fio-3.33", (3, 33)); WorkloadError when fio is missing or too old."""
    path = shutil.which(binary)
    if path is None:
        raise WorkloadError(f"fio not found ({binary!r} is not on PATH): install fio "
                            "(Debian: apt-get install fio) or set the fio binary in the set-up")
    try:
        text = subprocess.run([path, "--version"], capture_output=True, text=True,
                              timeout=10).stdout.strip()
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise WorkloadError(f"cannot run {path} --version: {exc}") from None
    match = re.match(r"fio-(\d+)\.(\d+)", text)
    if not match:
        raise WorkloadError(f"{path} does not look like fio (it printed {text!r})")
    version = (int(match.group(1)), int(match.group(2)))
    if version < MIN_VERSION:
        raise WorkloadError(f"{text} is too old: StorWatt needs fio ≥ "
                            f"{MIN_VERSION[0]}.{MIN_VERSION[1]} (json+ output)")
    return text, version


def client_argument(host: str) -> str:
    """``host[:port]`` → fio's ``--client`` value ``host,port``."""
    name, _, port = host.rpartition(":") if ":" in host else (host, "", "")
    port = port or str(DEFAULT_PORT)
    if not name or not port.isdigit() or "," in name:
        raise WorkloadError(f"load host {host!r} is not HOST[:PORT]")
    return f"{name},{port}"


class FioEngine:
    """``WorkloadEngine`` driving real fio."""

    name = "fio"

    def __init__(self, targets: Sequence[str], *, clock: Clock, fio_binary: str = "fio",
                 load_hosts: Sequence[str] = (), workdir: Path | None = None,
                 target_size: int | None = None, ioengine: str | None = None,
                 direct: bool | None = None, confirm_device: str = "",
                 mounts_path: str = "/proc/mounts") -> None:
        self.targets = tuple(targets)
        self.clock = clock
        self.binary = fio_binary
        self.hosts = tuple(load_hosts)
        self.workdir = Path(workdir or tempfile.mkdtemp(prefix="storwatt-fio-"))
        self.target_size = target_size
        self.ioengine = ioengine
        self.direct = direct
        self.confirm_device = confirm_device
        self.mounts_path = mounts_path
        self.version = ""
        self.live = not self.hosts
        self._procs: dict[str, FioProcess] = {}
        self._last: dict[str, tuple[float, Snapshot]] = {}
        self._profile: WorkloadProfile | None = None
        self._job = ""
        self._error = ""
        self._reported = False  # the failure was already raised to the sequencer
        self._pending: list[WorkloadInterval] = []

    # --- checks ---------------------------------------------------------------------------
    def target_checks(self) -> list[TargetCheck]:
        return check_targets(self.targets, writing=True, create_size=self.target_size,
                             mounts_path=self.mounts_path, confirm_device=self.confirm_device)

    def check(self) -> str:
        self.version, _ = fio_version(self.binary)
        if not self.targets:
            raise WorkloadError("no fio target: give at least one file or block device")
        if not self.hosts:
            self._check_local_targets()
        where = ", ".join(self.hosts) if self.hosts else "local"
        return f"{self.version} ({where}) on {', '.join(self.targets)}"

    def _check_local_targets(self) -> None:
        checks = self.target_checks()
        bad = [c for c in checks if not c.ok]
        if bad:
            raise WorkloadError("refusing fio targets: " +
                                "; ".join(f"{c.path}: {c.reason}" for c in bad))
        for c in checks:
            if c.kind == "missing" and self.target_size:
                create_scratch_file(c.path, self.target_size)

    def _options(self) -> JobOptions:
        files = [c for c in self.target_checks() if c.kind == "file"] if not self.hosts else []
        size = self.target_size if (self.hosts or files) else None
        # on load hosts the station cannot check the targets; an explicit scratch size is the
        # operator's decision to let fio create them there
        return JobOptions(self.targets, self.ioengine,
                          self.direct if self.direct is not None else not files, size,
                          allow_file_create=bool(self.hosts and self.target_size))

    # --- run --------------------------------------------------------------------------------
    def start(self, profile: WorkloadProfile) -> None:
        if self.running:
            raise WorkloadError(f"fio is still running {self._profile.name if self._profile else ''}")
        self._profile, self._error, self._reported = profile, "", False
        self._job = job_text(profile, self._options())
        path = self.workdir / f"{profile.name}.fio"
        path.write_text(self._job)
        self._parse_only(path)
        self._last = {}
        argv_tail = ["--output-format=json+", "--status-interval=1", str(path)]
        if self.hosts:
            self._procs = {h: FioProcess([self.binary, f"--client={client_argument(h)}",
                                          *argv_tail], self.clock.now) for h in self.hosts}
        else:
            self._procs = {"": FioProcess([self.binary, *argv_tail], self.clock.now)}
        t0 = self.clock.now()
        self._last = {h: (t0, EMPTY) for h in self._procs}

    def _parse_only(self, path: Path) -> None:
        done = subprocess.run([self.binary, "--parse-only", str(path)], capture_output=True,
                              text=True, timeout=30)
        if done.returncode != 0:
            message = (done.stderr or done.stdout).strip().splitlines()
            raise WorkloadError(f"fio rejected the job file {path.name}: "
                                + " / ".join(message[-3:]))

    @property
    def running(self) -> bool:
        return any(not p.exited for p in self._procs.values())

    def poll(self) -> list[WorkloadInterval]:
        """Slices since the last call (after ``stop()``: the ones its final documents gave)."""
        pending, self._pending = self._pending, []
        if not self._procs:
            return pending
        slices = self._local_slices() if self.live else []
        self._raise_on_failure(final=False)
        return pending + slices

    def _local_slices(self) -> list[WorkloadInterval]:
        proc = self._procs.get("")
        if proc is None:
            return []
        slices = []
        for arrived, doc in proc.drain():
            snap = snapshot_of_document(doc)
            t_prev, prev = self._last[""]
            if snap.ios >= prev.ios and (snap.ios > prev.ios or snap.runtime_ms > prev.runtime_ms):
                slices.append(difference(snap, prev, t_prev, arrived))
                self._last[""] = (arrived, snap)
        return slices

    def _host_slices(self) -> list[WorkloadInterval]:
        """Reconstruct per-host slices from the client document printed at the end."""
        slices = []
        jobs = self._profile.jobs if self._profile else 1
        for host, proc in self._procs.items():
            for arrived, doc in proc.drain():
                for series in client_snapshots(doc).values():
                    final_ms = series[-1].runtime_ms
                    prev, t_prev = EMPTY, None
                    for snap in series:
                        t_end = arrived - (final_ms - snap.runtime_ms) / jobs / 1000
                        t_start = t_prev if t_prev is not None else \
                            t_end - snap.runtime_ms / jobs / 1000
                        slices.append(difference(snap, prev, t_start, t_end))
                        prev, t_prev = snap, t_end
                    self._last[host] = (arrived, prev)
        return sorted(slices, key=lambda s: s.t_end)

    def _raise_on_failure(self, final: bool) -> None:
        for host, proc in self._procs.items():
            code = proc.returncode
            if code is None or proc.stopped_by_us or code == 0:
                continue
            where = f"load host {host}" if host else "fio"
            detail = proc.stderr_text() or f"exit code {code}"
            if "connect" in detail.lower() or "refused" in detail.lower():
                self._error = f"{where} refused the connection: {detail}"
            else:
                self._error = f"{where} exited with code {code}: {detail}"
            if not final:
                self._reported = True
                raise WorkloadError(self._error)

    def stop(self) -> WorkloadResult:
        if not self._procs:
            return WorkloadResult(0, 0, 0, 0, 0.0, engine=self.version or "fio", job_text=self._job)
        codes = [p.stop() for p in self._procs.values()]
        self._pending = self._host_slices() if not self.live else self._local_slices()
        self._raise_on_failure(final=True)
        totals = [sum(getattr(s, f) for _, s in self._last.values())
                  for f in ("read_ios", "write_ios", "read_bytes", "write_bytes")]
        runtime = max((s.runtime_ms for _, s in self._last.values()), default=0.0) / 1000 / \
            max(1, self._profile.jobs if self._profile else 1)
        result = WorkloadResult(*totals, runtime_s=runtime, exit_code=max(codes, default=0),
                                engine=f"{self.version or 'fio'} "
                                       f"({', '.join(self.hosts) if self.hosts else 'local'})",
                                job_text=self._job, error=self._error)
        self._procs = {}
        if self._error and not self._reported:
            self._reported = True
            raise WorkloadError(self._error)
        return result
