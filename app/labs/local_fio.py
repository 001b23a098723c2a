"""The ``local-fio`` lab: real IO with fio, meters as configured (or clearly simulated).

Without a configured power meter the power and temperature come from the simulated SUT,
made to follow the profile fio is running, and every output says they are SIMULATED — real
IO figures next to simulated watts are a rehearsal, not a measurement. With a real power meter
the thermometer must be real too: the simulated one is never used in its place.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from app.core import units
from app.core.records import RunConfig
from app.sequencer.equipment import LabError
from drivers.clock import Clock
from drivers.fio.data_set import measure_data_set
from drivers.fio.engine import FioEngine
from drivers.fio.safety import TargetCheck, TargetPolicy, check_target
from drivers.interfaces import (DEFAULT_STALL_S, DataSetMeasure, GeneratorCeiling, HostRate,
                                MeasuredPattern, WorkloadInterval, WorkloadProfile, WorkloadResult)
from drivers.simulators.sut import SimulatedSut


def parse_size(text: str) -> int:
    """'64M' → 67108864 (K/M/G/T are binary multiples, as fio reads them; ``app.core.units``)."""
    try:
        return units.parse_size(text)
    except units.UnitError as exc:
        raise LabError(f"size {text!r}: {exc}") from None


def scratch_size(text: str) -> int | None:
    """The scratch size the operator gave; None ("" or "0") means: create no file."""
    return (parse_size(text) if text.strip() else 0) or None


def confirmations(text: str) -> tuple[str, ...]:
    """The target paths typed to confirm, stored comma separated in ``RunConfig.confirm_device``
    (a target never contains ',': ``drivers.fio.jobs`` refuses it in a job file)."""
    return tuple(p.strip() for p in text.split(",") if p.strip())


@dataclass
class SutFollowingEngine:
    """Wraps the fio engine so the simulated SUT's power follows the running profile."""

    engine: FioEngine
    sut: SimulatedSut

    @property
    def name(self) -> str:
        return self.engine.name

    @property
    def live(self) -> bool:
        return self.engine.live

    @property
    def running(self) -> bool:
        return self.engine.running

    def check(self) -> str:
        return self.engine.check()

    def control_blocks(self) -> bool:
        return self.engine.control_blocks()

    def start(self, profile: WorkloadProfile) -> None:
        self.engine.start(profile)
        self.sut.apply(profile)

    def poll(self) -> list[WorkloadInterval]:
        return self.engine.poll()

    def generator_ceiling(self, profile: WorkloadProfile, step: int) -> GeneratorCeiling:
        return self.engine.generator_ceiling(profile, step)

    def access_pattern(self, profile: WorkloadProfile) -> MeasuredPattern | None:
        return self.engine.access_pattern(profile)

    def live_rates(self) -> list[HostRate]:
        return self.engine.live_rates()

    def stop(self) -> WorkloadResult:
        self.sut.apply(None)
        return self.engine.stop()


def target_policy(target_size: str, confirm: str, protected: Sequence[str]) -> TargetPolicy:
    """The fio driver's rules for a run from what the operator typed (CLI or wizard): a typed
    confirmation is also the station's consent to write to a block device."""
    confirmed = confirmations(confirm)
    return TargetPolicy(protected=tuple(protected), confirmed=confirmed,
                        allow_destructive=bool(confirmed), create_size=scratch_size(target_size))


def target_check(path: str, *, target_size: str, confirm: str,
                 protected: Sequence[str]) -> TargetCheck:
    """The verdict a run would give ``path``, for the wizard to show before Start."""
    return check_target(path, writing=True,
                        policy=target_policy(target_size, confirm, protected))


def fio_engine(config: RunConfig, clock: Clock, protected: Sequence[str] = (),
               stall_s: float = DEFAULT_STALL_S) -> FioEngine:
    """The fio engine for the configured targets, its targets already checked: a refused
    target stops the build before the run is stored or any file is made. ``protected``: the
    station's own files, never a target (``app.core.protected``); ``stall_s``: the method's
    ``[fio] stall_s`` (fio stopped, phase FAILED, after that long without IO)."""
    if not config.sut.targets:
        raise LabError("local-fio needs at least one --target (a scratch file or a block device)")
    engine = FioEngine(config.sut.targets, clock=clock, load_hosts=config.sut.load_hosts,
                       policy=target_policy(config.target_size, config.confirm_device,
                                            protected), stall_s=stall_s,
                       direct=False if config.buffered_io else None)
    engine.verify_targets()
    return engine


@dataclass(frozen=True)
class LocalDataSetProbe:
    """Measures a COM data set where fio wrote it: the station's own targets (read only).

    fio's ``filename=a:b`` spreads a sequential job round robin over its files, each written
    from its start, so each target holds its share of the written bytes from offset 0 (all of
    it once the job wrapped). Load hosts' targets are not readable from here: a lab with load
    hosts has no probe, and the COM evidence says so."""

    targets: tuple[str, ...]

    def __call__(self, written_bytes: int, block_size: int) -> tuple[DataSetMeasure, ...]:
        share = written_bytes // len(self.targets)
        return tuple(measure_data_set(t, block_size, min(share, _readable_size(t)))
                     for t in self.targets)


def _readable_size(path: str) -> int:
    """A file's or a block device's size (a device's ``st_size`` is 0; its end is not)."""
    with open(path, "rb", buffering=0) as data:
        return data.seek(0, 2)


def data_set_probe(config: RunConfig) -> LocalDataSetProbe | None:
    """The probe for ``config``'s targets, or None when fio writes on load hosts."""
    return None if config.sut.load_hosts else LocalDataSetProbe(tuple(config.sut.targets))


def fio_description(config: RunConfig, power_simulated: bool, thermometer: bool) -> str:
    """What the lab is, saying SIMULATED when the watts are not measured and that every
    metric is INVALID without an inlet thermometer."""
    return ("fio on " + ", ".join(config.sut.targets)
            + ("; power and temperature SIMULATED (no meter configured)" if power_simulated
               else "")
            + ("" if thermometer else "; no inlet thermometer: every metric INVALID"))
