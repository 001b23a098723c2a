"""fio as the station's workload engine, locally or on several load hosts.

Local: one ``fio --output-format=json+ --status-interval=1`` process; each cumulative
document is differenced against the previous one into an interval that ends when the
document arrived on the station clock (``stream.IntervalSeries`` says why). Several load
hosts: one client process per host (``clients``), without JSON: its ETA lines are the host's
display rates while the phase runs (``live_rates()``, never counted), and its intervals are
rebuilt from fio's returned logs when the phase ends (``host_seconds``), so ``live`` is False.

Failures raise :class:`FioRunError` (a ``WorkloadError``) once, carrying every interval of the
profile so far; ``poll()`` after ``stop()`` still returns the intervals not yet handed out.
"""

from __future__ import annotations

import math
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

from drivers.clock import Clock
from drivers.fio import clients
from drivers.fio.access_log import LoggedRun, measure_pattern
from drivers.fio.ceiling import (RAMP_S, ceiling_from_reports, null_engine_report,
                                 null_engine_text)
from drivers.fio.clock_probe import probe_host
from drivers.fio.direct_io import refuses_direct_io
from drivers.fio.host_logs import LOG_PREFIX
from drivers.fio.host_rates import EtaFeed
from drivers.fio.host_seconds import host_figures
from drivers.fio.jobs import JobOptions, default_ioengine, job_text
from drivers.fio.pinned import PinnedTarget, pin_targets, release, replaced
from drivers.fio.process import FioProcess
from drivers.fio.replay import read_trace, write_looped_trace
from drivers.fio.safety import (HostFacts, TargetCheck, TargetPolicy, check_targets,
                                create_scratch_file, describe)
from drivers.fio.stream import IntervalSeries, Snapshot, snapshot_of_document
from drivers.fio.target_size import agreed_size, host_target_size
from drivers.interfaces import (DEFAULT_STALL_S, GeneratorCeiling, HostClock, HostRate,
                                MeasuredPattern, WorkloadError, WorkloadInterval, WorkloadProfile,
                                WorkloadResult)

MIN_VERSION = (3, 0)
DEFAULT_PORT = clients.DEFAULT_PORT
client_argument = clients.client_argument  # kept importable from here


class FioRunError(WorkloadError):
    """fio failed mid-phase; ``intervals`` holds every interval measured before the failure."""

    def __init__(self, message: str, intervals: Sequence[WorkloadInterval] = ()) -> None:
        super().__init__(message)
        self.intervals = tuple(intervals)


class FioStalled(FioRunError):
    """fio completed no IO for the method's stall limit (stopped, e.g. SIGSTOP, or its target
    hung): the phase fails rather than counting seconds at 0 IOPS as a measurement."""




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
                            f"{MIN_VERSION[0]}.{MIN_VERSION[1]} (json+ output); install a "
                            "current fio")
    return text, version


