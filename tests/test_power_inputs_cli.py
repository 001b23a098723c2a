"""``storwatt run --power-input``: each refusal names its key (issue 16); a good set of inputs
reaches the run configuration in the order typed."""

from __future__ import annotations

import argparse

import pytest

from app.cli.arguments import power_input
from app.cli.main import main
from app.core.records import PowerInput


@pytest.mark.parametrize(("text", "message"), [
    ("name=a,driver=wt300", "input a: resource= is required for driver wt300"),
    ("driver=wt300,resource=x", "name= is required"),
    ("name=a,driver=sim,colour=red", "unknown key 'colour'; the keys are name, driver, "
                                     "resource, element, wiring, calibration"),
    ("name=a,driver=sim,element", "'element' is not key=value"),
    ("name=a,driver=sim,element=0", "element=0 must be 1 or more"),
    ("name=a,driver=sim,element=two", "'two' is not a whole number"),
    ("name=a,driver=sim,wiring=3P5W", "wiring='3P5W' is not one of 1P2W, 3P3W, 3P4W"),
    ("name=a,name=b,driver=sim", "key name given twice"),
    ("name=a,driver=sim,calibration=yesterday",
     "input a's calibration date 'yesterday' is not a date YYYY-MM-DD"),
    ("name=a,driver=sim,calibration=2999-01-01",
     "input a's calibration date 2999-01-01 is after today"),
])
def test_each_bad_key_is_named(text: str, message: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError) as info:
        power_input(text)
    assert message in str(info.value)


def test_a_full_input_parses() -> None:
    assert power_input("name=shelf, driver=wt300, resource=TCPIP::10.0.0.5::10001::SOCKET,"
                       "wiring=3p4w,calibration=2026-01-31") == PowerInput(
        "shelf", "wt300", "TCPIP::10.0.0.5::10001::SOCKET", None, "3P4W", "2026-01-31")
    assert power_input("name=l2,driver=wt300,resource=r,element=2").element == 2


def test_the_command_line_refuses_with_the_option_named(capsys) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["run", "--power-input", "name=a,driver=sim,wiring=2W"])
    assert exit_.value.code == 2
    assert "--power-input: wiring='2W' is not one of" in capsys.readouterr().err


def test_duplicate_names_and_both_forms_are_refused(capsys) -> None:
    assert main(["run", "--lab", "sim-direct", "--power-input", "name=a,driver=sim",
                 "--power-input", "name=a,driver=sim"]) != 0
    # the wizard's text for the same rule (app.rules.run_fields.power_inputs)
    assert "--power-input: Power input 'a' is listed twice: each input needs its own name." \
        in capsys.readouterr().err
    assert main(["run", "--lab", "sim-direct", "--meter-driver", "wt300", "--power-input",
                 "name=a,driver=sim"]) != 0
    assert "not both" in capsys.readouterr().err
