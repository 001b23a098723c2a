"""The report's power-input part (issue 16, items 1 and 4): each input's meter and accuracy
formula, the combination rule named, a chart of each input beside the total in the PDF, and
the per-input readings with a chart in the xlsx."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import openpyxl
import pytest

from app.core.records import PowerInput, RunConfig
from app.reports.export import export_run
from app.reports.power_inputs import COMBINATION_NOTE, input_rows
from app.station.session import open_session
from drivers.clock import FakeClock
from app.storage.repository import load_run


@pytest.fixture(scope="module")
def reports(tmp_path_factory) -> tuple[Path, Path]:
    out = tmp_path_factory.mktemp("inputs")
    inputs = (PowerInput("psu-a", "sim"), PowerInput("psu-b", "sim"))
    session = open_session(RunConfig(method="smoke", lab="sim-direct", power_inputs=inputs),
                           db_url=f"sqlite:///{out}/runs.db", clock=FakeClock())
    session.sequencer.run()
    session.writer.close()
    paths = export_run(session.database, session.sequencer.run_id, out)
    run = load_run(session.database, session.sequencer.run_id)
    assert [row[0] for row in input_rows(run)] == ["psu-a", "psu-b"]
    return paths["pdf"], paths["xlsx"]


@pytest.mark.process
@pytest.mark.skipif(shutil.which("pdftotext") is None, reason="poppler not installed")
def test_the_pdf_names_each_inputs_meter_formula_and_the_combination(reports) -> None:
    text = subprocess.run(["pdftotext", "-layout", str(reports[0]), "-"], check=True,
                          capture_output=True, text=True).stdout
    assert "Power inputs" in text and "Power per input and the SUT's total" in text
    assert "±(0.1 % of reading + 0.05 % of range)" in text  # the simulated meters' formula
    flat = " ".join(text.split())
    assert "uncertainty of the total is the sum of the inputs' absolute uncertainties" in flat
    assert COMBINATION_NOTE.startswith("The SUT's power is the sum of its inputs")


def test_the_xlsx_has_the_inputs_their_readings_and_a_chart(reports) -> None:
    book = openpyxl.load_workbook(reports[1])
    assert [c.value for c in book["Input power"][1]] == [
        "t_s", "total_w", "psu-a_w", "psu-a_uncertainty_pct", "psu-a_flags", "psu-b_w",
        "psu-b_uncertainty_pct", "psu-b_flags"]
    row = [c.value for c in book["Input power"][2]]
    assert row[1] == pytest.approx(row[2] + row[5], rel=1e-12)
    sheet = book["Power inputs"]
    assert [c.value for c in sheet[1]][:4] == ["Input", "Meter", "Element / wiring",
                                               "Accuracy formula"]
    assert len(sheet._charts) == 1


def test_the_cover_maps_only_inputs_the_run_measured(tmp_path: Path) -> None:
    """Issue 41, seen 7: the cover printed a SUT file's input → supply mapping for inputs the
    run never measured (one meter on the total measures no named input)."""
    from dataclasses import replace

    from app.core.records import PowerSupplies
    from tests.support.documents import pdf_pages

    sut = replace(RunConfig().sut, power_supplies=PowerSupplies(2, "1+1", 1600.0),
                  input_supplies=(("psu-a", 1), ("psu-b", 2)))
    inputs = (PowerInput("psu-a", "sim"),)  # psu-b mapped, never measured
    session = open_session(RunConfig(method="smoke", lab="sim-direct", power_inputs=inputs,
                                     sut=sut), db_url=f"sqlite:///{tmp_path}/runs.db",
                           clock=FakeClock())
    session.sequencer.run()
    session.writer.close()
    cover = pdf_pages(export_run(session.database, session.sequencer.run_id, tmp_path)["pdf"])[0]
    assert "input psu-a on supply 1" in cover and "psu-b" not in cover
