"""The result bundle and the standalone verifier keep each other honest (issue 29).

Every run here is recorded by the real sequencer on the fake clock; its bundle must verify —
the demo bundle in a bare interpreter (``python -I -S``), the others with the verifier's file
loaded in this process (``tests.support.bundles.verify``) — and each tampered copy — even with
the manifest's hashes rewritten to match — must fail naming the figure or the file."""

from __future__ import annotations

import ast
import csv
import hashlib
import io
import json
import re
import shlex
import sys
from pathlib import Path

import pytest

from app.cli.main import main as storwatt
from app.signoff.revisions import record_com_result
from app.core.records import PhaseKind, PowerInput, RunConfig, RunStatus
from app.reports.export import write_bundle
from app.sequencer import events as ev
from app.station.session import open_session
from app.signoff.revisions import approve, sign_off
from app.storage.audit import add_audit_entry
from drivers.clock import FakeClock
from tests.support.bundles import (VERIFIER, bundle_of, read_files, tampered, verifier_module,
                                   verify)
from tests.support.recorded_runs import (DegradingMeter, OffsetGridEngine, abort_at,
                                         pause_once_in, record_run)
from tests.support.resume_runs import interrupted_run, resume
from app.storage.repository import load_run


def _rows(data: bytes) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(data.decode())))


def _csv(rows: list[dict[str, str]]) -> bytes:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue().encode()


def _jsonl(data: bytes) -> list[dict]:
    return [json.loads(line) for line in data.decode().splitlines()]


def _dump_jsonl(items: list[dict]) -> bytes:
    return b"".join(json.dumps(i, sort_keys=True, separators=(",", ":")).encode() + b"\n"
                    for i in items)


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """The demo plan with RW paused once (two attempts) and SW read on a meter whose
    uncertainty is too high (EP_SW INVALID, its samples flagged)."""
    folder = tmp_path_factory.mktemp("verifier")
    meter: list[DegradingMeter] = []
    pause = pause_once_in("RW")

    def hook(seq, event) -> None:
        pause(seq, event)
        if isinstance(event, ev.PhaseStarted):
            meter[0].bad = event.phase.profile == "SW" and event.phase.kind is PhaseKind.ACTIVE

    recorded = record_run(folder / "run.db", hook=hook,
                          meter=lambda inner: meter.append(DegradingMeter(inner)) or meter[0])
    run = load_run(recorded.database, recorded.run_id)
    assert not run.metric("EP_SW").valid and "uncertainty" in run.metric("EP_SW").reason
    return recorded, bundle_of(recorded.database, recorded.run_id, folder / "demo.zip")


@pytest.mark.process
def test_demo_bundle_verifies_in_a_bare_interpreter(demo) -> None:
    recorded, bundle = demo
    # python -I -S: no site packages, no repository on the path
    status, out = verify(bundle, own_process=True)
    assert status == 0, out
    assert re.search(r"^\[x\] EP_SR: \S+ MiB/s/W \(station \S+ MiB/s/W\)", out, re.M)
    assert re.search(r"^\[x\] RW \(phase \d+, attempt 2\): interval grid", out, re.M)
    assert re.search(r"^\[x\] EP_SW validity: station INVALID, verifier finds uncertainty",
                     out, re.M)
    assert "not checked: the meter's resolution" in out and "[ ]" not in out
    assert re.search(r"^\[x\] Continuous phases: NOT MET — not continuous: RW \(2 attempts\)",
                     out, re.M)  # the paused RW, derived as the station does
    assert out.rstrip().splitlines()[-1].startswith("AGREES")


@pytest.fixture(scope="module")
def offset_grid(tmp_path_factory):
    """The demo plan on an engine reporting on its own, offset grid (as fio does): slices
    straddle the interval and window boundaries."""
    folder = tmp_path_factory.mktemp("offset")
    recorded = record_run(folder / "run.db", engine=OffsetGridEngine, workload_latency_s=0.5)
    return recorded, bundle_of(recorded.database, recorded.run_id, folder / "offset.zip")


def test_offset_grid_bundle_verifies(offset_grid) -> None:
    status, out = verify(offset_grid[1])
    assert status == 0, out


def test_the_documented_window_rule_recomputes_ep_sr(offset_grid) -> None:
    """docs/export-format.md, "Recomputing the metrics": samples count when start ≤ t < end,
    slices pro rata to their overlap with [start, end). The rule it used to give (a slice
    counts whole when its end lies in (start, end]) is measurably off on this run."""
    recorded, bundle = offset_grid
    files = read_files(bundle)
    metric = next(m for m in _jsonl(files["metrics.jsonl"]) if m["name"] == "EP_SR")
    attempt = next(a for a in _jsonl(files["attempts.jsonl"])
                   if a["phase_index"] == metric["phase_index"])
    start, end = attempt["window_start_s"], attempt["window_end_s"]
    watts = [float(r["watts_W"]) for r in _rows(files["power_samples.csv"])
             if int(r["phase"]) == metric["phase_index"] and start <= float(r["t_s"]) < end
             and not r["flags"]]
    slices = [(float(r["t_start_s"]), float(r["t_end_s"]),
               int(r["read_bytes_B"]) + int(r["write_bytes_B"]))
              for r in _rows(files["workload_slices.csv"])
              if int(r["phase"]) == metric["phase_index"]]
    assert any(a < start < b or a < end < b for a, b, _ in slices), "no slice straddles"
    power = sum(watts) / len(watts)
    documented = sum(n * max(0.0, min(b, end) - max(a, start)) / (b - a)
                     for a, b, n in slices) / 2**20 / (end - start) / power
    old_rule = sum(n for a, b, n in slices if start < b <= end) / 2**20 / (end - start) / power
    assert documented == pytest.approx(metric["value"], rel=1e-9)
    assert abs(old_rule / metric["value"] - 1) > 1e-4  # 0.03 % here; issue 29 saw 0.93 %


