"""Build the lab a run uses from its configuration: the one builder.

* ``sim`` — the built-in simulated lab: the simulated SUT, reached through the wire-level meter
  simulators on loopback sockets and the production drivers (so the demo exercises the same
  code path as a real WT310), with the simulated workload engine.
* ``sim-direct`` — the simulated SUT with in-process meters; for fast tests on a fake clock.
* ``local-fio`` — real IO with fio against the configured targets; meters as configured, or
  the in-process simulated meters (clearly labelled SIMULATED) when none are.

In ``sim`` and ``local-fio`` a meter whose driver is not ``sim`` is the real driver. A thermometer
driver ``none`` records no inlet temperature, and a real power meter never gets the simulated
thermometer beside it: its inlet would pass for a measured one (method-notes §3), so there is
none and every metric says so.

What each instrument will be is decided once (:func:`plan_lab`); :func:`build_lab` then sets each
piece up in turn and registers its tear-down as it goes, so a piece that fails to set up leaves
nothing behind (the pieces before it are torn down, newest first). The wizard's "Test
connection" sets the meters up through the same code (:func:`open_lab_meters`), so it identifies
the very instrument the run will read.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from app.labs.local_fio import SutFollowingEngine, data_set_probe, fio_description, fio_engine
from app.core.records import LAB_KINDS, SIMULATED_LABS, InstrumentConfig, PowerInput, RunConfig
from app.sequencer.equipment import Lab, LabError, Teardown
from app.sequencer.power_inputs import PowerInputs
from app.labs.simulated import (SIM_POWER_DRIVER, SIM_POWER_MODEL, SIM_THERMO_DRIVER, input_shares,
                                input_simulator, power_simulator, ptd_channels_simulator,
                                simulated_engine, simulated_sut, thermometer_simulator)
from drivers.clock import Clock, MonotonicClock
from drivers.interfaces import (DEFAULT_SILENCE_LIMIT_S, DEFAULT_STALL_S, HostClock, PowerMeter,
                                ReadingLimits, TemperatureMeter, WorkloadEngine)
from drivers.meters.ptd_channels import PtdDaemons
from drivers.meters.registry import open_power_meter, open_temperature_meter
from drivers.simulators import DRIVER_FOR_MODEL, POWER_MODELS
from drivers.simulators.server import LineServer
from drivers.simulators.direct_meters import SimulatedPowerMeter, SimulatedThermometer
from drivers.simulators.sut import SimulatedSut

#: how long after an interval's end fio's figures for it arrive
FIO_LATENCY_S = 1.2
LAB_DESCRIPTIONS = {"sim": "simulated SUT behind loopback meter simulators",
                    "sim-direct": "simulated SUT, in-process simulated meters"}
NO_THERMOMETER = "none"  # the technician chose to record no inlet temperature


class Source(Enum):
    """Where an instrument's readings come from."""

    IN_PROCESS = "in-process simulated meter"
    WIRE_SIMULATOR = "production driver on a loopback simulator"
    DRIVER = "configured driver"
    NONE = "no instrument"


@dataclass(frozen=True)
class LabPlan:
    """What each piece of a run's lab will be, decided once from its configuration."""

    kind: str  # one of LAB_KINDS
    power: Source
    temperature: Source

    @property
    def real_io(self) -> bool:
        return self.kind == "local-fio"


def plan_lab(config: RunConfig) -> LabPlan:
    """Each instrument's source for ``config``, or :class:`LabError` for an unknown lab."""
    if config.lab not in LAB_KINDS:
        raise LabError(f"unknown lab {config.lab!r}; choose one of {', '.join(LAB_KINDS)}")
    sources = [driver_source(config, d) for d in
               [i.driver for i in config.power_inputs] or [config.power_meter.driver]]
    power = Source.DRIVER if Source.DRIVER in sources else sources[0]  # any real input is real
    temperature = driver_source(config, config.temperature_meter.driver)
    if config.temperature_meter.driver == NO_THERMOMETER or (
            config.lab not in SIMULATED_LABS and power is Source.DRIVER
            and temperature is not Source.DRIVER):
        temperature = Source.NONE
    return LabPlan(config.lab, power, temperature)


def driver_source(config: RunConfig, driver: str) -> Source:
    """Where an instrument with ``driver`` reads from in ``config``'s lab."""
    if config.lab == "sim-direct" or driver == "sim":
        return Source.WIRE_SIMULATOR if config.lab == "sim" else Source.IN_PROCESS
    return Source.DRIVER


@dataclass(frozen=True)
class LabMeters:
    """A lab's meters, set up exactly as the run sets them up; closing tears them down."""

    power_meter: PowerMeter
    temperature_meter: TemperatureMeter | None
    teardown: Teardown
    power_inputs: PowerInputs | None = None  # several power inputs: the reader (= power_meter)

    def close(self) -> None:
        self.teardown.run()


