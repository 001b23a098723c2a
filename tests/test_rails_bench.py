"""Checking a current-sensor board on the bench (issue 42): ``storwatt rails read`` scans a
loopback DAQ970A simulator through the real driver and prints each device's watts as the
rail model computes them; the simulator keeps the instrument's traps (no scan list, overload);
the device file is refused by file and field."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from app.cli.main import main
from app.metrics.rail_power import device_power
from app.station.device_file import DeviceFileError, devices_from_json, load_device_file
from drivers.meters.rail_scan import DaqRailScanner
from drivers.simulators.rails import RailScannerSimulator
from tests.support.time_budget import budget_s

BOARD = {"daq": {"pct_reading": 0.004, "pct_range": 0.0007, "range_v": 10},
         "devices": [
             {"slot": "bay-1", "model": "HDD-X", "rails": [
                 {"name": "12V", "nominal_v": 12, "tolerance_pct": 5, "current_channel": 101,
                  "sensor": {"kind": "hall", "offset_v": 2.5, "volts_per_amp": 0.1,
                             "accuracy_a": 0.012}},
                 {"name": "5V", "nominal_v": 5, "tolerance_pct": 5, "current_channel": 102,
                  "voltage_channel": 103,
                  "sensor": {"kind": "hall", "offset_v": 2.5, "volts_per_amp": 0.1,
                             "accuracy_a": 0.012}}]},
             {"slot": "bay-2", "model": "SSD-Y", "rails": [
                 {"name": "12V", "nominal_v": 12, "tolerance_pct": 5, "current_channel": 104,
                  "sensor": {"kind": "shunt", "ohms": 0.01, "tolerance_pct": 0.5}}]}]}


@pytest.fixture()
def board(tmp_path: Path) -> Path:
    path = tmp_path / "board.json"
    path.write_text(json.dumps(BOARD))
    return path


def test_rails_read_prints_each_devices_watts_from_the_simulated_daq(board: Path,
                                                                     capsys) -> None:
    currents = {101: 2.5 + 0.1 * 0.6, 102: 2.5 + 0.1 * 0.4, 103: 5.05, 104: 0.01 * 0.25}
    with RailScannerSimulator(lambda channel: currents[channel]) as sim:
        assert main(["rails", "read", "--resource", sim.resource, "--devices", str(board),
                     "--json"]) == 0
    scan = json.loads(capsys.readouterr().out)["scans"][0]
    assert scan["devices"]["bay-1"]["watts"] == pytest.approx(12 * 0.6 + 5.05 * 0.4)
    assert scan["devices"]["bay-2"]["watts"] == pytest.approx(12 * 0.25)
    devices, daq = load_device_file(board)
    expected = device_power(devices[0], {int(c): v for c, v in scan["channels"].items()}, daq)
    assert scan["devices"]["bay-1"]["uncertainty_w"] == pytest.approx(expected.uncertainty_w)


def test_an_overloaded_channel_makes_its_device_no_number(board: Path, capsys) -> None:
    with RailScannerSimulator(lambda channel: 15.0 if channel == 104 else 2.55) as sim:
        assert main(["rails", "read", "--resource", sim.resource, "--devices", str(board),
                     "--json"]) == 0
    scan = json.loads(capsys.readouterr().out)["scans"][0]
    assert scan["devices"]["bay-2"]["watts"] is None and scan["flags"]["104"] == ["overrange"]
    assert scan["devices"]["bay-1"]["watts"] is not None


def test_a_read_before_the_scan_list_gets_no_reply_and_an_error_queued() -> None:
    with RailScannerSimulator() as sim, socket.create_connection(
            ("127.0.0.1", sim.port), timeout=budget_s(5)) as conn:
        conn.sendall(b"READ?\nSYST:ERR?\n")
        reply = conn.makefile("r").readline()
    assert reply.startswith('-221,"Settings conflict')  # READ? itself answered nothing


def test_the_driver_reads_the_simulator_as_configured() -> None:
    with RailScannerSimulator(lambda channel: channel / 100) as sim:
        daq = DaqRailScanner(sim.resource, channels="101,102,201")
        daq.open()
        try:
            scan = daq.scan(0.0)
        finally:
            daq.close()
    assert scan.volts == (1.01, 1.02, 2.01)
    assert b"ROUT:SCAN (@101,102,201)\n" in [e.received for e in sim.transcript]


@pytest.mark.parametrize(("change", "message"), [
    (lambda b: b["devices"][0]["rails"][0]["sensor"].update(volts_per_amp=0),
     "volts_per_amp must be a positive number"),
    (lambda b: b["devices"][0]["rails"][0].pop("tolerance_pct"),
     r"devices.0.rails.0.tolerance_pct: Field required"),
    (lambda b: b["devices"][1]["rails"][0].update(current_channel=101),
     "channel 101 is given to"),
    (lambda b: b["devices"][0]["rails"][0]["sensor"].update(kind="magic"),
     "devices.0.rails.0.sensor"),
    (lambda b: b.update(extra=1), "extra: Extra inputs are not permitted"),
])
def test_a_wrong_device_file_is_refused_by_field(change, message: str, tmp_path: Path,
                                                capsys) -> None:
    data = json.loads(json.dumps(BOARD))
    change(data)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    with pytest.raises(DeviceFileError, match=message):
        load_device_file(path)
    assert main(["rails", "read", "--resource", "TCPIP::127.0.0.1::1::SOCKET",
                 "--devices", str(path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("storwatt rails read: device file") and "Traceback" not in err


@pytest.mark.parametrize("special", ["/dev/zero", "folder"])
def test_a_device_file_that_is_no_file_is_refused(special: str, tmp_path: Path) -> None:
    path = Path(special) if special.startswith("/") else tmp_path
    with pytest.raises(DeviceFileError, match="not a regular file"):
        load_device_file(path)


def test_json_that_is_no_json_is_refused() -> None:
    with pytest.raises(DeviceFileError, match="the device file"):
        devices_from_json(b"\xff\xfe not json")


def test_rails_read_checks_each_device_against_its_datasheet(board: Path, tmp_path: Path,
                                                             capsys) -> None:
    """The seed's point: a vendor's power figure checked under load. bay-1 at 0.6 A on 12 V
    and 0.4 A on 5 V draws 9.2 W against a datasheet's 8 W; bay-2 states none."""
    data = json.loads(board.read_text())
    data["devices"][0]["datasheet_active_w"] = 8.0
    path = tmp_path / "with-datasheet.json"
    path.write_text(json.dumps(data))
    currents = {101: 2.56, 102: 2.54, 103: 5.0, 104: 0.0025}
    with RailScannerSimulator(lambda channel: currents[channel]) as sim:
        assert main(["rails", "read", "--resource", sim.resource, "--devices", str(path),
                     "--state", "active", "--count", "2", "--interval", "0.5"]) == 0
    out = capsys.readouterr().out
    assert "datasheet: bay-1 active: 9.200 W ± " in out
    assert "against the datasheet's 8 W: exceeds it by 15.0 %" in out
    assert "datasheet: bay-2 active: 3.000 W" in out and "no datasheet figure" in out


@pytest.mark.parametrize(("measured", "u", "words"), [
    (8.3, 0.5, "within the measurement's uncertainty"), (7.0, 0.5, "below it"),
    (9.0, 0.5, "exceeds it by 12.5 %")])
def test_a_datasheet_is_exceeded_only_beyond_the_uncertainty(measured: float, u: float,
                                                             words: str) -> None:
    from app.metrics.rail_power import RailPower, datasheet_check
    devices, _ = devices_from_json(json.dumps(BOARD))
    device = devices[0].__class__(**{**devices[0].__dict__, "datasheet_idle_w": 8.0})
    check = datasheet_check(device, "idle", [RailPower(measured, u)])
    assert check.text().endswith(words)
    assert (check.exceeds_pct is not None) == words.startswith("exceeds")