def test_four_power_inputs_verify_and_one_reading_off_fails(tmp_path: Path) -> None:
    inputs = tuple(PowerInput(f"psu-{k}", "sim") for k in "abcd")
    session = open_session(RunConfig(lab="sim-direct", power_inputs=inputs),
                           db_url=f"sqlite:///{tmp_path}/runs.db", clock=FakeClock())
    assert session.sequencer.run() is RunStatus.COMPLETED
    session.writer.close()
    bundle = bundle_of(session.database, session.sequencer.run_id, tmp_path / "b.zip")
    status, out = verify(bundle)
    assert status == 0 and "[x] power inputs: the total of" in out, out

    def one_reading(data: bytes) -> bytes:
        rows = _rows(data)
        rows[100]["watts_W"] = repr(float(rows[100]["watts_W"]) + 0.001)
        return _csv(rows)
    bad = tampered(bundle, tmp_path / "t.zip", {"power_input_samples.csv": one_reading})
    status, out = verify(bad)
    assert status == 1 and re.search(r"^\[ \] power inputs: .*\(1 differ", out, re.M), out


@pytest.mark.parametrize("cut_in", ["RW", "Ready idle"])
def test_resumed_run_bundles_verify(cut_in: str, tmp_path: Path) -> None:
    """A run whose station died in the active sequence or in ready idle, continued in its
    own record: the redone phases' later attempts are the ones recomputed."""
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    _, run = resume(url, interrupted_run(url, cut_in))
    assert run.resumptions
    bundle = tmp_path / "b.zip"
    write_bundle(run, bundle)
    status, out = verify(bundle)
    assert status == 0 and "[x] Run completed" in out, out


@pytest.mark.parametrize("kind", ["aborted", "demo-workloads", "spc1-like-demo", "pts-di-demo"])
def test_bundles_of_other_runs_verify(kind: str, tmp_path: Path) -> None:
    """An aborted run, the hot band and other workloads, an SPC-1-like sweep, a PTS matrix."""
    if kind == "aborted":
        recorded = record_run(tmp_path / "r.db", hook=abort_at(PhaseKind.READY_IDLE))
        assert recorded.status is RunStatus.ABORTED
    else:
        recorded = record_run(tmp_path / "r.db", method=kind, coms=())
    bundle = bundle_of(recorded.database, recorded.run_id, tmp_path / "b.zip")
    status, out = verify(bundle)
    assert status == 0, out
    assert "[x] EP_" in out
    steps = {"spc1-like-demo": ("[x] sweep SPC1: ", "phases.jsonl", _other_stop),
             "pts-di-demo": ("[x] PTS steady state: ", "events.jsonl", _later_steady),
             "demo-workloads": ("[x] intensity search HOTBAND: ", "search.jsonl",
                                _lighter_probe)}
    if kind in steps:  # its steps replayed; one step's evidence changed fails naming it
        line, name, edit = steps[kind]
        assert line in out, out
        status, out = verify(tampered(bundle, tmp_path / "t.zip", {name: edit}))
        assert status == 1 and re.search(rf"^\[ \] {re.escape(line[4:])}", out, re.M), out


def _other_stop(data: bytes) -> bytes:
    """The first skipped sweep step names another reason than the stop rule gives."""
    items = _jsonl(data)
    skipped = next(p for p in items if p["status"] == "SKIPPED")
    skipped["error"] = skipped["error"].replace("passed the", "was near the")
    return _dump_jsonl(items)


def _later_steady(data: bytes) -> bytes:
    """The log claims the steady state one round later than the rounds show."""
    return re.sub(rb"reached after (\d+) rounds",
                  lambda m: b"reached after %d rounds" % (int(m.group(1)) + 1), data)


def _lighter_probe(data: bytes) -> bytes:
    """The chosen probe of the first searched profile answered 40 % faster."""
    items = _jsonl(data)
    chosen = next(p for p in items[0]["probes"] if p[0] == items[0]["queue_depth"])
    chosen[2] *= 0.6
    return _dump_jsonl(items)


def _shift_sample(profile: str, phase_of: dict[str, int]):
    def edit(data: bytes) -> bytes:
        rows = _rows(data)
        row = next(r for r in rows if int(r["phase"]) == phase_of[profile]
                   and r["window"] == "2" and r["flags"] == "")
        row["watts_W"] = repr(float(row["watts_W"]) + 0.001)  # 1 mW
        return _csv(rows)
    return edit


def _phases(bundle: Path) -> dict[str, int]:
    return {p["name"]: p["index"] for p in _jsonl(read_files(bundle)["phases.jsonl"])
            if p["kind"] == "active"}