def open_lab_meters(config: RunConfig, sut: SimulatedSut | None = None) -> LabMeters:
    """The meters a run of ``config`` reads (same lab kind, drivers, resources, simulators),
    for the wizard's connection test; constructed, not yet opened."""
    plan = plan_lab(config)
    with Teardown() as teardown:
        return _set_up_meters(plan, config, sut or simulated_sut(config), teardown,
                              MonotonicClock(), 1.0)


def open_power_input(config: RunConfig, name: str) -> tuple[PowerMeter, Teardown]:
    """The meter of one power input of ``config`` as the run sets it up (the wizard's
    per-row connection test); constructed, not yet opened. KeyError for an unknown name."""
    found = {i.name: i for i in config.power_inputs}
    if name not in found:
        raise KeyError(f"no power input {name!r}; the set-up has {', '.join(found) or 'none'}")
    with Teardown() as teardown:
        sut, shares = simulated_sut(config), input_shares(config.power_inputs)
        meter = _set_up_input(config, found[name], sut, shares[name], teardown,
                              _ptd_channels(config, sut, shares, teardown))
        return meter, teardown


@dataclass(frozen=True)
class _MeterKind:
    """How to set up one kind of meter from each source."""

    name: str  # "power meter", in the words of a tear-down failure
    in_process: Callable[[SimulatedSut], Any]
    simulator: Callable[[SimulatedSut, Clock | None], LineServer]  # (sut, the run's clock)
    simulator_driver: str
    open_driver: Callable[..., Any]


_POWER = _MeterKind("power meter", SimulatedPowerMeter, power_simulator, SIM_POWER_DRIVER,
                    open_power_meter)
_TEMPERATURE = _MeterKind("thermometer", SimulatedThermometer,
                          lambda sut, _clock: thermometer_simulator(sut), SIM_THERMO_DRIVER,
                          open_temperature_meter)


def build_lab(config: RunConfig, clock: Clock, protected: Sequence[str] = (),
              fio_stall_s: float = DEFAULT_STALL_S, sample_period_s: float = 1.0,
              silence_limit_s: float = DEFAULT_SILENCE_LIMIT_S,
              limits: ReadingLimits = ReadingLimits()) -> Lab:
    """``protected``: paths a real workload must never write (``app.core.protected``);
    ``fio_stall_s``: the method's ``[fio] stall_s`` (fio stopped, phase FAILED, after that
    long without IO); ``sample_period_s``: the method's power sample period (readings of
    several inputs more than half of it apart are not summed); ``silence_limit_s``: the method's
    ``[sampling] meter_silence_limit_s``, for each power input as for one meter;
    ``limits``: the method's limits on each power reading, handed to every power meter."""
    plan = plan_lab(config)
    sut = simulated_sut(config)
    with Teardown() as teardown:
        engine, description, clock_check = _set_up_workload(plan, config, clock, protected,
                                                            fio_stall_s, sut, teardown)
        meters = _set_up_meters(plan, config, sut, teardown, clock, sample_period_s,
                                silence_limit_s, limits)
        return Lab(meters.power_meter, engine, meters.temperature_meter,
                   None if plan.real_io else sut.used_capacity_bytes,
                   FIO_LATENCY_S if plan.real_io else 0.0, description, teardown,
                   data_set_probe=data_set_probe(config) if plan.real_io else None,
                   host_clocks=clock_check, power_inputs=meters.power_inputs)


def _set_up_workload(plan: LabPlan, config: RunConfig, clock: Clock, protected: Sequence[str],
                     stall_s: float, sut: SimulatedSut, teardown: Teardown
                     ) -> tuple[WorkloadEngine, str, Callable[[], Sequence[HostClock]] | None]:
    """The engine, the lab's description and, with load hosts, their clock check."""
    if not plan.real_io:
        return simulated_engine(sut, config, clock), LAB_DESCRIPTIONS[plan.kind], None
    engine = fio_engine(config, clock, protected, stall_s)
    teardown.register(engine.close, "fio engine")  # stops fio, removes its job folder
    power_simulated = plan.power is Source.IN_PROCESS
    workload: WorkloadEngine = SutFollowingEngine(engine, sut) if power_simulated else engine
    clocks: Callable[[], Sequence[HostClock]] | None = (engine.host_clocks
                                                        if config.sut.load_hosts else None)
    return (workload,
            fio_description(config, power_simulated, plan.temperature is not Source.NONE), clocks)


