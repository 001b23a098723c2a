"""Method files: validated, immutable, and every error names the file, the key and the reason."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from app.cli.main import main
from app.method.loader import MethodError, all_methods, load_method, load_method_file
from app.paths import methods_dir

BASE = (methods_dir() / "emerald-block-v3.toml").read_text()


def write_variant(tmp_path: Path, body: str, name: str = "bad.toml") -> Path:
    (tmp_path / "emerald-block-v3.toml").write_text(BASE)
    path = tmp_path / name
    path.write_text('base = "emerald-block-v3.toml"\n' + body)
    return path


def test_shipped_methods_load_and_variants_are_non_compliant() -> None:
    methods = all_methods()
    assert {"emerald-block-v3", "demo", "smoke"} <= set(methods)
    assert methods["emerald-block-v3"].compliant
    for name in ("demo", "smoke"):
        assert not methods[name].compliant
        assert "NON-COMPLIANT" in methods[name].label
    compliant = methods["emerald-block-v3"]
    plan = compliant.plan_for("online")
    # SPEC-NOTES §2: each profile ≥ 40 min (10 stabilisation + 30 measurement), 2 h idle
    assert all(s.stabilisation_intervals == 10 and s.measurement_intervals == 30
               for s in plan.active)
    assert plan.ready_idle_intervals * compliant.interval_s == 7200
    assert [s.profile for s in compliant.plan_for("removable").active] == ["SW", "SR"]


def test_method_objects_are_immutable() -> None:
    method = load_method("demo")
    with pytest.raises(ValidationError):
        method.interval_s = 5  # type: ignore[misc]


@pytest.mark.parametrize("body,key,reason", [
    ('name = "x"\nversion = "1"\n[stability]\nweights = [2, 1]\n', "stability",
     "weights has 2 entries but wma_points is 10"),
    ('name = "x"\nversion = "1"\ninterval_s = "sixty"\n', "interval_s", "valid number"),
    ('name = "x"\nversion = "1"\n[[plans]]\nname = "p"\ncategories = ["online"]\n'
     'ready_idle_intervals = 1\nactive = [{ profile = "ZZ", stabilisation_intervals = 1, '
     'measurement_intervals = 1 }]\n', "(top level)", "unknown profile 'ZZ'"),
    ('name = "x"\nversion = "1"\nsurprise = 1\n', "surprise", "Extra inputs"),
])
def test_invalid_definitions_name_file_key_and_reason(tmp_path: Path, body: str, key: str,
                                                      reason: str) -> None:
    path = write_variant(tmp_path, body)
    with pytest.raises(MethodError) as err:
        load_method_file(path)
    message = str(err.value)
    assert str(path) in message and f"key '{key}'" in message and reason in message


def test_missing_key_in_a_standalone_file(tmp_path: Path) -> None:
    path = tmp_path / "m.toml"
    path.write_text(BASE.replace('\ninterval_s = 60.0', '\n'))
    with pytest.raises(MethodError, match=r"key 'interval_s': Field required"):
        load_method_file(path)


@pytest.mark.parametrize("text,reason", [("name = [", "not valid TOML"),
                                         ('base = "nowhere.toml"\n', "file not found")])
def test_unreadable_files(tmp_path: Path, text: str, reason: str) -> None:
    path = tmp_path / "m.toml"
    path.write_text(text)
    with pytest.raises(MethodError, match=reason):
        load_method_file(path)


def test_circular_base_chain(tmp_path: Path) -> None:
    (tmp_path / "a.toml").write_text('base = "b.toml"\n')
    (tmp_path / "b.toml").write_text('base = "a.toml"\n')
    with pytest.raises(MethodError, match="circular"):
        load_method_file(tmp_path / "a.toml")


def test_unknown_method_lists_the_known_ones(capsys) -> None:
    assert main(["methods", "show", "nonexistent"]) == 1
    err = capsys.readouterr().err
    assert "unknown method 'nonexistent'" in err and "demo" in err


def test_methods_list_shows_durations_and_compliance(capsys) -> None:
    assert main(["methods", "list"]) == 0
    out = capsys.readouterr().out
    assert "emerald-block-v3" in out and "COMPLIANT" in out and "NON-COMPLIANT" in out
    assert "18 h 00 min" in out  # 12 h conditioning + 6 × 40 min + 2 h ready idle
    assert "Pre-fill → Intensity search → Conditioning → MW1 → MW2 → RW → RR → SW → SR" in out


def test_methods_show_json(capsys) -> None:
    import json

    assert main(["methods", "show", "smoke", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["compliant"] is False and data["interval_s"] == 1.0
    assert [p["name"] for p in data["profiles"]] == ["MW1", "MW2", "RW", "RR", "SW", "SR"]
