"""`storwatt run --lab local-fio`: the abbreviated sequence with real fio, stored for real."""

from __future__ import annotations

import io
import json
import shutil
from contextlib import redirect_stdout
from dataclasses import dataclass
from pathlib import Path

import pytest

from app.cli.main import main
from app.core.records import RunStatus
from app.storage.opening import open_database
from tests.support.bundles import assert_verifies
from tests.support.test_methods import REAL_FIO_SMOKE
from app.storage.repository import load_run

#: what a run outside the simulated labs must declare about its SUT (cmd_run)
DECLARED = ("--vendor", "Acme", "--model", "M1", "--serial", "S1", "--capacity-gb", "0.016",
            "--supply", "1P-200-240", "--ashrae-class", "A2", "--drives", "1", "--raid", "JBOD")

pytestmark = [pytest.mark.fio,
              pytest.mark.skipif(shutil.which("fio") is None, reason="fio not installed")]


@dataclass(frozen=True)
class SmokeRun:
    db: str
    out: dict
    code: int


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory) -> SmokeRun:
    """The abbreviated sequence on real fio against a 16 MiB scratch file, with two COMs
    declared on: one run (~20 s of fio) that every test of it reads. Its method is smoke with
    one searched queue depth and 1 s of stabilisation per profile
    (tests/fixtures/methods/smoke-real-fio.toml): under six test workers on two cores fio
    took over a second to start, and a profile's 2 s window passed before its first IO."""
    folder = tmp_path_factory.mktemp("fio-smoke")
    db = f"sqlite:///{folder / 'fio.db'}"
    printed = io.StringIO()
    with redirect_stdout(printed):
        code = main(["run", "--lab", "local-fio", *DECLARED, "--target",
                     str(folder / "scratch.dat"), "--target-size", "16M",
                     "--method", REAL_FIO_SMOKE,
                     "--taxonomy", "online-2", "--com", "deduplication", "--com", "compression",
                     "--db", db, "--json", "--quiet"])
    return SmokeRun(db, json.loads(printed.getvalue()), code)


@pytest.mark.realtime("a smoke sequence on real fio, real clock")
@pytest.mark.slow  # ~40 s: the whole abbreviated sequence with real fio
def test_smoke_sequence_with_real_fio_stores_intervals_and_histograms(smoke_run,
                                                                      tmp_path: Path) -> None:
    db, out, code = smoke_run.db, smoke_run.out, smoke_run.code
    assert code == 0 and out["status"] == "COMPLETED"
    run = load_run(open_database(db), out["run_id"])
    assert run.status is RunStatus.COMPLETED
    assert run.workload_engine.startswith("fio-3")
    active = [iv for iv in run.intervals if iv.ops_unit in ("IOPS", "MiB/s")]
    # every profile moved IO in most of its intervals (the stabilisation one included)
    for name in {iv.profile for iv in active}:
        rates = [iv.ops_rate for iv in active if iv.profile == name]
        assert sum(rates) > 0 and sum(r > 0 for r in rates) * 2 >= len(rates), (name, rates)
    assert {h.profile for h in run.histograms} == {"MW1", "MW2", "RW", "RR", "SW", "SR"}
    assert all(sum(h.bins.values()) > 0 for h in run.histograms)
    jobs = "\n".join(run.job_files.values())
    assert "rate_iops=" in jobs and "ioengine=" in jobs  # MW2 ran rate-limited per direction
    ep = {m.name: m for m in run.metrics}
    assert set(ep) >= {"EP_MW1", "EP_MW2", "EP_RW", "EP_RR", "EP_SW", "EP_SR", "EP_RI"}
    assert all(m.ops_rate > 0 for n, m in ep.items() if n not in ("EP_RI", "COM_deduplication",
                                                                  "COM_compression"))
    # the COM data sets, measured in the scratch file fio wrote them to (issue 18 §5); a real
    # SUT's savings are not observable here, so the COMs stay not verified with that evidence
    for com, how in (("deduplication", "by hash"), ("compression", "by zlib")):
        (line,) = [e.message for e in run.events
                   if e.message.startswith(f"{com} data set measured on the host")]
        ratio = float(line.split(": ", 1)[1].split(":1", 1)[0])
        assert how in line and 1.5 < ratio < 3.0, line
        assert "no capacity probe" in ep[f"COM_{com}"].reason and line in ep[f"COM_{com}"].reason
    # the run's bundle: the standalone verifier re-derives its figures from real fio's slices
    assert_verifies(run, tmp_path / "fio.zip")


@pytest.mark.realtime("reads the module's real-fio smoke run, made here if this test runs alone")
def test_local_fio_run_says_not_verified_with_the_reason(smoke_run, capsys) -> None:
    """COM disclosure (issue 14 item 11): where the lab has no capacity probe a COM is NOT
    VERIFIED, with the reason, not NOT PASSED."""
    assert main(["runs", "show", smoke_run.out["run_id"], "--db", smoke_run.db, "--json"]) == 0
    coms = {c["id"]: c for c in json.loads(capsys.readouterr().out)["coms"]}
    assert coms["deduplication"]["verdict"] == "NOT VERIFIED"
    assert coms["deduplication"]["detail"].startswith("this lab has no capacity probe")


def test_local_fio_without_a_target_is_refused(tmp_path: Path, capsys) -> None:
    assert main(["run", "--lab", "local-fio", *DECLARED, "--method", "smoke",
                 "--db", f"sqlite:///{tmp_path / 'x.db'}"]) == 1
    assert "needs at least one --target" in capsys.readouterr().err


def test_a_missing_target_without_scratch_size_is_refused(tmp_path: Path, capsys) -> None:
    assert main(["run", "--lab", "local-fio", *DECLARED, "--target", str(tmp_path / "typo.dat"),
                 "--target-size", "0", "--method", "smoke",
                 "--db", f"sqlite:///{tmp_path / 'x.db'}"]) == 1
    err = capsys.readouterr().err  # refused before the run is stored or anything is made
    assert "refusing fio targets" in err and "typo.dat" in err and "silently create" in err
    assert not (tmp_path / "typo.dat").exists()
