"""One run-configuration builder (issue 24): the same entries typed on the command line and in
the wizard give the same :class:`RunConfig`, and the same refusal text, field by field.

Cheap on purpose: configurations are built, nothing runs (the command line's options are
parsed by its own parser and built by ``config_from_args``; the wizard's entries as its pages
collect them, by ``config_from_entries``). A field one path checks and the other does not,
rounds differently or words differently fails here.
"""

from __future__ import annotations

import contextlib
import io
from dataclasses import replace
from datetime import date, timedelta
from pathlib import Path

import pytest

from app.cli.cmd_run import config_from_args
from app.cli.main import build_parser
from app.core.records import PowerInput, RunConfig
from app.station.run_entries import RunEntries, config_from_entries, entries_from_config
from app.rules.run_fields import EntryError

CAL = (date.today() - timedelta(days=30)).isoformat()
LATER = (date.today() + timedelta(days=3)).isoformat()
METER = "TCPIP::10.0.0.5::10001::SOCKET"


def _base(target: Path) -> tuple[dict[str, list[str]], RunEntries]:
    """A real lab's set-up, as options (option → its values) and as the wizard's entries."""
    options = {"--lab": ["local-fio"], "--method": ["smoke"], "--taxonomy": ["online-2"],
               "--target": [str(target)], "--target-size": ["1M"], "--vendor": ["Acme"],
               "--model": ["StoreMax"], "--serial": ["SM-1"], "--firmware": ["4.2"],
               "--capacity-gb": ["1.001"], "--drives": ["24"], "--drive-type": ["SSD"],
               "--raid": ["RAID 10"], "--supply": ["1P-200-240"], "--ashrae-class": ["A2"],
               "--com": ["thin-provisioning"], "--com-off": ["compression"],
               "--meter-driver": ["wt300"], "--meter-resource": [METER],
               "--meter-calibration": [CAL], "--meter-certificate": ["YK-1"],
               "--thermo-driver": ["daq970a"],
               "--thermo-resource": ["TCPIP::10.0.0.6::5025::SOCKET"],
               "--thermo-calibration": [CAL], "--thermo-certificate": ["KS-1"],
               "--operator": ["tech-1"]}
    entries = RunEntries(taxonomy="online-2", vendor="Acme", model="StoreMax", serial="SM-1",
                         firmware="4.2", capacity="1.001", capacity_unit="GB", drive_count=24,
                         drive_type="SSD", raid="RAID 10", supply="1P-200-240",
                         ashrae_class="A2", coms=("thin-provisioning",), coms_off=("compression",),
                         workload_mode="local-fio", targets=(str(target),), target_size="1M",
                         method="smoke", meter_driver="wt300", meter_resource=METER,
                         meter_calibration=CAL, meter_certificate="YK-1",
                         thermo_driver="daq970a", thermo_resource="TCPIP::10.0.0.6::5025::SOCKET",
                         thermo_calibration=CAL, thermo_certificate="KS-1", operator="tech-1")
    return options, entries


def _input(name: str, calibration: str = CAL) -> PowerInput:
    return PowerInput(name, "wt300", METER, None, "1P2W", calibration, "")


