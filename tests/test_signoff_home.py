"""Sign-off has one visible home (issue 39 item 5): with a lab database named, a run's audit
entries are added there, the README's commands do that typed in order, and the station's own
copy says where its sign-off is instead of "not approved" for ever."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import openpyxl
import pytest

from app.cli.main import main
from app.storage.opening import open_database
from tests.support.documents import pdf_text
from tests.support.recorded_runs import record_run

README = Path(__file__).resolve().parent.parent / "README.md"


def readme_commands() -> list[list[str]]:
    """Every ``storwatt …`` command of the README's code blocks, continuation lines joined,
    comments dropped, as argv lists (without the program name)."""
    text = README.read_text(encoding="utf-8")
    blocks = re.findall(r"```(?:bash|sh|console)?\n(.*?)```", text, flags=re.S)
    commands = []
    for block in blocks:
        for line in re.sub(r"\\\n\s*", " ", block).splitlines():
            if line.startswith("storwatt "):
                commands.append(shlex.split(line, comments=True)[1:])
    return commands


def _readme(first_words: tuple[str, ...], has: str = "") -> list[str]:
    found = [c for c in readme_commands() if tuple(c[:len(first_words)]) == first_words
             and (not has or has in c)]
    assert found, f"the README no longer shows storwatt {' '.join(first_words)}"
    return found[0]


@pytest.fixture()
def station_and_lab(tmp_path, monkeypatch):
    recorded = record_run(tmp_path / "station.db")
    monkeypatch.setenv("STORWATT_DB", recorded.database.url)  # the station's own file
    lab = f"sqlite:///{tmp_path / 'lab.db'}"
    open_database(lab, recover_journals=False, interrupt_orphans=False).close()  # its owner
    return recorded, lab


@pytest.mark.process
def test_the_readme_block_works_typed_in_order_and_each_copy_says_where_it_is_signed(
        station_and_lab, tmp_path, capsys) -> None:
    recorded, lab = station_and_lab
    run_id = recorded.run_id
    lab_db = _readme(("station", "lab-db"))
    assert main([*lab_db[:2], lab]) == 0  # the README's line, with this test's lab database
    assert main(_readme(("db", "sync"))) == 0
    approve = _readme(("runs", "approve"), has="--confirm")  # the run is simulated
    capsys.readouterr()
    assert main([a.replace("RUN_ID", run_id) for a in approve]) == 0  # no --db: the lab's
    said = capsys.readouterr().out
    assert "approved by Q. Auditor" in said and f"added on the lab database {lab}" in said
    # the lab copy holds the approval
    assert main(["runs", "show", run_id, "--db", lab, "--json"]) == 0
    on_lab = json.loads(capsys.readouterr().out)
    assert on_lab["sign_off"] == "Revision 1 — approved by Q. Auditor"
    assert on_lab["sign_off_on"] is None
    # the station's copy says where its sign-off is
    home = (f"sign-off: on the lab database {lab}; this copy shows revision 1 as measured")
    assert main(["runs", "show", run_id]) == 0
    shown = capsys.readouterr().out
    assert f"Sign-off        Revision 1 — not approved by QA; {home}" in shown
    assert main(["runs", "show", run_id, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["sign_off_on"] == lab
    pdf, xlsx = tmp_path / "r.pdf", tmp_path / "r.xlsx"
    assert main(["report", run_id, "--pdf", str(pdf), "--xlsx", str(xlsx)]) == 0
    assert home in " ".join(pdf_text(pdf).split())
    book = openpyxl.load_workbook(xlsx, read_only=True)
    assert any(home in str(cell) for row in book["Test Data Report"].iter_rows(values_only=True)
               for cell in row)


def test_an_entry_for_a_run_the_lab_lacks_says_how_it_gets_there(station_and_lab,
                                                                 capsys) -> None:
    recorded, lab = station_and_lab
    assert main(["station", "lab-db", lab]) == 0
    capsys.readouterr()
    assert main(["runs", "approve", recorded.run_id, "--by", "Q", "--statement", "s",
                 "--confirm", "sim"]) == 1
    err = capsys.readouterr().err
    assert "in the lab database" in err and "storwatt db sync" in err
    assert len(err.strip().splitlines()) == 1


def test_without_a_lab_database_nothing_changes(station_and_lab, capsys) -> None:
    recorded, _lab = station_and_lab
    assert main(["runs", "show", recorded.run_id, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["sign_off"] == "Revision 1 — not approved by QA" and data["sign_off_on"] is None