def test_one_sample_one_milliwatt_off_fails_naming_the_figure(demo, tmp_path: Path) -> None:
    _, bundle = demo
    bad = tampered(bundle, tmp_path / "t.zip",
                   {"power_samples.csv": _shift_sample("SR", _phases(bundle))})
    status, out = verify(bad)
    assert status == 1, out
    assert re.search(r"^\[ \] EP_SR average power", out, re.M)
    assert re.search(r"^\[ \] EP_SR: ", out, re.M)
    assert "[x] files: all" in out  # the manifest was rewritten: only the figures tell …
    assert re.search(r"^\[ \] samples SHA-256", out, re.M)  # … and the samples hash


def test_a_removed_flag_fails(demo, tmp_path: Path) -> None:
    _, bundle = demo

    def unflag(data: bytes) -> bytes:
        rows = _rows(data)
        for row in rows:
            row["flags"] = ";".join(f for f in row["flags"].split(";")
                                    if f and f != "uncertainty_high")
        return _csv(rows)
    status, out = verify(tampered(bundle, tmp_path / "t.zip", {"power_samples.csv": unflag}))
    assert status == 1, out
    assert re.search(r"^\[ \] EP_SW validity: station INVALID, verifier finds none .*"
                     r"disagrees on uncertainty above the limit", out, re.M)


def test_a_reading_out_of_supply_or_an_inlet_reading_removed_fails(demo, tmp_path) -> None:
    _, bundle = demo
    rr = _phases(bundle)["RR"]

    def brownout(data: bytes) -> bytes:
        rows = _rows(data)
        row = next(r for r in rows if int(r["phase"]) == rr and r["window"] == "2")
        row["volts_V"] = "180.0"  # below the declared 200–240 V, yet not flagged
        return _csv(rows)

    def no_inlet(data: bytes) -> bytes:
        return _csv([r for r in _rows(data) if not (int(r["phase"]) == rr
                                                    and r["window"] == "2")])
    status, out = verify(tampered(bundle, tmp_path / "a.zip", {"power_samples.csv": brownout}))
    assert status == 1 and re.search(r"^\[ \] supply flags of \d+ power samples .*: 1 differ",
                                     out, re.M), out
    status, out = verify(tampered(bundle, tmp_path / "b.zip",
                                  {"inlet_temperature.csv": no_inlet}))
    assert status == 1 and re.search(r"^\[ \] EP_RR validity: station VALID, verifier finds no "
                                     r"inlet reading", out, re.M), out


def test_a_moved_interval_boundary_fails(demo, tmp_path: Path) -> None:
    _, bundle = demo
    mw1 = _phases(bundle)["MW1"]

    def move(data: bytes) -> bytes:
        items = _jsonl(data)
        record = next(r for r in items if r["phase_index"] == mw1 and r["index"] == 4)
        record["start_s"] += 0.25
        return _dump_jsonl(items)

    def move_window(data: bytes) -> bytes:
        items = _jsonl(data)
        attempt = next(a for a in items if a["phase_index"] == mw1)
        attempt["window_start_s"] += 1.0
        attempt["window_end_s"] += 1.0
        return _dump_jsonl(items)
    status, out = verify(tampered(bundle, tmp_path / "a.zip", {"intervals.jsonl": move}))
    assert status == 1 and re.search(r"^\[ \] MW1 .*1 interval boundaries off the grid #5",
                                     out, re.M), out
    status, out = verify(tampered(bundle, tmp_path / "b.zip", {"attempts.jsonl": move_window}))
    assert status == 1 and re.search(r"^\[ \] (MW1|EP_MW1)", out, re.M), out


def test_an_edited_method_fails(demo, tmp_path: Path) -> None:
    _, bundle = demo

    def weights(data: bytes) -> bytes:
        method = json.loads(data)
        method["stability"]["weights"] = [1.0] * len(method["stability"]["weights"])
        return json.dumps(method, sort_keys=True, separators=(",", ":")).encode()
    status, out = verify(tampered(bundle, tmp_path / "a.zip", {"method.json": weights}))
    assert status == 1 and re.search(r"^\[ \] method\.json SHA-256", out, re.M), out

    # … and with the run's own record of the method's hash rewritten too
    new = hashlib.sha256(weights(read_files(bundle)["method.json"])).hexdigest()

    def run_json(data: bytes) -> bytes:
        run = json.loads(data)
        run["method"]["sha256"] = new
        return json.dumps(run, sort_keys=True, separators=(",", ":")).encode()

    def manifest_hash(b: Path) -> Path:
        files = read_files(b)
        manifest = json.loads(files["manifest.json"])
        manifest["method_sha256"] = new
        return tampered(b, tmp_path / "c.zip",
                        {"manifest.json": lambda _: json.dumps(manifest).encode()},
                        rewrite_manifest=False)
    both = manifest_hash(tampered(bundle, tmp_path / "b.zip",
                                  {"method.json": weights, "run.json": run_json}))
    status, out = verify(both)
    assert status == 1, out
    assert "[x] method.json SHA-256" in out
    assert re.search(r"^\[ \] MW1 \(phase \d+, attempt 1\) interval \d+: .*WMA_i", out, re.M)


