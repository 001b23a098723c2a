"""A simulated storage system under test whose performance and power respond to the workload.

The model is deliberately simple but physically shaped, so that every part of the station
(search, stability, metrics, reports) meets realistic numbers:

* **Power** = idle watts (controller + spinning/idle drives) + per-drive active watts × drive
  utilisation, plus meter-visible noise. The default system is the seed's sample SUT: 50 drives
  of 146 GB (7300 GB raw) idling near 592.68 W (emerald-measurement-spec-training.txt, "Idle power
  test"), so EP_RI lands near the seed's 12.317 GB/W.
* **Random IO** is seek-bound on HDDs (service time ≈ 4.5 ms per IO per drive, 15K RPM) and flat
  on SSDs; throughput follows a closed-queue saturation curve in the outstanding IO and the
  response time follows Little's law, so an intensity-100 search meets a 30 ms limit at a finite
  queue depth (method-notes §2). Under a rate cap the SUT keeps up until the cap passes its
  closed-queue throughput; below that, the response time grows with the drives' utilisation
  (an M/M/1-like wait), so a sweep sees IOPS rise then saturate and the response time climb.
* **Sequential IO** is bandwidth-bound per drive and capped by the controller.
* **Writes** cost more back-end work under parity RAID (write penalty after write-back cache).
* **A replayed trace** runs as random IO of its mean size and mix, capped at the rate it was
  recorded at when it carries timestamps.
* **Several streams at once** (the hot band): each stream's IOs take the time they would take
  alone, so the mix runs at the IO-weighted harmonic mean of the streams' rates and draws the
  power of its time-weighted utilisation.
* **COMs**: declared capacity optimisations reduce the physical capacity a data set uses,
  which the COM heuristic phase observes through :meth:`SimulatedSut.used_capacity_bytes`.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, field, replace

import numpy as np

from drivers.fio.replay import read_trace
from drivers.interfaces import WorkloadProfile

RAID_WRITE_PENALTY = {"RAID 0": 1.0, "RAID 1": 1.5, "RAID 10": 1.5, "RAID 5": 2.0, "RAID 6": 2.5}


@dataclass(frozen=True)
class DriveModel:
    """Per-drive characteristics (datasheet-like figures for 15K SAS HDD and SAS SSD)."""

    kind: str  # HDD | SSD
    capacity_bytes: int
    random_service_ms: float  # average service time of one random 8 KiB IO
    seq_mib_s: float  # sustained sequential bandwidth
    idle_w: float
    active_w: float  # extra watts at 100 % utilisation


HDD_15K = DriveModel("HDD", 146_000_000_000, 4.5, 150.0, 6.85, 4.2)
SSD_SAS = DriveModel("SSD", 400_000_000_000, 0.09, 900.0, 3.0, 5.5)


@dataclass(frozen=True)
class SimSutSpec:
    """What the simulated SUT looks like; defaults reproduce the seed's sample system."""

    drive: DriveModel = HDD_15K
    drive_count: int = 50
    #: with 50 × 6.85 W idle drives: 592.677 W at ready idle, the middle of the span that
    #: prints the seed's EP_RI 12.317 GB/W (7300 / 592.653 … 592.701; 592.7 sat on its edge)
    controller_idle_w: float = 250.177
    controller_w_per_kiops: float = 2.0
    controller_mib_s: float = 2400.0
    raid: str = "RAID 6"
    inlet_c: float = 22.0
    volts: float = 230.0
    freq_hz: float = 50.0
    pf: float = 0.97
    coms: tuple[str, ...] = ()  # capacity optimisations switched on
    dedupe_ratio: float = 2.0
    compression_ratio: float = 1.6

    @property
    def raw_capacity_bytes(self) -> int:
        return self.drive.capacity_bytes * self.drive_count

    @property
    def idle_w(self) -> float:
        return self.controller_idle_w + self.drive_count * self.drive.idle_w


