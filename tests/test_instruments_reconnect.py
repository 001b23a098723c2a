"""Two VISA instruments on one station: losing or reconnecting one never ends the other's
session, and a dropped meter reply is a logged gap in a run that still completes."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from app.core.records import InstrumentConfig, RunConfig, RunStatus
from app.sequencer import events as ev
from app.station.session import open_session
from app.storage.repository import load_run
from drivers.clock import FakeClock
from drivers.interfaces import InstrumentError, InstrumentTimeout
from drivers.meters.transport import VisaTransport
from drivers.simulators import MeterSimulator, ThermometerSimulator

IDN = "*IDN?"
#: short enough that a dropped reply (pyvisa-py sees a timeout) costs little test time
FAST = {"timeout_s": 0.6, "reconnect_delay_s": 0.02}


def _ask(transport: VisaTransport, line: str = IDN) -> str:
    transport.write(line)
    return transport.read()


def test_closing_one_visa_transport_leaves_the_other_usable() -> None:
    # the meter updates every 1 ms (a WT300 every 100 ms or more): the driver waits for a
    # fresh reading in real time, and the smoke run's samples are not what this test is about
    with MeterSimulator("wt310", update_s=0.001) as power, \
            ThermometerSimulator("daq970a") as thermo:
        meter = VisaTransport(power.resource, timeout_s=FAST["timeout_s"])
        thermometer = VisaTransport(thermo.resource, timeout_s=FAST["timeout_s"])
        assert "WT310" in _ask(meter) and "DAQ970A" in _ask(thermometer)
        meter.close()  # what every reconnect of the power meter does first
        assert "DAQ970A" in _ask(thermometer)
        again = VisaTransport(power.resource, timeout_s=FAST["timeout_s"])  # the reconnect
        assert "WT310" in _ask(again) and "DAQ970A" in _ask(thermometer)
        again.close()
        thermometer.close()


def test_every_pyvisa_failure_is_an_instrument_error() -> None:
    with ThermometerSimulator("daq970a") as thermo:
        thermo.faults.inject("silent")
        silent = VisaTransport(thermo.resource, timeout_s=FAST["timeout_s"])
        with pytest.raises(InstrumentTimeout, match=thermo.resource):
            _ask(silent)
        silent.close()

        closed = VisaTransport(thermo.resource, timeout_s=FAST["timeout_s"])
        closed._res.close()  # a session ended under the driver: pyvisa's InvalidSession
        with pytest.raises(InstrumentError, match="session was closed"):
            _ask(closed)

        broken = VisaTransport(thermo.resource, timeout_s=FAST["timeout_s"])

        def bare(*_: object) -> str:  # pyvisa-py lets internal errors through unwrapped
            raise struct.error("unpack requires a buffer of 4 bytes")

        # the transport receives raw chunks through the VISA library's read
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(broken._res.visalib, "read", bare)
            with pytest.raises(InstrumentError, match=r"connection lost \(error: unpack"):
                _ask(broken)
        broken.close()


def test_a_dropped_power_reply_with_a_visa_thermometer_is_a_logged_gap(tmp_path: Path) -> None:
    # the meter updates every 1 ms (a WT300 every 100 ms or more): the driver waits for a
    # fresh reading in real time, and the smoke run's samples are not what this test is about
    with MeterSimulator("wt310", update_s=0.001) as power, \
            ThermometerSimulator("daq970a") as thermo:
        config = RunConfig(
            method="smoke", taxonomy="online-2", lab="sim",
            power_meter=InstrumentConfig("wt300", power.resource, dict(FAST)),
            temperature_meter=InstrumentConfig("daq970a", thermo.resource, dict(FAST)))
        seen: list[ev.RunEvent] = []

        def drop_in_mw2(event: ev.RunEvent) -> None:
            seen.append(event)
            if isinstance(event, ev.PhaseStarted) and event.phase.name == "MW2":
                power.faults.inject("drop")

        session = open_session(config, db_url=f"sqlite:///{tmp_path / 'runs.db'}",
                               listeners=[drop_in_mw2], clock=FakeClock())
        assert session.run() is RunStatus.COMPLETED
        stored = load_run(session.database, session.run_id)

    assert stored.status is RunStatus.COMPLETED and not stored.error
    mw2 = next(p.info.index for p in stored.phases if p.info.name == "MW2")
    gaps = [e for e in stored.events if e.level == "WARNING" and "sample gap" in e.message]
    assert any(e.phase_index == mw2 and "power meter" in e.message
               and power.resource in e.message for e in gaps), stored.events
    assert any(e.phase_index == mw2 and "power meter: reconnected" in e.message
               for e in stored.events), stored.events
    assert not any("thermometer" in e.message for e in gaps), gaps  # its session survived
    after = [e for e in seen if isinstance(e, ev.TemperatureSamples) and e.phase_index > mw2]
    assert after, "the thermometer kept sampling after the power meter reconnected"
