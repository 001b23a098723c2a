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

import contextlib
import io
import json

import pytest

from tests.support import pg_server
from app.cli import cmd_run
from app.cli.main import main
from app.storage.opening import open_database
from drivers.clock import FakeClock
from tests.support.compliant_bench import (CALIBRATED, MAX_DRIVES, TAXONOMY,
                                           approve_copy_and_compare, lab_files, unmet_criteria)
from tests.support.real_bench import RealPtd, RealWt310e, StandInSut, real_daq970a
from app.storage.repository import load_run


def _meter_options(meter: str, ptd: RealPtd, wt: RealWt310e) -> list[str]:
    """A 2-channel PTDaemon (one input per channel) or one WT310E, each with its calibration."""
    if meter == "wt310e":
        return ["--meter-driver", "wt300", "--meter-resource", wt.resource,
                "--meter-calibration", CALIBRATED, "--meter-certificate", "YK-2231"]
    options = []
    for n, x in ((1, "a"), (2, "b")):
        options += ["--power-input", f"name=psu-{x},driver=ptd,resource={ptd.resource},"
                    f"element={n},calibration={CALIBRATED},certificate=PTD-{n}"]
    return options


@pytest.fixture(scope="module", params=["ptdaemon-2ch", "wt310e"])
def compliant_run(request, tmp_path_factory):
    """One lab-configured run (about 5 s of CPU: ~3 h of method time at a 5 s period over
    TCP): the method at its largest sample period, the SUT file, the instruments listening,
    the fake clock injected into the CLI. Yields (station database URL, the run's JSON,
    folder)."""
    tmp_path = tmp_path_factory.mktemp("bench")
    files = lab_files(tmp_path)
    db = f"sqlite:///{tmp_path / 'station.db'}"
    clock = FakeClock()
    with pytest.MonkeyPatch.context() as patch, RealPtd() as ptd, RealWt310e(clock=clock) as wt, \
            real_daq970a() as daq:
        # module scope runs before the per-test private data folder (conftest): its own here
        patch.setenv("STORWATT_DATA_DIR", str(tmp_path / "data"))
        patch.setattr(cmd_run, "INJECTED_CLOCK", clock)
        patch.setattr("app.labs.builder.simulated_engine",
                      lambda sut_, config, clock: StandInSut(sut_, clock))
        argv = ["run", "--lab", "sim", "--method", str(files.method), "--taxonomy", TAXONOMY,
                "--max-drives", str(MAX_DRIVES), "--sut", str(files.sut), "--thermo-driver",
                "daq970a", "--thermo-resource", daq.resource, "--thermo-calibration", CALIBRATED,
                "--thermo-certificate",
                "KS-1187", "--operator", "tech-1", "--db", db, "--out", str(tmp_path / "out"),
                "--json", "--quiet"]
        argv += _meter_options(request.param, ptd, wt)
        with contextlib.redirect_stdout(io.StringIO()) as out, \
                contextlib.redirect_stderr(io.StringIO()) as err:
            code = main(argv)
    assert out.getvalue(), err.getvalue()
    result = json.loads(out.getvalue())
    assert code == 0, (result["error"], err.getvalue())
    yield db, result, tmp_path, request.param


@pytest.mark.slow  # ~6 s CPU per meter set-up: 12 h conditioning and 2 × 40 min at 5 s, over TCP
def test_a_lab_configured_bench_ends_compliant(compliant_run) -> None:
    db, out, _, meter = compliant_run
    failures = unmet_criteria(out["compliance"])
    assert not failures, (failures, [(m["name"], m["reason"]) for m in out["metrics"]
                                     if not m["valid"]])
    assert out["compliance"]["compliant"] is True
    run = load_run(open_database(db), out["run_id"])
    assert (run.config.sut.vendor, run.config.sut.serial) == ("Acme", "SM9-000123")
    assert not run.power_meter.simulated and not run.temperature_meter.simulated
    assert ("PTDaemon" if meter.startswith("ptd") else "WT310E") in run.power_meter.model


@pytest.mark.slow  # a PostgreSQL server started and stopped, two reports rendered per side
@pytest.mark.skipif(bool(pg_server.available()), reason=pg_server.available())
def test_the_approved_run_copied_to_postgresql_prints_the_same_report(compliant_run) -> None:
    db, out, folder, meter = compliant_run
    if meter != "ptdaemon-2ch":
        pytest.skip("one meter set-up is enough for the copy (a PostgreSQL server each)")
    shown = approve_copy_and_compare(db, out["run_id"], folder)
    assert shown["sign_off"].endswith("approved by qa-anna"), shown["sign_off"]
