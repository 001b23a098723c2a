"""The instrument CLI as a technician uses it: a simulator and a reader, both subprocesses.

They run ``python -m app.cli.cmd_instruments`` — the same parsers ``storwatt`` registers —
so a half-finished command group elsewhere cannot make these tests fail or pass.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.support.time_budget import budget_s

ROOT = Path(__file__).resolve().parent.parent
CLI = [sys.executable, "-m", "app.cli.cmd_instruments"]


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=budget_s(60))


@pytest.fixture
def sim_process(request) -> Iterator[str]:
    """``storwatt sim meter`` in the foreground; yields the resource it prints."""
    proc = subprocess.Popen([*CLI, "sim", "meter", "--port", "0", *request.param], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        resource = proc.stdout.readline().strip()  # type: ignore[union-attr]  # PIPE
        assert resource.startswith("TCPIP::127.0.0.1::"), proc.stderr.read()  # type: ignore[union-attr]  # PIPE
        yield resource
    finally:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=budget_s(10)) == 0  # Ctrl-C is a clean stop


@pytest.mark.process
@pytest.mark.parametrize("sim_process", [["--model", "wt310", "--watts", "123.4"]],
                         indirect=True)
def test_meter_read_five_readings_as_json(sim_process: str) -> None:
    result = run("meter", "read", "--driver", "wt300", "--resource", sim_process, "--count",
                 "5", "--interval", "0.1", "--json", "--option", "range_v=300",
                 "--option", "range_a=2")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["identity"]["model"] == "WT310"
    assert report["ranges"] == {"mode": "fixed", "volts": 300.0, "amps": 2.0}
    readings = report["readings"]
    assert len(readings) == 5
    assert [r["watts"] for r in readings] == [123.4] * 5
    assert all(r["flags"] == [] and 0 < r["uncertainty_pct"] < 1 for r in readings)
    times = [r["t"] for r in readings]
    assert all(0.05 < b - a < 0.2 for a, b in zip(times, times[1:]))


@pytest.mark.process
@pytest.mark.parametrize("sim_process", [["--model", "wt310", "--compat-mode"]],
                         indirect=True)
def test_wt200_compat_mode_is_one_actionable_line(sim_process: str) -> None:
    result = run("meter", "read", "--driver", "wt300", "--resource", sim_process)
    assert result.returncode == 1
    assert "WT200 compatibility mode" in result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1


@pytest.mark.process
@pytest.mark.parametrize("sim_process", [["--model", "chroma66202"]], indirect=True)
def test_identity_mismatch_exit_1(sim_process: str) -> None:
    result = run("meter", "read", "--driver", "pw3335", "--resource", sim_process)
    assert result.returncode == 1 and "Chroma ATE,66202" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.process
@pytest.mark.parametrize("sim_process", [["--model", "daq970a", "--celsius", "24.3"]],
                         indirect=True)
def test_thermo_read(sim_process: str) -> None:
    result = run("thermo", "read", "--driver", "daq970a", "--resource", sim_process,
                 "--count", "2", "--interval", "0", "--option", "channel=101")
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("24.3 °C") == 2 and "DAQ970A" in result.stdout


@pytest.mark.process
@pytest.mark.parametrize("args,message", [
    (["meter", "read", "--driver", "wt300", "--resource", "COM1"], "expected one of"),
    (["meter", "read", "--driver", "nosuch", "--resource", "GPIB0::1::INSTR"],
     "unknown power driver 'nosuch'"),
    (["meter", "read", "--driver", "wt300", "--resource", "GPIB0::1::INSTR", "--option",
      "range_v=310", "--option", "range_a=2"], "310 V is not a range"),
    (["meter", "read", "--driver", "wt300", "--resource", "GPIB0::1::INSTR", "--option",
      "colour=red"], "has no option colour"),
    (["thermo", "read", "--driver", "daq970a", "--resource", "GPIB0::1::INSTR", "--option",
      "channel=999"], "channel 999 does not exist"),
])
def test_bad_input_is_one_line_exit_1(args: list[str], message: str) -> None:
    result = run(*args)
    assert result.returncode == 1
    assert message in result.stderr and "Traceback" not in result.stderr


@pytest.mark.process
def test_drivers_and_empty_instrument_list() -> None:
    drivers = run("meter", "drivers")
    assert drivers.returncode == 0
    for name in ("wt300", "wt210", "chroma66200", "pw3335", "ptd", "daq970a", "watchport",
                 "ptd-temp"):
        assert f"\n{name} " in drivers.stdout
    listing = run("instruments", "list")
    assert listing.returncode == 0
    assert "no VISA instruments found" in listing.stdout or "::INSTR" in listing.stdout


@pytest.mark.process
def test_sim_port_in_use_is_a_clear_error() -> None:
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        result = run("sim", "meter", "--model", "wt310", "--port", str(busy.getsockname()[1]))
    assert result.returncode == 1 and "cannot start the wt310 simulator" in result.stderr


def test_storwatt_entry_registers_the_groups() -> None:
    """``app.cli.main`` lists this module's ``register`` among the command groups."""
    from app.cli import cmd_instruments
    from app.cli.main import COMMAND_GROUPS

    assert cmd_instruments.register in COMMAND_GROUPS
