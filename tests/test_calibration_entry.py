"""Every instrument's calibration date and certificate can be entered — the thermometer's and
the single meter's too — on the command line and in the wizard, checked by one rule at entry
(issue 24 item 1): a date that is not ISO or lies after today is refused where it is typed."""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from app.core.calibration import CalibrationEntryError, checked_date, describe
from app.cli.main import main
from app.core.records import PowerInput
from app.station.run_entries import EntryError, RunEntries, check_instruments, check_power_inputs

TOMORROW = (date.today() + timedelta(days=1)).isoformat()


def _parse(argv: list[str]):
    from app.cli.cmd_run import config_from_args
    from app.cli.main import build_parser

    return config_from_args(build_parser().parse_args(["run", *argv]))


def test_the_rule_refuses_free_text_and_future_dates_and_keeps_past_ones() -> None:
    with pytest.raises(CalibrationEntryError, match="'next week' is not a date YYYY-MM-DD"):
        checked_date("next week", "the thermometer's")
    with pytest.raises(CalibrationEntryError, match="is after today"):
        checked_date(TOMORROW)
    assert checked_date(" 2026-01-31 ") == "2026-01-31"
    assert checked_date("") == ""
    assert describe("2026-01-31", "CAL-7") == "2026-01-31 (certificate CAL-7)"


def test_the_cli_takes_the_thermometer_and_meter_calibration() -> None:
    config = _parse(["--meter-calibration", "2026-01-05", "--meter-certificate", "YK-123",
                     "--thermo-driver", "daq970a", "--thermo-resource", "TCPIP::h::5025::SOCKET",
                     "--thermo-calibration", "2026-02-01", "--thermo-certificate", "KS-9"])
    assert (config.power_meter.calibration_date, config.power_meter.certificate) == \
        ("2026-01-05", "YK-123")
    assert (config.temperature_meter.calibration_date, config.temperature_meter.certificate) \
        == ("2026-02-01", "KS-9")


@pytest.mark.parametrize("value", ["next week", TOMORROW])
def test_the_cli_refuses_a_bad_thermometer_date_naming_the_option(value: str, capsys) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["run", "--thermo-calibration", value])
    assert exit_.value.code == 2
    # the wizard's field refuses with the same text (app.rules.run_fields.calibration)
    assert "--thermo-calibration: The thermometer's calibration date" in capsys.readouterr().err


def test_the_wizard_takes_and_checks_both_instruments_dates() -> None:
    meter, thermo = check_instruments(RunEntries(
        meter_calibration="2026-01-05", meter_certificate="YK-123",
        thermo_calibration="2026-02-01", thermo_certificate="KS-9"))
    assert (meter.calibration_date, meter.certificate) == ("2026-01-05", "YK-123")
    assert (thermo.calibration_date, thermo.certificate) == ("2026-02-01", "KS-9")
    for name in ("meter_calibration", "thermo_calibration"):
        for value in ("next week", TOMORROW):
            with pytest.raises(EntryError) as info:
                check_instruments(RunEntries(**{name: value}))
            assert info.value.field == name


def test_the_wizard_refuses_next_week_in_a_power_input_row() -> None:
    with pytest.raises(EntryError, match="psu-a's calibration date 'next week'"):
        check_power_inputs((PowerInput("psu-a", "sim", calibration_date="next week"),))
    kept = check_power_inputs((PowerInput("psu-a", "sim", calibration_date="2026-01-05",
                                          certificate=" C-1 "),))
    assert (kept[0].calibration_date, kept[0].certificate) == ("2026-01-05", "C-1")
