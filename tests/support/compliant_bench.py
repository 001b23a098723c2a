"""What both end-to-end tests of the real path share (issue 24): the files a lab keeps (the
named SUT description, the method at its largest sample period) and QA's steps after a
compliant run — approve on the station's database, ``db copy`` to a throw-away PostgreSQL,
print the report from both and compare them byte for byte, read the approval back from the
copy. The CLI test (tests/test_real_bench_e2e.py) and the wizard test
(tests/test_real_bench_wizard.py) reach the run differently and meet here.
"""

from __future__ import annotations

import contextlib
import io
import json
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

from app.cli.main import main
from tests.support import pg_server

SHIPPED = Path(__file__).resolve().parents[2] / "resources" / "methods"
#: every instrument's calibration date: recent, in the past (a later one is refused at entry)
CALIBRATED = (date.today() - timedelta(days=40)).isoformat()
#: the SUT a lab would name: its file maps each measured input to the supply it feeds
SUT = {"vendor": "Acme", "model": "StoreMax 9000", "serial": "SM9-000123",
       "firmware": "4.2.1", "raw_capacity": "7.3 TB", "drives": 24, "drive_type": "HDD",
       "raid": "RAID 10", "supply": "1P-200-240", "ashrae_class": "A2",
       "power_supplies": {"count": 2, "redundancy": "1+1", "nameplate_w": 1600},
       "power_inputs": {"psu-a": 1, "psu-b": 2}}
#: the classification both tests declare (Removable Media runs SW and SR only: the cheapest
#: compliant sequence; level 1: no robotics) and the maximum configuration answered with it —
#: the SUT's own drives, never fewer (a 1 here contradicted its 24 drives, issue 28)
TAXONOMY = "removable-1"
MAX_DRIVES = SUT["drives"]


@dataclass(frozen=True)
class LabFiles:
    method: Path  # the shipped Emerald method at a 5 s sample period (its largest)
    sut: Path  # the named SUT description file


def lab_files(folder: Path) -> LabFiles:
    """Write the lab's method variant and SUT file into ``folder``. The variant keeps every
    rule of the shipped method and only lengthens the sample period to the method's largest,
    5 s (a fifth of the samples to simulate; the grid-timing fix must hold there)."""
    method = folder / "emerald-5s.toml"
    method.write_text(f'base = "{SHIPPED / "emerald-block-v3.toml"}"\nname = "emerald-5s"\n'
                      'version = "test"\ntitle = "Emerald at a 5 s sample period"\n'
                      'compliant = false\nvariant_of = "emerald-block-v3"\n\n'
                      "sample_period_s = 5.0\n\n[sampling]\nmeter_silence_limit_s = 60.0\n",
                      encoding="utf-8")
    sut = folder / "storemax.json"
    sut.write_text(json.dumps(SUT), encoding="utf-8")
    return LabFiles(method, sut)


def unmet_criteria(compliance: dict) -> list[tuple[str, str, str]]:
    """(criterion, verdict, evidence) of every verdict line that is not MET: each names the
    rule a reverted fix would break (calibration, frequency, resolution, timing …)."""
    return [(c["name"], c["verdict"], c["evidence"]) for c in compliance["criteria"]
            if c["verdict"] != "MET"]


def _cli(argv: list[str]) -> tuple[int, str]:
    with contextlib.redirect_stdout(io.StringIO()) as out, \
            contextlib.redirect_stderr(io.StringIO()) as err:
        code = main(argv)
    return code, out.getvalue() + err.getvalue()


def approve_copy_and_compare(db: str, run_id: str, folder: Path) -> dict:
    """QA approves ``run_id`` on the station's database ``db``, copies it to a throw-away
    PostgreSQL, prints the PDF and xlsx report from each side and asserts they are the same
    bytes; returns ``runs show --json`` of the copy (its ``sign_off`` line)."""
    code, said = _cli(["runs", "approve", run_id, "--by", "qa-anna", "--statement",
                       "figures checked against the raw samples", "--confirm",
                       "the hash and the report must survive the copy whatever the verdict",
                       "--db", db])
    assert code == 0, said
    with pg_server.postgres_server() as pg_url:
        code, said = _cli(["db", "copy", "--from", db, "--to", pg_url, "--run", run_id])
        assert code == 0, said
        for name, url in (("station", db), ("lab", pg_url)):
            code, said = _cli(["report", run_id, "--pdf", str(folder / f"{name}.pdf"),
                               "--xlsx", str(folder / f"{name}.xlsx"), "--db", url])
            assert code == 0, said
        with contextlib.redirect_stdout(io.StringIO()) as out:
            assert main(["runs", "show", run_id, "--db", pg_url, "--json"]) == 0
    assert (folder / "station.pdf").read_bytes() == (folder / "lab.pdf").read_bytes()
    assert (folder / "station.xlsx").read_bytes() == (folder / "lab.xlsx").read_bytes()
    return json.loads(out.getvalue())
