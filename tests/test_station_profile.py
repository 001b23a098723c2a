"""The station profile keeps each real instrument's calibration (issue 24 item 1): a started
run remembers what it declared per driver and address, the next run that names the same
instrument gets it filled in and is told so; a typed date wins; a stored date after today
(a hand-edited file) is refused by the same rule as a typed one."""

from __future__ import annotations

import json
from datetime import date, timedelta
from pathlib import Path

import pytest

from app.core.records import InstrumentConfig, PowerInput, RunConfig
from app.station.instrument_profile import StationProfile, StationProfileError

DAQ = InstrumentConfig("daq970a", "TCPIP::10.0.0.9::5025::SOCKET", calibration_date="2026-02-01",
                       certificate="KS-9")
INPUT = PowerInput("psu-a", "ptd", "10.0.0.5:8888", 1, calibration_date="2026-01-05",
                   certificate="PTD-1")


def test_a_started_runs_calibration_is_offered_to_the_next(tmp_path: Path) -> None:
    profile = StationProfile(tmp_path / "station.json")
    profile.remember(RunConfig(temperature_meter=DAQ, power_inputs=(INPUT,)))
    bare = RunConfig(temperature_meter=InstrumentConfig(DAQ.driver, DAQ.resource),
                     power_inputs=(PowerInput("psu-a", "ptd", "10.0.0.5:8888", 1),))
    filled, notes = profile.fill(bare)
    assert (filled.temperature_meter.calibration_date, filled.temperature_meter.certificate) \
        == ("2026-02-01", "KS-9")
    assert filled.power_inputs[0].calibration_date == "2026-01-05"
    assert notes[0].endswith("calibrated 2026-02-01 (certificate KS-9) — from the station "
                             "profile")
    typed = RunConfig(temperature_meter=InstrumentConfig(DAQ.driver, DAQ.resource,
                                                         calibration_date="2026-03-03"))
    assert profile.fill(typed)[0].temperature_meter.calibration_date == "2026-03-03"
    assert profile.fill(RunConfig())[1] == []  # the simulated lab's meters are no instruments


def test_a_future_date_in_the_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "station.json"
    later = (date.today() + timedelta(days=3)).isoformat()
    path.write_text(json.dumps({"daq970a x": {"calibration_date": later}}), encoding="utf-8")
    with pytest.raises(StationProfileError, match="is after today"):
        StationProfile(path).load()


def test_open_session_remembers_and_the_cli_fills(tmp_path: Path, capsys) -> None:
    from app.cli.cmd_run import _with_station_calibration
    from app.station.session import _remember_instruments

    _remember_instruments(RunConfig(temperature_meter=DAQ))  # the private data folder's file
    config = _with_station_calibration(
        RunConfig(temperature_meter=InstrumentConfig(DAQ.driver, DAQ.resource)), None)
    assert config.temperature_meter.calibration_date == "2026-02-01"
    assert "from the station profile" in capsys.readouterr().out


def test_the_wizard_fills_a_known_instruments_date(qtbot) -> None:
    from app.station.session import _remember_instruments
    from ui.wizard.instruments_page import InstrumentsPage

    _remember_instruments(RunConfig(temperature_meter=DAQ))
    page = InstrumentsPage()
    qtbot.addWidget(page)
    page.thermo_driver.addItem("daq970a")
    page.thermo_driver.setCurrentText("daq970a")
    page.thermo_resource.setText(DAQ.resource)
    page.fill_known_calibration()
    assert (page.thermo_calibration.text(), page.thermo_certificate.text()) == \
        ("2026-02-01", "KS-9")
