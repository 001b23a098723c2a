"""Generated runs for the differential fuzzer between station and verifier (issue 37).

A :class:`RunSpec` is one run the station can make, drawn by :func:`run_specs`: a shipped
method or a stricter or looser variant of one, a meter set-up (the in-process simulated meter,
a WT300 behind its wire simulator, PTDaemon with one or two channels, a three-phase input,
several inputs), with or without the inlet thermometer, load hosts, and what happens during the
run — reading flags on some samples of one phase (every flag the station can store, taken from
``app.storage.codec.FLAG_CODES``, not a hand list), a pause, a meter that drops out, a workload
engine that dies, an abort, a station that dies and a continuation of the run.

:func:`record` runs a spec on the fake clock through the real sequencer and RunWriter and
writes its bundle; :func:`disagreements` verifies the bundle in this process (the verifier is
stdlib-only) and says every way station and verifier differ — the verdict, a criterion, a
figure (the verifier compares each to 1e-9 relative) or a station metric the verifier never
compared.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast
from unittest import mock

from hypothesis import reject
from hypothesis import strategies as st

from app.core.records import InstrumentConfig, PowerInput, RunConfig, SutDescription
from app.labs.builder import NO_THERMOMETER, build_lab
from app.method.loader import MethodError, load_method, load_method_file
from app.sequencer import events as ev
from app.sequencer.equipment import Lab
from app.sequencer.sequencer import Sequencer
from app.storage.codec import FLAG_CODES
from app.storage.repository import load_run
from app.storage.stored import StoredRun
from drivers import interfaces as di
from drivers.clock import FakeClock
from drivers.interfaces import InstrumentError, PowerSample
from drivers.simulators import FaultKind, ThermometerSimulator
from drivers.simulators.direct_meters import SimulatedPowerMeter, SimulatedThermometer
from drivers.simulators.engine import SimulatedWorkloadEngine
from drivers.simulators.server import LineServer
from tests.support.bundles import bundle_of, verify
from tests.support.recorded_runs import pause_once_in
from tests.support.verdict_runs import MEDIA, REMOVABLE_1, FioNamedEngine, real_identity, \
    run_stored

#: the shipped methods a run may follow; the cheap ones first (hypothesis shrinks towards them)
METHODS = ("smoke", "demo", "demo-workloads", "spc1-like-demo", "pts-di-demo")
#: the registered compliant method, run on its shortest plan (removable-1: 2 h of ready idle on
#: the fake clock, ~5 s of CPU): the soak's, and one axis run's
COMPLIANT_METHOD = "emerald-block-v3"
#: the methods whose variants are generated (their structure is the Emerald block sequence)
VARIANT_BASES = ("smoke", "demo")

#: a meter set-up: the lab and how its power is read (in-process meters need no socket)
IN_PROCESS = "in-process"
METERS: dict[str, tuple[str, dict[str, Any]]] = {
    IN_PROCESS: ("sim-direct", {}),
    "in-process, 3 inputs": ("sim-direct", {"power_inputs": tuple(
        PowerInput(f"psu-{k}", "sim") for k in "abc")}),
    "WT300": ("sim", {}),
    "PTDaemon": ("sim", {"power_meter": InstrumentConfig("sim", "ptd", {})}),
    "PTDaemon, 2 channels": ("sim", {"power_inputs": (
        PowerInput("psu-a", "sim", "ptd", element=1),
        PowerInput("psu-b", "sim", "ptd", element=2))}),
    "WT310 + three-phase WT333E": ("sim", {"power_inputs": (
        PowerInput("ctrl", "sim", "wt310"), PowerInput("shelf", "sim", "wt333e",
                                                       wiring="3P4W"))}),
}

#: a variant's (table, key) → the values drawn for it: stricter and looser than the shipped
#: method ("" is the top level)
VARIANT_VALUES: dict[tuple[str, str], tuple[Any, ...]] = {
    ("", "sample_period_s"): (0.2, 0.25, 0.5, 1.0, 5.0),
    ("", "interval_s"): (1.0, 2.0, 10.0),
    ("stability", "tolerance_pct"): (0.5, 2.0, 5.0, 50.0),
    ("stability", "max_drift_pct"): (0.5, 5.0, 50.0),
    ("instruments", "max_flagged_power_samples"): (0, 1, 3),
    ("instruments", "max_identical_readings"): (2, 10, 100),
    ("instruments", "power_plausibility_tolerance_pct"): (0.5, 5.0, 50.0),
    ("instruments", "max_uncertainty_pct"): (0.5, 1.0, 5.0),
    ("sampling", "meter_silence_limit_s"): (2.0, 5.0, 60.0),
    ("response_time", "max_avg_ms"): (0.5, 30.0, 1000.0),
}


#: the wire simulators' faults that cost no real time (SLOW and SILENT wait out the drivers'
#: timeouts): a dropped connection, garbage, the meter's no-data and over-range markers, and
#: HOLD (the same reply again and again: the station's stale rule)
WIRE_FAULTS = tuple(k.value for k in FaultKind if k not in (FaultKind.SLOW, FaultKind.SILENT))

#: the method's longest sample period (its gaps then reach the 5 s limit exactly) and what a
#: method with it needs to load: intervals of several samples, a meter silence limit beyond
#: the slowest meter's period
LONGEST_PERIOD_S = 5.0
LONGEST_PERIOD_NEEDS = {("", "interval_s"): 10.0, ("sampling", "meter_silence_limit_s"): 60.0}


def flag_edit(flag: str) -> Callable[[PowerSample], PowerSample]:
    """How a meter (or the rule that sets it) marks a sample with ``flag``: a supply flag is
    set by the station from the reading itself, so the reading is made out of range instead."""
    if flag == di.FLAG_VOLTAGE_OUT_OF_RANGE:
        return lambda s: dataclasses.replace(s, volts=300.0)
    if flag == di.FLAG_FREQUENCY_OUT_OF_RANGE:
        return lambda s: dataclasses.replace(s, freq_hz=70.0)
    if flag == di.FLAG_FREQUENCY_NOT_MEASURED:  # PTDaemon's RL lines carry no frequency
        return lambda s: dataclasses.replace(s, freq_hz=math.nan, flags=s.flags | {flag})
    if flag == di.FLAG_UNCERTAINTY_HIGH:
        return lambda s: dataclasses.replace(s, uncertainty_pct=2.5, flags=s.flags | {flag})
    return lambda s: dataclasses.replace(s, flags=s.flags | {flag})


@dataclass(frozen=True)
class Injection:
    """``flag`` on every ``every``-th power sample of the run's ``phase``-th phase (None:
    of every phase)."""

    flag: str
    phase: int | None
    every: int


@dataclass(frozen=True)
class RunSpec:
    """One generated run; its ``repr`` is the whole recipe (hypothesis prints it on failure)."""

    method: str = "smoke"
    variant: tuple[tuple[str, str, Any], ...] = ()  # (table, key, value) over ``method``
    meter: str = IN_PROCESS
    thermometer: bool = True
    load_hosts: int = 0
    injections: tuple[Injection, ...] = ()
    pause_in: int | None = None  # the phase paused after its first interval
    drop: tuple[int, int] | None = None  # (phase, reads): the meter answers none of them
    engine_dies_in: int | None = None  # the phase whose workload engine dies after 0.5 s
    abort_in: int | None = None  # the phase the operator aborts the run in
    station_dies_in: str | None = None  # a profile the station dies in; the run is resumed
    #: (fault, phase, replies): the wire simulators of the power meter answer that many
    #: replies of that phase with the fault (a wire set-up only) — the drivers' own flags
    wire_fault: tuple[str, int, int] | None = None
    #: the in-process meters, thermometer and engine identify as real, calibrated this many
    #: days ago (None: the simulators' own identities), so the compliance criteria can be met
    calibrated_days_ago: int | None = None
    #: every other power sample stamped this long after its grid point, as a loaded
    #: station's sampler stamps them (the gap rule judges grid points, not stamps)
    late_ms: int = 0


@st.composite
def run_specs(draw: st.DrawFn, meters: tuple[str, ...] = tuple(METERS),
              methods: tuple[str, ...] = METHODS) -> RunSpec:
    """Runs the station can make; ``meters`` narrows the set-ups (the fast tier keeps to the
    in-process ones: no socket)."""
    method = draw(st.sampled_from(methods))
    variant: tuple[tuple[str, str, Any], ...] = ()
    if method in VARIANT_BASES and draw(st.booleans()):
        keys = draw(st.lists(st.sampled_from(sorted(VARIANT_VALUES)), min_size=1, max_size=4,
                             unique=True))
        chosen = {(t, k): draw(st.sampled_from(VARIANT_VALUES[t, k])) for t, k in keys}
        if chosen.get(("", "sample_period_s")) == LONGEST_PERIOD_S:  # what that period needs
            chosen.update(LONGEST_PERIOD_NEEDS)
        variant = tuple((t, k, v) for (t, k), v in chosen.items())
    phase = st.integers(0, 11)
    injections = draw(st.lists(st.builds(Injection, st.sampled_from(sorted(FLAG_CODES)),
                                         st.none() | phase, st.integers(1, 7)), max_size=3))

    def now_and_then(one_in: int) -> int | None:
        """A phase in about one of ``one_in`` runs (``st.one_of`` and ``st.none() | …`` give
        each branch far more than its share)."""
        return draw(phase) if draw(st.sampled_from(range(one_in))) == one_in - 1 else None

    meter = draw(st.sampled_from(meters))
    wire_fault = None
    if METERS[meter][0] == "sim":
        wire_fault = draw(st.none() | st.tuples(st.sampled_from(WIRE_FAULTS), phase,
                                                st.integers(1, 30)))
    real = meter == IN_PROCESS and draw(st.booleans())
    dropped = now_and_then(3)
    resumable = method == "smoke" and not variant and METERS[meter][0] == "sim-direct"
    return RunSpec(
        method=method, variant=variant, meter=meter, thermometer=draw(st.booleans()),
        load_hosts=draw(st.sampled_from((0, 0, 2, 3))), injections=tuple(injections),
        pause_in=now_and_then(3),
        drop=None if dropped is None else (dropped, draw(st.integers(1, 8))),
        engine_dies_in=now_and_then(8), abort_in=now_and_then(8),
        station_dies_in=draw(st.none() | st.sampled_from(("MW2", "SR"))) if resumable else None,
        wire_fault=wire_fault,
        calibrated_days_ago=draw(st.sampled_from((30, 30, 400))) if real else None,
        late_ms=draw(st.sampled_from((0, 0, 3, 40))))


def method_of(spec: RunSpec, folder: Path) -> str:
    """The method the run follows: a shipped name, or a variant's file written in ``folder``."""
    if not spec.variant:
        return spec.method
    tables: dict[str, list[str]] = {}
    for table, key, value in spec.variant:
        tables.setdefault(table, []).append(f"{key} = {value!r}".lower())
    lines = [f'base = "{spec.method}"', f'name = "{spec.method}-variant"',
             'version = "fuzz"', "compliant = false", *tables.pop("", [])]
    for table, rows in tables.items():
        lines += ["", f"[{table}]", *rows]
    path = folder / f"{spec.method}-variant.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