def engine_loadable(binary: str, ioengine: str) -> bool:
    """Whether this fio can load ``ioengine`` (``--enghelp`` exits 0 even when it cannot)."""
    try:
        done = subprocess.run([binary, f"--enghelp={ioengine}"], capture_output=True,
                              text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return False
    text = (done.stdout + done.stderr).lower()
    return done.returncode == 0 and "not loadable" not in text and "not found" not in text


def job_count(profile: WorkloadProfile) -> int:
    """fio processes of a profile: ``job_runtime`` is summed over them under group_reporting."""
    return len(profile.streams) if profile.streams else max(1, profile.jobs)


def writes(profile: WorkloadProfile) -> bool:
    """Whether a profile destroys data on its targets (decides the safety check)."""
    return (profile.kind in ("prefill", "com") or profile.read_pct < 100
            or any(s[4] < 100 for s in profile.streams)
            or (profile.trace is not None
                and any(io.action != "read" for io in read_trace(profile.trace).ios)))


#: fio engines that do no file IO and so cannot take a target's size from the file
DISKLESS_ENGINES = ("null",)
#: the range the null engine addresses when no target size is known (a load host's device):
#: 1 TiB, so a hot band's 8 % slices hold whole blocks and their in-band zones
NULL_RANGE_BYTES = 2**40


class FioEngine:
    """``WorkloadEngine`` driving real fio.

    Before anything is created or written every local target passes ``drivers.fio.safety``
    under ``policy`` (the paths typed to confirm, the protected paths, the scratch size; its
    ``create_size`` is also the scratch size fio may create on load hosts); ``facts`` says
    where the mount table, /sys/block and /dev are read (tests inject fakes).
    ``watchdog_margin_s`` is added to a timed profile's duration and passed as fio's own
    ``--timeout``, a cap that holds even if the station and its parent-death signal both fail.
    ``stall_s``: a local fio that completes no IO for this long is stopped and the phase fails
    (:class:`FioStalled`); fio reports every second, so silence that long is never normal.
    Job files go to ``workdir``, or to a ``storwatt-fio-*`` folder made at the first start
    and removed by ``close()``.
    """

    name = "fio"

    def __init__(self, targets: Sequence[str], *, clock: Clock, fio_binary: str = "fio",
                 load_hosts: Sequence[str] = (), workdir: Path | None = None,
                 policy: TargetPolicy = TargetPolicy(allow_destructive=False),
                 direct: bool | None = None, ioengine: str | None = None,
                 facts: HostFacts = HostFacts(), stop_grace_s: float = 5.0,
                 stop_term_s: float = 3.0, watchdog_margin_s: float = 60.0,
                 stall_s: float = DEFAULT_STALL_S) -> None:
        self.targets = tuple(targets)
        self.clock = clock
        self.binary = fio_binary
        self.hosts = tuple(load_hosts)
        for host in self.hosts:
            clients.parse_host(host)
        self._given_workdir = workdir
        self._own_workdir: Path | None = None
        self._host_size: int | None = None  # the load hosts' target size, probed once
        self.target_size = policy.create_size
        self.ioengine = ioengine
        self.direct = direct
        self.policy = policy
        self.facts = facts
        self.stop_timeouts = (stop_grace_s, stop_term_s)
        self.watchdog_margin_s = watchdog_margin_s
        self.stall_s = stall_s
        self._progress = (0.0, 0)  # (station time, total IOs) when the IO count last grew
        self.version = ""
        self.live = not self.hosts
        self._procs: dict[str, FioProcess] = {}
        self._feeds: dict[str, EtaFeed] = {}  # per load host: its live rates and report
        self._folders: dict[str, Path] = {}  # per load host: where its client runs
        self._series: dict[str, IntervalSeries] = {}
        self._profile: WorkloadProfile | None = None
        self._job = ""
        self._pins: list[PinnedTarget] = []  # the local targets held open for fio (pinned)
        self._used: set[str] = set()  # local targets a phase of this engine has run on
        self._documents = 0  # fio status documents received in the current phase
        self._error = ""
        self._reported = False  # the failure was already raised to the sequencer
        self._pending: list[WorkloadInterval] = []
        self.intervals: list[WorkloadInterval] = []  # every interval of the current profile

    # --- checks ---------------------------------------------------------------------------
    def target_checks(self, writing: bool = True) -> list[TargetCheck]:
        """One record per local target, for the GUI and for the refusal message."""
        return check_targets(self.targets, writing=writing, policy=self.policy, facts=self.facts)

    def check(self) -> str:
        """"fio-3.33 (local) on /tmp/x.dat (file, 64 MiB)"; WorkloadError when unusable."""
        self.version, _ = fio_version(self.binary)
        if not self.targets:
            raise WorkloadError("no fio target: give at least one file or block device")
        if self.hosts:
            return f"{self.version} (load hosts {', '.join(self.hosts)}) on " \
                   + ", ".join(self.targets)
        checks = self._safe_targets(writing=True)
        self.ioengine = self._resolve_ioengine()
        return (f"{self.version} (local) on " + ", ".join(describe(c) for c in checks)
                + f"; {self._direct_io(self.target_checks(False))[1]}")

    def _direct_io(self, checks: Sequence[TargetCheck]) -> tuple[bool, str]:
        """(direct IO?, how the run's record says it): direct wherever the targets' file
        systems allow it, buffered when the caller asked (``direct=False``, disclosed) or a
        file system refuses it (named). fio's ``direct`` holds for the whole job."""
        if self.direct is False:
            return False, "buffered IO (through the page cache, as asked)"
        refused = [why for c in checks if c.kind in ("file", "scratch")
                   if (why := refuses_direct_io(c.path))]
        if refused:
            return False, "buffered IO: " + "; ".join(refused)
        return True, "direct IO"

    def _resolve_ioengine(self) -> str:
        if self.ioengine:
            return self.ioengine
        wanted = default_ioengine()
        return wanted if wanted != "libaio" or engine_loadable(self.binary, wanted) else "psync"

    def verify_targets(self, writing: bool = True) -> list[TargetCheck]:
        """The local targets' verdicts; WorkloadError naming every refused one and why.
        Creates nothing, so a caller can refuse a run before it stores or makes anything."""
        checks = self.target_checks(writing) if not self.hosts else []
        bad = [c for c in checks if not c.ok]
        if bad:
            raise WorkloadError("refusing fio targets: " +
                                "; ".join(f"{c.path}: {c.reason}" for c in bad))
        return checks

    def _safe_targets(self, writing: bool) -> list[TargetCheck]:
        checks = self.verify_targets(writing)
        missing = [c for c in checks if c.kind == "missing"]
        gone = [c.path for c in missing if c.path in self._used]
        if gone:  # a new empty file would pass for the target the earlier phases conditioned
            raise WorkloadError(f"the fio target {', '.join(gone)} was deleted after an "
                                "earlier phase of this run used it; a new file would not be the "
                                "conditioned target, so it is not re-created")
        for c in missing:  # only now: every target passed, so nothing is made for a refused run
            try:
                create_scratch_file(os.path.realpath(c.path), c.size_bytes)
            except OSError as exc:
                raise WorkloadError(f"cannot create the scratch file {c.path}: "
                                    f"{exc.strerror or exc}") from None
        return self.target_checks(writing) if missing else checks

    def _options_for(self, profile: WorkloadProfile) -> JobOptions:
        """The job options for ``profile``: a curved hot band on load hosts without a given
        target size takes the size the hosts' own fio reads (``_host_span``)."""
        options = self._options()
        if self.hosts and options.span is None and profile.curved_streams:
            return replace(options, span=self._host_span())
        return options

    def _host_span(self) -> int:
        """The one size every load host's fio reads for the target (drivers/fio/
        target_size.py), all hosts at once, probed once per engine; refused when they differ,
        or when there is more than one target (their ranges would be each host's files')."""
        if self._host_size is None:
            give = "; give the target size, also for load hosts"
            if len(self.targets) != 1:
                raise WorkloadError(f"a curved hot band on load hosts over {len(self.targets)} "
                                    f"targets needs the target's size in bytes{give}")
            target = self.targets[0]
            try:
                with ThreadPoolExecutor(len(self.hosts)) as pool:
                    sizes = list(pool.map(lambda ih: host_target_size(
                        self.binary, ih[1], target, self.workdir() / f"size-probe-{ih[0] + 1}"),
                        enumerate(self.hosts)))
            except WorkloadError as exc:
                raise WorkloadError(f"{exc}{give}") from None
            self._host_size = agreed_size(dict(zip(self.hosts, sizes)), target)
        return self._host_size

    def _options(self) -> JobOptions:
        if self.hosts:
            # the station cannot check a load host's targets; an explicit scratch size is the
            # operator's decision to let fio create them there, and then the size of every
            # host's range: multi-stream ranges in whole blocks, a band on its curve
            return JobOptions(self.targets, self.ioengine, bool(self.direct), self.target_size,
                              allow_file_create=bool(self.target_size),
                              span=self.target_size or None)
        # every local target exists by now: fio takes each file's own size and so never
        # unlinks and re-lays out a file (which it does to one smaller than ``size=``)
        checks = self.target_checks(False)
        direct = self._direct_io(checks)[0]
        # a diskless engine (null) never looks at the files, so it must be told their size
        size = min(c.size_bytes for c in checks) if self.ioengine in DISKLESS_ENGINES else None
        # one target of known size: multi-stream ranges in whole blocks (jobs.stream_range)
        span = checks[0].size_bytes if len(checks) == 1 and checks[0].size_bytes else None
        names = {pin.path: pin.fio_name for pin in self._pins}  # the checked files themselves
        return JobOptions(tuple(names.get(t, t) for t in self.targets), self.ioengine, direct,
                          size, span=span)

    # --- run --------------------------------------------------------------------------------
    def control_blocks(self) -> bool:
        """``start()`` and ``stop()`` wait on fio processes (``BlockingControl``): checking
        the job files, a client per load host, fio's final documents."""
        return True

    def start(self, profile: WorkloadProfile) -> None:
        if self.running:
            running = self._profile.name if self._profile else ""
            raise WorkloadError(f"fio is still running {running}")
        if not self.version:
            self.check()
        release(self._pins)
        self._pins = []
        if not self.hosts:  # checked, then held open: fio gets exactly what was checked
            self._pins = pin_targets(self._safe_targets(writing=writes(profile)))
            self._used.update(pin.path for pin in self._pins)
        self._profile, self._error, self._reported = profile, "", False
        self._documents = 0
        self._pending, self.intervals = [], []
        try:
            paths = self._job_files(profile)
        except BaseException:
            release(self._pins)
            self._pins = []
            raise
        extra = self._watchdog(profile)
        t0 = self.clock.now()
        self._progress = (t0, 0)
        if self.hosts:  # each client runs in its host's folder, where it writes the logs
            self._feeds = {h: EtaFeed(h) for h in self.hosts}
            self._folders = {h: paths[h].parent for h in self.hosts}
            self._procs = {h: FioProcess(clients.client_argv(self.binary, h, paths[h], extra),
                                         self.clock.now, cwd=str(self._folders[h]),
                                         on_text=self._feeds[h])
                           for h in self.hosts}
        else:
            self._procs = {"": FioProcess([self.binary, "--output-format=json+",
                                           "--status-interval=1", *extra, str(paths[""])],
                                          self.clock.now,
                                          pass_fds=tuple(pin.fd for pin in self._pins))}
        self._series = {h: IntervalSeries(t0, h) for h in self._procs}

    def generator_ceiling(self, profile: WorkloadProfile, step: int) -> GeneratorCeiling:
        """``profile``'s job file on fio's null engine (drivers/fio/ceiling.py): here on the
        station, or on every load host's fio at once, each with its share of the rate as the
        real run splits it, their IOs added up. Read-only: the null engine never opens a
        target."""
        # a timed trace paces itself: the generator must keep its recorded rate
        recorded = read_trace(profile.trace).recorded_iops if profile.trace else None
        if profile.trace:  # the looped copy the phase will replay (drivers/fio/replay.py)
            profile = self._looped_trace(profile)
        runs = self._null_runs(profile, "generator")
        timeout = (profile.duration_s or 1.0) + RAMP_S + 60
        with ThreadPoolExecutor(len(runs)) as pool:
            reports = list(pool.map(
                lambda run: null_engine_report(
                    list(run.argv), self._job_file(run, f"{profile.name}-generator.fio"),
                    f"fio's null-engine run of {profile.name}"
                    + (f" on load host {run.host}" if run.host else ""), timeout), runs))
        found = ceiling_from_reports(reports, profile, step, profile.duration_s or 1.0)
        return found if recorded is None else replace(found, asked_iops=recorded)

    def access_pattern(self, profile: WorkloadProfile) -> MeasuredPattern | None:
        """The pattern ``profile``'s own job file draws, from fio's per-IO log of a short
        null-engine run on the station, or on every load host at once with its share of the
        rate (drivers/fio/access_log.py); None for a trace replay (its pattern is the
        trace's). The logs are removed once read."""
        if profile.trace:
            return None
        runs = self._null_runs(profile, "pattern")
        try:
            return measure_pattern(runs, profile, self._null_span(), self.version)
        finally:
            for run in runs:
                shutil.rmtree(run.folder, ignore_errors=True)

    def _null_runs(self, profile: WorkloadProfile, what: str) -> list[LoggedRun]:
        """``profile``'s job file as the engine would write it, on the null engine
        (drivers/fio/ceiling.py): one run on the station, or one per load host through its
        own client, each in its own folder, with the host's share of the rate."""
        if not self.version:
            self.check()
        options = self._options_for(profile)
        size = self._null_span(options)
        hosts = self.hosts or ("",)
        return [LoggedRun(
            (self.binary, *([f"--client={clients.client_argument(host)}"] if host else ())),
            self.workdir() / (f"{profile.name}-{what}-host{i + 1}" if host else
                              f"{profile.name}-{what}"),
            null_engine_text(job_text(profile, replace(
                options, ioengine="null", direct=False, size=size, span=options.span or size,
                host=i, hosts=len(hosts), host_logs=False, allow_file_create=False))), host)
            for i, host in enumerate(hosts)]

    def _null_span(self, options: JobOptions | None = None) -> int:
        """The range the null engine addresses: the target's size when known, else 1 TiB."""
        options = options or self._options()
        return options.span or options.size or self.target_size or NULL_RANGE_BYTES

    @staticmethod
    def _job_file(run: LoggedRun, name: str) -> Path:
        run.folder.mkdir(parents=True, exist_ok=True)
        path = run.folder / name
        path.write_text(run.text)
        return path

    def live_rates(self) -> list[HostRate]:
        """Each load host's display rates since the last call (``host_rates``): for showing
        while the phase runs; its counted figures arrive when it ends."""
        return sorted((r for feed in self._feeds.values() for r in feed.take()),
                      key=lambda r: r.t)

    def host_clocks(self, wall: Callable[[], float] = time.time) -> tuple[HostClock, ...]:
        """Each load host's clock offset against ``wall``, the station's wall clock
        (``clock_probe``), all hosts probed at once, each in its own folder under the job
        folder; () without load hosts."""
        if not self.hosts:
            return ()
        folders = [self.workdir() / f"clock-probe-{i + 1}" for i in range(len(self.hosts))]
        for folder in folders:
            folder.mkdir(parents=True, exist_ok=True)
        try:
            with ThreadPoolExecutor(len(self.hosts)) as pool:
                return tuple(pool.map(
                    lambda hf: probe_host(self.binary, hf[0], hf[1], wall=wall,
                                          stop_timeouts=self.stop_timeouts),
                    zip(self.hosts, folders)))
        finally:
            for folder in folders:
                shutil.rmtree(folder, ignore_errors=True)

    def workdir(self) -> Path:
        """The job-file folder, made on first use (after the target checks passed)."""
        if self._given_workdir is not None:
            return Path(self._given_workdir)
        if self._own_workdir is None:
            self._own_workdir = Path(tempfile.mkdtemp(prefix="storwatt-fio-"))
        return self._own_workdir

    def close(self) -> None:
        """End of the run, also after a failure: stop fio, remove the job folder we made."""
        try:
            for proc in self._procs.values():
                proc.stop(*self.stop_timeouts)
        finally:
            self._procs = {}
            release(self._pins)
            self._pins = []
            if self._own_workdir is not None:
                workdir, self._own_workdir = self._own_workdir, None
                shutil.rmtree(workdir)  # a job folder left behind is reported, not hidden

    def _job_files(self, profile: WorkloadProfile) -> dict[str, Path]:
        """One checked job file per load host ("" = local): each runs its host's share of a
        rate cap (``jobs.rate_shares``), so the hosts together run the profile's rate."""
        hosts = self.hosts or ("",)
        if profile.trace:
            profile = self._looped_trace(profile)
        paths, texts = {}, []
        for i, host in enumerate(hosts):
            text = job_text(profile, replace(self._options_for(profile), host=i,
                                             hosts=len(hosts), host_logs=bool(host)))
            paths[host] = (self._host_folder(i) / f"{profile.name}-host{i + 1}.fio" if host
                           else self.workdir() / f"{profile.name}.fio")
            if not host and self._pins:  # say which file each /dev/fd/N is, in the record
                text = "".join(f"# target {pin.describe()}\n" for pin in self._pins) + text
            paths[host].write_text(text)
            texts.append(f"# load host {host}\n{text}" if host else text)
        self._parse_all(list(paths.values()))
        self._job = "\n".join(texts)
        return paths

    def _parse_all(self, paths: list[Path]) -> None:
        """Check every job file with one ``fio --parse-only`` (one process per file, one
        after another, held the start 1.5 s with 8 load hosts, issue 27); when fio rejects
        them, each file alone, so the error names the file."""
        if len(paths) == 1:
            self._parse_only(paths[0])
            return
        try:
            self._parse_only(*paths)
        except WorkloadError as together:
            for path in paths:
                self._parse_only(path)
            raise together

    def _host_folder(self, index: int) -> Path:
        """Load host ``index``'s own folder, emptied of an earlier phase's logs: fio's client
        names a returned log after the host's address only, so two hosts on one address
        (two ports) would overwrite each other's in a shared folder."""
        folder = self.workdir() / f"host{index + 1}"
        folder.mkdir(exist_ok=True)
        for old in folder.glob(f"{LOG_PREFIX}_*"):
            old.unlink()
        return folder

    def _looped_trace(self, profile: WorkloadProfile) -> WorkloadProfile:
        """The profile replaying the station's looped copy of its trace (fio replays a trace
        once; drivers/fio/replay.py), checked against the target's size."""
        if self.hosts:
            raise WorkloadError(f"{profile.name}: a trace replay runs on the station's own "
                                "target; the trace is not on the load hosts")
        span = self._options().span
        looped = write_looped_trace(profile.trace or "", self.workdir() / f"{profile.name}.iolog",
                                    profile.duration_s, span)
        # a timed trace paces itself; with more than one IO queued fio counts the wait for an
        # IO's time stamp as its latency (measured: 1–3 s "latencies" at iodepth 4)
        timed = read_trace(profile.trace or "").version == 3
        return replace(profile, trace=str(looped),
                       queue_depth=1 if timed else profile.queue_depth)

    def _watchdog(self, profile: WorkloadProfile) -> list[str]:
        if profile.duration_s is None or not math.isfinite(profile.duration_s):
            return []
        return [f"--timeout={math.ceil(profile.duration_s + self.watchdog_margin_s)}"]

    def _parse_only(self, *paths: Path) -> None:
        names = ", ".join(path.name for path in paths)
        files = "job file" if len(paths) == 1 else "job files"
        try:
            done = subprocess.run([self.binary, "--parse-only", *map(str, paths)],
                                  capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise WorkloadError(f"cannot check the {files} {names} with fio: {exc}") from None
        if done.returncode != 0:
            message = (done.stderr or done.stdout).strip().splitlines()
            raise WorkloadError(f"fio rejected the {files} {names}: "
                                + " / ".join(message[-3:]))

    @property
    def running(self) -> bool:
        return any(not p.exited for p in self._procs.values())

    def poll(self) -> list[WorkloadInterval]:
        """Intervals since the last call (after ``stop()``: the ones its final documents gave)."""
        if self._procs and self.live:
            self._pending += self._local_intervals()
            self._check_progress()
        if self._procs:
            self._raise_on_failure(final=False)
        if self._procs and self.hosts:
            self._check_hosts_answer()
        pending, self._pending = self._pending, []
        return pending

    def _local_intervals(self) -> list[WorkloadInterval]:
        proc, series = self._procs[""], self._series[""]
        out = []
        for arrived, doc in proc.drain():
            self._documents += 1
            interval = series.add(arrived, snapshot_of_document(doc))
            if interval is not None:
                out.append(interval)
        self.intervals += out
        return out

    def _check_progress(self) -> None:
        """Stop fio and raise :class:`FioStalled` once its IO count has not grown for
        ``stall_s`` (the intervals so far are kept in the error, as for any fio failure)."""
        now, ios = self.clock.now(), self._series[""].last.ios
        since, seen = self._progress
        if ios > seen:
            self._progress = (now, ios)
            return
        if now - since < self.stall_s or not self.running or self._reported:
            return
        for proc in self._procs.values():
            proc.stop(*self.stop_timeouts)  # SIGCONT first: a stopped fio must run to exit
        found = self._stop_findings()
        self._error = (f"fio stalled: no IO completed for {now - since:.0f} s (limit "
                       f"[fio] stall_s = {self.stall_s:g} s; {ios} IOs before, "
                       f"{len(self.intervals)} intervals kept); fio stopped"
                       + (f" ({found})" if found else ""))
        self._reported = True
        raise FioStalled(self._error, self.intervals)

    def _check_hosts_answer(self) -> None:
        """Stop every client and fail the phase, naming the host, once a host's client has
        shown no IO for ``stall_s`` — the local stall rule (:meth:`_check_progress`) applied
        to the only live figure a host gives, its ETA line (about one a second). A host
        whose ``fio --server`` died or whose network dropped shows none; fio's own client
        may wait ~40 s more for its command timeout, printing ``Jobs: 0`` lines meanwhile
        (docs/reliability.md)."""
        now = self.clock.now()
        quiet = [(h, now - max(feed.last_io_t, self._progress[0]))
                 for h, feed in self._feeds.items() if self._procs[h].returncode is None]
        host, quiet_s = max(quiet, key=lambda hq: hq[1], default=("", 0.0))
        if quiet_s < self.stall_s or self._reported:
            return
        for proc in self._procs.values():
            proc.stop(*self.stop_timeouts)
        self._error = (f"load host {host} stopped answering mid-phase or stalled: its fio "
                       f"client showed no IO for {quiet_s:.0f} s (limit [fio] stall_s = "
                       f"{self.stall_s:g} s; a working host shows its rates every second): "
                       "its `fio --server` died or hung, the network dropped, or its IO "
                       "stopped; every client stopped")
        self._reported = True
        raise FioRunError(self._error, self.intervals)

    def _host_intervals(self) -> list[WorkloadInterval]:
        """Each host's intervals from its normal report and returned logs
        (``host_seconds``), once its client exited. A host whose figures cannot be read
        fails the phase naming it; the other hosts' intervals are kept."""
        block = self._profile.block_size if self._profile else 4096
        jobs = job_count(self._profile) if self._profile else 1
        out: list[WorkloadInterval] = []
        for host, feed in self._feeds.items():
            try:
                got, report = host_figures(self._folders[host], feed.text, feed.last_t, host,
                                           block)
            except WorkloadError as exc:
                if not (self._procs[host].stopped_by_us and not feed.last_io_t):
                    self._error = self._error or str(exc)
                # else: stopped before its job showed any IO (a segment shorter than the
                # client's ~2 s start-up, on a busy station): nothing happened to count, as a
                # host whose json+ document was empty used to give no intervals
                continue
            self._series[host].last = Snapshot(
                report.runtime_ms * jobs, sum(s.read_ios for s in got),
                sum(s.write_ios for s in got), sum(s.read_bytes for s in got),
                sum(s.write_bytes for s in got), 0.0, host=host)
            out += got
        out.sort(key=lambda s: s.t_end)
        self.intervals += out
        return out

    def _raise_on_failure(self, final: bool) -> None:
        for host, proc in self._procs.items():
            code = proc.returncode
            if code is None or proc.stopped_by_us or code == 0 or self._error:
                continue
            where = f"load host {host}" if host else "fio"
            detail = proc.stderr_text() or f"exit code {code}"
            if host and clients.connection_refused(detail):
                self._error = f"{where} refused the connection (is `fio --server` running " \
                              f"there?): {detail}"
            elif host and clients.connection_lost(detail):
                self._error = (f"{where} stopped answering mid-phase (its `fio --server` died "
                               f"or the network dropped; fio's client gave up, exit code "
                               f"{code}): {detail}")
            else:
                self._error = f"{where} exited with code {code}: {detail}"
        if self._error and not final and not self._reported:
            self._reported = True
            raise FioRunError(self._error, self.intervals)

    def stop(self) -> WorkloadResult:
        if not self._procs:
            return WorkloadResult(0, 0, 0, 0, 0.0, engine=self.version or "fio",
                                  job_text=self._job, error=self._error)
        codes = self._stop_all()
        self._raise_on_failure(final=True)  # first: a host's own failure names the phase's
        self._error = self._error or self._stop_findings()  # before "not fio's output"
        self._error = self._error or replaced(self._pins)  # still the file that was checked?
        release(self._pins)
        self._pins = []
        self._pending += self._local_intervals() if self.live else self._host_intervals()
        self._error = self._error or self._not_fio_output()
        result = self._result(max(codes, default=0))
        self._procs = {}
        if self._error and not self._reported:
            self._reported = True
            raise FioRunError(self._error, self.intervals)
        return result

    def _stop_findings(self) -> str:
        """What stopping fio found (stopped, deaf to SIGINT, a job that would not end), per
        process, or "": a SIGSTOPped fio's lines are not fio's output gone wrong (issue 40:
        such a phase blamed "the fio binary and its version")."""
        found = [(f"load host {host}: " if host else "") + proc.stop_finding
                 for host, proc in self._procs.items() if proc.stop_finding]
        return "; ".join(found)

    def _not_fio_output(self) -> str:
        """"" unless a local fio ended without one status document but printed something
        else: then that is the cause, not "no IO" (issue 25: garbage output was reported as
        a load generator that did not start IO)."""
        proc = self._procs.get("")
        if proc is None or self._documents or not self.live:
            return ""
        text = (proc.splitter.text_lines[:1] or [proc.splitter.pending.strip()])[0]
        if not text:
            return ""
        shown = text[:80] + (f"… ({len(text)} characters)" if len(text) > 80 else "")
        return (f"{self.binary} printed no fio status document (--output-format=json+) but "
                f"{shown!r}: not fio's output; check the fio binary and its version")

    def _stop_all(self) -> list[int]:
        """Stop every fio process at once (each may wait seconds for fio's final document;
        one after another, 8 load hosts held the stop 1.5 s, issue 27); their exit codes."""
        procs = list(self._procs.values())
        if len(procs) == 1:
            return [procs[0].stop(*self.stop_timeouts)]
        with ThreadPoolExecutor(len(procs)) as pool:
            return list(pool.map(lambda p: p.stop(*self.stop_timeouts), procs))

    def _result(self, exit_code: int) -> WorkloadResult:
        """Totals from fio's last document per host (the intervals telescope to them)."""
        last = [s.last for s in self._series.values()]
        totals = [sum(getattr(s, f) for s in last)
                  for f in ("read_ios", "write_ios", "read_bytes", "write_bytes")]
        jobs = job_count(self._profile) if self._profile else 1
        runtime = max((s.runtime_ms for s in last), default=0.0) / 1000 / jobs
        where = ", ".join(self.hosts) if self.hosts else "local"
        read_ios, write_ios, read_bytes, write_bytes = totals
        return WorkloadResult(read_ios, write_ios, read_bytes, write_bytes, runtime_s=runtime,
                              exit_code=exit_code, engine=f"{self.version or 'fio'} ({where})",
                              job_text=self._job, error=self._error)
