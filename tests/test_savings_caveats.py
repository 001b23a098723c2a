"""COM savings put dollars only where they mean something (issue 41, seen 3): a SIMULATED,
NON-COMPLIANT or different-method pair carries its caveats — the same words as compare — in
the CLI, the GUI, the JSON, the xlsx and the PDF; money is a number in a currency format in
the xlsx and never prints as ``-0``."""

from __future__ import annotations

import json
from pathlib import Path

import openpyxl
import pytest

from app.cli.main import main
from app.metrics.com_savings import ComSavings, ConfigFigures, CostRates, CostRow
from app.rules.comparability import comparison_caveats, mixed_methods_caveat
from app.storage.opening import load_one_run
from tests.support.recorded_runs import record_run


@pytest.fixture(scope="module")
def two_methods(tmp_path_factory) -> tuple[str, str, str]:
    """A smoke run and a demo run of the simulated lab: both SIMULATED, NON-COMPLIANT and of
    different methods — every caveat at once."""
    db = tmp_path_factory.mktemp("savings") / "s.db"
    base = record_run(db, method="demo")
    opt = record_run(db, method="smoke", start=5000.0)
    return f"sqlite:///{db}", base.run_id, opt.run_id


def test_every_caveat_of_a_weak_pair_is_named(two_methods) -> None:
    url, base_id, opt_id = two_methods
    runs = (load_one_run(url, base_id), load_one_run(url, opt_id))
    caveats = comparison_caveats(runs)
    assert caveats[0] == mixed_methods_caveat(runs) != ""
    assert [c for c in caveats[1:] if "SIMULATED" in c] == [
        f"⚠ Run {base_id[:8]} is SIMULATED: its figures are a rehearsal, not a measurement.",
        f"⚠ Run {opt_id[:8]} is SIMULATED: its figures are a rehearsal, not a measurement."]
    assert comparison_caveats(runs[:1]) == caveats[1:2]  # one run: no method to differ


def test_the_cli_json_xlsx_and_pdf_carry_the_caveats(two_methods, tmp_path: Path,
                                                     capsys) -> None:
    url, base_id, opt_id = two_methods
    xlsx, pdf = tmp_path / "s.xlsx", tmp_path / "s.pdf"
    assert main(["runs", "savings", base_id, opt_id, "--db", url, "--xlsx", str(xlsx),
                 "--pdf", str(pdf)]) == 0
    text = capsys.readouterr().out
    assert text.splitlines()[0].startswith("⚠ These runs used different methods")
    assert text.count("is SIMULATED") == 2
    assert main(["runs", "savings", base_id, opt_id, "--db", url, "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["caveats"]) == 3
    sheet = openpyxl.load_workbook(xlsx)["COM savings"]
    column_a = [row[0].value for row in sheet.iter_rows()]
    assert sum("SIMULATED" in (v or "") for v in column_a) == 2
    capex = next(row for row in sheet.iter_rows() if row[0].value == "CAPEX saved "
                 "(tested system)")
    assert isinstance(capex[1].value, (int, float)) and "$" in capex[1].number_format
    assert pdf.read_bytes().startswith(b"%PDF")


def test_the_savings_view_shows_the_caveats(two_methods, qtbot) -> None:
    from ui.history.com_savings_view import ComSavingsView
    url, base_id, opt_id = two_methods
    view = ComSavingsView(load_one_run(url, base_id), load_one_run(url, opt_id))
    qtbot.addWidget(view)
    assert not view.caveats.isHidden()
    assert view.caveats.text().count("SIMULATED") == 2


@pytest.mark.parametrize(("value", "unit", "text"), [
    (-0.4, "USD/month", "$0/month"), (-0.49, "W", "0 W"), (-45.2, "USD/month", "-$45/month"),
    (34_517.3, "USD", "$34,517"), (20, "drives", "20 drives")])
def test_money_and_watts_never_print_minus_zero(value: float, unit: str, text: str) -> None:
    assert CostRow("x", value, unit).text() == text


def test_a_saving_of_a_few_tenths_of_a_watt_prints_no_minus_zero() -> None:
    base = ConfigFigures("a", 1000, 100.0, 200.0, 1000, 10)
    opt = ConfigFigures("b", 1000, 100.0, 200.3, 1000, 10)
    texts = " ".join(row.text() for row in ComSavings(base, opt, CostRates()).cost_rows())
    assert "-0" not in texts and "-$0" not in texts