class Mischief:
    """The power meter as the spec has it misbehave: flags on samples of a phase, a run of
    reads that fail as a dropped connection does. Everything else is the meter's own."""

    def __init__(self, inner: Any, spec: RunSpec) -> None:
        self.inner = inner
        self.spec = spec
        self.phase = -1  # the ordinal of the running phase (PhaseStarted events so far)
        self.reads = 0  # reads in this phase
        self.flagged: set[str] = set()
        self.faulted = False  # a wire fault was injected

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def started(self) -> None:
        self.phase += 1
        self.reads = 0

    def read(self, t: float) -> PowerSample:
        self.reads += 1
        drop = self.spec.drop
        if drop is not None and drop[0] == self.phase and 2 <= self.reads < 2 + drop[1]:
            raise InstrumentError("connection dropped (generated)")
        sample = self.inner.read(t)
        if self.spec.late_ms and self.reads % 2:
            sample = dataclasses.replace(sample, t=sample.t + self.spec.late_ms / 1000)
        for injection in self.spec.injections:
            if injection.phase in (None, self.phase) and self.reads % injection.every == 0:
                sample = flag_edit(injection.flag)(sample)
                self.flagged.add(injection.flag)
        return sample


def config_of(spec: RunSpec, method: str) -> RunConfig:
    lab, meters = METERS[spec.meter]
    hosts = tuple(f"load-{k}:8765" for k in range(spec.load_hosts))
    extra: dict[str, Any] = dict(meters)
    if not spec.thermometer:
        extra["temperature_meter"] = InstrumentConfig(NO_THERMOMETER)
    if spec.method == COMPLIANT_METHOD:  # its shortest plan, classified from the answers
        extra.update(taxonomy=MEDIA, classification_answers=REMOVABLE_1,
                     classification_reason="generated")
    return RunConfig(method=method, lab=lab, station="fuzz", operator="generated",
                     sut=SutDescription(load_hosts=hosts), **extra)


