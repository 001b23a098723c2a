"""Compliance is derived, never declared (issue 14 item 7, docs/method-notes.md §2, §3).

Each run here goes through the real sequencer and store on a fake clock; the verdict is read
from the stored run (``StoredRun.compliance``). The adversarial runs claim compliance in every
way a file or a lab could — a copy of the compliant method with 1 s intervals, the compliant
method on simulated instruments, a pause in the active sequence, an old or missing calibration
— and must each come out NON-COMPLIANT naming the evidence; one run on instruments that
identify as real, calibrated a month ago, comes out COMPLIANT.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import date, timedelta

import pytest

from app.rules.compliance import ComplianceVerdict, assess_compliance
from app.method.loader import MethodError, load_method_file
from app.core.paths import methods_dir
from app.core.records import PhaseKind
from tests.support import recorded_runs as runs
from tests.support.compliance_runs import record
from tests.support.verdict_runs import COMPLIANT, real_identity

_real = real_identity

def failed(verdict: ComplianceVerdict) -> dict[str, str]:
    return {c.name: c.evidence for c in verdict.failures}


def test_compliant_plan_on_real_calibrated_instruments_is_compliant(tmp_path, monkeypatch):
    run = record(tmp_path, monkeypatch)
    assert run.compliance.compliant, run.compliance.summary()
    assert run.compliance.summary() == "COMPLIANT"
    names = [c.name for c in run.compliance.criteria]
    assert names == ["Interval length", "Stabilisation", "Measurement", "Ready idle",
                     "Sample period", "Profile set", "Normative method content",
                     "Run completed", "Real instruments", "Continuous phases",
                     "Resumed after interruption", "Calibration", "Configuration unchanged",
                     "Inlet thermometer", "Metrics valid", "Intensity 100 reached",
                     "Access pattern (generator pre-run)", "Classification"]
    # a job file that drew another mix than its profile's in the pre-run measured something
    # else: NOT MET, naming the profile, the figure and the rule (app/sequencer/access_check.py)
    skewed = tuple(replace(r, pattern=replace(r.pattern, read_pct=r.pattern.read_pct - 3))
                   for r in run.search_results)
    verdict = assess_compliance(replace(run, search_results=skewed))
    assert not verdict.compliant
    evidence = failed(verdict)["Access pattern (generator pre-run)"]
    first = run.search_results[0]
    assert f"{first.profile}: {first.pattern.read_pct - 3:.1f} % reads, asked " in evidence
    # a run stored before patterns were measured keeps the verdict it had
    older = replace(run, search_results=tuple(replace(r, pattern=None)
                                              for r in run.search_results))
    assert "Access pattern (generator pre-run)" not in [
        c.name for c in assess_compliance(older).criteria]


def test_one_second_copy_claiming_compliance_is_non_compliant(tmp_path, monkeypatch):
    """A whole copy (not a variant, so the loader cannot refuse its claim) with 1 s intervals
    and ``compliant = true``: the file's claim is stored, the verdict ignores it."""
    text = (methods_dir() / f"{COMPLIANT}.toml").read_text(encoding="utf-8")
    text = text.replace("interval_s = 60.0          #", "interval_s = 1.0          #", 1)
    text = text.replace(f'name = "{COMPLIANT}"', 'name = "fast-copy"', 1)  # registered name:
    copy = tmp_path / "fast-copy.toml"  # refused with other content (test_method_registry)
    copy.write_text(text, encoding="utf-8")
    assert load_method_file(copy).compliant  # the claim
    run = record(tmp_path, monkeypatch, method=str(copy))
    assert run.method_compliant  # stored as the file's claim ...
    verdict = run.compliance  # ... and not believed
    assert not verdict.compliant
    assert failed(verdict)["Interval length"] == "interval 1 s < 60 s"
    assert "SW stabilisation 10 s < 600 s" in failed(verdict)["Stabilisation"]
    assert "Ready idle 120 s < 7200 s" in failed(verdict)["Ready idle"]
    assert verdict.summary().startswith("NON-COMPLIANT: interval 1 s < 60 s")