def _set_up_meters(plan: LabPlan, config: RunConfig, sut: SimulatedSut,
                   teardown: Teardown, clock: Clock, period_s: float,
                   silence_limit_s: float = DEFAULT_SILENCE_LIMIT_S,
                   limits: ReadingLimits = ReadingLimits()) -> LabMeters:
    inputs = None
    if config.power_inputs:
        shares = input_shares(config.power_inputs)  # of the simulated SUT's load
        channels = _ptd_channels(config, sut, shares, teardown)
        inputs = PowerInputs([(i, _set_up_input(config, i, sut, shares[i.name], teardown,
                                                channels, limits, clock))
                              for i in config.power_inputs], clock, period_s,
                             silence_limit_s, limits=limits)
        power: PowerMeter = inputs
    else:
        power = _set_up_meter(_POWER, plan.power, config.power_meter, sut, teardown, clock,
                              limits=limits)
    thermometer = (None if plan.temperature is Source.NONE else
                   _set_up_meter(_TEMPERATURE, plan.temperature, config.temperature_meter, sut,
                                 teardown))
    return LabMeters(power, thermometer, teardown, inputs)


@dataclass(frozen=True)
class _PtdChannels:
    """The PTDaemon channels among a run's inputs: one session per daemon (``daemons``) and,
    in the simulated lab, one simulated daemon for all the simulated channels."""

    daemons: PtdDaemons
    simulator: LineServer | None


def _ptd_channels(config: RunConfig, sut: SimulatedSut, shares: dict[str, float],
                  teardown: Teardown) -> _PtdChannels:
    simulated = {i.element: shares[i.name] for i in config.power_inputs
                 if i.element is not None and i.resource == "ptd"
                 and driver_source(config, i.driver) is Source.WIRE_SIMULATOR}
    simulator = ptd_channels_simulator(sut, simulated) if simulated else None
    if simulator is not None:
        simulator.start()
        teardown.register(simulator.stop, "simulated PTDaemon")
    return _PtdChannels(PtdDaemons(), simulator)


def _set_up_input(config: RunConfig, power_input: PowerInput, sut: SimulatedSut, share: float,
                  teardown: Teardown, channels: _PtdChannels,
                  limits: ReadingLimits = ReadingLimits(),
                  clock: Clock | None = None) -> PowerMeter:
    """One power input's meter: a simulated one carries ``share`` of the simulated SUT; a
    PTDaemon channel (``element=N``) shares its daemon's session with the other channels."""
    source = driver_source(config, power_input.driver)
    if source is Source.IN_PROCESS:
        meter: PowerMeter = SimulatedPowerMeter(sut, share=share, limits=limits)
    else:
        resource, driver = power_input.resource, power_input.driver
        if source is Source.WIRE_SIMULATOR:
            model = power_input.resource or SIM_POWER_MODEL
            if model not in DRIVER_FOR_MODEL:
                raise LabError(f"power input {power_input.name}: no simulated meter "
                               f"{model!r}; choose one of {', '.join(POWER_MODELS)}")
            if model == "ptd" and power_input.element is not None:
                simulator = channels.simulator
                assert simulator is not None  # _ptd_channels started it for this input
            else:
                simulator = input_simulator(sut, model, share, power_input.element, clock)
                simulator.start()
                teardown.register(simulator.stop,
                                  f"simulated meter of power input {power_input.name}")
            resource, driver = simulator.resource, DRIVER_FOR_MODEL[model]
        options = {**_input_options(power_input), "limits": limits}
        if driver == "ptd" and power_input.element is not None:
            del options["element"]
            meter = channels.daemons.channel(resource, power_input.element, **options)
        else:
            meter = open_power_meter(driver, resource, **options)
    teardown.register(meter.close, f"meter of power input {power_input.name}")
    return meter


def _input_options(power_input: PowerInput) -> dict[str, Any]:
    """Driver options of an input: only what it sets, so a driver without elements or
    wirings is asked for neither."""
    options: dict[str, Any] = {}
    if power_input.element is not None:
        options["element"] = power_input.element
    if power_input.wiring != "1P2W":
        options["wiring"] = power_input.wiring
    if power_input.calibration_date:
        options["calibration_date"] = power_input.calibration_date
    return options


def _set_up_meter(kind: _MeterKind, source: Source, config: InstrumentConfig, sut: SimulatedSut,
                  teardown: Teardown, clock: Clock | None = None, **judged: Any) -> Any:
    """``clock``: the run's, which a wire simulator's data updates follow; ``judged``: what a
    power meter judges its readings by (``limits``); a thermometer takes none."""
    if source is Source.IN_PROCESS:
        meter = kind.in_process(sut, **judged)
    elif source is Source.WIRE_SIMULATOR:
        simulator = kind.simulator(sut, clock)
        simulator.start()
        teardown.register(simulator.stop, f"simulated {kind.name}")
        meter = kind.open_driver(kind.simulator_driver, simulator.resource, **judged)
    else:
        meter = kind.open_driver(config.driver, config.resource, **_options(config), **judged)
    teardown.register(meter.close, kind.name)
    return meter


def _options(config: InstrumentConfig) -> dict[str, Any]:
    options = dict(config.options)
    if config.calibration_date:
        options["calibration_date"] = config.calibration_date
    return options