def identify_as_real(lab: Lab, days_ago: int) -> Lab:
    """The in-process stand-ins under the identities of real, calibrated instruments and an
    engine named like fio (``tests/support/verdict_runs.py``): only the rules then decide."""
    assert isinstance(lab.power_meter, SimulatedPowerMeter), "real identities: one meter"
    assert isinstance(lab.engine, SimulatedWorkloadEngine), lab.engine
    lab.power_meter.identity = real_identity("YOKOGAWA", "WT310E", "wt300", days_ago)
    if isinstance(lab.temperature_meter, SimulatedThermometer):
        lab.temperature_meter.identity = real_identity("Keysight", "DAQ970A", "daq970a",
                                                       days_ago)
    engine = lab.engine
    return dataclasses.replace(lab, engine=FioNamedEngine(engine.sut, engine.clock,
                                                          load_hosts=engine.load_hosts))


def _hook(spec: RunSpec, mischief: Mischief, engine: Any,
          servers: list[LineServer]) -> Callable[[Sequencer, Any], None]:
    pause = pause_once_in  # a fresh pause hook per phase name, made when that phase starts
    paused: list[Callable[[Sequencer, Any], None]] = []

    def hook(seq: Sequencer, event: ev.RunEvent) -> None:
        if isinstance(event, ev.PhaseStarted):
            mischief.started()
            if mischief.phase == spec.pause_in and event.phase.profile:
                paused.append(pause(event.phase.profile, after_intervals=0))
            if hasattr(engine, "fail_after_s"):
                engine.fail_after_s = 0.5 if mischief.phase == spec.engine_dies_in else None
            if spec.wire_fault and mischief.phase == spec.wire_fault[1]:
                for server in servers:
                    if not isinstance(server, ThermometerSimulator):
                        server.faults.inject(spec.wire_fault[0], spec.wire_fault[2])
                        mischief.faulted = True
            if mischief.phase == spec.abort_in:
                seq.abort("aborted by the generated operator")
        for each in paused:
            each(seq, event)
    return hook