def test_compliant_method_on_simulated_lab_is_non_compliant(tmp_path, monkeypatch):
    run = record(tmp_path, monkeypatch, real=False)
    evidence = failed(run.compliance)["Real instruments"]
    assert evidence.startswith("simulated instruments: power meter StorWatt SIM-PM")
    assert "SUT: simulated SUT" in evidence
    assert run.power_meter is not None and run.power_meter.simulated


def test_pause_in_active_sequence_is_non_compliant_naming_the_phase(tmp_path, monkeypatch):
    run = record(tmp_path, monkeypatch, hook=runs.pause_once_in("SR"))
    assert run.status.value == "COMPLETED"
    assert failed(run.compliance) == {
        "Continuous phases": "phases not continuous: SR paused (2 attempts, stopped 5 s)"}


@pytest.mark.parametrize(("days_ago", "evidence"), [
    (None, "power meter calibration date missing; thermometer calibration date missing"),
    (400, "power meter calibrated {d}, 400 days before the run's end ({d2}) > 365 days; "
          "thermometer calibrated {d}, 400 days before the run's end ({d2}) > 365 days"),
])
def test_missing_or_old_calibration_is_non_compliant(tmp_path, monkeypatch, days_ago, evidence):
    run = record(tmp_path, monkeypatch, calibrated_days_ago=days_ago)
    when = "" if days_ago is None else (date.today() - timedelta(days=days_ago)).isoformat()
    assert failed(run.compliance) == {"Calibration": evidence.format(
        d=when, d2=(run.finished_wall or "")[:10])}


def test_verdict_is_derived_from_the_record_once(tmp_path, monkeypatch):
    run = record(tmp_path, monkeypatch, real=False)
    assert run.compliance is run.compliance  # computed once per loaded run
    # a record without the method it ran cannot be judged against any minimums
    bare = replace(run, method_json=None)
    assert failed(bare.compliance)["Method minimums"] == \
        "the record does not hold the method it ran (stored before the station kept it), " \
        "so its numbers cannot be judged"


def test_variant_may_not_set_compliance_minimums(tmp_path):
    base = methods_dir() / f"{COMPLIANT}.toml"
    (tmp_path / base.name).write_text(base.read_text(encoding="utf-8"), encoding="utf-8")
    variant = tmp_path / "loose.toml"
    variant.write_text(f'base = "{base.name}"\nname = "loose"\nvariant_of = "{COMPLIANT}"\n'
                       'compliant = false\ninterval_s = 1.0\n[compliance]\ninterval_s = 1.0\n',
                       encoding="utf-8")
    with pytest.raises(MethodError, match=r"key 'compliance': a variant may not set"):
        load_method_file(variant)
    variant.write_text(variant.read_text().split("[compliance]")[0], encoding="utf-8")
    # without it the variant inherits the shipped minimums and is judged by them
    assert load_method_file(variant).compliance == load_method_file(base).compliance



SIM_POWER = {"wt300": "wt310", "wt210": "wt210", "chroma66200": "chroma66202",
             "pw3335": "pw3335", "ptd": "ptd"}
SIM_TEMPERATURE = {"daq970a": "daq970a", "watchport": "watchport", "ptd-temp": "ptd-temp"}


@pytest.mark.parametrize(("driver", "model"), [*SIM_POWER.items(), *SIM_TEMPERATURE.items()])
def test_every_wire_simulator_identifies_as_simulated(driver: str, model: str) -> None:
    """Each simulator answers its identity query with the STORWATT-SIM prefix before what the
    emulated model says; the real driver accepts it and the identity says simulated."""
    from drivers.meters.registry import open_power_meter, open_temperature_meter
    from drivers.simulators import MeterSimulator, ThermometerSimulator

    power = driver in SIM_POWER
    simulator = MeterSimulator(model) if power else ThermometerSimulator(model)
    with simulator as sim:
        opener = open_power_meter if power else open_temperature_meter
        meter = opener(driver, sim.resource, timeout_s=1.0)
        identity = meter.open()
        meter.close()
    assert identity.simulated and identity.vendor.startswith("STORWATT-SIM ")
    assert identity.model  # the model it emulates, as the driver reads it


def test_a_real_identity_is_not_simulated() -> None:
    from drivers.meters.base import split_simulator_prefix

    assert split_simulator_prefix("YOKOGAWA,WT310E,C2X,F1.03") == ("",
                                                                    "YOKOGAWA,WT310E,C2X,F1.03")
    assert not real_identity("YOKOGAWA", "WT310E", "wt300", 30).simulated