def test_a_histogram_bin_moved_fails(demo, tmp_path: Path) -> None:
    _, bundle = demo

    def move(data: bytes) -> bytes:
        items = _jsonl(data)
        items[0]["bins"] = {str(int(k) // 2): v for k, v in items[0]["bins"].items()}
        return _dump_jsonl(items)  # every IO reported twice as fast
    status, out = verify(tampered(bundle, tmp_path / "t.zip", {"histograms.jsonl": move}))
    assert status == 1 and re.search(r"^\[ \] MW1 \(phase \d+\) histogram 99\.99 % confidence",
                                     out, re.M), out


def test_unlisted_or_changed_file_without_manifest_rewrite_is_named(demo, tmp_path) -> None:
    _, bundle = demo
    bad = tampered(bundle, tmp_path / "t.zip",
                   {"events.jsonl": lambda d: d + b'{"t":0}\n'}, rewrite_manifest=False)
    status, out = verify(bad)
    assert status == 1 and re.search(r"^\[ \] file events\.jsonl: SHA-256", out, re.M), out


def test_record_sha256_rebuilt_and_anchored(demo, tmp_path: Path) -> None:
    """The record hash is rebuilt from the bundle's own data; a forger who edits a file the
    figures do not use and rewrites the whole manifest still fails against the hash a
    signature names."""
    recorded, bundle = demo
    current = sign_off(load_run(recorded.database, recorded.run_id)).current.sha256
    status, out = verify(bundle, "--record-sha256", current)
    assert status == 0 and f"[x] record SHA-256 {current} (expected {current})" in out, out
    assert f"[x] record SHA-256 {current} rebuilt from the bundle's data" in out
    status, out = verify(bundle, "--record-sha256", "0" * 64)
    assert status == 1 and "[ ] record SHA-256" in out, out

    def log_line(data: bytes) -> bytes:
        return data.replace(b"power meter:", b"power meter (checked):", 1)
    forged = tampered(bundle, tmp_path / "f.zip", {"events.jsonl": log_line})
    status, out = verify(forged)
    assert status == 1 and re.search(r"^\[ \] record SHA-256 \w+ rebuilt", out, re.M), out
    files = read_files(forged)
    manifest = json.loads(files["manifest.json"])
    manifest["record_sha256"] = re.search(r"record SHA-256 (\w+) rebuilt", out).group(1)
    fully = tampered(forged, tmp_path / "g.zip",
                     {"manifest.json": lambda _: json.dumps(manifest).encode()},
                     rewrite_manifest=False)
    assert verify(fully)[0] == 0  # consistent in itself …
    status, out = verify(fully, "--record-sha256", current)  # … but not the signed record
    assert status == 1 and f"[ ] record SHA-256 {manifest['record_sha256']} (expected" in out


def test_record_with_qa_entries_rebuilds_its_hash(offset_grid, tmp_path: Path) -> None:
    """COM results, a disposition and an approval: the verdict-bearing entries are in the
    rebuilt hash; given an earlier revision's hash, the verifier says only what it proved
    (issue 37 item 5): this bundle is not that record — never the bundle's own revision list."""
    recorded, _ = offset_grid
    db = recorded.database
    record_com_result(db, load_run(db, recorded.run_id), "parity-raid", "passed",
                      "array GUI: RAID 6", "T. Tech")
    approved = sign_off(load_run(db, recorded.run_id)).current.sha256
    approve(db, load_run(db, recorded.run_id), "Q. Auditor", "Reviewed.",
            confirm="a simulated demo run, approved to test the verifier")
    add_audit_entry(db, recorded.run_id, "disposition", "figures checked", "Q. Auditor",
                    "accepted")
    bundle = bundle_of(db, recorded.run_id, tmp_path / "qa.zip")
    status, out = verify(bundle)
    assert status == 0 and "rebuilt from the bundle's data" in out, out
    status, out = verify(bundle, "--record-sha256", approved)
    assert status == 1 and "this bundle is not the record whose hash was given" in out, out
    assert "revision" not in out.split(f"(expected {approved})")[1].splitlines()[0]


def test_samples_sha256_recomputed_from_the_csvs(demo) -> None:
    """The hash every report page prints is rebuilt from the bundle's CSVs (flagged samples
    included: EP_SW's are), so the CSVs are the samples the report was made from."""
    recorded, bundle = demo
    printed = load_run(recorded.database, recorded.run_id).samples_sha256
    status, out = verify(bundle, "--samples-sha256", printed)
    assert status == 0 and f"[x] samples SHA-256 {printed} (the report prints" in out, out
    status, out = verify(bundle, "--samples-sha256", "f" * 64)
    assert status == 1 and "[ ] samples SHA-256" in out, out


def test_verifier_imports_the_standard_library_only() -> None:
    tree = ast.parse(VERIFIER.read_text(encoding="utf-8"))
    roots = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
             for alias in node.names}
    roots |= {node.module.split(".")[0] for node in ast.walk(tree)
              if isinstance(node, ast.ImportFrom) and node.module}
    assert roots and roots <= set(sys.stdlib_module_names) | {"__future__"}, roots


def test_cli_writes_a_bundle_and_refuses_a_special_file(demo, tmp_path, capsys) -> None:
    recorded, _ = demo
    url = recorded.database.url
    out = tmp_path / "cli.zip"
    assert storwatt(["report", recorded.run_id[:8], "--bundle", str(out), "--db", url]) == 0
    assert f"bundle: {out}" in capsys.readouterr().out
    assert sorted(read_files(out)) == sorted(read_files(demo[1]))
    assert verify(out)[0] == 0
    assert storwatt(["report", recorded.run_id[:8], "--bundle", "/dev/null", "--db", url]) != 0
    assert "not a file" in capsys.readouterr().err


def test_gui_export_bar_writes_a_bundle_that_verifies(demo, tmp_path, qtbot) -> None:
    from PySide6.QtCore import QSettings

    from ui.widgets.report_export import ReportExportBar

    recorded, _ = demo
    bar = ReportExportBar(QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat),
                          ask=lambda *a: (str(tmp_path / "gui.zip"), ""))
    qtbot.addWidget(bar)
    bar.set_run(lambda: load_run(recorded.database, recorded.run_id))
    bar.bundle_button.click()
    assert bar.saved == tmp_path / "gui.zip" and "Saved to" in bar.saved_label.text()
    # the bar says how to verify it: its command, with the hash the PDF's footer prints, agrees
    command = bar.saved_label.text().split(" — verify: ", 1)[1]
    assert "record SHA-256 in the footer" in bar.saved_label.toolTip()
    footer_hash = sign_off(load_run(recorded.database, recorded.run_id)).current.sha256
    program, *arguments = shlex.split(command.replace("HASH", footer_hash))
    assert program == "storwatt-verify"
    assert verify(Path(arguments[0]), *arguments[1:])[0] == 0