#: (field, options as typed, the wizard's entries for the same); a value of None drops the
#: option. Each has an accepted and a refused case.
CASES = {
    "vendor ok": ({"--vendor": ["Acme Corp"]}, {"vendor": "Acme Corp"}),
    "vendor too long": ({"--vendor": ["v" * 201]}, {"vendor": "v" * 201}),
    "model too long": ({"--model": ["m" * 201]}, {"model": "m" * 201}),
    "serial ok": ({"--serial": ["  SM-9 "]}, {"serial": "  SM-9 "}),
    "serial too long": ({"--serial": ["s" * 201]}, {"serial": "s" * 201}),
    "firmware too long": ({"--firmware": ["f" * 201]}, {"firmware": "f" * 201}),
    "capacity rounded once": ({"--capacity-gb": ["1.0000000015"]}, {"capacity": "1.0000000015"}),
    "capacity with its unit": ({"--capacity-gb": ["7.3 TB"]}, {"capacity": "7.3 TB"}),
    "capacity exponent": ({"--capacity-gb": ["1e3"]}, {"capacity": "1e3"}),
    "capacity negative": ({"--capacity-gb": ["-1"]}, {"capacity": "-1"}),
    "capacity not finite": ({"--capacity-gb": ["inf"]}, {"capacity": "inf"}),
    "capacity past 1 EB": ({"--capacity-gb": ["1e10"]}, {"capacity": "1e10"}),
    "capacity not a number": ({"--capacity-gb": ["lots"]}, {"capacity": "lots"}),
    "drives ok": ({"--drives": ["1000000"]}, {"drive_count": 1_000_000}),
    "drives zero": ({"--drives": ["0"]}, {"drive_count": 0}),
    "drives past a million": ({"--drives": ["1000001"]}, {"drive_count": 1_000_001}),
    "drive type": ({"--drive-type": ["TAPE"]}, {"drive_type": "TAPE"}),
    "raid ok": ({"--raid": ["RAID 6 (8+2)"]}, {"raid": "RAID 6 (8+2)"}),
    "raid unknown": ({"--raid": ["RAID 7"]}, {"raid": "RAID 7"}),
    "coms unknown": ({"--com": ["teleportation"]}, {"coms": ("teleportation",)}),
    "coms none": ({"--com": None, "--com-off": None}, {"coms": (), "coms_off": ()}),
    "operator too long": ({"--operator": ["o" * 201]}, {"operator": "o" * 201}),
    "meter address missing": ({"--meter-resource": None}, {"meter_resource": ""}),
    "meter calibration later": ({"--meter-calibration": [LATER]}, {"meter_calibration": LATER}),
    "meter calibration not a date": ({"--meter-calibration": ["next week"]},
                                     {"meter_calibration": "next week"}),
    "meter certificate too long": ({"--meter-certificate": ["c" * 201]},
                                   {"meter_certificate": "c" * 201}),
    "thermometer address missing": ({"--thermo-resource": None}, {"thermo_resource": ""}),
    "thermometer calibration not a date": ({"--thermo-calibration": ["2026-13-01"]},
                                           {"thermo_calibration": "2026-13-01"}),
    "power inputs ok": ({"--meter-driver": None, "--meter-resource": None,
                         "--meter-calibration": None, "--meter-certificate": None,
                         "--power-input": [f"name=psu-a,driver=wt300,resource={METER},"
                                           f"calibration={CAL}",
                                           f"name=psu-b,driver=wt300,resource={METER}"]},
                        {"meter_driver": "sim", "meter_resource": "", "meter_calibration": "",
                         "meter_certificate": "", "power_inputs": (_input("psu-a"),
                                                                   _input("psu-b", ""))}),
    "power input twice": ({"--meter-driver": None, "--meter-resource": None,
                           "--meter-calibration": None, "--meter-certificate": None,
                           "--power-input": [f"name=psu-a,driver=wt300,resource={METER}"] * 2},
                          {"meter_driver": "sim", "meter_resource": "", "meter_calibration": "",
                           "meter_certificate": "", "power_inputs": (_input("psu-a", ""),) * 2}),
    "power input calibration later": (
        {"--meter-driver": None, "--meter-resource": None, "--meter-calibration": None,
         "--meter-certificate": None,
         "--power-input": [f"name=psu-a,driver=wt300,resource={METER},calibration={LATER}"]},
        {"meter_driver": "sim", "meter_resource": "", "meter_calibration": "",
         "meter_certificate": "", "power_inputs": (_input("psu-a", LATER),)}),
    "load hosts ok": ({"--load-host": ["10.0.0.7:8765", "[::1]:8766"]},
                      {"workload_mode": "load-hosts",
                       "load_hosts": ("10.0.0.7:8765", "[::1]:8766")}),
    "load host malformed": ({"--load-host": ["10.0.0.7:8765", "not a host"]},
                            {"workload_mode": "load-hosts",
                             "load_hosts": ("10.0.0.7:8765", "not a host")}),
}


def _cli(options: dict[str, list[str] | None]) -> RunConfig | str:
    """The command line's configuration, or its refusal's text after the option's name."""
    argv = ["run"]
    for option, values in options.items():
        for value in values or ():
            argv.append(f"{option}={value}")
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            args = build_parser().parse_args(argv)
    except SystemExit:  # argparse: "storwatt run: error: argument --X: TEXT"
        return err.getvalue().strip().splitlines()[-1].split(": ", 3)[-1]
    try:
        return config_from_args(args)
    except ValueError as exc:  # the builder: "--X: TEXT", or TEXT naming its rule
        text = str(exc)
        return text.split(": ", 1)[-1] if text.startswith("--") else text


def _wizard(entries: RunEntries) -> RunConfig | str:
    try:
        return config_from_entries(entries)
    except EntryError as exc:
        return str(exc)


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_command_line_and_the_wizard_build_alike(case: str, tmp_path: Path) -> None:
    typed, picked = CASES[case]
    options, entries = _base(tmp_path / "scratch.dat")
    cli = _cli(options | typed)
    wizard = _wizard(replace(entries, **picked))
    assert cli == wizard
    if isinstance(cli, RunConfig):  # repeat this run: the same configuration again
        assert config_from_entries(entries_from_config(cli)) == cli


def test_every_case_is_a_case(tmp_path: Path) -> None:
    """The base itself builds, and the refused cases are refused (not equal by both passing)."""
    options, entries = _base(tmp_path / "scratch.dat")
    assert isinstance(_cli(options), RunConfig) and _cli(options) == _wizard(entries)
    refused = {c for c, (typed, picked) in CASES.items()
               if isinstance(_wizard(replace(entries, **picked)), str)}
    assert len(refused) >= 20 and "capacity negative" in refused and "vendor ok" not in refused


def test_a_capacity_that_overflows_in_bytes_is_refused_not_raised() -> None:
    """Found by the CLI fuzzer: a finite number of GB whose bytes overflow to infinity raised
    OverflowError out of ``round``, a traceback instead of the rule's one line."""
    from app.rules.run_fields import EntryError, capacity_bytes

    with pytest.raises(EntryError, match="at most 1 EB"):
        capacity_bytes("1.797693134862316e+299")
