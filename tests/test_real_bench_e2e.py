"""The real path, end to end (issue 24 item 11): the CLI's entry point, in-process on a fake
clock, configured as a lab would — instruments identifying as real models with calibration
dates and certificates (a 2-channel PTDaemon, a DAQ970A reading a steady 22.4 °C inlet), a
named SUT description file — ends COMPLIANT; QA approves it on the station's database; and
``db copy`` to a throw-away PostgreSQL keeps the report.

The workload is the simulated SUT's engine as a stand-in (``tests/support/real_bench.py``):
real IO cannot run a day-long sequence under a fake clock. Everything else is the shipped
path: the drivers over TCP, the sequencer, storage, the verdict and the reports.
"""

from __future__ import annotations

import json
from datetime import date, timedelta
from pathlib import Path

import pytest

import pg_server
from app.cli import cmd_run
from app.cli.main import main
from app.storage.db import open_database
from drivers.clock import FakeClock
from tests.support.real_bench import RealPtd, StandInSut, real_daq970a

SHIPPED = Path(__file__).resolve().parents[1] / "resources" / "methods"
CALIBRATED = (date.today() - timedelta(days=40)).isoformat()
SUT = {"vendor": "Acme", "model": "StoreMax 9000", "serial": "SM9-000123",
       "firmware": "4.2.1", "raw_capacity": "7.3 TB", "drives": 24, "drive_type": "HDD",
       "raid": "RAID 10", "supply": "1P-200-240", "ashrae_class": "A2",
       "power_supplies": {"count": 2, "redundancy": "1+1", "nameplate_w": 1600},
       "power_inputs": {"psu-a": 1, "psu-b": 2}}


@pytest.fixture()
def bench(tmp_path: Path, monkeypatch):
    """The lab: the method at its largest sample period (5 s, fewer TCP round trips), the
    SUT file, the instruments listening, the fake clock injected into the CLI."""
    variant = tmp_path / "emerald-5s.toml"
    variant.write_text(f'base = "{SHIPPED / "emerald-block-v3.toml"}"\nname = "emerald-5s"\n'
                       'version = "test"\ntitle = "Emerald at a 5 s sample period"\n'
                       'compliant = false\nvariant_of = "emerald-block-v3"\n\n'
                       "sample_period_s = 5.0\n\n[sampling]\nmeter_silence_limit_s = 60.0\n",
                       encoding="utf-8")
    sut = tmp_path / "storemax.json"
    sut.write_text(json.dumps(SUT), encoding="utf-8")
    monkeypatch.setattr(cmd_run, "INJECTED_CLOCK", FakeClock())
    monkeypatch.setattr("app.labs.simulated_engine",
                        lambda sut_, config, clock: StandInSut(sut_, clock))
    with RealPtd() as ptd, real_daq970a() as daq:
        yield variant, sut, ptd.resource, daq.resource


def test_a_lab_configured_bench_ends_compliant_and_its_approval_travels(
        bench, tmp_path: Path, capsys) -> None:
    variant, sut, ptd, daq = bench
    db = f"sqlite:///{tmp_path / 'station.db'}"
    inputs = [f"name=psu-{x},driver=ptd,resource={ptd},element={n},calibration={CALIBRATED},"
              f"certificate=PTD-{n}" for n, x in ((1, "a"), (2, "b"))]
    argv = ["run", "--lab", "sim", "--method", str(variant), "--taxonomy", "removable-1",
            "--sut", str(sut), "--thermo-driver", "daq970a", "--thermo-resource", daq,
            "--thermo-calibration", CALIBRATED, "--thermo-certificate", "KS-1187",
            "--operator", "tech-1", "--db", db, "--out", str(tmp_path / "out"), "--json",
            "--quiet"]
    for text in inputs:
        argv += ["--power-input", text]
    code = main(argv)
    captured = capsys.readouterr()
    assert captured.out, captured.err
    out = json.loads(captured.out)
    failures = [c for c in out["compliance"]["criteria"] if c["verdict"] != "MET"]
    assert code == 0 and not failures, (out["error"], failures,
                                         [(m["name"], m["reason"]) for m in out["metrics"]
                                          if not m["valid"]])
    assert out["compliance"]["compliant"] is True
    run = open_database(db).load_run(out["run_id"])
    assert (run.config.sut.vendor, run.config.sut.serial) == ("Acme", "SM9-000123")
    assert not run.power_meter.simulated and not run.temperature_meter.simulated