def test_what_is_no_bundle_gets_exit_2_and_a_sentence(demo, tmp_path: Path) -> None:
    not_zip = tmp_path / "report.pdf"
    not_zip.write_bytes(b"%PDF-1.4 not a bundle")
    status, out = verify(not_zip)
    assert status == 2 and "cannot read" in out and "Traceback" not in out, out
    _, bundle = demo
    garbled = tampered(bundle, tmp_path / "g.zip", {
        "power_samples.csv": lambda d: d.replace(b"\n", b"\nabc,", 1)})
    status, out = verify(garbled)
    assert status == 2 and "storwatt-verify:" in out and "Traceback" not in out, out


def test_the_verifier_pins_what_the_station_s_registry_pins() -> None:
    """Two implementations of the registry anchor: the verifier's own list of pinned keys and
    its own extraction give every shipped compliant method the SHA-256 the station's registry
    pins, and a hostile variant another one (issue 29, "Anchored outside the bundle")."""
    from app.method.loader import load_method
    from app.method.normative import KEYS, PLAN_KEYS, Kind
    from app.method.record import resolved_method
    from app.method.registry import REGISTERED
    verifier = verifier_module()
    assert set(verifier.NORMATIVE_KEYS) == {k for k, kind in KEYS.items()
                                            if kind not in (Kind.IDENTITY, Kind.LAB)}
    assert set(verifier.PLAN_KEYS) == set(PLAN_KEYS)
    # … and each key's kind (how a run's value may differ from the registry's) alike
    assert verifier.NORMATIVE_KEYS == {k: kind.value for k, kind in KEYS.items()
                                       if kind not in (Kind.IDENTITY, Kind.LAB)}
    assert verifier.PLAN_KEYS == {k: kind.value for k, kind in PLAN_KEYS.items()}
    assert verifier.REGISTERED_COMPLIANT_METHODS == {sha: f"{name} {version}"
                                                     for name, version, sha in REGISTERED}
    for name, _version, sha in REGISTERED:
        assert verifier.normative_sha256(resolved_method(load_method(name))) == sha
    loosened = resolved_method(load_method("emerald-block-v3"))
    loosened["response_time"]["max_avg_ms"] = 60_000.0
    assert verifier.normative_sha256(loosened) not in verifier.REGISTERED_COMPLIANT_METHODS


def test_the_verifier_finds_the_deviations_the_station_finds() -> None:
    """The verifier's own `deviations` and the station's `differences` agree on which keys of
    a changed method deviate: looser and stricter direction keys, ranges, plan keys, a
    redefined profile, a reordered plan list."""
    from app.method.loader import load_method
    from app.method.normative import differences, normative_content
    from app.method.record import method_from_record, resolved_method
    from app.method.registry import registered
    verifier = verifier_module()
    entry = registered("emerald-block-v3", "3.0.0-sw1")

    def edits(m: dict) -> None:
        m["response_time"]["max_avg_ms"] = 60.0  # exact
        m["instruments"]["max_uncertainty_pct"] /= 2  # at most, stricter
        m["stability"]["tolerance_pct"] *= 2  # at most, looser
        m["instruments"]["frequency_hz"] = [49.0, 51.0]  # within, narrower
        m["instruments"]["inlet_classes"][0]["max_c"] += 5  # within, wider
        m["plans"][0]["conditioning_intervals"] += 1  # at least, stricter
        m["plans"][0]["com_check_intervals"] = 1  # at least, looser
        m["profiles"][0]["block_size_kib"] = 4.0  # a redefined profile
    for change in (edits, lambda m: m["plans"].reverse()):
        method = resolved_method(load_method("emerald-block-v3"))
        change(method)
        station = [d.key for d in differences(entry.content,
                                              normative_content(method_from_record(method)))
                   if not d.allowed]
        assert station and verifier.deviations(entry.content,
                                               verifier.normative_content(method)) == station