@dataclass(frozen=True)
class Recorded:
    run: StoredRun
    bundle: Path
    flagged: frozenset[str]  # the flags the meter set on some sample
    faulted: bool = False  # the wire simulators answered with the spec's fault


def record(spec: RunSpec, folder: Path) -> Recorded:
    """Run ``spec`` on the fake clock into ``folder``/run.db and write its bundle."""
    if spec.station_dies_in:
        return _resumed(spec, folder)
    method_name = method_of(spec, folder)
    try:
        method = load_method_file(Path(method_name)) if spec.variant else \
            load_method(method_name)
    except MethodError:  # a variant the station refuses to load makes no run
        reject()
    config = config_of(spec, method_name)
    clock = FakeClock(1000.0)
    with started_servers() as servers:
        lab = build_lab(config, clock, sample_period_s=method.sample_period_s,
                        silence_limit_s=method.sampling.meter_silence_limit_s,
                        limits=method.instruments.reading_limits())
    if spec.calibrated_days_ago is not None:
        lab = identify_as_real(lab, spec.calibrated_days_ago)
    mischief = Mischief(lab.power_meter, spec)
    lab = dataclasses.replace(lab, power_meter=mischief)
    database, sequencer, _ = run_stored(folder / "run.db", method, config, lab, clock,
                                        _hook(spec, mischief, lab.engine, servers))
    try:  # closed: a soak's hundreds of runs must not each keep a database open
        bundle = bundle_of(database, sequencer.run_id, folder / "run.zip")
        run = load_run(database, sequencer.run_id)
    finally:
        database.close()
    return Recorded(run, bundle, frozenset(mischief.flagged), mischief.faulted)


