"""One COM state everywhere (issue 28, major 6): after a technician records a COM's result and
QA approves, the run's header, the history list and its detail, the start page, compare and
``storwatt runs show`` show the recorded state — and a RAID 6 run whose report says parity RAID
NOT VERIFIED is never a plain COMPLETED. Each view formats the state the record derives
(``app.rules.com_verdict``); none counts its own."""

from __future__ import annotations

import json

import pytest

from app.cli.main import main
from app.rules.com_verdict import ComState
from app.signoff.revisions import record_com_result
from app.metrics.formatting import format_duration
from app.core.records import RunConfig, SutDescription
from app.rules.run_outcome import Tone
from app.signoff.revisions import approve
from tests.support.gui import RUN_TIMEOUT_MS
from tests.support.recorded_runs import record_run
from ui.history.compare import CompareView
from app.storage.repository import list_runs, load_run

EVIDENCE = {"thin-provisioning": "array GUI: pool P1 thin, 4 TiB provisioned on 1 TiB",
            "parity-raid": "array GUI: pool P1 is RAID 6 (8+2)"}


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """Two stored RAID 6 runs with thin provisioning (no station check for either COM)."""
    folder = tmp_path_factory.mktemp("coms")
    first = record_run(folder / "r.db", coms=("thin-provisioning",))
    second = record_run(folder / "r.db", coms=("thin-provisioning",))
    return first.database, first.run_id, second.run_id


def _shown(capsys, db_url: str, run_id: str) -> tuple[str, dict]:
    assert main(["runs", "show", run_id, "--db", db_url]) == 0
    text = capsys.readouterr().out
    assert main(["runs", "show", run_id, "--db", db_url, "--json"]) == 0
    return text, json.loads(capsys.readouterr().out)


@pytest.mark.process
def test_a_recorded_com_result_reads_the_same_in_lists_compare_and_runs_show(
        qtbot, recorded, capsys) -> None:
    database, run_id, other = recorded
    run = load_run(database, run_id)
    states = {v.com_id: v.state for v in run.coms}
    assert states["parity-raid"] is states["thin-provisioning"] is ComState.NOT_VERIFIED
    (summary,) = [r for r in list_runs(database) if r.run_id == run_id]
    # parity RAID has no station check: still NOT VERIFIED, never a plain COMPLETED
    assert summary.verdict == run.verdict
    assert summary.verdict.text == "COMPLETED — 2 COMs NOT VERIFIED"
    text, data = _shown(capsys, database.url, run_id)
    assert "\nOutcome  COMPLETED — 2 COMs NOT VERIFIED (" in text
    assert data["verdict"] == summary.verdict.text

    for com, evidence in EVIDENCE.items():
        record_com_result(database, load_run(database, run_id), com, "passed", evidence,
                          "T. Technician")
    approve(database, load_run(database, run_id), "Q. A. Engineer", "reviewed the COM evidence",
            "a simulated run: approved as a COM example")

    (summary,) = [r for r in list_runs(database) if r.run_id == run_id]
    assert summary.verdict.text == "COMPLETED" and summary.verdict.tone is Tone.GOOD
    assert load_run(database, run_id).verdict == summary.verdict
    text, data = _shown(capsys, database.url, run_id)
    assert "\nOutcome  COMPLETED (" in text
    assert "needs the array's management interface" not in text  # the check's old reason
    # only the revision history still says what the entry changed ("NOT VERIFIED → PASSED")
    assert not [line for line in text.splitlines() if "NOT VERIFIED" in line and "→" not in line]
    assert data["verdict"] == "COMPLETED"
    assert {c["id"]: c["verdict"] for c in data["coms"]}["thin-provisioning"] == "PASSED"

    compare = CompareView(database, [run_id, other])
    qtbot.addWidget(compare)
    rows = {r[0]: r for r in compare.rows()}
    assert rows["COM_thin-provisioning"][2:4] == ("PASSED", "NOT VERIFIED (no value)")
    assert rows["COM_parity-raid"][2:4] == ("PASSED", "NOT VERIFIED (no value)")
    assert "COMPLETED, " in compare.legend.text()  # the settled run's verdict, as its header
    assert "COMPLETED — 2 COMs NOT VERIFIED" in compare.legend.text()


@pytest.mark.process
def test_the_station_views_follow_a_com_result_recorded_in_the_history(qtbot, station) -> None:
    sut = SutDescription(raid="RAID 6 (8+2)", coms_declared=("thin-provisioning",),
                         coms_on_during_test=("thin-provisioning",))
    session = station.start_run(RunConfig(method="smoke", lab="sim-direct", sut=sut))
    assert session is not None
    station.clock.release()
    qtbot.waitUntil(lambda: station.run_view.home_button.isEnabled(), timeout=RUN_TIMEOUT_MS)
    header = station.run_view.state
    before = header.text()
    assert "2 COMs NOT VERIFIED" in before  # parity RAID counts, as the report says
    assert station.start_page.runs.item(0, 1).text() == before

    history = station.show_history()
    with qtbot.waitSignal(history.detail_opened, timeout=RUN_TIMEOUT_MS) as opened:
        history.load_detail(session.run_id)
    detail = opened.args[0]
    assert detail.status.text() == before
    # the run view's banner, once the run is stored, is the record's (the history's and the
    # PDF's), no longer the forecast; the duration is worded alike on every screen
    assert station.run_view.banner.text() == detail.banner.text()
    assert station.run_view.banner.text() == detail.run.compliance.banner()
    duration = format_duration(detail.run.duration_s)
    assert f"duration {duration}" in detail.subtitle.text()
    assert station.start_page.runs.item(0, 6).text() == duration
    for com, evidence in EVIDENCE.items():
        detail.record_com_result(com, "passed", evidence, "T. Technician")
    after = detail.status.text()
    assert "NOT VERIFIED" not in after and after.startswith("COMPLETED")
    model = history.model
    status = next(c for c, col in enumerate(model.columns) if col.title == "Status")
    assert model.rowCount() == 1
    assert model.data(model.index(0, status)) == after
    assert station.start_page.runs.item(0, 1).text() == after
    assert header.text() == after  # the run view's header follows the record
