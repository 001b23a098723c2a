"""Workload engine for the simulated SUT: the same ``WorkloadEngine`` contract as fio.

It turns the SUT model's operating point into one-second slices (``WorkloadInterval``) with
per-second noise and a fio-layout latency histogram (total latency, as fio's ``lat_ns``),
timed by the station clock, so a fake clock runs hours of simulated IO in milliseconds and a
real clock runs it live.

A rate-capped profile runs at the rate fio would run it: the engine writes the job files the
real engine would (one per simulated load host) and applies their ``rate_iops`` the way fio
does (per job × jobs × hosts, ``fio_rate``), so a job file asking for the wrong total shows up
in the simulated lab as the wrong IOPS.
"""

from __future__ import annotations

from dataclasses import replace

from drivers.clock import Clock
from drivers.fio.jobs import JobOptions, job_text
from drivers.fio.access_log import modelled_pattern
from drivers.interfaces import (GeneratorCeiling, MeasuredPattern, WorkloadError,
                                WorkloadInterval, WorkloadProfile, WorkloadResult)
from drivers.simulators.fio_rate import NO_LIMIT, applied_rate, generator_rate
from drivers.simulators.latency import lognormal_bucket_probabilities
from drivers.simulators.sut import SimulatedSut

ENGINE_NAME = "simulated SUT"
#: stands in for the SUT's volumes in the job files the simulated engine writes (never run)
SIM_TARGET = ("simulated-sut",)
#: the range those job files address: 1 TiB, so a hot band's slices and zones are whole
SIM_RANGE_BYTES = 2**40


def job_files(profile: WorkloadProfile, load_hosts: int = 1) -> list[str]:
    """The job files the real engine would write for ``profile``, one per load host."""
    hosts = max(1, load_hosts)
    return [job_text(profile, JobOptions(SIM_TARGET, "null", size=SIM_RANGE_BYTES, host=i,
                                         hosts=hosts, span=SIM_RANGE_BYTES))
            for i in range(hosts)]


def as_fio_runs(profile: WorkloadProfile, load_hosts: int = 1) -> WorkloadProfile:
    """The profile as fio would run it on ``load_hosts`` hosts: every host's jobs add to the
    outstanding IO, ``rate_iops`` becomes the total cap fio applies from the job files, and
    no cap lies above what fio itself generates from them (``generator_rate``)."""
    total = replace(profile, jobs=profile.jobs * max(1, load_hosts))
    if profile.rate_iops is None and not profile.streams:
        return total
    files = job_files(profile, load_hosts)
    read, write = applied_rate(files)
    caps = (read if profile.read_pct > 0 else 0.0, write if profile.read_pct < 100 else 0.0)
    generated = generator_rate(files)
    if NO_LIMIT in caps or sum(caps) > generated:
        share = profile.read_pct / 100
        caps = (generated * share, generated * (1 - share))
    return replace(total, rate_iops=(int(caps[0]), int(caps[1])))