@contextmanager
def started_servers() -> Iterator[list[LineServer]]:
    """The wire simulators the lab's builder starts inside the block, to inject faults into
    (the builder keeps them to itself: only their tear-down is registered)."""
    servers: list[LineServer] = []
    start = LineServer.start

    def started(server: LineServer) -> int:
        servers.append(server)
        return start(server)

    with mock.patch.object(LineServer, "start", autospec=True, side_effect=started):
        yield servers


def _resumed(spec: RunSpec, folder: Path) -> Recorded:
    """The smoke run whose station died in ``spec.station_dies_in``, continued in its record."""
    from tests.support.resume_runs import interrupted_run, resume

    url = f"sqlite:///{folder / 'run.db'}"
    _, run = cast(tuple[Any, StoredRun],
                  resume(url, interrupted_run(url, str(spec.station_dies_in),
                                              config_of(spec, spec.method))))
    path = folder / "run.zip"
    from app.reports.export import write_bundle
    write_bundle(run, path)
    return Recorded(run, path, frozenset())


def happenings(recorded: Recorded) -> frozenset[str]:
    """What the generated mischief made of the run, as its record shows it: the fuzzer's
    statistics (``--hypothesis-show-statistics``) and the test that each axis is reached."""
    run = recorded.run
    messages = " ".join([*(e.message for e in run.events), *(p.error for p in run.phases)])
    found = {f"flag {flag}" for flag in recorded.flagged}
    found.add(f"status {run.status.name}")
    if any(p.attempts > 1 for p in run.phases):
        found.add("a phase repeated")
    if run.resumptions:
        found.add("resumed")
    if "connection dropped (generated)" in messages:
        found.add("meter dropped")
    if "aborted by the generated operator" in messages:
        found.add("aborted")
    if "simulated engine failure injected" in messages:
        found.add("engine died")
    if run.method is not None and run.method.sample_period_s >= LONGEST_PERIOD_S:
        found.add("5 s period")
    if run.compliance.compliant:
        found.add("compliant")
    if recorded.faulted:
        found.add("wire fault")
    if run.config.sut.load_hosts:
        found.add("load hosts")
    return frozenset(found)


_FIGURE = re.compile(r"^\[[x ]\] (\S+): ", re.M)


def disagreements(recorded: Recorded) -> list[str]:
    """Every way the verifier differs from the station on ``recorded``'s bundle: its failed
    lines, a verdict other than AGREES, a station metric it never compared. Empty: agreed."""
    status, out = verify(recorded.bundle)
    found = [line for line in out.splitlines() if line.startswith("[ ]")]
    if status != 0:
        found.append(f"exit status {status}: {out.strip().splitlines()[-1] if out else ''}")
    compared = set(_FIGURE.findall(out))
    found += [f"station metric {m.name} was not compared by the verifier"
              for m in recorded.run.metrics if m.name not in compared]
    return found