def test_the_verifier_pins_the_shipped_taxonomy() -> None:
    """The classification criterion reads the taxonomy the bundle carries; the verifier pins
    the shipped file's content, so an edited table fails (method-notes §1)."""
    from app.method.taxonomy import load_taxonomy
    verifier = verifier_module()
    dumped = json.loads(json.dumps(load_taxonomy().model_dump(mode="json")))
    sha = hashlib.sha256(verifier.canonical(dumped)).hexdigest()
    assert verifier.REGISTERED_TAXONOMIES == {sha: "taxonomy-emerald-v3.toml"}
    answers = {"connectivity": "network", "consumer_component": False,
               "integrated_controller": True, "storage_protection": True,
               "max_drive_count": 24}
    assert verifier.classify(dumped, "online-3", answers) == "Online 3"
    assert verifier.classify(dumped, "online-2", answers) == "Online 3"  # a lower one may be
    with pytest.raises(ValueError, match="ruled out"):
        verifier.classify(dumped, "online-4", answers)


def test_a_demo_bundle_is_no_registered_method_and_says_it_does_not_claim_one(
        tmp_path: Path) -> None:
    recorded = record_run(tmp_path / "d.db")
    status, out = verify(bundle_of(recorded.database, recorded.run_id, tmp_path / "d.zip"))
    assert status == 0, out
    assert "[x] method demo 3.0.0-sw1-demo1 is not a registered compliant method" in out


@pytest.mark.process
def test_a_com_verdict_its_ratio_does_not_give_fails(demo, tmp_path: Path) -> None:
    """A COM check's verdict follows its ratio (≥ 1.05 after data was written is VALID): a
    ratio lowered below the threshold under a VALID verdict is named."""
    _, bundle = demo
    status, out = verify(bundle)
    assert "[x] COM checks: deduplication planned for the declared deduplication; a result " \
           "for each one run (deduplication)" in out, out
    assert "[x] COM deduplication: ratio " in out

    def lower(data: bytes) -> bytes:
        items = _jsonl(data)
        next(m for m in items if m["name"] == "COM_deduplication")["value"] = 1.01
        return _dump_jsonl(items)
    status, out = verify(tampered(bundle, tmp_path / "t.zip", {"metrics.jsonl": lower}))
    assert status == 1 and re.search(r"^\[ \] COM deduplication: ratio 1\.01 .* not VALID "
                                     r".*station VALID", out, re.M), out


@pytest.mark.process
def test_a_bundle_without_the_verdict_facts_takes_those_criteria_as_recorded(demo, tmp_path):
    """A bundle written before run.json carried `registry_entry` and `taxonomy`: the
    normative and classification criteria enter the overall verdict as the station recorded
    them, each named as not checked, and everything else is still derived."""
    _, bundle = demo

    def older(data: bytes) -> bytes:
        document = json.loads(data)
        del document["registry_entry"], document["taxonomy"]
        return json.dumps(document).encode()
    status, out = verify(tampered(bundle, tmp_path / "t.zip", {"run.json": older}))
    assert status == 0, out
    assert "not checked: the method's normative deviations (the bundle has no registry_entry" \
        in out and "not checked: the classification (the bundle has no taxonomy" in out
    assert "[x] Real instruments: NOT MET" in out and "Classification:" not in out
    assert re.search(r"^\[x\] compliance verdict: NON-COMPLIANT .*Classification", out, re.M)


@pytest.mark.process
def test_a_stored_pattern_off_the_profile_fails_naming_the_criterion(demo, tmp_path) -> None:
    """MW1's measured read share moved from 70 % to 60 % in `search.jsonl`, the manifest
    rewritten and the station's "Access pattern (generator pre-run)" left MET: the verifier's
    own judgement (method-notes §2) finds it NOT MET and names it."""
    _, bundle = demo
    status, out = verify(bundle)
    assert re.search(r"^\[x\] Access pattern \(generator pre-run\): MET — .*MW1 \(modelled\)"
                     r".*\(station MET\)", out, re.M), out

    def fewer_reads(data: bytes) -> bytes:
        items = _jsonl(data)
        next(r for r in items if r["profile"] == "MW1")["pattern"]["read_pct"] = 60.0
        return _dump_jsonl(items)
    status, out = verify(tampered(bundle, tmp_path / "t.zip", {"search.jsonl": fewer_reads}))
    assert status == 1 and re.search(
        r"^\[ \] Access pattern \(generator pre-run\): NOT MET — MW1: 60\.0 % reads against "
        r"the asked 70 % .*\(station MET\)", out, re.M), out
    # the demo run is NON-COMPLIANT anyway; the verifier's overall line counts the pattern too
    assert re.search(r"^\[x\] compliance verdict: NON-COMPLIANT .*Access pattern", out, re.M)


