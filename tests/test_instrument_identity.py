"""Every reading is bound to the instrument that made it (issue 38, seen item 3).

Another instrument takes a meter's address mid-run (the stand-in resets its connections and
answers its identity query as another serial): through the production drivers of every user
of the shared base class (the WT300, the thermometers, both PTDaemon clients) and the run's
sampler, the measurement ends with a status naming both instruments, and no reading of the
other one is ever returned to be counted. Then a whole run on the WT300 path: it ends FAILED
with both identities in its stated error, and its stored samples are the recorded meter's.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.records import InstrumentConfig, PhaseStatus, RunConfig, RunStatus
from app.method.loader import load_method
from app.sequencer import events as ev
from app.sequencer.sampler import MeterReplaced, MeterSampler
from app.station.session import open_session
from app.storage.repository import load_run
from drivers.interfaces import InstrumentReplaced, InstrumentTimeout
from drivers.meters.registry import open_power_meter, open_temperature_meter
from drivers.simulators import MeterSimulator, ThermometerSimulator
from drivers.simulators.dialects import WatchportDialect
from drivers.simulators.server import LineServer

FAST = {"timeout_s": 0.6, "reconnect_delay_s": 0.02}
OTHER = "C2OTHER999"


def _watchport_t() -> LineServer:
    """A Watchport/T where a Watchport/H was: the probe states no serial, only its model."""
    sim = ThermometerSimulator("watchport")
    sim.dialect = WatchportDialect(sim.celsius, "Watchport/T")
    return sim


#: driver, whether it reads power, the simulator at the address, the one that takes it over
CASES = [
    ("wt300", True, lambda: MeterSimulator("wt310"), lambda: MeterSimulator("wt310",
                                                                            serial=OTHER)),
    ("ptd", True, lambda: MeterSimulator("ptd"), lambda: MeterSimulator("ptd", serial=OTHER)),
    ("daq970a", False, lambda: ThermometerSimulator("daq970a"),
     lambda: ThermometerSimulator("daq970a", serial=OTHER)),
    ("watchport", False, lambda: ThermometerSimulator("watchport"), _watchport_t),
    ("ptd-temp", False, lambda: ThermometerSimulator("ptd-temp"),
     lambda: ThermometerSimulator("ptd-temp", serial=OTHER)),
]


def _open(driver: str, power: bool, resource: str):
    meter = (open_power_meter if power else open_temperature_meter)(driver, resource, **FAST)
    for attempt in range(3):  # opening is not under test: tolerate a loaded machine
        try:
            return meter, meter.open()
        except InstrumentTimeout:
            if attempt == 2:
                raise
    raise AssertionError("unreachable")


@pytest.mark.parametrize("driver,power,first,second", CASES,
                         ids=[c[0] for c in CASES])
def test_another_instrument_at_the_address_ends_the_measurement_naming_both(
        driver, power, first, second) -> None:
    with first() as sim:
        meter, recorded = _open(driver, power, sim.resource)
        now = [0.0]  # the poll's time scale (the silence limit is not under test)
        sampler = MeterSampler(meter, 1.0, "the meter", 60.0, lambda: now[0])
        sampler.recorded = recorded
        before = sampler.poll(0.0)
        assert [s.instrument for s in before] == [recorded.key]
        other = second()
        sim.take_address(other)
        counted = []
        with pytest.raises(MeterReplaced) as ended:
            for k in range(1, 8):  # before: the second reconnect compared it with itself
                now[0] = float(k)
                counted += sampler.poll(now[0])
        cause = ended.value.__cause__
        assert isinstance(cause, InstrumentReplaced) and cause.recorded == recorded
        found = cause.found  # who answered at the address
        assert found.key != recorded.key
        assert recorded.describe() in str(ended.value)
        assert found.describe() in str(ended.value)
        assert counted == []  # no reading of the other instrument was returned
        with pytest.raises(InstrumentReplaced):  # the session stays refused
            meter.read(9.0)
        with pytest.raises(InstrumentReplaced):
            meter.reconnect()
        meter.close()


def test_a_reading_naming_another_instrument_is_refused_by_the_sampler(monkeypatch) -> None:
    """The sampler's own check, whatever the driver does: a reading stamped with another
    instrument's key is never returned."""
    with MeterSimulator("wt310") as sim:
        meter, recorded = _open("wt300", True, sim.resource)
        sampler = MeterSampler(meter, 1.0, "power meter", 60.0, lambda: 0.0)
        sampler.recorded = recorded
        monkeypatch.setattr(meter, "instrument_key", lambda: f"WT310 s/n {OTHER}")  # lost track
        with pytest.raises(MeterReplaced, match=f"WT310 s/n {OTHER}, not from the recorded"):
            sampler.poll(0.0)
        meter.close()


@pytest.mark.realtime("a smoke run on loopback meters through the real WT300 driver")
def test_a_run_whose_meter_is_replaced_ends_failed_naming_both(tmp_path: Path) -> None:
    method = load_method("smoke")
    sim = MeterSimulator("wt310")
    sim.start()
    other = MeterSimulator("wt310", serial=OTHER)
    config = RunConfig(method="smoke", taxonomy="online-2", lab="sim",
                       power_meter=InstrumentConfig("wt300", sim.resource, {}))
    finished: list[ev.RunFinished] = []
    phases: list[ev.PhaseFinished] = []
    swapped: list[bool] = []

    def listen(event: ev.RunEvent) -> None:
        if isinstance(event, ev.PhaseStarted) and event.phase.name == "MW1" and not swapped:
            sim.take_address(other)
            swapped.append(True)
        if isinstance(event, ev.PhaseFinished):
            phases.append(event)
        if isinstance(event, ev.RunFinished):
            finished.append(event)

    try:
        session = open_session(config, db_url=f"sqlite:///{tmp_path / 'runs.db'}",
                               listeners=[listen], method=method)
        session.run()
    finally:
        sim.stop()
    assert finished and finished[0].status is RunStatus.FAILED
    error = finished[0].error
    assert "YOKOGAWA WT310 s/n SIM000001" in error and f"WT310 s/n {OTHER}" in error, error
    assert phases[-1].status is PhaseStatus.FAILED and phases[-1].phase.name == "MW1"
    stored = load_run(session.database, session.run_id)
    assert stored.status is RunStatus.FAILED
    assert all(t < phases[-1].t for t in stored.power.t)
