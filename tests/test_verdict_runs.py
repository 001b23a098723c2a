"""COMPLIANT means the whole method was followed (issue 22), seen in every view.

Fake-clock runs of the media-library plan on stand-ins that identify as real, calibrated
instruments. The shipped method on a clean site is COMPLIANT and a stricter lab variant is
COMPLIANT saying it is a variant; each hostile case — the issue's stripped method file on a
44 °C / 260 V / 70 Hz site, no inlet thermometer, a bad site with every metric INVALID, a pause
in conditioning and a 24 h pause in ready idle — is NON-COMPLIANT in ``runs show``, ``runs
list``, the history, compare, the PDF and the xlsx, and both loaders (the full record and the
run list's facts) give the same verdict.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from app.cli.main import main
from app.core.records import PhaseKind
from app.storage.opening import open_database
from app.storage.stored import StoredRun
from tests.support.hostile_method import hostile
from tests.support.verdict_runs import pause_in, pdf_pages, record
from app.storage.repository import list_runs

STRICT = ('base = "emerald-block-v3"\nname = "lab-strict"\nversion = "1.0"\ncompliant = true\n'
          '[instruments]\nmax_uncertainty_pct = 0.5\n')


@dataclass(frozen=True)
class Runs:
    db: Path
    clean: StoredRun
    strict: StoredRun
    hostile: StoredRun
    no_thermometer: StoredRun
    bad_site: StoredRun
    paused: StoredRun

    @property
    def url(self) -> str:
        return f"sqlite:///{self.db}"

    def adversarial(self) -> dict[str, StoredRun]:
        return {"hostile": self.hostile, "no thermometer": self.no_thermometer,
                "bad site": self.bad_site, "paused": self.paused}


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Runs:
    folder = tmp_path_factory.mktemp("verdict")
    db = folder / "runs.db"
    strict = folder / "lab-strict.toml"
    strict.write_text(STRICT, encoding="utf-8")
    stripped = hostile(folder, sw_reads=False)

    def both(seq, event) -> None:
        conditioning(seq, event)
        ready_idle(seq, event)
    conditioning = pause_in(PhaseKind.CONDITIONING, 600.0)
    ready_idle = pause_in(PhaseKind.READY_IDLE, 86400.0)
    return Runs(
        db, record(db), record(db, method=str(strict)),
        record(db, method=str(stripped), site=dict(inlet_c=44.0, volts=260.0, freq_hz=70.0),
               declared=dict(supply="1P-1-1000", ashrae_class="A1")),
        record(db, thermometer=False),
        record(db, site=dict(inlet_c=44.0, volts=150.0, freq_hz=70.0)),
        record(db, hook=both))


def failed(run: StoredRun) -> dict[str, str]:
    return {c.name: c.evidence for c in run.compliance.failures}


def test_the_shipped_method_on_a_clean_site_is_compliant(runs):
    assert runs.clean.compliance.compliant, runs.clean.compliance.summary()
    assert runs.clean.compliance.relation() == "registered compliant method"


def test_a_stricter_variant_is_compliant_and_says_it_is_a_variant(runs):
    verdict = runs.strict.compliance
    assert verdict.compliant, verdict.summary()
    assert verdict.relation() == \
        "variant of emerald-block-v3 3.0.0-sw1: 1 key differs (no deviation)"


def test_the_stripped_method_on_a_bad_site_is_non_compliant(runs):
    """Its own loose ranges accept the site, so its metrics may be VALID: the deviations and
    the search that ran out of queue depths are what fail it."""
    found = failed(runs.hostile)
    for key in ("response_time.max_avg_ms", "search.queue_depths", "stability.wma_points",
                "instruments.inlet_classes", "instruments.voltage_ranges",
                "instruments.frequency_hz", "plans.media-library.active",
                "plans.media-library.conditioning_intervals"):
        assert f"Method key {key}" in found, key
    assert "load generator limit reached" in found["Intensity 100 reached"]
    assert runs.hostile.compliance.relation().startswith(
        "variant of emerald-block-v3 3.0.0-sw1: ")


def test_no_inlet_thermometer_is_non_compliant(runs):
    found = failed(runs.no_thermometer)
    assert found["Inlet thermometer"] == "no inlet thermometer took part in the run"
    assert found["Metric EP_RI"].startswith("INVALID: no inlet temperature reading")


def test_a_bad_site_with_every_metric_invalid_is_non_compliant(runs):
    found = failed(runs.bad_site)
    for metric in ("EP_SW", "EP_SR", "EP_RI"):
        assert found[f"Metric {metric}"].startswith("INVALID: "), metric
    assert "Metrics valid" not in {c.name for c in runs.bad_site.compliance.criteria}


def test_a_pause_in_conditioning_or_ready_idle_is_non_compliant_naming_phase_and_length(runs):
    assert failed(runs.paused) == {"Continuous phases": (
        "phases not continuous: Conditioning paused (2 attempts, stopped 10 min 00 s), "
        "Ready idle paused (2 attempts, stopped 24 h 00 min)")}


@pytest.mark.parametrize(("taxonomy", "answers", "evidence"), [
    ("removable-1", {}, "no classification answers recorded: removable-1 was not derived from "
                        "the SUT's attributes"),
    ("removable-1", {"level": 1}, "removable-1 was chosen by hand (level), not derived from "
                                  "the SUT's attributes"),
    ("removable-3", None, "removable-3 is ruled out by the answers: Removable 3 needs robotics, "
                          "a maximum configuration of >= 5 drives (answered 1) (derived: "
                          "Removable 1)"),
])
def test_a_classification_not_derived_from_the_recorded_answers_is_non_compliant(
        runs, taxonomy, answers, evidence):
    from dataclasses import replace

    snapshot = dict(runs.clean.config_snapshot, taxonomy=taxonomy)
    if answers is not None:
        snapshot["classification_answers"] = answers
    run = replace(runs.clean, config_snapshot=snapshot)
    assert failed(run) == {"Classification": evidence}
    assert failed(runs.clean) == {}


@pytest.mark.parametrize(("note", "met"), [
    ("no probe within the 30 ms limit: the lightest (queue depth 1 × 4 job(s), 4 outstanding "
     "IOs) gave 41.0 ms", False),
    ("load generator limit reached: the deepest probe (queue depth 256 × 4 job(s), 1024 "
     "outstanding IOs) gave 12.0 ms, below the 30 ms limit", False),
    ("no whole queue depth left between the probes: 27.9 ms at queue depth 57 and 30.4 ms at "
     "queue depth 58, not within 5 % of the 30 ms limit", True),
])
def test_intensity_100_must_be_reached_in_every_searched_profile(runs, note, met):
    from dataclasses import replace

    searched = runs.clean.search_results
    run = replace(runs.clean, search_results=(replace(searched[0], note=note), *searched[1:]))
    criterion = next(c for c in run.compliance.criteria if c.name == "Intensity 100 reached")
    assert criterion.met is met
    assert f"{searched[0].profile}: {note}" in criterion.evidence


def test_both_loaders_give_the_same_verdict_for_every_run(runs):
    """``StoredRun.compliance`` (runs show, reports) and the run list's facts (runs list,
    history, start page) call the one verdict function on the same facts."""
    database = open_database(runs.url)
    try:
        listed = {r.run_id: r.compliance for r in list_runs(database)}
    finally:
        database.close()
    everything = {"clean": runs.clean, "strict": runs.strict, **runs.adversarial()}
    for name, run in everything.items():
        assert listed[run.run_id] == run.compliance, name


def test_every_cli_view_says_non_compliant_with_the_method_identity(runs, capsys):
    for name, run in runs.adversarial().items():
        assert main(["runs", "show", run.run_id, "--db", runs.url]) == 0
        shown = capsys.readouterr().out
        assert "Compliance  NON-COMPLIANT (derived from the record under rules 3" in shown, name
        assert f"Method      {run.method_name} {run.method_version} · normative SHA-256 " \
               in shown, name
    assert main(["runs", "show", runs.strict.run_id, "--db", runs.url]) == 0
    assert "variant of emerald-block-v3 3.0.0-sw1: 1 key differs" in capsys.readouterr().out
    assert main(["runs", "list", "--db", runs.url]) == 0
    listed = capsys.readouterr().out
    for name, run in runs.adversarial().items():
        row = next(line for line in listed.splitlines() if line.startswith(run.run_id[:8]))
        assert "NON-COMPLIANT" in row, name
    assert "method: lab-fast 1.0 [variant of emerald-block-v3 3.0.0-sw1: " in listed


def test_history_and_compare_say_non_compliant_with_the_method_identity(runs, qtbot):
    from ui.history.compare import CompareView
    from ui.history.model import RunsTableModel

    database = open_database(runs.url)
    try:
        model = RunsTableModel(database)
        column = model.column_index("Method")
        shown = {model.data(model.index(row, 0)): model.data(model.index(row, column))
                 for row in range(model.rowCount())}
        texts = " | ".join(str(v) for v in shown.values())
        # the list's badge (issue 41): the whole relation is the tooltip's and the legend's
        for name, run in runs.adversarial().items():
            assert f"{run.method_name} {run.method_version} · " in texts, name
        assert "lab-fast 1.0 · variant, 18 keys" in texts
        assert "emerald-block-v3 3.0.0-sw1 · registered" in texts
        tips = " | ".join(str(model.data(model.index(row, column), 3))
                          for row in range(model.rowCount()))
        assert tips.count("(NON-COMPLIANT)") == 4
        assert "emerald-block-v3 3.0.0-sw1 [registered compliant method]" in tips
        ids = [runs.clean.run_id, *(r.run_id for r in runs.adversarial().values())]
        view = CompareView(database, ids)
        qtbot.addWidget(view)
        legend = view.legend.text()
        assert legend.count("(NON-COMPLIANT)") == 4
        assert "lab-fast 1.0 [variant of emerald-block-v3 3.0.0-sw1: " in legend
    finally:
        database.close()


@pytest.mark.parametrize("case", ["hostile", "no thermometer", "bad site", "paused"])
def test_the_pdf_and_xlsx_say_non_compliant_with_the_method_identity(runs, case, tmp_path):
    import openpyxl

    from app.reports.export import export_run
    from app.reports.xlsx import TDR_SHEET

    run = runs.adversarial()[case]
    database = open_database(runs.url)
    try:
        paths = export_run(database, run.run_id, tmp_path)
    finally:
        database.close()
    cover = pdf_pages(paths["pdf"])[0]
    assert "NON-COMPLIANT" in cover
    assert f"Method identity {run.method_name} {run.method_version} · normative SHA-256" \
        in cover
    book = openpyxl.load_workbook(paths["xlsx"], read_only=True)
    rows = {r[0]: r[1] for r in book[TDR_SHEET].iter_rows(values_only=True) if r and r[0]}
    assert rows["Compliance"] == "NON-COMPLIANT"
    assert rows["Method identity"] == run.compliance.method_line()
    assert rows["Compliance rules version"] == 3


# --- the standalone verifier derives the same verdict (issue 29) ----------------------------

@pytest.fixture(scope="module")
def bundles(runs, tmp_path_factory):
    """The result bundle of a run of this module by name, each written once, when first
    asked for (writing one signs the record: about 0.7 s of CPU)."""
    from functools import cache

    from app.reports.export import write_bundle

    folder = tmp_path_factory.mktemp("verdict-bundles")
    everything = {"clean": runs.clean, "strict": runs.strict, **runs.adversarial()}

    @cache
    def bundle(name: str) -> Path:
        return write_bundle(everything[name], folder / f"{name.replace(' ', '-')}.zip")
    return bundle


def test_the_verifier_derives_each_verdict_run_s_verdict(runs, bundles):
    """COMPLIANT, a COMPLIANT variant, the stripped method on a bad site (its deviations) and
    the shipped one there (every metric INVALID): storwatt-verify re-derives each bundle's
    figures, every criterion and the overall verdict alike (its file, loaded here; the
    no-thermometer run's bundle is checked below; a paused phase is the demo bundle's case in
    tests/test_verifier.py)."""
    import re

    from tests.support.bundles import verify

    chosen = {"clean": runs.clean, "strict": runs.strict, "hostile": runs.hostile,
              "bad site": runs.bad_site}
    for name, run in chosen.items():
        status, out = verify(bundles(name))
        assert status == 0, out
        assert re.search(rf"^\[x\] compliance verdict: {run.compliance.label}", out, re.M), name
        for criterion in run.compliance.criteria:
            assert f"[x] {criterion.name}: {criterion.verdict} — " in out, (name, criterion)
        assert "not checked: profile set" not in out


def _changed(run: StoredRun, files: dict[str, bytes], case: str) -> tuple[StoredRun, dict]:
    """``run`` with one fact changed as a record holding it would read, and its bundle's
    files with the same fact changed and the station's verdict of the changed run: the
    station derives from the one, the verifier from the other."""
    import json
    from dataclasses import replace
    from datetime import date, timedelta

    document = json.loads(files["run.json"])
    meter, config = run.power_meter, document["configuration"]
    search = [json.loads(line) for line in files["search.jsonl"].splitlines()]
    started = date.fromisoformat(run.started_wall[:10])
    when = {"no calibration date": "", "calibrated after the run": started + timedelta(days=1),
            "calibration expired": started - timedelta(days=400)}
    if case == "simulated meter":
        run = replace(run, power_meter=replace(meter, vendor="StorWatt"))
        document["instruments"]["power_meter"]["vendor"] = "StorWatt"
    elif case in when:
        text = str(when[case])
        run = replace(run, power_meter=replace(meter, calibration_date=text))
        document["instruments"]["power_meter"]["calibration_date"] = text
    elif case in ("ruled-out level", "no answers"):
        key, value = (("taxonomy", "removable-3") if case == "ruled-out level" else
                      ("classification_answers", {}))
        run = replace(run, config_snapshot=dict(run.config_snapshot, **{key: value}))
        config[key] = value
    elif case == "pattern off the profile":  # the pre-run drew 10 points fewer reads
        first = run.search_results[0]
        pattern = replace(first.pattern, read_pct=first.pattern.read_pct - 10)
        run = replace(run, search_results=(replace(first, pattern=pattern),
                                           *run.search_results[1:]))
        search[0]["pattern"]["read_pct"] = pattern.read_pct
    else:
        assert case == "load generator limit"
        note = "load generator limit reached: the deepest probe gave 12.0 ms"
        run = replace(run, search_results=(replace(run.search_results[0], note=note),
                                           *run.search_results[1:]))
        search[0]["note"] = note
    document["compliance"] = run.compliance.as_json()
    return run, {**files, "run.json": json.dumps(document).encode(),
                 "search.jsonl": "\n".join(json.dumps(s) for s in search).encode()}


@pytest.mark.parametrize(("case", "criterion"), [
    ("simulated meter", "Real instruments"), ("no calibration date", "Calibration"),
    ("calibration expired", "Calibration"), ("calibrated after the run", "Calibration"),
    ("ruled-out level", "Classification"), ("no answers", "Classification"),
    ("load generator limit", "Intensity 100 reached"),
    ("pattern off the profile", "Access pattern (generator pre-run)")])
def test_the_verifier_derives_the_criterion_a_changed_fact_breaks(runs, bundles, case,
                                                                    criterion):
    from tests.support.bundles import derived_compliance, read_files

    run, files = _changed(runs.clean, read_files(bundles("clean")), case)
    assert [c.name for c in run.compliance.failures] == [criterion], case
    failed, out = derived_compliance(files)
    assert failed == 0, out
    assert f"[x] {criterion}: NOT MET — " in out and "(station NOT MET)" in out
    assert "[x] compliance verdict: NON-COMPLIANT (1 criteria not met: " in out
    # the same changed facts under the clean run's COMPLIANT verdict: the verifier objects
    import json
    document = json.loads(files["run.json"])
    document["compliance"] = runs.clean.compliance.as_json()
    failed, out = derived_compliance({**files, "run.json": json.dumps(document).encode()})
    assert failed == 2, out
    assert f"[ ] {criterion}: NOT MET — " in out and "(station MET)" in out
    assert "[ ] compliance verdict: NON-COMPLIANT (1 criteria not met: " in out


def test_a_bundle_claiming_a_verdict_its_facts_do_not_give_fails(runs, bundles, tmp_path):
    """The no-thermometer run's bundle claiming the clean run's COMPLIANT verdict: the
    verdict is derived, outside the record hash, so only the verifier's own derivation
    catches it (the verifier before issue 29's verdict item passed it)."""
    import json
    import re

    from tests.support.bundles import tampered, verify

    def claim(data: bytes) -> bytes:
        document = json.loads(data)
        document["compliance"] = runs.clean.compliance.as_json()
        return json.dumps(document, sort_keys=True, separators=(",", ":")).encode()
    forged = tampered(bundles("no thermometer"), tmp_path / "forged.zip", {"run.json": claim})
    status, out = verify(forged)
    assert status == 1, out
    assert re.search(r"^\[ \] Inlet thermometer: NOT MET — no inlet thermometer took part "
                     r"\(station MET\)", out, re.M), out
    assert re.search(r"^\[ \] compliance verdict: NON-COMPLIANT .*\(station COMPLIANT\)",
                     out, re.M), out
    assert re.search(r"^\[x\] record SHA-256 ", out, re.M)  # the facts are untouched