def _on_profile(profile) -> dict:
    """The pattern a 20,000-IO pre-run log of ``profile``'s job file shows when it draws
    exactly what the profile asks, as `search.jsonl` stores it."""
    curve = [[x, share, share] for x, share in ((0.1, 66.4), (1.0, 79.0), (10.0, 93.5),
                                                (50.0, 98.6))]
    return {"profile": profile.name, "ios": 20_000, "seconds": 1.0, "source": "fio",
            "read_pct": profile.read_pct, "aligned": True, "uniformity_p": 0.4,
            "sequential_pct": 100.0 if profile.pattern == "sequential" else 0.02,
            "distinct_pct": 100.0 if profile.pattern == "sequential" else 99.9,
            "low_pct": 0.0, "high_pct": 100.0,
            "streams": [{"name": s.name, "share_pct": s.share_pct, "read_pct": s.read_pct,
                         "low_pct": s.offset_pct, "high_pct": s.offset_pct + s.size_pct,
                         "sequential_pct": 100.0 if s.pattern == "sequential" else 0.0,
                         "uniformity_p": None, "curve": curve if s.curved else []}
                        for s in profile.streams]}


def _pattern_edits() -> dict[str, object]:
    """Each way a pre-run pattern can stand against the method's tolerances (method-notes §2),
    on both sides of each tolerance where it has one."""
    def whole(**changes):
        return lambda p: None if p["streams"] else p.update(changes)

    def stream(index: int, **changes):
        return lambda p: None if not p["streams"] else p["streams"][index].update(changes)

    def shifted(key: str, by: float):
        return lambda p: p.update({key: p[key] + by})

    def stream_shifted(index: int, key: str, by: float):
        return lambda p: p["streams"] and p["streams"][index].update(
            {key: p["streams"][index][key] + by})

    def bent(by: float):
        return lambda p: [s.update(curve=[[x, m + by, r] for x, m, r in s["curve"]])
                          for s in p["streams"] if s["curve"]]
    return {
        "as asked": lambda p: None, "modelled": lambda p: p.update(ios=0, uniformity_p=None),
        "reads +2.4": shifted("read_pct", 2.4), "reads -2.6": shifted("read_pct", -2.6),
        "reads +3.5": shifted("read_pct", 3.5), "reads -10": shifted("read_pct", -10),
        "not aligned": whole(aligned=False), "p 1e-5": whole(uniformity_p=1e-5),
        "p 1e-7": whole(uniformity_p=1e-7), "starts at 5.1 %": whole(low_pct=5.1),
        "ends at 94.9 %": whole(high_pct=94.9), "99.8 % sequential": whole(sequential_pct=99.8),
        "1.5 % continuing": whole(sequential_pct=1.5),
        # issue 38: jobs in lock-step re-read each other's blocks (99 % bound, either side;
        # a record from before has no figure and is not judged)
        "25 % distinct": whole(distinct_pct=25.0), "98.9 % distinct": whole(distinct_pct=98.9),
        "99 % distinct": whole(distinct_pct=99.0),
        "distinct not stored": lambda p: p.pop("distinct_pct", None),
        "share +0.49": stream_shifted(0, "share_pct", 0.49),
        "share -0.6": stream_shifted(0, "share_pct", -0.6),
        "stream reads +3": stream_shifted(-1, "read_pct", 3.0),
        "stream reads +6": stream_shifted(-1, "read_pct", 6.0),
        "below its slice": stream_shifted(-1, "low_pct", -0.02),
        "past its slice": stream_shifted(-1, "high_pct", 0.005),
        "stream 99 % sequential": stream(0, sequential_pct=99.0),
        "curve 1.9 off": bent(1.9), "curve 2.7 off": bent(2.7), "curve 4.5 off": bent(4.5),
        "curve 10 off": bent(10.0),
        "no curve": lambda p: [s.update(curve=[]) for s in p["streams"]],
        "a stream missing": lambda p: p["streams"] and p["streams"].pop(),
        "a stream not asked": lambda p: p["streams"] and p["streams"].append(
            dict(p["streams"][0], name="extra")),
        "another profile's name": lambda p: p.update(profile="NOPE")}


def test_the_verifier_judges_a_pattern_as_the_station_does() -> None:
    """The verifier's own pattern judgement (method-notes §2) against the station's
    (`app/sequencer/access_check.py`), pattern by pattern over every searched profile of the shipped
    block method (the hot band's curved bands too) and each edit on either side of a
    tolerance: the same number of departures, so the same verdict."""
    import copy

    from app.sequencer.access_check import method_departures
    from app.method.loader import load_method
    from app.method.record import resolved_method
    from app.storage.codec import pattern_from_json

    method = load_method("emerald-block-v3")
    stored = json.loads(json.dumps(resolved_method(method)))
    mine = verifier_module().pattern_off
    verdicts = set()
    for profile in method.profiles:
        if profile.trace is not None or profile.intensity_of is not None:
            continue  # never searched: no pre-run pattern
        for case, edit in _pattern_edits().items():
            pattern = copy.deepcopy(_on_profile(profile))
            edit(pattern)
            theirs = method_departures(pattern_from_json(pattern), method)
            ours = mine(json.loads(json.dumps(pattern)), stored)
            assert len(ours) == len(theirs), (profile.name, case, ours, theirs)
            verdicts.add((case, not ours))
            if profile.name == "SR" and "distinct" in case:
                assert (not ours) == (case in ("99 % distinct", "distinct not stored")), ours
    assert ("as asked", True) in verdicts and ("modelled", True) in verdicts
    assert {met for _, met in verdicts} == {True, False}
    assert sum(not met for _, met in verdicts) >= 20  # most edits break some profile


