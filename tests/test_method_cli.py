"""``storwatt methods list|show``: what a technician reads before choosing a method."""

from __future__ import annotations

import json
from pathlib import Path

from app.cli.main import main
from app.core.paths import methods_dir


def test_list_shows_every_method_with_compliance_phases_and_durations(capsys) -> None:
    assert main(["methods", "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    heads = {line.split()[0]: line for line in lines if not line.startswith(" ")}
    assert "  method numbers COMPLIANT  (interval 60 s)" in heads["emerald-block-v3"]
    for variant in ("demo", "smoke"):
        assert ("method numbers NON-COMPLIANT (not met: interval length, stabilisation, "
                "measurement, ready idle, 8 normative method keys)  (interval 1 s, abbreviated "
                "variant of emerald-block-v3)") in heads[variant]
    text = "\n".join(lines)
    assert "18 h 00 min  Pre-fill → Intensity search → Ranging pass → Conditioning → MW1 → MW2 " \
           "→ RW → RR → SW → SR → Ready idle" in text
    assert "4 h 20 min  Intensity search → Ranging pass → Conditioning → SW → SR → Ready idle" \
        in text
    assert "1 min 35 s" in text  # demo, online plan
    assert "not counted: pre-fill, intensity search ≤ 2 h 12 min, 10 min 00 s per declared COM" \
        in text


def test_list_json(capsys) -> None:
    assert main(["methods", "list", "--json"]) == 0
    data = {m["name"]: m for m in json.loads(capsys.readouterr().out)}
    assert data["emerald-block-v3"]["compliant"] is True
    assert data["demo"]["compliant"] is False and data["demo"]["variant_of"] == "emerald-block-v3"
    assert [p["duration_s"] for p in data["emerald-block-v3"]["plans"]] == [64800, 15600]


def test_show_prints_profiles_plans_rules_instruments_and_coms(capsys) -> None:
    assert main(["methods", "show", "emerald-block-v3"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("emerald-block-v3 3.0.0-sw1  method numbers COMPLIANT\n")
    for expected in (
            "MW2          8 KiB       70/30     25 % of MW1     8 KiB  random     EP_MW2 (IOPS/W)",
            "SR         256 KiB       100/0           100 %   256 KiB  sequential EP_SR (MiB/s/W)",
            "conditioning      MW1 for 12 h 00 min",
            "RR                10 min 00 s stabilisation + 30 min 00 s measurement",
            "ready idle        2 h 00 min",
            "within ±5 % of the 10-point weighted moving average",
            "average ≤ 30 ms at intensity 100",
            "99 %, 99.9 %, 99.99 %, 99.999 %",
            "power reading at least every 5 s, uncertainty ≤ 1 %",
            "±0.01 W up to 10 W, ±0.1 W up to 100 W, ±1 W above",
            "200–480 V three phase (--supply 3P-200-480), 47–63 Hz",
            "inlet allowable range by ASHRAE class (--ashrae-class): A1 15–32 °C",
            "temperature resolution 0.1 °C",
            "parity-raid        Parity RAID"):
        assert expected in out, expected


def test_show_a_variant_says_non_compliant_and_json_has_everything(capsys) -> None:
    assert main(["methods", "show", "demo"]) == 0
    assert "method numbers NON-COMPLIANT (not met: interval length" in \
        capsys.readouterr().out.splitlines()[0]
    assert main(["methods", "show", "smoke", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["compliant"] is False and data["interval_s"] == 1.0
    assert data["method_numbers"]["compliant"] is False
    assert [p["name"] for p in data["profiles"]][:6] == ["MW1", "MW2", "RW", "RR", "SW", "SR"]
    assert data["instruments"]["frequency_hz"] == [47.0, 63.0]
    assert data["summary"]["plans"][1]["phases"] == ["Intensity search", "SW", "SR", "Ready idle"]


def test_show_accepts_a_method_file_path(capsys) -> None:
    assert main(["methods", "show", str(methods_dir() / "smoke.toml")]) == 0
    assert capsys.readouterr().out.startswith("smoke 3.0.0-sw1-smoke1")


def test_unknown_method_exits_1_with_the_known_ones(capsys) -> None:
    assert main(["methods", "show", "nonexistent"]) == 1
    err = capsys.readouterr().err
    assert "unknown method 'nonexistent'" in err
    assert ("demo, demo-workloads, emerald-block-v3, emerald-hotband-v3, pts-di-demo, smoke, "
            "spc1-like-demo") in err


def test_a_broken_method_file_exits_1_naming_file_and_key(capsys, tmp_path: Path) -> None:
    path = tmp_path / "broken.toml"
    path.write_text((methods_dir() / "emerald-block-v3.toml").read_text()
                    .replace("tolerance_pct = 5.0", "tolerance_pct = \"five\""))
    assert main(["methods", "show", str(path)]) == 1
    err = capsys.readouterr().err
    assert str(path) in err and "key 'stability.tolerance_pct'" in err


def test_a_variant_claiming_compliance_with_1_s_intervals_lists_as_non_compliant(
        tmp_path: Path, monkeypatch, capsys) -> None:
    """The file says ``compliant = true``; ``methods list`` and ``show`` judge its numbers
    (old code printed "COMPLIANT" beside it)."""
    from app.method import loader

    folder = tmp_path / "methods"
    folder.mkdir()
    for name in ("emerald-block-v3.toml", "taxonomy-emerald-v3.toml"):
        (folder / name).write_text((methods_dir() / name).read_text(encoding="utf-8"))
    (folder / "lab-fast.toml").write_text('base = "emerald-block-v3"\nname = "lab-fast"\n'
                                          'compliant = true\ninterval_s = 1.0\n')
    monkeypatch.setattr(loader, "methods_dir", lambda: folder)
    assert main(["methods", "list"]) == 0
    heads = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()
             if not line.startswith(" ")}
    assert "method numbers NON-COMPLIANT (not met: interval length, stabilisation, " \
           "measurement, ready idle)" in heads["lab-fast"]
    assert "method numbers COMPLIANT" in heads["emerald-block-v3"]
    assert main(["methods", "show", str(folder / "lab-fast.toml")]) == 0
    out = capsys.readouterr().out
    assert "NOT MET  Interval length: interval 1 s < 60 s" in out
    assert "whatever it claims (compliant = true)" in out