@dataclass(frozen=True)
class OperatingPoint:
    """The SUT's steady behaviour under one workload at one intensity."""

    iops: float
    mib_s: float
    avg_resp_ms: float
    utilisation: float  # 0 … 1 of the drives
    watts: float


@dataclass
class SimulatedSut:
    """Thread-safe SUT model shared by the simulated engine and the simulated meters."""

    spec: SimSutSpec = field(default_factory=SimSutSpec)
    seed: int = 1
    _profile: WorkloadProfile | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _written_logical: int = 0
    _written_physical: float = 0.0

    def __post_init__(self) -> None:
        self._rng = np.random.default_rng(self.seed)

    # --- workload state ------------------------------------------------------------------
    def apply(self, profile: WorkloadProfile | None) -> None:
        """Switch the SUT to a workload (None = ready idle)."""
        with self._lock:
            self._profile = profile

    @property
    def profile(self) -> WorkloadProfile | None:
        with self._lock:
            return self._profile

    def operating_point(self, profile: WorkloadProfile | None = None) -> OperatingPoint:
        """Steady-state performance and power for ``profile`` (the current one by default)."""
        p = profile if profile is not None else self.profile
        if p is None:
            return OperatingPoint(0.0, 0.0, 0.0, 0.0, self.spec.idle_w)
        if p.trace:
            return self._trace_point(p)
        if p.streams:
            return self._streams_point(p)
        if p.random:
            return self._random_point(p)
        return self._sequential_point(p)

    def _write_cost(self, p: WorkloadProfile) -> float:
        penalty = RAID_WRITE_PENALTY.get(self.spec.raid, 2.0)
        read = p.read_pct / 100
        return read + (1 - read) * penalty

    def _random_point(self, p: WorkloadProfile) -> OperatingPoint:
        s = self.spec
        size_factor = max(1.0, p.block_size / 8192) ** 0.3
        service_s = s.drive.random_service_ms * size_factor * self._write_cost(p) / 1000
        max_iops = s.drive_count / service_s
        outstanding = max(1, p.queue_depth * p.jobs)
        # closed-queue saturation: one outstanding IO per drive keeps ~63 % of drives busy
        iops = max_iops * (1 - math.exp(-outstanding / s.drive_count))
        resp_ms = max(outstanding / iops * 1000, service_s * 1000)  # Little's law, queue full
        if p.rate_iops is not None and sum(p.rate_iops) < iops:  # the cap fio applies holds
            iops = float(sum(p.rate_iops))
            # below saturation IOs queue only for each other: an M/M/1-like wait
            busy = min(iops * service_s / s.drive_count, 0.95)
            resp_ms = min(resp_ms, service_s * 1000 / (1 - busy))
        util = iops / max_iops
        return OperatingPoint(iops, iops * p.block_size / 2**20, resp_ms, util,
                              self._watts(util, iops))

    def _sequential_point(self, p: WorkloadProfile) -> OperatingPoint:
        s = self.spec
        write_eff = 1.0 / (self._write_cost(p) ** 0.5)
        max_mib = min(s.drive_count * s.drive.seq_mib_s, s.controller_mib_s) * write_eff
        outstanding = max(1, p.queue_depth * p.jobs)
        mib = max_mib * (1 - math.exp(-outstanding / 4))
        iops = mib * 2**20 / p.block_size
        resp_ms = outstanding / iops * 1000
        if p.rate_iops is not None and sum(p.rate_iops) < iops:  # a capped stream of a sweep
            iops = float(sum(p.rate_iops))
            mib = iops * p.block_size / 2**20
            resp_ms = min(resp_ms, p.block_size / 2**20 / max_mib * 1000 / (1 - mib / max_mib))
        util = 0.6 * mib / max_mib
        return OperatingPoint(iops, mib, resp_ms, util, self._watts(util, iops))

    def _trace_point(self, p: WorkloadProfile) -> OperatingPoint:
        """A replayed trace: random IO of the trace's mean size and mix, no faster than the
        trace was recorded (a v3 trace paces the replay, drivers/fio/replay.py)."""
        trace = read_trace(p.trace or "")
        as_run = replace(p, trace=None, block_size=trace.mean_block, read_pct=trace.read_pct,
                         random=True)
        rate = trace.recorded_iops
        return self._random_point(as_run if rate is None else
                                  replace(as_run, rate_iops=(max(1, round(rate)), 0)))

    def _streams_point(self, p: WorkloadProfile) -> OperatingPoint:
        """The streams of ``p`` sharing the SUT in their IO shares (see the module notes)."""
        shares, points = [], []
        for _name, _offset, _size, share, read_pct, random, bs in p.streams:
            alone = replace(p, block_size=bs, read_pct=read_pct, random=random, streams=())
            shares.append(share / 100)
            points.append(self._random_point(alone) if random else self._sequential_point(alone))
        seconds_per_io = [f / pt.iops for f, pt in zip(shares, points)]
        iops = 1 / sum(seconds_per_io)
        busy = [t * iops for t in seconds_per_io]  # each stream's fraction of the time
        mib = iops * sum(f * pt.mib_s / pt.iops for f, pt in zip(shares, points))
        resp = sum(f * pt.avg_resp_ms for f, pt in zip(shares, points))
        util = sum(b * pt.utilisation for b, pt in zip(busy, points))
        return OperatingPoint(iops, mib, resp, util, self._watts(util, iops))

    def _watts(self, util: float, iops: float) -> float:
        s = self.spec
        return (s.idle_w + s.drive_count * s.drive.active_w * util
                + s.controller_w_per_kiops * iops / 1000)

    # --- what the meters see ----------------------------------------------------------------
    def power_w(self) -> float:
        """Instantaneous input power with ±0.3 % noise under load (PSU ripple, fan control)
        and ±0.01 % at ready idle (no IO: the controller and spinning drives draw steadily),
        so a ready idle averages to the idle power the seed's sample system reports."""
        point = self.operating_point()
        scale = 0.0001 if point.iops == 0 and point.mib_s == 0 else 0.003
        with self._lock:
            return float(point.watts * (1 + self._rng.normal(0, scale)))

    def electrical_state(self) -> tuple[float, float, float, float, float]:
        """(watts, volts, amps, pf, Hz) as a power analyzer would read them."""
        watts = self.power_w()
        with self._lock:
            volts = float(self.spec.volts * (1 + self._rng.normal(0, 0.001)))
        amps = watts / (volts * self.spec.pf)
        return watts, volts, amps, self.spec.pf, self.spec.freq_hz

    def inlet_celsius(self) -> float:
        """Inlet temperature, 0.1 °C resolution, slowly wandering around the set point."""
        with self._lock:
            return round(self.spec.inlet_c + float(self._rng.normal(0, 0.08)), 1)

    def noise(self, scale: float) -> float:
        """Multiplicative noise factor for per-second workload figures."""
        with self._lock:
            return float(1 + self._rng.normal(0, scale))

    def multinomial(self, n: int, p: np.ndarray) -> np.ndarray:
        with self._lock:
            return self._rng.multinomial(n, p)

    # --- capacity optimisation -------------------------------------------------------------
    def record_write(self, logical_bytes: int, dedupe_pct: float = 0.0,
                     compress_pct: float = 0.0) -> None:
        """Account a data set written to the SUT, reduced by the COMs that are on."""
        physical = float(logical_bytes)
        if "deduplication" in self.spec.coms:
            physical *= 1 - dedupe_pct / 100 * (1 - 1 / self.spec.dedupe_ratio)
        if "compression" in self.spec.coms:
            physical *= 1 - compress_pct / 100 * (1 - 1 / self.spec.compression_ratio)
        with self._lock:
            self._written_logical += logical_bytes
            self._written_physical += physical

    def used_capacity_bytes(self) -> tuple[int, int]:
        """(logical, physical) bytes used, as the array's management interface would report."""
        with self._lock:
            return self._written_logical, int(self._written_physical)