def test_the_stored_pts_steady_state_verdict_is_held_against_the_rounds() -> None:
    """Since revision 0020 a bundle's preconditioning phase carries the verdict the station
    stored; the verifier keeps deriving the steady window itself and compares. A bundle from
    before (no ``steady_state``) still verifies, the comparison named not checked."""
    verifier = verifier_module()
    found = (7, 1000.0, 5.0, 2.0)  # the verifier's own: steady after 7 rounds
    stored = {"steady": True, "round_index": 6, "window_average": 1000.0, "range_pct": 5.0,
              "slope_excursion_pct": 2.0, "gave_up": False, "reason": ""}

    def judged(verdict, mine=found) -> tuple[int, int, list[str]]:
        c = verifier.Checklist(io.StringIO())
        verifier.check_stored_steady_state(c, verdict, mine, 10, 5)
        return c.passed, c.failed, c.unchecked

    assert judged(stored) == (1, 0, [])
    assert judged({**stored, "round_index": 7})[1] == 1  # another round
    assert judged({**stored, "range_pct": 5.000001})[1] == 1  # another figure
    assert judged({**stored, "steady": False}, None) == (1, 0, [])  # neither steady
    assert judged(stored, None)[1] == 1  # stored steady, the rounds never are
    passed, failed, unchecked = judged(None)
    assert (passed, failed) == (0, 0) and "stored before the station kept it" in unchecked[0]


def test_an_intervals_operations_cost_the_slices_it_overlaps_not_the_phases_length() -> None:
    """Issue 37 item 4 (linear time): the pro-rata walk of one interval reads the slices that
    can overlap it, wherever the interval lies in its phase. It copied the rest of the phase's
    slices for every interval (``slices[k:]``), so a 48 h conditioning cost 3.9× a 24 h one
    (bench_verifier); counted here in slices touched, not seconds."""
    verifier = verifier_module()

    class Counted(list):
        touched = 0

        def __getitem__(self, key):
            got = super().__getitem__(key)
            Counted.touched += len(got) if isinstance(key, slice) else 1
            return got

    def touched_by_first_interval(n: int) -> tuple[int, float]:
        slices = Counted(verifier.Slice(1, 1, float(k), float(k + 1), 10, 4096, 1.0)
                         for k in range(n))
        Counted.touched = 0
        ops, _ = verifier.window_ops(slices, [s.t_end for s in slices], 0.0, 60.0, "IOPS")
        return Counted.touched, ops

    short, long_ = touched_by_first_interval(1_440), touched_by_first_interval(2_880)
    assert short[1] == long_[1] == 600  # 60 one-second slices of 10 IOs
    assert short[0] == long_[0] <= 62, (short, long_)


@pytest.mark.parametrize(("finished", "met"), [
    ("2027-05-01T23:59:00+00:00", True),  # 365 days at the end: within 365
    ("2027-05-02T18:40:00+00:00", False),  # the run went past midnight: 366 days at its end
    (None, False),  # not finished: its planned phases (20 h from 22:00) end on 2027-05-02
])
def test_the_verifier_judges_calibration_at_the_run_s_end(finished, met) -> None:
    """Issue 38, seen 4: a calibration 365 days old at the start stayed MET although it
    expired during the run; the verifier judges it on the day the run ended (or its planned
    phases end), as the station's ``app.rules.compliance.run_end`` does."""
    from types import SimpleNamespace
    verifier = verifier_module()
    meter = {"calibration_date": "2026-05-01"}
    b = SimpleNamespace(
        run={"run": {"started_wall": "2027-05-01T22:00:00+00:00", "finished_wall": finished},
             "configuration": {"power_meter": meter}, "instruments": {
                 "power_inputs": [], "power_meter": meter, "temperature_meter": None}},
        phases=[{"planned_s": 20 * 3600.0}])
    found = verifier._calibration(b, 365)
    assert found.met is met, found
    assert verifier._calibration(b, 365, 2).met  # rules 2 judged the start day: a bundle
    # written under them is re-derived as the station derived it
    if not met:
        assert "days before the run's end (2027-05-02) > 365 days" in found.evidence


@pytest.mark.process
@pytest.mark.parametrize(("member", "field"), [("run.json", "method.name"),
                                               ("method.json", "version")])
def test_a_method_name_that_only_looks_registered_is_refused_by_the_verifier(
        demo, tmp_path, member, field) -> None:
    """Issue 38, seen 7: the station now refuses such a name at load; the verifier refuses a
    bundle carrying one (U+2010 hyphens) in either place, naming the member, field and
    character — the same alphabet ([A-Za-z0-9._+-]) on both sides."""
    _, bundle = demo

    def look_alike(data: bytes) -> bytes:
        item = json.loads(data)
        where = item["method"] if member == "run.json" else item
        key = field.rpartition(".")[2]
        where[key] = f"{where[key]}\u2010v3"
        return json.dumps(item).encode()
    status, out = verify(tampered(bundle, tmp_path / "t.zip", {member: look_alike}))
    assert status == 2 and f"{member}: field {field}: " in out and "(U+2010 at position" in out, out
    assert "only letters A–Z a–z, digits and . _ + -" in out, out