class SimulatedWorkloadEngine:
    """Drives :class:`SimulatedSut`; emits one interval per ``slice_s`` of station time."""

    name = ENGINE_NAME
    live = True  # one slice per ``slice_s`` as the station clock passes

    def __init__(self, sut: SimulatedSut, clock: Clock, slice_s: float = 1.0,
                 fail_after_s: float | None = None, load_hosts: int = 1) -> None:
        self.sut = sut
        self.clock = clock
        self.slice_s = slice_s
        self.fail_after_s = fail_after_s  # fault injection: the engine dies mid-phase
        self.load_hosts = load_hosts
        self._profile: WorkloadProfile | None = None  # as fio would run it (``as_fio_runs``)
        self._asked: WorkloadProfile | None = None  # as the sequencer asked for it
        self._t0 = 0.0
        self._emitted_to = self._t0
        self._totals = [0, 0, 0, 0]  # read ios, write ios, read bytes, write bytes
        self._buckets: tuple | None = None
        self._finished = False

    def check(self) -> str:
        s = self.sut.spec
        return (f"{ENGINE_NAME}: {s.drive_count} × {s.drive.kind} "
                f"({s.raw_capacity_bytes / 1e9:.0f} GB raw, {s.raid})")

    def start(self, profile: WorkloadProfile) -> None:
        if self._profile is not None:
            raise WorkloadError(f"simulated engine already running {self._profile.name}")
        self._asked, self._profile = profile, as_fio_runs(profile, self.load_hosts)
        self._t0 = self.clock.now()
        self._emitted_to = self._t0
        self._totals = [0, 0, 0, 0]
        self._finished = False
        point = self.sut.operating_point(self._profile)
        self._buckets = lognormal_bucket_probabilities(point.avg_resp_ms)
        self.sut.apply(self._profile)

    def generator_ceiling(self, profile: WorkloadProfile, step: int) -> GeneratorCeiling:
        """What fio would generate from ``profile``'s job files with no IO behind them
        (``fio_rate.generator_rate``), at once: the simulated station's generator runs no
        process. A capped file reaches its caps when fio can; the shares then hold."""
        files = job_files(profile, self.load_hosts)
        asked = sum(applied_rate(files)) if profile.rate_iops else None
        iops = generator_rate(files) if asked is None else min(asked, generator_rate(files))
        return GeneratorCeiling(profile.name, step, iops, iops * profile.block_size / 2**20,
                                asked, 0.0, profile.duration_s or 0.0)

    def access_pattern(self, profile: WorkloadProfile) -> MeasuredPattern | None:
        """The pattern fio draws from a capped or single-stream job file as the simulator
        models it: what the file asks (each stream at its cap's share, a curved band on the
        reference curve). No log is read, so no uniformity is claimed (NaN) and the source
        says it is modelled; None for a trace replay, as with fio."""
        return None if profile.trace else modelled_pattern(profile, SIM_RANGE_BYTES)

    @property
    def running(self) -> bool:
        return self._profile is not None and not self._finished

    def _end_time(self) -> float | None:
        p = self._profile
        if p is None:
            return None
        if p.kind == "prefill" and p.duration_s is None:
            op = self.sut.operating_point(p)
            return self._t0 + p.passes * self.sut.spec.raw_capacity_bytes / (op.mib_s * 2**20)
        return None if p.duration_s is None else self._t0 + p.duration_s

    def poll(self) -> list[WorkloadInterval]:
        if self._profile is None:
            return []
        now = self.clock.now()
        end = self._end_time()
        horizon = now if end is None else min(now, end)
        if self.fail_after_s is not None and now - self._t0 >= self.fail_after_s:
            horizon = min(horizon, self._t0 + self.fail_after_s)
        slices = []
        # emit everything up to the horizon, in slices of at most slice_s, so the sequencer
        # sees all IO up to "now" when it closes an interval
        while self._emitted_to + 1e-6 < horizon:
            t_end = min(horizon, self._emitted_to + self.slice_s)
            slices.append(self._slice(self._emitted_to, t_end))
            self._emitted_to = t_end
        if end is not None and now >= end:
            self._finished = True
        if self.fail_after_s is not None and now - self._t0 >= self.fail_after_s:
            self._finished = True
            self.sut.apply(None)
            raise WorkloadError(
                f"simulated engine failure injected after {self.fail_after_s:g} s "
                f"of {self._profile.name}")
        return slices

    def _slice(self, t_start: float, t_end: float) -> WorkloadInterval:
        p = self._profile
        assert p is not None and self._buckets is not None
        point = self.sut.operating_point(p)
        ios = max(0, int(round(point.iops * (t_end - t_start) * self.sut.noise(0.01))))
        reads = int(round(ios * p.read_pct / 100))
        writes = ios - reads
        values, probs = self._buckets
        counts = self.sut.multinomial(ios, probs)
        nz = counts.nonzero()[0]
        bins = dict(zip(values[nz].tolist(), counts[nz].tolist()))
        max_ms = float(values[nz[-1]]) / 1e6 if nz.size else 0.0
        avg_ms = float(values[nz] @ counts[nz]) / ios / 1e6 if ios else 0.0
        written = writes * p.block_size
        if written and p.kind in ("prefill", "com"):
            self.sut.record_write(written, *self._reduction(p))
        self._totals[0] += reads
        self._totals[1] += writes
        self._totals[2] += reads * p.block_size
        self._totals[3] += written
        return WorkloadInterval(t_start, t_end, reads, writes,
                                reads * p.block_size, written, avg_ms, max_ms, bins)

    @staticmethod
    def _reduction(p: WorkloadProfile) -> tuple[float, float]:
        """Data-reduction content of a COM data set, encoded in the profile name
        (``COM-deduplication`` writes 50 % duplicate blocks, ``COM-compression`` 50 %
        compressible buffers; see drivers/fio for the real engine's equivalents)."""
        if p.name.endswith("deduplication"):
            return 50.0, 0.0
        if p.name.endswith("compression"):
            return 0.0, 50.0
        return 0.0, 0.0

    def stop(self) -> WorkloadResult:
        p = self._asked
        runtime = self._emitted_to - self._t0 if p else 0.0
        self._profile = self._asked = None
        self._finished = True
        self.sut.apply(None)
        read_ios, write_ios, read_bytes, write_bytes = self._totals
        return WorkloadResult(read_ios, write_ios, read_bytes, write_bytes, runtime_s=runtime,
                              engine=ENGINE_NAME, job_text=_describe(p) if p else "")


def _describe(p: WorkloadProfile) -> str:
    """The simulated equivalent of a job file, stored with the run for the report appendix."""
    rate = f" rate_iops={p.rate_iops[0]},{p.rate_iops[1]}" if p.rate_iops else ""
    passes = f" passes={p.passes}" if p.passes != 1 else ""
    return (f"# simulated SUT workload (no fio)\n[{p.name}]\nbs={p.block_size} "
            f"rwmixread={p.read_pct:g} pattern={'random' if p.random else 'sequential'} "
            f"iodepth={p.queue_depth} numjobs={p.jobs}{rate} kind={p.kind}{passes}\n")