def test_every_view_formats_the_one_verdict(tmp_path, monkeypatch, capsys):
    """PDF (banner on every page, a block listing every criterion), xlsx Test Data Report rows
    and ``runs show`` all print the derived verdict of a 1 s copy that claims compliance."""
    import openpyxl

    from app.cli.main import main
    from app.reports.export import export_run
    from app.storage.opening import open_database
    from tests.support.documents import pdf_pages
    from app.reports.xlsx import TDR_SHEET

    text = (methods_dir() / f"{COMPLIANT}.toml").read_text(encoding="utf-8")
    text = text.replace(f'name = "{COMPLIANT}"', 'name = "fast-copy"', 1)
    copy = tmp_path / "fast-copy.toml"
    copy.write_text(text.replace("interval_s = 60.0          #", "interval_s = 1.0  #", 1),
                    encoding="utf-8")
    run = record(tmp_path, monkeypatch, method=str(copy))
    database = open_database(f"sqlite:///{tmp_path / 'r.db'}")
    paths = export_run(database, run.run_id, tmp_path)

    pages = pdf_pages(paths["pdf"])
    banner = "NON-COMPLIANT (not met: interval length, stabilisation, measurement, ready idle)"
    assert all(banner in page for page in pages)
    assert "SIMULATED" not in pages[0]  # real identities: only the numbers fail
    # the block may run onto page 2 (one row per criterion)
    block = " ".join(pages).split("Compliance: NON-COMPLIANT", 1)[1].split("Result summary")[0]
    for criterion in run.compliance.criteria:
        assert criterion.name in block
    assert "Interval length NOT MET interval 1 s < 60 s" in block
    assert "Every metric the method asks for is VALID" not in pages[0]

    book = openpyxl.load_workbook(paths["xlsx"], read_only=True)
    rows = {r[0]: r[1] for r in book[TDR_SHEET].iter_rows(values_only=True) if r and r[0]}
    assert rows["Compliance"] == "NON-COMPLIANT"
    assert rows["Compliance: Interval length"] == "NOT MET: interval 1 s < 60 s"
    assert rows["Compliance: Calibration"].startswith("MET: within 365 days")

    capsys.readouterr()
    assert main(["runs", "show", run.run_id[:8], "--db", f"sqlite:///{tmp_path / 'r.db'}"]) == 0
    out = capsys.readouterr().out
    assert "Compliance  NON-COMPLIANT (derived from the record" in out
    assert "  NOT MET  Interval length: interval 1 s < 60 s" in out


def test_a_copy_may_not_loosen_the_shipped_minimums(tmp_path):
    """A whole copy carries the [compliance] table; changing it is refused, so the minimums
    a run is judged against are always the shipped ones."""
    text = (methods_dir() / f"{COMPLIANT}.toml").read_text(encoding="utf-8")
    copy = tmp_path / "loose-copy.toml"
    copy.write_text(text.replace("interval_s = 60.0                   #",
                                 "interval_s = 1.0                   #", 1), encoding="utf-8")
    with pytest.raises(MethodError, match=r"\n  key 'compliance\.interval_s': differs from the "
                                          r"shipped compliance minimums \(emerald-block-v3\)$"):
        load_method_file(copy)


def test_an_aborted_run_is_non_compliant_naming_what_did_not_finish(tmp_path, monkeypatch):
    run = record(tmp_path, monkeypatch, hook=runs.abort_at(PhaseKind.READY_IDLE))
    assert failed(run.compliance) == {"Run completed": "run ABORTED: Ready idle ABORTED",
                                      "Metric EP_RI": "not computed"}


def test_the_pyvisa_sim_meters_identify_as_simulated() -> None:
    from drivers.meters.registry import open_power_meter
    from tests.support.instruments import BACKEND
    meter = open_power_meter("wt300", "USB0::0x0B21::0x0025::SIM000001::INSTR",
                             backend=BACKEND)
    identity = meter.open()
    meter.close()
    assert identity.simulated and identity.vendor == "STORWATT-SIM YOKOGAWA"
