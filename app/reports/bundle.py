"""The result bundle: one zip holding a stored run's raw data, for an auditor's own check.

A PDF and an xlsx ask their reader to trust the station that made them. The bundle carries what
the figures were computed from — every power sample with its flags and uncertainty, every
inlet reading, every workload slice, the interval grid, the resolved method as run — so the
standalone verifier (``verifier/storwatt_verify.py``, standard library only) or any third
implementation can recompute every figure (issue 29). The layout is documented field by field
in docs/export-format.md ("Result bundle"); its ``FORMAT`` names it, and a change to it gets a
new name.

Open formats only: CSV with the unit in each header (floats as Python's shortest round-trip
``repr``, so a reader gets the stored double back exactly; an empty cell is no value) and JSON
Lines / JSON for records. The manifest lists the SHA-256 of every other file and the record
hash as the station computes it (:mod:`app.storage.record_hash`), so a bundle names the record
it is and an approval's hash can be checked against it.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import zipfile
from collections.abc import Iterable, Sequence
from typing import Any

from app import __version__
from app.method.loader import MethodError
from app.method.taxonomy import load_taxonomy
from app.signoff.revisions import SignOff, sign_off
from app.storage.record_hash import FORMAT as RECORD_FORMAT
from app.storage.codec import FLAG_CODES
from app.storage.record_hash import canonical_json
from app.storage.stored import StoredRun
from app.sequencer.conformance import COUNTED_FLAGS
from drivers.interfaces import EXCLUDING_FLAGS

#: names the bundle layout (docs/export-format.md, "Result bundle"); /2 added the reading-flag
#: table (``flags.json``), each member's size and row count in the manifest (issue 37) and the
#: windowed maximum-power figures (``max_power.json``, issue 42)
FORMAT = "storwatt-bundle/2"

POWER_HEADER = ("phase", "attempt", "interval", "window", "t_s", "watts_W", "volts_V", "amps_A",
                "pf", "freq_Hz", "range_V", "range_A", "uncertainty_pct", "flags")
INLET_HEADER = ("phase", "attempt", "interval", "window", "t_s", "celsius_C", "flags")
INPUT_HEADER = ("input", "t_s", "watts_W", "volts_V", "amps_A", "range_V", "range_A",
                "uncertainty_pct", "flags")
SLICE_HEADER = ("phase", "attempt", "window", "t_start_s", "t_end_s", "read_ios", "write_ios",
                "read_bytes_B", "write_bytes_B", "avg_resp_ms", "max_resp_ms", "host")


def _cell(value: Any) -> str:
    """A CSV cell: floats exact (shortest round-trip repr), NaN/None empty."""
    if value is None:
        return ""
    if isinstance(value, float):
        return "" if math.isnan(value) else repr(value)
    return str(value)


def _csv(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    writer.writerows([_cell(v) for v in row] for row in rows)
    return out.getvalue().encode("utf-8")


def _flags(flags: Iterable[str]) -> str:
    return ";".join(sorted(flags))


def _jsonl(items: Iterable[Any]) -> bytes:
    return b"".join(canonical_json(item) + b"\n" for item in items)


def _columns(arrays: object, names: Sequence[str]) -> list[list[Any]]:
    """The named columns as Python lists (ints and floats; numpy scalars are slow to format),
    flag sets as their cells."""
    return [[_flags(f) for f in getattr(arrays, n)] if n == "flags"
            else getattr(arrays, n).tolist() for n in names]


def _power_csv(run: StoredRun) -> bytes:
    return _csv(POWER_HEADER, zip(*_columns(run.power, (
        "phase_index", "attempt", "interval", "window", "t", "watts", "volts", "amps", "pf",
        "freq_hz", "range_v", "range_a", "uncertainty_pct", "flags"))))


def _inlet_csv(run: StoredRun) -> bytes:
    return _csv(INLET_HEADER, zip(*_columns(run.temperature, (
        "phase_index", "attempt", "interval", "window", "t", "celsius", "flags"))))


def _inputs_csv(run: StoredRun) -> bytes:
    names = ("t", "watts", "volts", "amps", "range_v", "range_a", "uncertainty_pct", "flags")
    return _csv(INPUT_HEADER, ((i.name, *row) for i in run.power_inputs
                               for row in zip(*_columns(i, names))))


def _slices_csv(run: StoredRun) -> bytes:
    return _csv(SLICE_HEADER, (
        (w.phase_index, w.attempt, int(w.window), s.t_start, s.t_end, s.read_ios, s.write_ios,
         s.read_bytes, s.write_bytes, s.avg_resp_ms, s.max_resp_ms, s.host)
        for w in run.workload for s in (w.interval,)))


def _run_json(run: StoredRun, signed: SignOff) -> dict[str, Any]:
    """The run's identity, SUT, instruments and the station's own verdict and sign-off."""
    return {
        "run": {"run_id": run.run_id, "status": run.status, "started_wall": run.started_wall,
                "finished_wall": run.finished_wall, "planned_s": run.planned_s,
                "duration_s": run.duration_s, "error": run.error,
                "workload_engine": run.workload_engine, "taxonomy": run.taxonomy},
        "method": {"name": run.method_name, "version": run.method_version,
                   "claims_compliant": run.method_compliant, "sha256": run.method_sha256},
        "configuration": run.config_snapshot,
        "instruments": {"power_meter": run.power_meter,
                        "temperature_meter": run.temperature_meter,
                        "power_inputs": [{"name": i.name, "identity": i.identity,
                                          "element": i.element, "wiring": i.wiring,
                                          "accuracy": i.accuracy} for i in run.power_inputs]},
        "resumptions": run.resumptions,
        "range_plan": run.range_plan,
        "compliance": run.compliance.as_json(),
        "registry_entry": _registry_entry(run),
        "taxonomy": _taxonomy(run),
        "revisions": [{"revision": r.number, "record_sha256": r.sha256,
                       "entry": None if r.entry is None else r.entry.entry_id,
                       "changes": r.changes} for r in signed.revisions],
        "approvals": [{"entry": a.entry.entry_id, "author": a.entry.author,
                       "recorded_utc": a.entry.created_wall, "text": a.entry.text,
                       "revision": a.revision, "record_sha256": a.sha256,
                       "applies_to_current": a.current and a.intact}
                      for a in signed.approvals],
        "sign_off": signed.status,  # with the hash rebuilt or sealed here (docs/security.md)
    }


def _registry_entry(run: StoredRun) -> dict[str, Any] | None:
    """The registry entry the verdict compared the method with (its own, or the nearest):
    the verifier checks its content against its own pinned SHA-256 and derives the
    deviations itself (app.method.normative)."""
    identity = run.compliance.identity
    entry = identity.entry if identity else None
    return None if entry is None else {"name": entry.name, "version": entry.version,
                                       "normative": entry.content}


def _taxonomy(run: StoredRun) -> dict[str, Any] | None:
    """The taxonomy the method names (its ``taxonomy_file``), as the classification
    criterion read it: the verifier classifies the recorded answers by it (method-notes §1)."""
    method = run.method
    if method is None:
        return None
    try:
        return load_taxonomy(method).model_dump(mode="json")
    except MethodError:
        return None


def _phases(run: StoredRun) -> list[dict[str, Any]]:
    return [{"index": p.index, "kind": p.info.kind, "name": p.info.name,
             "profile": p.info.profile, "planned_s": p.info.planned_s,
             "stabilisation_intervals": p.info.stabilisation_intervals,
             "measurement_intervals": p.info.measurement_intervals, "status": p.status,
             "attempts": p.attempts, "t_start_s": p.t_start, "t_end_s": p.t_end,
             "error": p.error, "workload": p.workload,
             "steady_state": p.steady_state} for p in run.phases]


def flag_table() -> dict[str, Any]:
    """The station's reading-flag table as the samples were stored and judged under it: each
    flag's stored code (the samples SHA-256 hashes these), whether it keeps a sample out of
    every average, and whether the method's tolerance of flagged samples counts it
    (method-notes §3). The verifier pins its own copy per record format and names any
    difference, so the two tables cannot drift apart silently (issue 37)."""
    return {"record_format": RECORD_FORMAT,
            "flags": [{"name": name, "code": code, "excludes": name in EXCLUDING_FLAGS,
                       "counted": name in COUNTED_FLAGS}
                      for name, code in sorted(FLAG_CODES.items())]}


def _rows(name: str, data: bytes) -> int:
    """Rows of a row member as the verifier counts them: CSV records after the header, or
    JSON lines."""
    if name.endswith(".csv"):
        return sum(1 for _ in csv.reader(io.StringIO(data.decode("utf-8")))) - 1
    return data.count(b"\n")


def bundle_files(run: StoredRun, signed: SignOff) -> dict[str, bytes]:
    """Every file of the bundle but the manifest, by name."""
    method = canonical_json(run.method_json) if run.method_json is not None else b"null"
    return {
        "run.json": canonical_json(_run_json(run, signed)),
        "flags.json": canonical_json(flag_table()),
        "method.json": method,
        "phases.jsonl": _jsonl(_phases(run)),
        "attempts.jsonl": _jsonl(run.attempts),
        "intervals.jsonl": _jsonl(run.intervals),
        "metrics.jsonl": _jsonl(run.metrics),
        "histograms.jsonl": _jsonl(run.histograms),
        "search.jsonl": _jsonl(run.search_results),
        "events.jsonl": _jsonl(run.events),
        "audit.jsonl": _jsonl({"entry": e.entry_id, "kind": e.kind, "subject": e.subject,
                               "outcome": e.outcome, "disposition": e.disposition,
                               "text": e.text, "author": e.author,
                               "recorded_utc": e.created_wall, "revision": e.revision,
                               "record_sha256": e.record_sha256} for e in run.audit),
        "power_samples.csv": _power_csv(run),
        "inlet_temperature.csv": _inlet_csv(run),
        "power_input_samples.csv": _inputs_csv(run),
        "workload_slices.csv": _slices_csv(run),
        "max_power.json": canonical_json({"sut_input": run.max_power}),
    }


def build_bundle(run: StoredRun, out: io.BufferedIOBase | io.BytesIO) -> None:
    """Write the bundle of ``run`` (a zip, deflated, fixed timestamps so the same record gives
    the same bytes) to ``out``."""
    signed = sign_off(run)
    files = bundle_files(run, signed)
    manifest = {
        "format": FORMAT, "run_id": run.run_id, "station_version": __version__,
        "record_format": RECORD_FORMAT, "record_sha256": signed.current.sha256,
        "samples_sha256": run.samples_sha256,
        "method_sha256": run.method_sha256,
        "files": {name: hashlib.sha256(data).hexdigest() for name, data in sorted(files.items())},
        # what the verifier may read of each member, declared before it reads a byte
        "sizes": {name: len(data) for name, data in sorted(files.items())},
        "rows": {name: _rows(name, data) for name, data in sorted(files.items())
                 if name.endswith((".csv", ".jsonl"))},
    }
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in [("manifest.json", json.dumps(manifest, indent=1, sort_keys=True)
                            .encode("utf-8")), *sorted(files.items())]:
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)
