"""The one lab builder: each instrument decided once, set up in turn, torn down newest first,
also when a later set-up fails (issue 13: the idea of OpenHTF's plugs)."""

from __future__ import annotations

import dataclasses
import socket
from pathlib import Path

import pytest

from app.labs import builder as labs
from app.labs.builder import LabPlan, Source, build_lab, plan_lab
from app.core.records import InstrumentConfig, RunConfig, SutDescription
from app.sequencer.equipment import Lab, Teardown, TeardownFailure
from drivers.clock import FakeClock
from drivers.fio.engine import FioEngine
from drivers.interfaces import InstrumentError
from drivers.meters.thermo import DAQ970A
from drivers.meters.yokogawa import WT300
from drivers.simulators import MeterSimulator, ThermometerSimulator
from drivers.simulators.direct_meters import SimulatedPowerMeter
from tests.support.time_budget import budget_s

BAD_THERMOMETER = InstrumentConfig(driver="no-such-thermometer", resource="x")


@pytest.fixture
def torn_down(monkeypatch) -> list[str]:
    """What was torn down, in order: simulators stopped (with their port) and meters closed."""
    happened: list[str] = []

    def recording(cls: type, method: str, label) -> None:
        original = getattr(cls, method)

        def wrapper(self, *args, **kwargs):
            happened.append(label(self))
            return original(self, *args, **kwargs)
        monkeypatch.setattr(cls, method, wrapper)

    recording(MeterSimulator, "stop", lambda s: f"stop power simulator :{s.port}")
    recording(ThermometerSimulator, "stop", lambda s: f"stop thermometer simulator :{s.port}")
    recording(WT300, "close", lambda m: f"close wt300 {m.resource}")
    recording(DAQ970A, "close", lambda m: f"close daq970a {m.resource}")
    recording(FioEngine, "close", lambda e: "close fio")
    return happened


def listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=budget_s(0.5)).close()
        return True
    except OSError:
        return False


def test_the_plan_decides_every_instrument_once() -> None:
    real = InstrumentConfig(driver="wt300", resource="TCPIP::10.0.0.1::10001::SOCKET")
    assert plan_lab(RunConfig(lab="sim")) == LabPlan("sim", Source.WIRE_SIMULATOR,
                                                     Source.WIRE_SIMULATOR)
    assert plan_lab(RunConfig(lab="sim", power_meter=real)).power is Source.DRIVER
    assert plan_lab(RunConfig(lab="sim-direct", power_meter=real)) == LabPlan(
        "sim-direct", Source.IN_PROCESS, Source.IN_PROCESS)  # sim-direct ignores drivers
    assert plan_lab(RunConfig(lab="local-fio")) == LabPlan("local-fio", Source.IN_PROCESS,
                                                           Source.IN_PROCESS)
    # a real power meter never gets the simulated inlet beside it; "none" records no inlet
    assert plan_lab(RunConfig(lab="local-fio", power_meter=real)).temperature is Source.NONE
    assert plan_lab(RunConfig(lab="sim-direct", temperature_meter=InstrumentConfig(
        driver="none"))).temperature is Source.NONE
    with pytest.raises(ValueError, match="unknown lab 'moon'; choose one of sim, sim-direct"):
        plan_lab(RunConfig(lab="moon"))


def test_the_lab_is_frozen_so_no_one_replaces_its_meters() -> None:
    lab = build_lab(RunConfig(lab="sim-direct"), FakeClock())
    with pytest.raises(dataclasses.FrozenInstanceError):
        lab.power_meter = None  # type: ignore[misc]  # frozen: must raise
    assert isinstance(lab.power_meter, SimulatedPowerMeter)


def test_closing_the_sim_lab_closes_drivers_then_stops_their_simulators(torn_down) -> None:
    lab = build_lab(RunConfig(lab="sim"), FakeClock())
    lab.power_meter.open()
    lab.close()
    assert [e.rsplit(" ", 1)[0] for e in torn_down] == [
        "close daq970a", "stop thermometer simulator", "close wt300", "stop power simulator"]
    stopped = [int(e.rsplit(":", 1)[1]) for e in torn_down if e.startswith("stop")]
    assert not any(listening(p) for p in stopped)
    lab.close()  # a second close does nothing
    assert len(torn_down) == 4


def test_a_failing_thermometer_set_up_tears_down_the_power_meter_and_simulators(
        torn_down) -> None:
    """The thermometer is set up last; its failure closes the power meter's driver and stops
    the loopback simulator behind it, newest first, and the error reaches the caller."""
    with pytest.raises(InstrumentError, match="unknown temperature driver 'no-such-thermometer'"):
        build_lab(RunConfig(lab="sim", temperature_meter=BAD_THERMOMETER), FakeClock())
    assert [e.rsplit(" ", 1)[0] for e in torn_down] == ["close wt300", "stop power simulator"]
    port = int(torn_down[1].rsplit(":", 1)[1])
    assert not listening(port)


def test_a_failing_meter_set_up_stops_the_fio_engine_already_set_up(tmp_path: Path,
                                                                     torn_down) -> None:
    """local-fio: the engine is set up (targets checked) before the meters; a meter that
    cannot be set up must not leave fio's engine and job folder behind."""
    config = RunConfig(lab="local-fio", method="smoke", target_size="1M",
                       sut=SutDescription(targets=(str(tmp_path / "scratch.bin"),)),
                       temperature_meter=BAD_THERMOMETER)
    with pytest.raises(InstrumentError, match="no-such-thermometer"):
        build_lab(config, FakeClock())
    assert torn_down == ["close fio"]


def test_local_fio_without_a_meter_says_the_watts_are_simulated(tmp_path: Path) -> None:
    target = str(tmp_path / "scratch.bin")
    config = RunConfig(lab="local-fio", method="smoke", target_size="1M",
                       sut=SutDescription(targets=(target,)))
    lab = build_lab(config, FakeClock())
    try:
        assert lab.description == (f"fio on {target}; power and temperature SIMULATED "
                                   "(no meter configured)")
        assert isinstance(lab.engine, labs.SutFollowingEngine)
        assert lab.capacity_probe is None and lab.workload_latency_s == labs.FIO_LATENCY_S
    finally:
        lab.close()


def test_teardown_runs_newest_first_once_and_survives_a_failing_step(caplog) -> None:
    steps: list[str] = []

    def broken() -> None:
        steps.append("broken")
        raise RuntimeError("stuck")

    with pytest.raises(KeyError):
        with Teardown() as teardown:
            teardown.register(lambda: steps.append("first"), "first piece")
            teardown.register(broken, "thermometer")
            teardown.register(lambda: steps.append("last"), "last piece")
            raise KeyError("set-up failed")
    assert steps == ["last", "broken", "first"]
    # a builder's tear-down has no run to report to: the failure is logged, never silent
    assert ("tearing down the thermometer failed: unexpected error RuntimeError: stuck"
            in caplog.messages)
    assert teardown.run() == ()
    assert steps == ["last", "broken", "first"]
    teardown.register(broken, "thermometer")
    assert teardown.run() == (TeardownFailure("thermometer",
                                              "unexpected error RuntimeError: stuck"),)
    lab = Lab(SimulatedPowerMeter(None), None)  # type: ignore[arg-type]  # no engine, on purpose
    lab.close()  # nothing registered: nothing to do
