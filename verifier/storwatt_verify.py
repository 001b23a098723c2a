#!/usr/bin/env python3
"""storwatt-verify: check a StorWatt result bundle without trusting the station that made it.

    storwatt-verify BUNDLE.zip [--record-sha256 HASH]
    python storwatt_verify.py BUNDLE.zip [--record-sha256 HASH]

An auditor, a customer or a second lab runs this on stock Python 3.11 or later: it imports the
standard library only and nothing of the station (issue 29). From the bundle's raw data — power
samples, workload slices, the interval grid, the method as run — it recomputes with its own code
every figure the station reported, replays the steps the run took (intensity search, sweep,
PTS steady state) and derives the compliance verdict criterion by criterion; it prints one
checklist line per criterion (``[x]`` agrees, ``[ ]`` does not) with its figure beside the
station's, and a ``not checked:`` line for each thing it does not recompute. Exit status 0 only when
every figure agrees to 1e-9 relative and
every verdict it derives matches the station's; 1 otherwise; 2 when the bundle cannot be read.

The bundle layout is documented in the repository's docs/export-format.md ("Result bundle");
each rule below names the docs/method-notes.md section it implements. Read top to bottom: the
constants, reading the bundle, the method's rules, the checks, the command line.
"""

from __future__ import annotations

import argparse
import bisect
import csv
import functools
import hashlib
import io
import json
import math
import os
import re
import stat
import struct
import sys
import traceback
import zipfile
from pathlib import PurePath
from datetime import date, datetime, timedelta
from decimal import Decimal
from dataclasses import dataclass, field
from typing import Any

BUNDLE_FORMAT = "storwatt-bundle/2"  # /2: flags.json, sizes/rows (issue 37), max_power.json (42)
VERIFIER_VERSION = "2"  # this file's own version (storwatt-verify --version)
REL_TOL = 1e-9
MIB = 2**20  # MiB/s profiles count mebibytes (method-notes §4)
GB = 10**9  # EP_RI's GB is 10⁹ bytes (method-notes §4)

# ------------------------------------------------------------------------------------------
# REGISTERED COMPLIANT METHODS — the anchor outside the bundle.
# Key: SHA-256 of a method's *normative content* (below), as the station's registry pins it
# (docs/method.md, "The registry of compliant methods"); value: "name version". A run whose
# method's normative content hashes to one of these ran that registered method, whatever its
# file is called; any other method is a variant. Append a release's new entries here, never
# edit one: a run is judged against the entry of the version it recorded.
REGISTERED_COMPLIANT_METHODS: dict[str, str] = {
    "4295d9f697d7f7a712db394a676dbbf30facf70ebde4f70ffdfbce71e6172817":
        "emerald-block-v3 3.0.0-sw1",
    "662f50f7cfcde1003bb5213da6a63b2ce9b86afd4adcda8408f44a7452320ff9":
        "emerald-hotband-v3 3.0.0-sw1-hotband1",
}
#: the method keys whose values the registry pins (docs/method.md: every key but the method's
#: names and what a lab may set — fio's job count and stall limit, the ranging mode and pass,
#: the meter-silence limit, the confidence levels a report lists), each with how a run's value
#: may differ from the registry's: "exact" (any change deviates), "at most" / "at least" (only
#: the stricter way), "within" (a narrower range), "bounded" (judged against the method's own
#: [compliance] minimums instead, never a deviation)
NORMATIVE_KEYS: dict[str, str] = {
    "interval_s": "bounded", "sample_period_s": "bounded", "taxonomy_file": "exact",
    "stability.wma_points": "exact", "stability.weights": "exact",
    "stability.tolerance_pct": "at most", "stability.max_drift_pct": "at most",
    "stability.max_stabilisation_intervals": "at least", "response_time.max_avg_ms": "exact",
    "response_time.ceiling_ms": "exact", "search.probe_s": "exact",
    "search.queue_depths": "exact", "search.tolerance_pct": "exact", "search.recheck": "exact",
    "search.startup_s": "exact", "search.stream_iops_per_step": "exact",
    "search.generator_check_s": "at least", "search.generator_max_share_pct": "at most",
    "search.derived_rate_tolerance_pct": "at most",
    "instruments.max_power_interval_s": "at most", "instruments.max_uncertainty_pct": "at most",
    "instruments.min_accuracy": "exact", "instruments.voltage_ranges": "within",
    "instruments.frequency_hz": "within", "instruments.temperature_resolution_c": "at most",
    "instruments.max_temperature_interval_s": "at most", "instruments.inlet_classes": "within",
    "instruments.max_flagged_power_samples": "at most",
    "instruments.max_identical_readings": "at most",
    "instruments.power_plausibility_tolerance_pct": "at most", "profiles": "exact",
    "plans": "exact", "coms": "exact", "compliance": "exact",
    "ranging.headroom_pct": "at least", "ranging.min_crest_factor": "at least"}
#: the station's default tolerance on a derived profile's (MW2's) achieved rate, in % of its
#: target, when the method states none (method-notes §2, "What ran is judged")
DERIVED_RATE_TOLERANCE_PCT = 5.0
#: keys added after an entry shipped, with what their absence means: unstated (null), such a
#: key is no part of the normative content; against a content without it, this value stands
LATER_KEYS: dict[str, Any] = {"search.derived_rate_tolerance_pct": DERIVED_RATE_TOLERANCE_PCT}
#: a plan's pinned keys and their kinds; its active steps enter as the profile order and
#: their intervals
PLAN_KEYS: dict[str, str] = {
    "categories": "exact", "prefill": "exact", "prefill_block_kib": "exact",
    "prefill_passes": "at least", "prefill_max_intervals": "exact",
    "conditioning_profile": "exact", "conditioning_intervals": "at least", "active": "exact",
    "active_intervals": "bounded", "sweep": "exact", "demand_intensity": "exact",
    "ready_idle_intervals": "bounded", "com_check_intervals": "at least"}
#: the taxonomy files a registered method names, by the SHA-256 of their content as the
#: bundle carries it (``run.json`` ``taxonomy``, canonical JSON): the classification
#: criterion is derived from answers read against this table (method-notes §1)
REGISTERED_TAXONOMIES: dict[str, str] = {
    "777251681f798c4850a7fcea1d874a77a995a596895b580d1a45ce8dfc66456e": "taxonomy-emerald-v3.toml",
}
# ------------------------------------------------------------------------------------------


def normative_content(method: dict[str, Any]) -> dict[str, Any]:
    """The pinned part of a method as stored with a run (``method.json``): each key of
    ``NORMATIVE_KEYS`` by its dotted name; a profile without its prose title and with its
    trace's file name only, the COMs by id, each plan by ``PLAN_KEYS``."""
    content: dict[str, Any] = {}
    for key in NORMATIVE_KEYS:
        value: Any = method
        for part in key.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        if value is None and key in LATER_KEYS:
            continue
        if key == "profiles":
            value = [{**{k: v for k, v in p.items() if k != "title"},
                      "trace": PurePath(p["trace"]).name
                      if p.get("trace") else None} for p in value]
        elif key == "coms":
            value = [c["id"] for c in value]
        elif key == "plans":
            value = [_plan(p) for p in value]
        content[key] = value
    return content


def _plan(plan: dict[str, Any]) -> dict[str, Any]:
    kept = {k: v for k, v in plan.items() if k in PLAN_KEYS or k == "name"}
    kept["active"] = [step["profile"] for step in plan["active"]]
    kept["active_intervals"] = [[step["stabilisation_intervals"],
                                 step["measurement_intervals"]] for step in plan["active"]]
    return kept


def normative_sha256(method: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(normative_content(method), sort_keys=True,
                                     separators=(",", ":"), ensure_ascii=False)
                          .encode("utf-8")).hexdigest()


RECORD_FORMAT = "storwatt-record/2"  # the record hash this verifier rebuilds (docs/storage.md)
#: THE READING-FLAG TABLE this verifier knows, per record format — the second anchor outside
#: the bundle: flag name → (its stored one-letter code, excludes the sample from every average,
#: counted against the method's tolerance of flagged power samples) (method-notes §3;
#: docs/storage.md). The samples SHA-256 hashes flags by these codes; a bundle of format
#: storwatt-bundle/2 carries the station's own table (``flags.json``), which must equal this
#: one, and a sample flag missing here is named, never a silent hash mismatch. Append a flag
#: the station gains here in the same change (tests/test_verifier_flags.py holds the two
#: tables together).
FLAG_TABLES: dict[str, dict[str, tuple[str, bool, bool]]] = {
    "storwatt-record/2": {
        "no_data": ("N", True, True), "overrange": ("O", True, True),
        "range_change": ("R", True, True), "invalid": ("I", True, True),
        "uncertainty_high": ("U", False, False), "uncertainty_unknown": ("K", True, True),
        "sensor_error": ("S", True, False), "garbage": ("G", True, True),
        "voltage_out_of_range": ("V", False, False),
        "frequency_out_of_range": ("F", False, False), "input_missing": ("X", True, True),
        "inputs_misaligned": ("A", True, True), "low_current": ("L", False, False),
        "frequency_not_measured": ("H", False, False), "stale": ("Z", True, True),
        "implausible": ("P", True, True)},
}
FLAG_TABLE = FLAG_TABLES[RECORD_FORMAT]
#: flags that exclude a power sample from every average (method-notes §3)
EXCLUDING_FLAGS = frozenset(f for f, (_, excludes, _) in FLAG_TABLE.items() if excludes)
#: flags counted against the method's tolerance of flagged power samples (method-notes §3)
COUNTED_FLAGS = frozenset(f for f, (_, _, counted) in FLAG_TABLE.items() if counted)
UNCERTAINTY_HIGH = "uncertainty_high"  # above the method's uncertainty limit (method-notes §3)
#: the station's stored one-letter code of each flag: a flag without a code is kept by name
#: after a "|" (docs/storage.md)
FLAG_CODES = {f: code for f, (code, _, _) in FLAG_TABLE.items()}
BOUNDARY_EPS = 1e-9  # the recorder's tolerance on slice ends at a window edge (seconds)

LOADED_KINDS = ("active", "sweep")  # phases with stabilisation + measurement windows (§2, §6)
FILES = ("run.json", "method.json", "phases.jsonl", "attempts.jsonl", "intervals.jsonl",
         "metrics.jsonl", "histograms.jsonl", "search.jsonl", "events.jsonl", "audit.jsonl",
         "power_samples.csv", "inlet_temperature.csv", "power_input_samples.csv",
         "workload_slices.csv")


@dataclass(frozen=True)
class Sample:
    phase: int
    attempt: int
    interval: int  # where the station placed it
    t: float
    watts: float
    flags: frozenset[str]
    volts: float = math.nan
    freq_hz: float = math.nan

    @property
    def usable(self) -> bool:
        return not (self.flags & EXCLUDING_FLAGS) and not math.isnan(self.watts)


@dataclass(frozen=True)
class Inlet:
    phase: int
    attempt: int
    t: float
    celsius: float
    usable: bool


@dataclass(frozen=True)
class Slice:
    phase: int
    attempt: int
    t_start: float
    t_end: float
    ios: int
    nbytes: int
    avg_resp_ms: float


@dataclass
class Bundle:
    manifest: dict[str, Any]
    files: dict[str, bytes] = field(default_factory=dict)  # the whole-JSON members' bytes
    run: dict[str, Any] = field(default_factory=dict)
    method: dict[str, Any] = field(default_factory=dict)
    phases: list[dict[str, Any]] = field(default_factory=list)
    attempts: list[dict[str, Any]] = field(default_factory=list)
    intervals: list[dict[str, Any]] = field(default_factory=list)
    metrics: list[dict[str, Any]] = field(default_factory=list)
    samples: list[Sample] = field(default_factory=list)
    slices: list[Slice] = field(default_factory=list)
    inlet: list[Inlet] = field(default_factory=list)
    parsed: dict[str, Any] = field(default_factory=dict)  # each CSV member's rows
    lines: dict[str, list[Any]] = field(default_factory=dict)  # each JSON Lines member's items
    digests: dict[str, str] = field(default_factory=dict)  # SHA-256 of each member read
    row_counts: dict[str, int] = field(default_factory=dict)
    extra: list[str] = field(default_factory=list)  # members no format names: never read
    flag_table: dict[str, Any] | None = None  # the station's (storwatt-bundle/2 on)
    max_power: dict[str, Any] | None = None  # the station's maxima (storwatt-bundle/2 on)

    def table(self, name: str) -> list[dict[str, str]]:
        """The rows of a CSV file of the bundle (parsed as read; from ``files`` otherwise)."""
        if name not in self.parsed:
            self.parsed[name] = _csv_rows(self.files[name])
        return self.parsed[name]

    def jsonl(self, name: str) -> list[Any]:
        """The items of a JSON Lines file of the bundle."""
        if name not in self.lines:
            self.lines[name] = _jsonl(self.files[name])
        return self.lines[name]

    def samples_sha256(self) -> str:
        if "samples_sha256" not in self.parsed:
            self.parsed["samples_sha256"] = samples_sha256(self)
        return self.parsed["samples_sha256"]


class BundleError(Exception):
    """The bundle cannot be read, or is not the shape its format documents (exit status 2)."""


# --- reading the bundle -------------------------------------------------------------------
# Nothing in a bundle is trusted before it is checked (issue 37): the path must be a regular
# file; each member a plain name, once, no link; a member is read only if its format names
# it, its size (as the zip states it) within what the manifest declares — its declared size,
# never more than its row count times the most bytes a row of that member may take, plus a
# little slack — and read as a stream that stops at that size and at its declared rows (plus
# slack) whatever the zip claimed; JSON nests at most MAX_JSON_DEPTH deep, holds no NaN or
# number past a double, and is checked against SCHEMAS before use. Every refusal is one line
# naming the member and the field (exit status 2).

MAX_JSON_DEPTH = 64
SLACK_BYTES = 64 * 1024  # a header line and rounding: added to every row member's bound
#: lines a row member may hold beyond the rows its manifest declares: a hand-edited line is a
#: SHA-256 disagreement (exit 1), a flood of empty lines is refused before it costs a minute
SLACK_ROWS = 1024
MAX_ROWS = 50_000_000  # rows one member may declare (≈ 580 days of 1 s samples)
#: the most bytes a whole-JSON member may hold
JSON_MEMBER_BYTES = {"manifest.json": 1 << 20, "run.json": 32 << 20, "method.json": 4 << 20,
                     "flags.json": 1 << 16, "max_power.json": 16 << 20}
#: the most bytes one row of each row member may take (a JSON line, a CSV record, newline
#: included)
ROW_BYTES = {"phases.jsonl": 1 << 20, "attempts.jsonl": 1 << 12, "intervals.jsonl": 1 << 12,
             "metrics.jsonl": 1 << 16, "histograms.jsonl": 1 << 20, "search.jsonl": 1 << 22,
             "events.jsonl": 1 << 16, "audit.jsonl": 1 << 16, "power_samples.csv": 1 << 10,
             "inlet_temperature.csv": 1 << 10, "power_input_samples.csv": 1 << 10,
             "workload_slices.csv": 1 << 10}
#: storwatt-bundle/1 declares no sizes: each of its row members is held to this instead
OLD_FORMAT_MEMBER_BYTES = 256 << 20
BUNDLE_FORMATS = ("storwatt-bundle/1", BUNDLE_FORMAT)

#: THE PUBLISHED SCHEMA: the JSON structure of each member the verifier reads, checked before
#: any of it is used; docs/export-format.md ("Structure checked before use") prints the
#: manifest's and run.json's as tables, and tests/test_verifier_schema.py holds the two
#: together. A field's kind ("str", "int", "num" — a number, null or "inf"/"-inf" —, "bool",
#: "obj", "list", "any"; a trailing "?" also allows null), a nested object's own fields (a
#: dict), or a list's items ([kind]). A field is required unless its name ends in "?" (then
#: it may be absent, as in a bundle of an earlier format); a field not named may be there or
#: not.
RUN_SCHEMA: dict[str, Any] = {
    "run": {"run_id": "str", "status": "str", "started_wall": "str?", "finished_wall": "str?",
            "planned_s": "num", "duration_s": "num", "error": "str?",
            "workload_engine": "str?"},
    "method": {"name": "str", "version": "str", "claims_compliant": "bool",
               "sha256": "str?"},
    "configuration": {"sut": {"raw_capacity_bytes": "int", "supply": "str",
                              "ashrae_class": "str"}},
    "instruments": {"power_meter": "obj?", "temperature_meter": "obj?",
                    "power_inputs": ["obj"]},
    "compliance": "obj?", "revisions": ["obj"], "approvals": ["obj"],
}
SCHEMAS: dict[str, Any] = {
    "manifest.json": {"format": "str", "run_id": "str", "station_version?": "str?",
                      "record_format": "str", "record_sha256": "str", "samples_sha256": "str?",
                      "method_sha256": "str?", "files": "obj", "sizes?": "obj", "rows?": "obj"},
    "run.json": RUN_SCHEMA,
    "method.json": "obj?",
    "flags.json": {"record_format": "str", "flags": [{"name": "str", "code": "str",
                                                      "excludes": "bool", "counted": "bool"}]},
    "max_power.json": {"sut_input": "obj"},
    "phases.jsonl": {"index": "int", "kind": "str", "name": "str", "profile": "str?",
                     "planned_s": "num", "stabilisation_intervals": "int",
                     "measurement_intervals": "int", "status": "str", "attempts": "int",
                     "t_start_s": "num", "t_end_s": "num", "error": "str?", "workload": "obj?"},
    "attempts.jsonl": {"phase_index": "int", "attempt": "int", "t_start": "num",
                       "window_start_s": "num", "window_end_s": "num", "status": "str"},
    "intervals.jsonl": {"phase_index": "int", "attempt": "int", "index": "int",
                        "start_s": "num", "end_s": "num", "avg_power_w": "num",
                        "n_power_samples": "int", "ops_rate": "num", "ep": "num", "wma": "num",
                        "stable": "bool?", "ops_unit": "str?"},
    "metrics.jsonl": {"name": "str", "phase_index": "int?", "value": "num", "unit": "str",
                      "valid": "bool", "reason": "str?", "avg_power_w": "num",
                      "ops_rate": "num", "avg_response_ms": "num", "run_length_s": "num"},
    "histograms.jsonl": "obj", "search.jsonl": "obj", "events.jsonl": "obj",
    "audit.jsonl": {"kind": "str", "subject": "any", "outcome": "any", "disposition": "any",
                    "text": "any", "author": "any", "recorded_utc": "any"},
}
#: the columns each CSV member must have, and how each cell reads ("int", "num": empty is no
#: value, "str")
COLUMNS: dict[str, dict[str, str]] = {
    "power_samples.csv": {"phase": "int", "attempt": "int", "interval": "int", "window": "int",
                          "t_s": "num", "watts_W": "num", "volts_V": "num", "amps_A": "num",
                          "pf": "num", "freq_Hz": "num", "range_V": "num", "range_A": "num",
                          "uncertainty_pct": "num", "flags": "str"},
    "inlet_temperature.csv": {"phase": "int", "attempt": "int", "interval": "int",
                              "window": "int", "t_s": "num", "celsius_C": "num",
                              "flags": "str"},
    "power_input_samples.csv": {"input": "str", "t_s": "num", "watts_W": "num",
                                "volts_V": "num", "amps_A": "num", "range_V": "num",
                                "range_A": "num", "uncertainty_pct": "num", "flags": "str"},
    "workload_slices.csv": {"phase": "int", "attempt": "int", "window": "int",
                            "t_start_s": "num", "t_end_s": "num", "read_ios": "int",
                            "write_ios": "int", "read_bytes_B": "int", "write_bytes_B": "int",
                            "avg_resp_ms": "num", "max_resp_ms": "num", "host": "str"},
}
_KINDS = {"str": (str,), "int": (int,), "num": (int, float, str), "bool": (bool,),
          "obj": (dict,), "list": (list,)}
_WORDS = {"str": "text", "int": "an integer", "num": "a number", "bool": "true or false",
          "obj": "an object", "list": "a list"}


def _kind_error(value: Any, kind: str) -> str | None:
    """Why ``value`` is not of ``kind``, or None."""
    base = kind.rstrip("?")
    if base == "any" or (value is None and kind.endswith("?")):
        return None
    if base == "num" and value is None:
        return None  # a number's "no value"
    ok = isinstance(value, _KINDS[base]) and not (base in ("int", "num")
                                                 and isinstance(value, bool))
    if ok and base == "num" and isinstance(value, str):
        ok = value in ("inf", "-inf")
    if ok and base in ("int", "num") and isinstance(value, int) and abs(value) > sys.float_info.max:
        return f"must be a number a double holds, not one of {len(str(value))} digits"
    return None if ok else f"must be {_WORDS[base]}, not {type(value).__name__}"


def check_schema(value: Any, schema: Any, where: str) -> None:
    """Raise BundleError naming ``where`` and the field when ``value`` does not fit."""
    if isinstance(schema, str):
        if (why := _kind_error(value, schema)) is not None:
            raise BundleError(f"{where}: {why}")
    elif isinstance(schema, list):
        if not isinstance(value, list):
            raise BundleError(f"{where}: must be a list, not {type(value).__name__}")
        for i, item in enumerate(value):
            check_schema(item, schema[0], f"{where}[{i}]")
    else:
        if not isinstance(value, dict):
            raise BundleError(f"{where}: must be an object, not {type(value).__name__}")
        for key, inner in schema.items():
            name = key.removesuffix("?")
            if name not in value:
                if name != key:
                    continue  # may be absent
                raise BundleError(f"{where}: field {key!r} missing")
            check_schema(value[name], inner, f"{where}.{name}")


_JSON_TOKENS = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}]')


def json_value(data: bytes, where: str) -> Any:
    """One JSON text, at most MAX_JSON_DEPTH deep (counted before parsing, so no depth can
    exhaust the parser's stack)."""
    if data.count(b"[") + data.count(b"{") > MAX_JSON_DEPTH:
        depth = 0
        for token in _JSON_TOKENS.finditer(data):
            t = token.group()
            if t in (b"[", b"{"):
                depth += 1
                if depth > MAX_JSON_DEPTH:
                    raise BundleError(f"{where}: JSON nested deeper than {MAX_JSON_DEPTH}")
            elif t in (b"]", b"}"):
                depth -= 1
    try:
        return json.loads(data.decode("utf-8"), parse_constant=functools.partial(_no_constant,
                                                                                 where),
                          parse_float=functools.partial(_finite, where))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise BundleError(f"{where}: not JSON ({str(exc).splitlines()[0][:120]})") from None


def _no_constant(where: str, name: str) -> Any:
    """NaN and the infinities are no JSON numbers: the station writes null and "inf"/"-inf"
    (canonical JSON, docs/storage.md), so a bare one is a malformed member."""
    raise BundleError(f"{where}: {name} is not JSON (the station writes null, \"inf\" or "
                      "\"-inf\")")


def _finite(where: str, text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise BundleError(f"{where}: the number {text[:40]} is beyond what a double holds")
    return value


@dataclass
class ReadCount:
    """Decompressed bytes the last :func:`read_bundle` took from each member (tests count
    them: a hostile member must be refused before or as it passes its bound)."""

    by_member: dict[str, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(self.by_member.values())


LAST_READ = ReadCount()


class MemberStream(io.RawIOBase):
    """A member's bytes as a stream: hashed as they pass, and refused past ``limit``."""

    def __init__(self, raw: Any, name: str, limit: int) -> None:
        super().__init__()
        self.raw, self.name, self.limit = raw, name, limit
        self.digest = hashlib.sha256()
        self.consumed = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        want = min(len(buffer), self.limit - self.consumed + 1)
        data = self.raw.read(want)
        self.consumed += len(data)
        LAST_READ.by_member[self.name] = self.consumed
        if self.consumed > self.limit:
            raise BundleError(f"{self.name}: larger than the {self.limit} bytes its manifest "
                              "allows (field sizes)")
        self.digest.update(data)
        buffer[:len(data)] = data
        return len(data)


def _float(text: str) -> float:
    return float(text) if text != "" else math.nan


def _csv_rows(data: bytes) -> list[dict[str, str]]:
    rows = csv.reader(io.StringIO(data.decode("utf-8")))
    header = next(rows, [])
    return [dict(zip(header, row)) for row in rows]


def _jsonl(data: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in data.decode("utf-8").splitlines() if line.strip()]


def _cell_checked(member: str, row: int, column: str, text: str, kind: str) -> None:
    """A cell reads as its kind; a time (a column in seconds, ``…_s``) is a finite number,
    and no number overflows a double (the station writes ``repr`` of stored doubles)."""
    try:
        if kind == "int":
            int(text)
        elif kind == "num" and text != "":
            value = float(text)
            if ((column.endswith("_s") and not math.isfinite(value))
                    or (math.isinf(value) and "inf" not in text.lower())):
                raise ValueError
    except ValueError:
        raise BundleError(f"{member} row {row}: column {column!r}: {text[:40]!r} is not "
                          f"{'a finite number' if kind == 'num' else _WORDS[kind]}") from None


def _too_many(name: str, lines: int | None, n: int) -> None:
    if lines is not None and n > lines:
        raise BundleError(f"{name}: more than the {lines} lines its manifest's rows allow "
                          "(field rows)")


def _read_table(stream: Any, name: str, lines: int | None) -> list[dict[str, str]]:
    text = io.TextIOWrapper(stream, encoding="utf-8", newline="")
    rows = csv.reader(text)
    try:
        header = next(rows, [])
        missing = [c for c in COLUMNS[name] if c not in header]
        if missing:
            raise BundleError(f"{name}: column {missing[0]!r} missing")
        table = []
        checks = [(c, k) for c, k in COLUMNS[name].items() if k != "str"]
        for n, row in enumerate(rows, start=1):
            _too_many(name, lines, n)
            if len(row) != len(header):
                raise BundleError(f"{name} row {n}: {len(row)} cells, the header has "
                                  f"{len(header)}")
            record = dict(zip(header, row))
            for column, kind in checks:
                _cell_checked(name, n, column, record[column], kind)
            table.append(record)
    except (UnicodeDecodeError, csv.Error) as exc:
        raise BundleError(f"{name}: not UTF-8 CSV ({exc})") from None
    text.detach()  # the member stream stays open: its rest is hashed by the caller
    return table


def _read_lines(stream: Any, name: str, row_bytes: int,
                lines: int | None) -> tuple[list[Any], int]:
    """(the items, the lines) of a JSON Lines member."""
    items = []
    n = 0
    while line := stream.readline(row_bytes + 1):
        n += 1
        _too_many(name, lines, n)
        if len(line) > row_bytes:
            raise BundleError(f"{name} line {n}: longer than the {row_bytes} bytes a line "
                              "may hold")
        if not line.strip():  # the station writes one item a line: a flood of newlines ends here
            raise BundleError(f"{name} line {n}: empty (a JSON Lines member holds one item on "
                              "each line)")
        item = json_value(line, f"{name} line {n}")
        check_schema(item, SCHEMAS[name], f"{name} line {n}")
        items.append(item)
    return items, n


@dataclass(frozen=True)
class Bound:
    """What a reader may take of one member: bytes, and lines (rows) when its manifest
    declares them."""

    bytes: int
    lines: int | None = None


def _bound(name: str, manifest: dict[str, Any], info: zipfile.ZipInfo) -> Bound:
    """What member ``name`` may hold — its declared size (never more than its declared rows
    may take) and rows, each plus the reader's slack — checked against what the zip says it
    holds before a byte of it is read."""
    lines = None
    if name in JSON_MEMBER_BYTES:
        bound = JSON_MEMBER_BYTES[name]
    elif manifest["format"] == "storwatt-bundle/1":
        bound = OLD_FORMAT_MEMBER_BYTES
    else:
        rows, sizes = manifest.get("rows"), manifest.get("sizes")
        declared = {"rows": (rows or {}).get(name), "sizes": (sizes or {}).get(name)}
        for label, value in declared.items():
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise BundleError(f"manifest.json: field {label}.{name}: must be a count")
        count, size = int(declared["rows"] or 0), int(declared["sizes"] or 0)
        if count > MAX_ROWS:
            raise BundleError(f"manifest.json: field rows.{name}: {count} rows, more than "
                              f"{MAX_ROWS}")
        bound = count * ROW_BYTES[name] + SLACK_BYTES  # a size off it: SHA-256 differs
        if size > bound:
            raise BundleError(f"manifest.json: field sizes.{name}: {size} bytes, more than "
                              f"{count} rows may take")
        if declared["sizes"] is not None:
            bound = size + SLACK_BYTES
        if declared["rows"] is not None:
            lines = count + SLACK_ROWS
    if info.file_size > bound:
        raise BundleError(f"{name}: the zip says {info.file_size} bytes, more than the "
                          f"{bound} its manifest allows")
    return Bound(bound, lines)


def _members(archive: zipfile.ZipFile) -> dict[str, zipfile.ZipInfo]:
    """The members by name: each once, each a plain file at the top of the bundle (the
    station writes nothing else; a path out of it or a link is refused, never followed)."""
    infos: dict[str, zipfile.ZipInfo] = {}
    for info in archive.infolist():
        name = info.filename
        if name in infos:
            raise BundleError(f"{name}: in the zip twice")
        if not name or "/" in name or "\\" in name or ":" in name or name in (".", ".."):
            raise BundleError(f"{name}: member name is a path, not a file name of a bundle")
        if stat.S_ISLNK(info.external_attr >> 16) or info.is_dir():
            raise BundleError(f"{name}: member is a link or a directory, not a file")
        infos[name] = info
    return infos


def _open_regular(path: str) -> Any:
    """The bundle's file, opened only once it is known to be a regular file (a FIFO would
    hang, a device never end)."""
    try:
        st = os.stat(path)
    except OSError as exc:
        raise BundleError(f"cannot read {path}: {exc.strerror}") from None
    if not stat.S_ISREG(st.st_mode):
        raise BundleError(f"{path} is not a regular file")
    try:
        return open(path, "rb")
    except OSError as exc:
        raise BundleError(f"cannot read {path}: {exc.strerror}") from None


#: the characters of a method's name and version, as the station's loader takes them
#: (app/method/fields.py): a name that only looks registered (U+2010 hyphens, a trailing
#: space, zero-width or bidi characters) is refused (issue 38, seen 7)
SAFE_IDENT = re.compile(r"[A-Za-z0-9._+-]{1,64}")


def check_method_idents(b: Bundle) -> None:
    """Raise BundleError naming the field when the run's method name or version (run.json,
    method.json) has a character outside :data:`SAFE_IDENT`."""
    fields = [("run.json", "method." + key, b.run["method"][key]) for key in ("name", "version")]
    fields += [("method.json", key, b.method[key]) for key in ("name", "version", "variant_of")
               if b.method.get(key) is not None]
    for member, key, value in fields:
        if not isinstance(value, str) or not SAFE_IDENT.fullmatch(value):
            odd = next((c for c in str(value) if not SAFE_IDENT.fullmatch(c)), "")
            what = f" (U+{ord(odd):04X} at position {str(value).index(odd) + 1})" if odd else ""
            raise BundleError(f"{member}: field {key}: {value!r}{what} is not a method name: "
                              "only letters A–Z a–z, digits and . _ + - (1 to 64 characters)")


def read_bundle(path: str) -> Bundle:
    LAST_READ.by_member.clear()
    with _open_regular(path) as handle:
        try:
            with zipfile.ZipFile(handle) as archive:
                return _read_archive(archive, path)
        except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError,
                NotImplementedError) as exc:
            raise BundleError(f"cannot read {path}: {exc}") from None


def _read_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, bound: Bound,
                 b: "Bundle") -> Any:
    """Stream one member: parse it as its kind, record its SHA-256."""
    name = info.filename
    with archive.open(info) as raw:
        stream = MemberStream(raw, name, bound.bytes)
        buffered = io.BufferedReader(stream, 1 << 16)
        if name in JSON_MEMBER_BYTES:
            data = buffered.read()
            b.files[name] = data
            value = json_value(data, name)
            check_schema(value, SCHEMAS[name], name)
        elif name in COLUMNS:
            value = _read_table(buffered, name, bound.lines)
            b.row_counts[name] = len(value)
        else:
            value, b.row_counts[name] = _read_lines(buffered, name, ROW_BYTES[name],
                                                    bound.lines)
        buffered.read()  # the rest (hashed), so a digest is the whole member's
    b.digests[name] = stream.digest.hexdigest()
    return value


def _read_archive(archive: zipfile.ZipFile, path: str) -> Bundle:
    infos = _members(archive)
    if "manifest.json" not in infos:
        raise BundleError(f"{path} has no manifest.json: not a StorWatt result bundle")
    b = Bundle({})
    manifest_info = infos["manifest.json"]
    if manifest_info.file_size > JSON_MEMBER_BYTES["manifest.json"]:
        raise BundleError(f"manifest.json: the zip says {manifest_info.file_size} bytes, more "
                          f"than the {JSON_MEMBER_BYTES['manifest.json']} allowed")
    manifest = _read_member(archive, manifest_info, Bound(JSON_MEMBER_BYTES["manifest.json"]),
                            b)
    if manifest["format"] not in BUNDLE_FORMATS:
        raise BundleError(f"manifest.json: field format: {manifest['format']!r}; this verifier "
                          f"reads {', '.join(BUNDLE_FORMATS)}")
    b.manifest = manifest
    expected = FILES + (("flags.json", "max_power.json")
                        if manifest["format"] != "storwatt-bundle/1" else ())
    missing = [name for name in expected if name not in infos]
    if missing:
        raise BundleError(f"{path} lacks {', '.join(missing)}")
    absent = sorted(set(manifest["files"]) - set(infos))  # declared, never written: incomplete
    if absent:
        raise BundleError(f"manifest.json: field files.{absent[0]}: declared, but the zip has "
                          "no such member")
    b.extra = sorted(set(infos) - set(expected) - {"manifest.json"})  # never read
    parsed = {name: _read_member(archive, infos[name], _bound(name, manifest, infos[name]), b)
              for name in expected}
    # a row count off the declared one within its bound shows as the member's SHA-256
    b.run = parsed["run.json"]
    b.method = parsed["method.json"] or {}
    check_method_idents(b)
    b.flag_table = parsed.get("flags.json")
    b.max_power = parsed.get("max_power.json")
    for name in expected:
        if name.endswith(".jsonl"):
            b.lines[name] = parsed[name]
        elif name in COLUMNS:
            b.parsed[name] = parsed[name]
    b.phases = b.lines["phases.jsonl"]
    b.attempts = b.lines["attempts.jsonl"]
    b.intervals = b.lines["intervals.jsonl"]
    b.metrics = b.lines["metrics.jsonl"]
    b.samples = [Sample(int(r["phase"]), int(r["attempt"]), int(r["interval"]),
                        float(r["t_s"]), _float(r["watts_W"]),
                        frozenset(f for f in r["flags"].split(";") if f), _float(r["volts_V"]),
                        _float(r["freq_Hz"]))
                 for r in b.table("power_samples.csv")]
    b.inlet = [Inlet(int(r["phase"]), int(r["attempt"]), float(r["t_s"]), _float(r["celsius_C"]),
                     not (set(r["flags"].split(";")) & EXCLUDING_FLAGS)
                     and r["celsius_C"] != "")
               for r in b.table("inlet_temperature.csv")]
    b.slices = [Slice(int(r["phase"]), int(r["attempt"]), float(r["t_start_s"]),
                      float(r["t_end_s"]), int(r["read_ios"]) + int(r["write_ios"]),
                      int(r["read_bytes_B"]) + int(r["write_bytes_B"]), _float(r["avg_resp_ms"]))
                for r in b.table("workload_slices.csv")]
    return b


# --- the method's rules ---------------------------------------------------------------------

def overlap(s: Slice, start: float, end: float) -> float:
    """Fraction of slice ``s`` inside [start, end): a slice straddling a boundary counts pro
    rata (method-notes §4: engines report on their own clock grid)."""
    span = s.t_end - s.t_start
    if span <= 0:
        return 1.0 if start <= s.t_end < end else 0.0
    return max(0.0, min(s.t_end, end) - max(s.t_start, start)) / span


def window_ops(slices: list[Slice], ends: list[float], start: float, end: float,
               unit: str) -> tuple[float, float]:
    """(operations, average response ms) of the slices overlapping [start, end), each pro rata:
    IOs for IOPS profiles, MiB for MiB/s profiles (method-notes §4). Walks from the first
    slice that can overlap by index: a ``slices[k:]`` copy per interval made a phase's check
    quadratic in its length (×3.9 per doubling of a conditioning phase, bench_verifier)."""
    ios = nbytes = weight = 0.0
    for k in range(bisect.bisect_right(ends, start + BOUNDARY_EPS), len(slices)):
        s = slices[k]
        if s.t_start >= end - BOUNDARY_EPS:
            break
        share = overlap(s, start, end)
        ios += s.ios * share
        nbytes += s.nbytes * share
        weight += s.avg_resp_ms * s.ios * share
    return (ios if unit == "IOPS" else nbytes / MIB), (weight / ios if ios else math.nan)


def mean(values: list[float]) -> float:
    return math.fsum(values) / len(values) if values else math.nan


def efficiency(rate: float, watts: float) -> float:
    """EP_i = O_i / P_i, none without a positive power and a rate (method-notes §4)."""
    ok = math.isfinite(rate) and rate >= 0 and math.isfinite(watts) and watts > 0
    return rate / watts if ok else math.nan


def wma_at(eps: list[float], weights: list[float], i: int) -> float:
    """WMA_i = Σ w_k·EP_{i−k} / Σ w_k, weights newest first; early intervals use the leading
    weights (method-notes §4). One point costs the weights' length, whatever the phase's."""
    n = min(i + 1, len(weights))
    return math.fsum(weights[k] * eps[i - k] for k in range(n)) / math.fsum(weights[:n])


def wma(eps: list[float], weights: list[float]) -> list[float]:
    """Every WMA_i of a phase (:func:`wma_at` at each interval)."""
    return [wma_at(eps, weights, i) for i in range(len(eps))]


def drift_pct(values: list[float]) -> float:
    """Change of the least-squares line across the window in % of the mean (method-notes §4)."""
    n = len(values)
    if n < 2:
        return 0.0
    xm, ym = (n - 1) / 2, mean(values)
    slope = (math.fsum((x - xm) * (y - ym) for x, y in enumerate(values))
             / math.fsum((x - xm) ** 2 for x in range(n)))
    return slope * (n - 1) / abs(ym) * 100


def holds(ep: float, w: float, tolerance_pct: float) -> bool:
    """The WMA criterion at one interval: |EP_i − WMA_i| ≤ tolerance·WMA_i (method-notes
    §4)."""
    return math.isfinite(ep) and math.isfinite(w) and w > 0 \
        and abs(ep - w) <= tolerance_pct / 100 * w


def stability(eps: list[float], weights: list[float], tolerance_pct: float, first: int,
              max_drift: float | None) -> tuple[bool, float, str]:
    """(stable, drift %, why not) over the measurement window starting at interval ``first``
    (method-notes §4: every EP_i within tolerance of its WMA_i, and the drift within limit)."""
    if first >= len(eps):
        return False, math.nan, "no measurement interval"
    w = wma(eps, weights)
    for i in range(first, len(eps)):
        if not holds(eps[i], w[i], tolerance_pct):
            return False, math.nan, f"interval {i + 1} outside ±{tolerance_pct:g} % of its WMA"
    drift = drift_pct(eps[first:])
    if max_drift is not None and abs(drift) > max_drift:
        return False, drift, f"drift {drift:+.3f} % beyond ±{max_drift:g} %"
    return True, drift, ""


# --- the checklist --------------------------------------------------------------------------

def agree(a: float, b: float) -> bool:
    """Both without a value (NaN), or equal to 1e-9 relative."""
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b or abs(a - b) <= REL_TOL * max(abs(a), abs(b))


def num(value: Any) -> float:
    """A JSON number as the station stored it (NaN is null, ±inf are strings)."""
    if value is None:
        return math.nan
    if value in ("inf", "-inf"):
        return math.inf if value == "inf" else -math.inf
    return float(value)


class Checklist:
    def __init__(self, out: Any) -> None:
        self.out = out
        self.failed = 0
        self.passed = 0
        self.unchecked: list[str] = []

    def line(self, ok: bool, text: str) -> None:
        self.passed += ok
        self.failed += not ok
        print(f"[{'x' if ok else ' '}] {text}", file=self.out)

    def figure(self, name: str, mine: float, station: float, unit: str = "",
               cite: str = "") -> bool:
        ok = agree(mine, station)
        u = f" {unit}" if unit else ""
        self.line(ok, f"{name}: {mine!r}{u} (station {station!r}{u})"
                      + (f" — {cite}" if cite else ""))
        return ok

    def not_checked(self, what: str) -> None:
        self.unchecked.append(what)


@dataclass
class Attempt:
    """One phase attempt as the verifier re-derives it."""

    phase: dict[str, Any]
    number: int
    t_start: float
    window: tuple[float, float]
    stabilisation: int  # intervals before the measurement window (after any extension)
    planned: int  # intervals on the grid (0: no limit)


def check_files(b: Bundle, c: Checklist) -> None:
    """Every file is listed in the manifest with its SHA-256 (a member no format names is
    named, never read; a listed file the zip lacks was refused as it was read)."""
    listed = b.manifest.get("files", {})
    digests = {name: digest for name, digest in b.digests.items() if name != "manifest.json"}
    bad = 0
    for name in sorted(set(listed) | set(digests) | set(b.extra)):
        got = digests.get(name)
        if got != listed.get(name) or name in b.extra:
            bad += 1
            c.line(False, f"file {name}: " + ("not a file of its bundle format (not read)"
                                               if name in b.extra else
                                               "in the bundle but not in the manifest"
                                               if name not in listed
                                               else f"SHA-256 {got} ≠ manifest {listed[name]}"))
    if not bad:
        c.line(True, f"files: all {len(listed)} match the manifest's SHA-256")


def check_flags(b: Bundle, c: Checklist) -> None:
    """The reading flags: the station's table the bundle carries (``flags.json``, from
    storwatt-bundle/2) is the one this verifier pins for the record format, and every flag a
    sample carries is in it — an unknown flag is named, never a silent hash mismatch."""
    form = b.manifest.get("record_format")
    pinned = FLAG_TABLES.get(form) if isinstance(form, str) else None
    if pinned is None:
        c.line(False, f"reading flags: this verifier knows no flag table of record format "
                      f"{form!r} (it knows {', '.join(FLAG_TABLES)})")
        return
    if b.flag_table is not None:
        carried = {f["name"]: (f["code"], f["excludes"], f["counted"])
                   for f in b.flag_table["flags"]}
        differ = sorted(n for n in set(carried) | set(pinned) if carried.get(n) != pinned.get(n))
        c.line(not differ and b.flag_table["record_format"] == form,
               f"reading-flag table: the station's {len(carried)} flags "
               + (f"differ from this verifier's ({form}) on {', '.join(differ)}" if differ
                  else f"are this verifier's ({form}): code, excluded, counted alike"))
    seen: set[str] = set()
    for name in ("power_samples.csv", "inlet_temperature.csv", "power_input_samples.csv"):
        for cell in {r["flags"] for r in b.table(name)}:
            seen.update(f for f in cell.split(";") if f)
    for flag in sorted(seen - set(pinned)):
        c.line(False, f"flag {flag} is not known to this verifier ({form}): the samples it "
                      "marks cannot be judged")


def check_method(b: Bundle, c: Checklist) -> None:
    """The method as run: its hash as recorded, and whether it is a registered one."""
    data = b.files["method.json"]
    got = hashlib.sha256(data).hexdigest()
    canonical = json.dumps(b.method, sort_keys=True, separators=(",", ":"),
                           ensure_ascii=False).encode("utf-8")
    stored = b.run["method"]["sha256"]
    c.line(got == stored and canonical == data and b.manifest.get("method_sha256") == stored,
           f"method.json SHA-256 {got} (station {stored}; canonical form "
           f"{'kept' if canonical == data else 'NOT kept'})")
    name = f"{b.run['method']['name']} {b.run['method']['version']}"
    pinned = normative_sha256(b.method) if b.method else ""
    if pinned in REGISTERED_COMPLIANT_METHODS:
        registered = REGISTERED_COMPLIANT_METHODS[pinned]
        c.line(registered == name, f"method {name}: normative SHA-256 {pinned} is the "
                                   f"registered compliant method {registered}")
    else:
        # a variant that claims compliance may be one (a stricter lab file): its keys are
        # judged against the registry entry below; the station must not call it registered
        claims = b.run["method"].get("claims_compliant")
        relation = (b.run["compliance"].get("method") or {}).get("relation", "")
        c.line(relation != "registered compliant method",
               f"method {name} is not a registered compliant method"
               + (f" (it claims to be compliant; station: {relation})" if claims else
                  " (and does not claim to be)"))


#: the lists of child records the facts hold, each in canonical order (sorted by the
#: canonical JSON bytes of its items), so the database's row ids never enter the hash
FACT_LISTS = ("phases", "attempts", "intervals", "workload", "histograms", "search", "metrics",
              "events")
VERDICT_KINDS = ("disposition", "com_result")  # audit entries that bear a verdict


def canonical(value: Any) -> bytes:
    """The record hash's canonical JSON: keys sorted, no whitespace, UTF-8 (docs/storage.md)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False).encode("utf-8")


def _cell_value(text: str, kind: type) -> Any:
    return None if text == "" else kind(text)


def record_facts(b: Bundle) -> dict[str, Any]:
    """The record's facts as the station hashes them (layer 1 of the record SHA-256,
    docs/storage.md), rebuilt from the bundle's files; the samples enter by their SHA-256,
    recomputed from the CSVs."""
    run, method = b.run["run"], b.run["method"]
    phase_keys = ("index", "kind", "name", "profile", "planned_s", "stabilisation_intervals",
                  "measurement_intervals")
    phases = [{"info": {k: p[k] for k in phase_keys}, "status": p["status"],
               "attempts": p["attempts"], "t_start": p["t_start_s"], "t_end": p["t_end_s"],
               "error": p["error"], "workload": p["workload"],
               # a field added since is hashed only when it holds a value (docs/storage.md)
               **({} if p.get("steady_state") is None else
                  {"steady_state": p["steady_state"]})} for p in b.phases]
    workload = [{"phase_index": int(r["phase"]), "attempt": int(r["attempt"]),
                 "window": int(r["window"]),
                 "interval": {"t_start": float(r["t_start_s"]), "t_end": float(r["t_end_s"]),
                              "read_ios": int(r["read_ios"]), "write_ios": int(r["write_ios"]),
                              "read_bytes": int(r["read_bytes_B"]),
                              "write_bytes": int(r["write_bytes_B"]),
                              "avg_resp_ms": _cell_value(r["avg_resp_ms"], float),
                              "max_resp_ms": _cell_value(r["max_resp_ms"], float),
                              "latency_bins": {}, "host": r["host"]}}
                for r in b.table("workload_slices.csv")]
    facts = {
        "format": RECORD_FORMAT,
        "run": {k: run[k] for k in ("run_id", "status", "started_wall", "finished_wall",
                                    "planned_s", "duration_s", "error", "workload_engine")},
        "configuration": b.run["configuration"],
        "method": {"name": method["name"], "version": method["version"],
                   "claims_compliant": method["claims_compliant"],
                   "resolved": b.method or None, "sha256": method["sha256"]},
        "instruments": {k: b.run["instruments"][k]
                        for k in ("power_meter", "temperature_meter")},
        "phases": phases, "attempts": b.attempts, "intervals": b.intervals,
        "workload": workload, "histograms": b.jsonl("histograms.jsonl"),
        "search": b.jsonl("search.jsonl"), "metrics": b.metrics,
        "events": b.jsonl("events.jsonl"), "samples_sha256": b.samples_sha256(),
    }
    for key in FACT_LISTS:
        facts[key] = sorted(facts[key], key=canonical)
    return facts


def rebuilt_record_sha256(b: Bundle) -> str:
    """Layer 2: the facts' hash and every verdict-bearing audit entry, oldest first — no
    derived verdict, so a change of a compliance rule leaves the hash alone (docs/storage.md,
    storwatt-record/2)."""
    entries = [{"kind": e["kind"], "subject": e["subject"], "outcome": e["outcome"],
                "disposition": e["disposition"], "text": e["text"], "author": e["author"],
                "created_wall": e["recorded_utc"]}
               for e in b.jsonl("audit.jsonl") if e["kind"] in VERDICT_KINDS]
    facts = hashlib.sha256(canonical(record_facts(b))).hexdigest()
    return hashlib.sha256(canonical({"format": RECORD_FORMAT, "facts_sha256": facts,
                                     "entries": entries})).hexdigest()


def check_record(b: Bundle, c: Checklist, expected: str | None) -> None:
    """The record SHA-256 rebuilt from the bundle's own data: equal to the manifest's, and to
    the one a signed report or approval names (``--record-sha256``)."""
    form = b.manifest.get("record_format")
    if form != RECORD_FORMAT:
        c.not_checked(f"record hash (format {form!r}; this verifier rebuilds {RECORD_FORMAT})")
        return
    mine = rebuilt_record_sha256(b)
    c.line(mine == b.manifest.get("record_sha256"),
           f"record SHA-256 {mine} rebuilt from the bundle's data (manifest "
           f"{b.manifest.get('record_sha256')})")
    if expected is None:
        c.not_checked("the record hash a signature names (give --record-sha256 HASH)")
        return
    ok = mine == expected.lower()
    # only what was proved: the bundle's own revision list is the bundle's word, not evidence
    c.line(ok, f"record SHA-256 {mine} (expected {expected})"
               + ("" if ok else "; this bundle is not the record whose hash was given"))


def attempts_of(b: Bundle) -> list[Attempt]:
    """Every phase attempt with its interval grid and measurement window (method-notes §2)."""
    interval_s = float(b.method["interval_s"])
    phases = {p["index"]: p for p in b.phases}
    found = []
    for a in b.attempts:
        p = phases[a["phase_index"]]
        t0 = float(a["t_start"])
        window = (float(a["window_start_s"]), float(a["window_end_s"]))
        stab = p["stabilisation_intervals"]
        if p["kind"] in LOADED_KINDS and window[1] > window[0]:
            stab = round((window[0] - t0) / interval_s)
        base = max(1, round(p["planned_s"] / interval_s)) if p["planned_s"] else 0
        extra = stab - p["stabilisation_intervals"] if p["kind"] == "active" else 0
        found.append(Attempt(p, int(a["attempt"]), t0, window, stab,
                             base + extra if base else 0))
    return found


def interval_of(a: Attempt, t: float, interval_s: float) -> int:
    """The interval [start, end) holding ``t`` on the attempt's grid, −1 outside it
    (method-notes §4: samples count when start ≤ t < end)."""
    i = math.floor((t - a.t_start) / interval_s)
    for candidate in (i - 1, i, i + 1):
        start = a.t_start + candidate * interval_s
        if start <= t < start + interval_s:
            i = candidate
            break
    else:
        return -1
    return i if i >= 0 and (not a.planned or i < a.planned) else -1


def measured_range(a: Attempt) -> range:
    kind, m = a.phase["kind"], a.phase["measurement_intervals"]
    if kind in LOADED_KINDS:
        return range(a.stabilisation, a.stabilisation + m)
    if kind == "ready_idle":
        return range(m)
    return range(0)


def check_attempts(b: Bundle, c: Checklist) -> dict[tuple[int, int], dict[str, Any]]:
    """Placement, interval figures and stability of every attempt; returns what the metric
    checks need per (phase, attempt)."""
    interval_s = float(b.method["interval_s"])
    rule = b.method["stability"]
    weights = [float(w) for w in rule["weights"]]
    derived: dict[tuple[int, int], dict[str, Any]] = {}
    by_attempt: dict[tuple[int, int], list[Sample]] = {}
    for sample in b.samples:
        by_attempt.setdefault((sample.phase, sample.attempt), []).append(sample)
    for a in attempts_of(b):
        key = (a.phase["index"], a.number)
        label = f"{a.phase['name']} (phase {key[0]}, attempt {key[1]})"
        samples = by_attempt.get(key, [])
        placed = [interval_of(a, s.t, interval_s) for s in samples]
        moved = sum(p != s.interval for p, s in zip(placed, samples))
        records = sorted((r for r in b.intervals
                          if (r["phase_index"], r["attempt"]) == key), key=lambda r: r["index"])
        grid_bad = [r["index"] for r in records
                    if not (agree(num(r["start_s"]), a.t_start + r["index"] * interval_s)
                            and agree(num(r["end_s"]), a.t_start + (r["index"] + 1) * interval_s))]
        if samples or records:
            c.line(moved == 0 and not grid_bad,
                   f"{label}: interval grid and placement of {len(samples)} power samples "
                   f"({moved} placed differently, {len(grid_bad)} interval boundaries off the "
                   f"grid{' #' + str(grid_bad[0] + 1) if grid_bad else ''}) — method-notes §4")
        slices = sorted((s for s in b.slices if (s.phase, s.attempt) == key),
                        key=lambda s: s.t_end)
        kept: list[Slice] = []
        for s in slices:  # a late duplicate from a restarted engine stream is dropped
            if not kept or s.t_end >= kept[-1].t_end:
                kept.append(s)
        ends = [s.t_end for s in kept]
        unit = next((r["ops_unit"] for r in records if r["ops_unit"]), "")
        eps: list[float] = []
        bad = 0
        usable_by_interval: dict[int, list[float]] = {}
        for sample, where in zip(samples, placed):
            if sample.usable:
                usable_by_interval.setdefault(where, []).append(sample.watts)
        for r in records:
            i = r["index"]
            watts_list = usable_by_interval.get(i, [])
            watts = mean(watts_list)
            start = a.t_start + i * interval_s
            ok = agree(watts, num(r["avg_power_w"])) and len(watts_list) == r["n_power_samples"]
            if unit:
                ops, _ = window_ops(kept, ends, start, start + interval_s, unit)
                rate = ops / interval_s
                ep = efficiency(rate, watts)
                ok = ok and agree(rate, num(r["ops_rate"])) and agree(ep, num(r["ep"]))
            else:
                ep = math.nan
            eps.append(ep)
            if unit:
                w = wma_at(eps, weights, len(eps) - 1)  # the last point only: linear
                ok = ok and agree(w, num(r["wma"]))
            if not ok:
                bad += 1
                c.line(False, f"{label} interval {i + 1}: P {watts!r} W from {len(watts_list)} "
                              f"samples (station {num(r['avg_power_w'])!r} W from "
                              f"{r['n_power_samples']})"
                              + (f", rate {rate!r} {unit} (station {num(r['ops_rate'])!r}), "
                                 f"EP_i {ep!r} (station {num(r['ep'])!r}), WMA_i "
                                 f"{w!r} (station {num(r['wma'])!r})" if unit else "")
                              + " — method-notes §4")
        if records and not bad:
            c.line(True, f"{label}: {len(records)} intervals recomputed: P_i, n_i"
                         + (", O_i, EP_i, WMA_i" if unit else "") + " — method-notes §4")
        derived[key] = {"attempt": a, "samples": samples, "placed": placed, "slices": kept,
                        "ends": ends, "eps": eps, "unit": unit, "records": records}
        if unit and a.phase["kind"] == "active" and measured_range(a):
            check_extension(a, eps, weights, float(rule["tolerance_pct"]),
                            int(rule["max_stabilisation_intervals"]), label, c)
    return derived


def check_extension(a: Attempt, eps: list[float], weights: list[float], tolerance: float,
                    limit: int, label: str, c: Checklist) -> None:
    """The measurement window starts where the stabilisation rule says (method-notes §4: the
    stabilisation extends one interval at a time while the WMA criterion fails at its end)."""
    planned = a.phase["stabilisation_intervals"]
    w = wma(eps, weights)
    failed_before = all(not holds(eps[i], w[i], tolerance)
                        for i in range(planned - 1, a.stabilisation - 1) if i < len(eps))
    last = a.stabilisation - 1
    settled = (a.stabilisation >= limit or last >= len(eps) or last < 0
               or holds(eps[last], w[last], tolerance) or a.stabilisation == planned)
    ok = a.stabilisation >= planned and failed_before and settled
    c.line(ok, f"{label}: measurement window starts after {a.stabilisation} stabilisation "
               f"intervals (planned {planned}; extended while the WMA criterion failed) — "
               "method-notes §4")


def check_metrics(b: Bundle, c: Checklist,
                  derived: dict[tuple[int, int], dict[str, Any]]) -> None:
    interval_s = float(b.method["interval_s"])
    rule = b.method["stability"]
    weights = [float(w) for w in rule["weights"]]
    max_resp = float(b.method["response_time"]["max_avg_ms"])
    profiles = {p["name"]: p for p in b.method["profiles"]}
    capacity = int(b.run["configuration"]["sut"]["raw_capacity_bytes"])
    last: dict[int, int] = {}
    for row in b.attempts:
        last[row["phase_index"]] = max(last.get(row["phase_index"], 0), int(row["attempt"]))
    rates: dict[str, float] = {}
    for m in b.metrics:
        index = m["phase_index"]
        if m["name"].startswith("COM_"):
            continue  # a COM check's ratio and verdict: check_coms
        if index is None or index not in last or (index, last[index]) not in derived:
            c.not_checked(f"{m['name']} (no phase attempt in the bundle)")
            continue
        d = derived[(index, last[index])]
        a: Attempt = d["attempt"]
        window = measured_range(a)
        if not window:
            c.not_checked(f"{m['name']} (its phase has no measurement window)")
            continue
        start = a.t_start + window.start * interval_s
        end = a.t_start + window.stop * interval_s
        inside = [(s, p) for s, p in zip(d["samples"], d["placed"]) if p in window]
        watts = mean([s.watts for s, _ in inside if s.usable])
        duration = end - start
        found = reading_rules(b, a, d["samples"], [s for s, _ in inside], start, end)
        c.figure(f"{m['name']} average power (phase {index})", watts, num(m["avg_power_w"]),
                 "W", "method-notes §4")
        if a.phase["kind"] == "ready_idle":
            value = capacity / GB / watts if math.isfinite(watts) and watts > 0 else math.nan
            unit, rate = "GB/W", capacity / GB
            c.figure(f"{m['name']} raw capacity", rate, num(m["ops_rate"]), "GB",
                     "method-notes §4")
        else:
            profile = profiles.get(a.phase["profile"], {})
            unit = profile.get("metric_unit", "")
            ops, resp = window_ops(d["slices"], d["ends"], start, end, d["unit"])
            rate = ops / duration
            value = rate / watts if math.isfinite(watts) and watts > 0 else math.nan
            rates[a.phase["profile"]] = rate
            c.figure(f"{m['name']} operations rate", rate, num(m["ops_rate"]), d["unit"],
                     "method-notes §4, pro rata at the window's edges")
            c.figure(f"{m['name']} average response time", resp, num(m["avg_response_ms"]),
                     "ms", "method-notes §5")
            found["response time"] = d["unit"] == "IOPS" and resp == resp and resp > max_resp
            eps = d["eps"]
            if len(eps) >= window.stop:
                stable, drift, why = stability(eps, weights, float(rule["tolerance_pct"]),
                                               window.start, rule.get("max_drift_pct"))
                station_stable = d["records"][window.stop - 1]["stable"] \
                    if len(d["records"]) >= window.stop else None
                c.line(stable == station_stable,
                       f"{m['name']} stability: {'stable' if stable else 'NOT stable: ' + why}"
                       f", drift {drift:+.6f} % (limit ±{rule.get('max_drift_pct')} %) "
                       f"(station: {'stable' if station_stable else 'NOT stable'}) — "
                       "method-notes §4")
                found["not stable"] = not stable
        c.figure(f"{m['name']} measurement duration", duration, num(m["run_length_s"]), "s",
                 "method-notes §2")
        c.line(unit == m["unit"], f"{m['name']} unit {unit} (station {m['unit']}) — "
                                  "method-notes §4")
        c.figure(f"{m['name']}", value, num(m["value"]), unit, "method-notes §4")
        check_validity(c, m, found)
    check_derived_rate(b, c, rates)


#: each rule on a window's readings, and the words the station's INVALID reason names it with
READING_RULES = {
    "phase incomplete": "phase did not complete",
    "flagged power samples": "flagged power sample",
    "uncertainty above the limit": "uncertainty limit",
    "power-sample gap": "power samples missing for",
    "supply voltage": "supply voltage outside",
    "supply frequency": "supply frequency outside",
    "no inlet reading": "no inlet temperature reading",
    "inlet-reading gap": "inlet temperature missing for",
    "inlet outside its ASHRAE class": "outside ASHRAE",
    "not stable": "not stable",
    "response time": "average response time",
}


def longest_gap(times: list[float], start: float, end: float) -> float:
    """Longest stretch of [start, end) without a reading (the edges count)."""
    edges = [start, *sorted(t for t in times if start <= t < end), end]
    return max(b - a for a, b in zip(edges, edges[1:]))


def power_gap_broken(times: list[float], t0: float, period: float, start: float, end: float,
                     limit: float) -> bool:
    """THE GAP RULE, as the station judges it (``app.sequencer.conformance.grid_points`` and
    the recorder's validity check; method-notes §3): each usable sample's time taken as the
    grid point ``t0 + k·period`` it was polled for (the latest one not after its stamp), and
    the window broken when the longest stretch of [start, end) without one exceeds the
    method's limit (1e-9 relative slack). One function, so a change of the station's rule
    lands here in one place."""
    points = [t0 + math.floor((t - t0) / period + 1e-9) * period for t in times]
    return longest_gap(points, start, end) > limit * (1 + 1e-9)


def declared_site(b: Bundle) -> tuple[dict[str, Any], dict[str, Any]]:
    """The declared supply's voltage range (by its id, ``<phases>P-<min>-<max>``) and the
    declared ASHRAE class's inlet range (method-notes §3, §10)."""
    sut, limits = b.run["configuration"]["sut"], b.method["instruments"]
    supply = next(r for r in limits["voltage_ranges"]
                  if f"{r['phases']}P-{r['min_v']:g}-{r['max_v']:g}" == sut["supply"])
    inlet = next(k for k in limits["inlet_classes"] if k["name"] == sut["ashrae_class"])
    return supply, inlet


def check_supply_flags(b: Bundle, c: Checklist) -> None:
    """Each usable sample of a one-meter run carries a supply flag exactly when its volts lie
    outside the declared range or its Hz outside the method's (NaN fails too; method-notes
    §3)."""
    if b.run["instruments"]["power_inputs"]:
        c.not_checked("supply flags of runs with several power inputs (judged on each input's "
                      "volts and Hz; the inputs' Hz are not in the bundle)")
        return
    supply, _ = declared_site(b)
    low_v, high_v = supply["min_v"], supply["max_v"]
    low, high = b.method["instruments"]["frequency_hz"]
    wrong = [s for s in b.samples if s.usable and (
        ("voltage_out_of_range" in s.flags) == (low_v <= s.volts <= high_v)
        or ("frequency_out_of_range" in s.flags)
        == (low <= s.freq_hz <= high or "frequency_not_measured" in s.flags))]
    c.line(not wrong, f"supply flags of {len(b.samples)} power samples against "
                      f"{low_v:g}–{high_v:g} V and {low:g}–{high:g} Hz: {len(wrong)} differ"
                      + (f", first at t = {wrong[0].t!r} s" if wrong else "")
                      + " — method-notes §3")


def reading_rules(b: Bundle, a: Attempt, samples: list[Sample], inside: list[Sample],
                  start: float, end: float) -> dict[str, bool]:
    """Which of the method's rules on a window's readings it breaks (method-notes §3, §10)."""
    limits = b.method["instruments"]
    _, inlet_class = declared_site(b)
    key = (a.phase["index"], a.number)
    status = next((x["status"] for x in b.attempts
                   if (x["phase_index"], x["attempt"]) == key), "")
    if a.phase["kind"] == "ready_idle":  # its metric is the whole phase's average
        start, end = a.t_start, a.t_start + float(a.phase["planned_s"])
    inlet = [r for r in b.inlet if (r.phase, r.attempt) == key and r.usable]
    inlet_in = [r for r in inlet if start <= r.t < end]
    has_window = end > start
    return {
        "phase incomplete": status != "COMPLETED",
        "flagged power samples": sum(1 for s in inside if s.flags & COUNTED_FLAGS)
        > int(limits["max_flagged_power_samples"]),
        "uncertainty above the limit": any(UNCERTAINTY_HIGH in s.flags for s in samples),
        "power-sample gap": power_gap_broken(
            [s.t for s in samples if s.usable], a.t_start, float(b.method["sample_period_s"]),
            start, end, float(limits["max_power_interval_s"])),
        "supply voltage": any("voltage_out_of_range" in s.flags for s in inside),
        "supply frequency": any("frequency_out_of_range" in s.flags for s in inside),
        "no inlet reading": has_window and not inlet_in,
        "inlet-reading gap": has_window and bool(inlet_in) and longest_gap(
            [r.t for r in inlet_in], start, end) > float(limits["max_temperature_interval_s"]),
        "inlet outside its ASHRAE class": any(
            not inlet_class["min_c"] <= r.celsius <= inlet_class["max_c"] for r in inlet_in),
    }


def check_validity(c: Checklist, m: dict[str, Any], found: dict[str, bool]) -> None:
    """Each rule the verifier judged is named in the station's reason exactly when broken,
    and a VALID metric breaks none."""
    reason = m["reason"] or ""
    broken = [rule for rule, bad in found.items() if bad]
    differ = [rule for rule, bad in found.items() if bad != (READING_RULES[rule] in reason)]
    c.line(not differ and not (broken and m["valid"]),
           f"{m['name']} validity: station {'VALID' if m['valid'] else 'INVALID'}, verifier "
           + (f"finds {', '.join(broken)}" if broken else "finds none of the rules it judges "
                                                          "broken")
           + (f"; station's reason disagrees on {', '.join(differ)}" if differ else "")
           + f" ({len(found)} rules judged) — method-notes §3, §4, §10")


def check_derived_rate(b: Bundle, c: Checklist, rates: dict[str, float]) -> None:
    """MW2 runs at a fixed share of MW1's measured IOPS (method-notes §2), and what ran is
    judged: an achieved rate outside ± the tolerance of that target makes the metric INVALID,
    naming the rule (``search.derived_rate_tolerance_pct``; the station's default when the
    method states none). The line fails when the station's verdict disagrees."""
    metrics = {m["name"]: m for m in b.metrics}
    tolerance = b.method["search"].get("derived_rate_tolerance_pct")
    tolerance = DERIVED_RATE_TOLERANCE_PCT if tolerance is None else float(tolerance)
    for p in b.method["profiles"]:
        ref = p.get("intensity_of")
        if not ref or p["name"] not in rates or ref not in rates:
            continue
        ref_metric = metrics.get(next(q["metric"] for q in b.method["profiles"]
                                      if q["name"] == ref))
        target = max(2, round(num(ref_metric["ops_rate"]) * p["intensity_pct"] / 100)) \
            if ref_metric and num(ref_metric["ops_rate"]) > 0 else math.nan
        achieved = rates[p["name"]]
        share = achieved / rates[ref] * 100 if rates[ref] else math.nan
        held = abs(achieved - target) <= target * tolerance / 100  # False for a NaN target
        own = metrics.get(p["metric"], {})
        named = "search.derived_rate_tolerance_pct" in (own.get("reason") or "")
        agrees = not named if held else not own.get("valid", False)
        c.line((agree(rates[ref], num(ref_metric["ops_rate"])) if ref_metric else False)
               and agrees,
               f"{p['name']} rate {achieved:.6g} = {share:.4f} % of {ref}'s "
               f"{rates[ref]:.6g} (method {p['intensity_pct']:g} %, target {target} IOPS from "
               f"{ref}'s stored rate): {'within' if held else 'OUTSIDE'} ± {tolerance:g} % "
               f"(station {'VALID' if own.get('valid') else 'INVALID'}"
               f"{', naming the rule' if named else ''}) — method-notes §2")


@functools.lru_cache(maxsize=None)
def flag_code(cell: str) -> str:
    """A CSV flags cell in the station's stored code: known flags' letters sorted, then any
    unknown flag names after "|" (docs/storage.md)."""
    flags = [f for f in cell.split(";") if f]
    text = "".join(sorted(FLAG_CODES[f] for f in flags if f in FLAG_CODES))
    unknown = sorted(f for f in flags if f not in FLAG_CODES)
    return text + ("|" + ",".join(unknown) if unknown else "")


def samples_sha256(b: Bundle) -> str:
    """The samples SHA-256 the report's run summary prints (the PDF's cover; the page footers
    print the record SHA-256), from the CSVs: header
    ``storwatt-samples-v1``, then each column as ``name:count`` and its values, little-endian
    int64 or float64 (one quiet NaN), flag columns as codes joined by newlines
    (docs/storage.md)."""
    digest = hashlib.sha256(b"storwatt-samples-v1\n")

    def put(name: str, cells: list[str], kind: str) -> None:
        digest.update(f"{name}:{len(cells)}\n".encode())
        if kind == "flags":
            digest.update("\n".join(flag_code(x) for x in cells).encode())
        elif kind == "int":
            digest.update(struct.pack(f"<{len(cells)}q", *map(int, cells)))
        else:
            digest.update(struct.pack(f"<{len(cells)}d",
                                      *[float(x) if x else math.nan for x in cells]))

    power = b.table("power_samples.csv")
    put("power.phase_index", [r["phase"] for r in power], "int")
    for name, column in (("t", "t_s"), ("watts", "watts_W"), ("volts", "volts_V"),
                         ("amps", "amps_A"), ("pf", "pf"), ("freq_hz", "freq_Hz"),
                         ("range_v", "range_V"), ("range_a", "range_A"),
                         ("uncertainty_pct", "uncertainty_pct")):
        put(f"power.{name}", [r[column] for r in power], "float")
    put("power.flags", [r["flags"] for r in power], "flags")
    inlet = b.table("inlet_temperature.csv")
    put("temperature.phase_index", [r["phase"] for r in inlet], "int")
    put("temperature.t", [r["t_s"] for r in inlet], "float")
    put("temperature.celsius", [r["celsius_C"] for r in inlet], "float")
    put("temperature.flags", [r["flags"] for r in inlet], "flags")
    readings = b.table("power_input_samples.csv")
    for i in b.run["instruments"]["power_inputs"]:
        rows = [r for r in readings if r["input"] == i["name"]]
        for name, column in (("t", "t_s"), ("watts", "watts_W"), ("volts", "volts_V"),
                             ("amps", "amps_A"), ("range_v", "range_V"), ("range_a", "range_A"),
                             ("uncertainty_pct", "uncertainty_pct")):
            put(f"input.{i['name']}.{name}", [r[column] for r in rows], "float")
        put(f"input.{i['name']}.flags", [r["flags"] for r in rows], "flags")
    return digest.hexdigest()


def check_samples_hash(b: Bundle, c: Checklist, expected: str | None) -> None:
    """The CSVs are the samples the station hashed: the samples SHA-256 recomputed from them
    equals the record's, and the one printed on the report when given."""
    mine = b.samples_sha256()
    station = b.manifest.get("samples_sha256")
    c.line(mine == station, f"samples SHA-256 {mine} from the CSVs (station {station})")
    if expected is not None:
        c.line(mine == expected.lower(), f"samples SHA-256 {mine} (the report prints "
                                         f"{expected})")


def check_power_inputs(b: Bundle, c: Checklist) -> None:
    """The SUT's power is the sum of its inputs' readings at each instant; an instant where an
    input is missing or misaligned has no total (method-notes §10)."""
    readings: dict[str, list[float]] = {}
    for r in b.table("power_input_samples.csv"):
        readings.setdefault(r["input"], []).append(_float(r["watts_W"]))
    if not readings:
        return
    lengths = {name: len(w) for name, w in readings.items()}
    if set(lengths.values()) != {len(b.samples)}:
        c.line(False, f"power inputs: readings per input {lengths} ≠ {len(b.samples)} total "
                      "samples — method-notes §10")
        return
    off = [k for k, s in enumerate(b.samples) if not math.isnan(s.watts) and not agree(
        s.watts, math.fsum(w[k] for w in readings.values()))]
    c.line(not off, f"power inputs: the total of {len(b.samples)} samples is the sum of its "
                    f"{len(readings)} inputs ({len(off)} differ"
                    + (f", first at t = {b.samples[off[0]].t!r} s" if off else "")
                    + ") — method-notes §10")


def check_histograms(b: Bundle, c: Checklist) -> None:
    """Confidence levels of each measured phase's response-time histogram: the first bucket
    whose running count reaches p/100·N (fio's rule, method-notes §9), none where the IO count
    cannot support the level, N < 1/(1 − p) (method-notes §5); IOs above the ceiling line."""
    for h in b.jsonl("histograms.jsonl"):
        bins = sorted((int(k), int(v)) for k, v in h["bins"].items())
        total = sum(n for _, n in bins)
        label = f"{h['profile']} (phase {h['phase_index']}) histogram"
        for level_text, station in sorted(h["confidence_ms"].items(), key=lambda i: float(i[0])):
            level = float(level_text)
            needed = math.ceil(Decimal(100) / (Decimal(100) - Decimal(str(level))))
            mine = None
            if total and total >= needed:
                running, threshold = 0, level / 100.0 * total
                mine = bins[-1][0] / 1e6
                for value, n in bins:
                    running += n
                    if running >= threshold:
                        mine = value / 1e6
                        break
            ok = (mine is None and station is None) or (
                mine is not None and station is not None and agree(mine, num(station)))
            c.line(ok, f"{label} {level:g} % confidence: "
                       f"{'n/a (' + str(total) + ' IOs)' if mine is None else repr(mine) + ' ms'}"
                       f" (station {'n/a' if station is None else repr(num(station)) + ' ms'})"
                       " — method-notes §5")
        above = sum(n for value, n in bins if value > float(h["ceiling_ms"]) * 1e6)
        c.line(above == h["above_ceiling"], f"{label} IOs above the {h['ceiling_ms']:g} ms "
                                            f"ceiling: {above} (station {h['above_ceiling']})"
                                            " — method-notes §5")


# --- the compliance verdict -----------------------------------------------------------------
# The station derives its verdict from the record (its rules 2 or 3); each criterion below is
# derived again from the bundle's own data and compared, by name, with the station's.

RULES_VERSION = 3  # the station's newest compliance rules this verifier re-derives
#: every rules version this verifier re-derives: rules 3 (issue 38) judge the calibration on
#: the day the run ended, rules 2 on the day it started
RULES_VERSIONS = (2, 3)
#: every simulator's vendor begins so (the wire ones "STORWATT-SIM", the in-process ones
#: "StorWatt"); a simulated SUT's engine names itself "simulated" (method-notes §3)
SIMULATED_VENDOR = "STORWATT"
SIMULATED_ENGINE_WORD = "simulated"
#: the search's notes that mean intensity 100 was not found (method-notes §2)
LOAD_GENERATOR_LIMIT = "load generator limit reached"
NO_PROBE_WITHIN = "no probe within the"
METHOD_KEY = "Method key "  # + a normative key the run's method deviates on
#: the classification attributes (method-notes §1) and their values when unanswered: the
#: smallest product (a consumer/component device, one drive, no robotics)
ATTRIBUTES: dict[str, Any] = {
    "connectivity": "not-specified", "consumer_component": True,
    "integrated_controller": False, "storage_protection": False, "no_spof": False,
    "non_disruptive_service": False, "fba_ckd": False, "max_drive_count": 1,
    "robotics": False}
CONNECTIVITY = ("not-specified", "host", "network")  # ordered: network also serves hosts
COMPARE = {">=": lambda a, b: a >= b, ">": lambda a, b: a > b, "<=": lambda a, b: a <= b,
           "==": lambda a, b: a == b}


@dataclass(frozen=True)
class Finding:
    """One compliance criterion as the verifier derives it."""

    name: str
    met: bool
    evidence: str
    cite: str
    #: the station's criterion taken as recorded (an older bundle lacks the facts): it enters
    #: the overall verdict, listed as not checked, with no checklist line of its own
    recorded: bool = False


def _stricter(kind: str, key: str, registry: Any, ours: Any) -> bool:
    """A direction or range key moved only the stricter way (docs/method.md)."""
    try:
        if kind == "bounded":
            return True
        if kind == "at most":
            return ours <= registry
        if kind == "at least":
            return ours >= registry
        if kind == "within" and key.endswith("frequency_hz"):
            return registry[0] <= ours[0] <= ours[1] <= registry[1]
        if kind == "within" and key.endswith("voltage_ranges"):
            return bool(ours) and all(any(
                r["phases"] == o["phases"] and r["min_v"] <= o["min_v"] and
                o["max_v"] <= r["max_v"] for r in registry) for o in ours)
        if kind == "within" and key.endswith("inlet_classes"):
            named = {r["name"]: r for r in registry}
            return bool(ours) and all(o["name"] in named and named[o["name"]]["min_c"]
                                      <= o["min_c"] and o["max_c"] <= named[o["name"]]["max_c"]
                                      for o in ours)
    except (TypeError, KeyError, IndexError):
        return False  # a missing or mistyped value is never stricter
    return False


def deviations(registry: dict[str, Any], ours: dict[str, Any]) -> list[str]:
    """The normative keys where ``ours`` deviates from the registry entry's content: any
    change of an exact key, a direction or range key moved the looser way (docs/method.md,
    "The registry of compliant methods"); profiles and plans compared by name, in order."""
    found: list[str] = []
    for key in list(registry) + [k for k in ours if k not in registry]:
        reg, run = registry.get(key, LATER_KEYS.get(key)), ours.get(key, LATER_KEYS.get(key))
        if key in ("profiles", "plans") and isinstance(reg, list) and isinstance(run, list):
            if [p.get("name") for p in reg] != [p.get("name") for p in run]:
                found.append(key)
            elif key == "profiles":
                found += [f"profiles.{r['name']}" for r, o in zip(reg, run) if r != o]
            else:
                found += [f"plans.{r['name']}.{k}" for r, o in zip(reg, run)
                          for k in list(r) + [k for k in o if k not in r]
                          if k != "name" and r.get(k) != o.get(k)
                          and not _stricter(PLAN_KEYS[k] if k in PLAN_KEYS else "exact",
                                            k, r.get(k), o.get(k))]
        elif reg != run and not _stricter(NORMATIVE_KEYS.get(key, "exact"), key, reg, run):
            found.append(key)
    return found


def _normative(b: Bundle, c: Checklist) -> list[Finding]:
    """The method's normative content against the registry entry the station compared it
    with, which the bundle carries (``registry_entry``) and this verifier anchors by its own
    pinned SHA-256 (method-notes §2: the method is the registered one or a variant)."""
    cite = "docs/method.md registry, method-notes §2"
    if "registry_entry" not in b.run:  # a bundle written before it carried the entry
        c.not_checked("the method's normative deviations (the bundle has no registry_entry; "
                      "the station's criteria are taken as recorded)")
        return [Finding(k["name"], k["verdict"] == "MET", "as recorded", cite, True)
                for k in b.run["compliance"]["criteria"]
                if k["name"] == "Normative method content" or k["name"].startswith(METHOD_KEY)]
    entry = b.run["registry_entry"]
    if not entry:
        return [Finding("Normative method content", False,
                        "no registered compliant method to compare with", cite)]
    label = f"{entry['name']} {entry['version']}"
    pinned = hashlib.sha256(canonical(entry["normative"])).hexdigest()
    c.line(REGISTERED_COMPLIANT_METHODS.get(pinned) == label,
           f"registry entry {label} in run.json: normative SHA-256 {pinned} "
           + ("is the one this verifier pins" if REGISTERED_COMPLIANT_METHODS.get(pinned)
              == label else "is NOT one this verifier pins for it"))
    if (entry["name"], entry["version"]) != (b.method.get("name"), b.method.get("version")):
        c.not_checked(f"that {label} is the registered entry nearest to this variant (the "
                      "verifier pins the entries' hashes, not their content)")
    keys = deviations(entry["normative"], normative_content(b.method))
    if not keys:
        return [Finding("Normative method content", True,
                        f"no deviation from {label}", cite)]
    return [Finding(f"{METHOD_KEY}{key}", False, f"deviates from {label}", cite)
            for key in keys]


def _date(text: str) -> Any:
    try:
        return date.fromisoformat(text.strip()[:10]) if text.strip() else None
    except ValueError:
        return None


def _instruments(b: Bundle) -> list[tuple[str, dict[str, Any] | None, str]]:
    """(role, identity, calibration date the lab configured) of every instrument used: each
    power input, or the one power meter; the thermometer when one took part."""
    config, found = b.run["configuration"], b.run["instruments"]
    dates = {i["name"]: i.get("calibration_date", "") for i in config.get("power_inputs", ())}
    used = [(f"power input {i['name']}", i["identity"], dates.get(i["name"], ""))
            for i in found["power_inputs"]] or [
        ("power meter", found["power_meter"], config["power_meter"]["calibration_date"])]
    if found["temperature_meter"] is not None:
        used.append(("thermometer", found["temperature_meter"],
                     config["temperature_meter"]["calibration_date"]))
    return used


def run_end(b: Bundle) -> date:
    """The day the run ended, or, not ended, the day its planned phases end: a calibration
    must cover the whole run (issue 38; ready idle comes last)."""
    run = b.run["run"]
    if run.get("finished_wall"):
        return datetime.fromisoformat(run["finished_wall"]).date()
    planned = sum(float(p["planned_s"]) for p in b.phases)
    return (datetime.fromisoformat(run["started_wall"]) + timedelta(seconds=planned)).date()


def _calibration(b: Bundle, limit: int | None, rules: int = RULES_VERSION) -> Finding:
    """Every instrument's calibration date known, not after the run's start, and not older
    than the method's limit on the day the run ended (method-notes §3, §10: a calibration
    within the last 12 months)."""
    started = datetime.fromisoformat(b.run["run"]["started_wall"]).date()
    ended = run_end(b) if rules >= 3 else started
    problems, seen = [], []
    for role, identity, configured in _instruments(b):
        text = (identity or {}).get("calibration_date") or configured
        when = _date(text)
        if when is None:
            problems.append(f"{role} calibration date {'missing' if not text else repr(text)}")
        elif when > started:
            problems.append(f"{role} calibrated {when} after the run ({started})")
        elif limit is not None and (ended - when).days > limit:
            problems.append(f"{role} calibrated {when}, {(ended - when).days} days before "
                            + (f"the run's end ({ended})" if rules >= 3 else "the run")
                            + f" > {limit} days")
        else:
            seen.append(f"{role} {when}")
    cite = "method-notes §3, §10"
    if problems:
        return Finding("Calibration", False, "; ".join(problems), cite)
    if limit is None:
        return Finding("Calibration", False, "the method states no calibration limit", cite)
    at = f" at the run's end ({ended})" if rules >= 3 else ""
    return Finding("Calibration", True, f"within {limit} days{at}: {', '.join(seen)}", cite)


def _real_instruments(b: Bundle) -> Finding:
    """No simulator measured or was measured (method-notes §3)."""
    simulated = [f"{role} {identity['vendor']} {identity['model']}"
                 for role, identity, _ in _instruments(b)
                 if identity and identity["vendor"].upper().startswith(SIMULATED_VENDOR)]
    if b.run["instruments"]["power_meter"] is None:
        simulated.append("no power meter identified")
    engine = b.run["run"]["workload_engine"]
    if SIMULATED_ENGINE_WORD in engine.lower():
        simulated.append(f"SUT: {engine}")
    return Finding("Real instruments", not simulated,
                   "simulated: " + ", ".join(simulated) if simulated else
                   "every instrument and the SUT are real", "method-notes §3")


def classify(taxonomy: dict[str, Any], taxonomy_id: str, answers: dict[str, Any]) -> str:
    """The classification the recorded answers derive, checked to allow ``taxonomy_id``
    (method-notes §1: the highest level whose requirements all hold; a lower one may be
    requested, never one the answers rule out); a ValueError says why not."""
    if not answers:
        raise ValueError(f"no classification answers recorded for {taxonomy_id or '(none)'}")
    if not set(answers) & set(ATTRIBUTES):
        raise ValueError(f"{taxonomy_id} was chosen by hand, not derived from the attributes")
    head, _, level = taxonomy_id.rpartition("-")
    category_id = head if level.isdigit() else taxonomy_id
    given = {**ATTRIBUTES, **{k: v for k, v in answers.items() if k in ATTRIBUTES}}
    drives = given["max_drive_count"]
    if given["connectivity"] not in CONNECTIVITY or isinstance(drives, bool) \
            or not isinstance(drives, int) or drives < 0 \
            or any(not isinstance(given[k], bool) for k in ATTRIBUTES
                   if k not in ("connectivity", "max_drive_count")):
        raise ValueError(f"the recorded answers are not valid attributes: {answers}")
    category = next((x for x in taxonomy["categories"] if x["id"] == category_id), None)
    if category is None or not category["testable"]:
        raise ValueError(f"category {category_id} is unknown or cannot be tested")
    levels = {lv["level"]: lv for lv in category["levels"]}
    eligible = []
    for n, _ in taxonomy["level_names"]:
        req = levels.get(n)
        if req is None:
            continue
        missing = [k for k in ATTRIBUTES if k not in ("connectivity", "max_drive_count")
                   and req.get(k) is not None and given[k] != req[k]]
        if req.get("connectivity") and CONNECTIVITY.index(given["connectivity"]) \
                < CONNECTIVITY.index(req["connectivity"]):
            missing.append("connectivity")
        if req.get("max_config") and not COMPARE[req["max_config"][0]](
                drives, req["max_config"][1]):
            missing.append("maximum configuration")
        if not missing:
            eligible.append(n)
    if not eligible:
        raise ValueError(f"the answers meet no {category['title']} level")
    derived = f"{category.get('short_title') or category['title']} {max(eligible)}"
    if not level.isdigit() or int(level) not in eligible:
        raise ValueError(f"{taxonomy_id} is ruled out by the answers (derived: {derived})")
    return derived


def _classification(b: Bundle, c: Checklist) -> Finding:
    """The taxonomy classified again from the recorded answers (method-notes §1), by the
    taxonomy the bundle carries, itself anchored by this verifier's pinned SHA-256 when the
    method names a registered taxonomy file."""
    taxonomy, name = b.run.get("taxonomy"), b.method.get("taxonomy_file", "")
    config = b.run["configuration"]
    cite = "method-notes §1"
    if "taxonomy" not in b.run:  # a bundle written before it carried the taxonomy
        c.not_checked("the classification (the bundle has no taxonomy; the station's "
                      "criterion is taken as recorded)")
        return next(Finding(k["name"], k["verdict"] == "MET", "as recorded", cite, True)
                    for k in b.run["compliance"]["criteria"] if k["name"] == "Classification")
    if not taxonomy:
        return Finding("Classification", False, f"the taxonomy {name} is not in the bundle",
                       cite)
    sha = hashlib.sha256(canonical(taxonomy)).hexdigest()
    if name in REGISTERED_TAXONOMIES.values():
        c.line(REGISTERED_TAXONOMIES.get(sha) == name,
               f"taxonomy {name} in run.json: SHA-256 {sha} "
               + ("is the one this verifier pins" if REGISTERED_TAXONOMIES.get(sha) == name
                  else "is NOT the one this verifier pins") + " — method-notes §1")
    else:
        c.not_checked(f"the taxonomy's content (the method names {name!r}, not a registered "
                      "taxonomy file)")
    try:
        derived = classify(taxonomy, config["taxonomy"], config["classification_answers"])
    except (ValueError, KeyError, TypeError) as exc:
        return Finding("Classification", False, str(exc), cite)
    return Finding("Classification", True, f"{config['taxonomy']} allowed by the recorded "
                                           f"answers (derived: {derived})", cite)


def _metrics_valid(b: Bundle) -> list[Finding]:
    """Every EP metric of the profiles the run ran, and EP_RI, VALID (method-notes §2, §3);
    each metric's validity is itself re-derived rule by rule above."""
    profiles = {p["name"]: p for p in b.method["profiles"]}
    wanted = [profiles[p["profile"]]["metric"] for p in b.phases
              if p["kind"] == "active" and p["profile"] in profiles]
    wanted = list(dict.fromkeys(wanted + ["EP_RI"]))
    found = {m["name"]: m for m in b.metrics}
    failed = [Finding(f"Metric {name}", False, "not computed" if name not in found else
                      f"INVALID: {found[name]['reason']}", "method-notes §2, §3")
              for name in wanted if name not in found or not found[name]["valid"]]
    return failed or [Finding("Metrics valid", True, f"{', '.join(wanted)} all VALID",
                              "method-notes §2, §3")]


def _intensity(b: Bundle) -> Finding:
    """Intensity 100 found in every searched profile (method-notes §2): a search that ran
    out of queue depths, or found no probe within the limit, did not find it."""
    results = [r for r in b.jsonl("search.jsonl") if not r.get("pre_run_basis")]
    failed = [f"{r['profile']}: {r['note']}" for r in results
              if r["note"].startswith((LOAD_GENERATOR_LIMIT, NO_PROBE_WITHIN))]
    return Finding("Intensity 100 reached", not failed,
                   "; ".join(failed) if failed else
                   f"found for {', '.join(r['profile'] for r in results) or 'no profile'}",
                   "method-notes §2")


def _pre_run_generator(b: Bundle) -> list[Finding]:
    """An unsearched profile's null-engine pre-run (MW2 at its derived rate, a trace replay)
    by the search's generator rule against the rate its phase measured (method-notes §2); no
    criterion when the run holds no such row (stored before the station pre-ran them)."""
    rows = [r for r in b.jsonl("search.jsonl") if r.get("pre_run_basis")]
    if not rows:
        return []
    share = float(b.method["search"]["generator_max_share_pct"])
    limited = [r["profile"] for r in rows if _pre_run_limited(r, share)]
    return [Finding(GENERATOR, not limited,
                    f"fio alone could not hold {', '.join(limited)}" if limited else
                    f"fio alone held {', '.join(r['profile'] for r in rows)} with room to spare",
                    "method-notes §2")]


def _pre_run_limited(r: dict[str, Any], share: float) -> bool:
    """One pre-run row replayed: its measured rate against its one ceiling."""
    return _generator_limited([r["queue_depth"], num(r["ops_rate"]),
                               num(r["avg_response_ms"])], r["ops_unit"],
                              r.get("generator") or [], share)


GENERATOR = "Load generator (pre-run of unsearched profiles)"


# --- the access pattern each searched profile's job file drew (method-notes §2) ---------------
# Before each search the station ran the profile's own job file on fio's null engine with the
# per-IO log on and stored what the log showed (``search.jsonl`` ``pattern``). Method-notes §2
# ("The pattern of every run, measured in its pre-run") gives the tolerances below: the
# project's own, not method keys, so they are fixed here as in the station.

ACCESS_PATTERN = "Access pattern (generator pre-run)"
MIX_POINTS = 1.5  # a read share may miss its mix by this many points, plus the log's 3 σ
STREAM_SHARE_POINTS = 0.5  # a stream's share of all IOs is held by its rate cap: no 3 σ
CURVE_POINTS = 2.0  # a curved band's reads against the reference curve, plus the log's 3 σ
MIN_UNIFORMITY_P = 1e-6  # chi-square over 64 slices of the range: below it, not uniform
MIN_SEQUENTIAL_PCT = 99.9  # a sequential file's IOs continuing the one before
#: a sequential file's IOs at an offset no other job or host touched in the same pass
#: (method-notes §2; absent in a record stored before issue 38: not judged)
MIN_DISTINCT_PCT = 99.0
MAX_CONTINUING_PCT = 1.0  # a random file's IOs that may continue the one before by chance
REACH_PCT = 5.0  # a random file's offsets come within this % of both ends of the range
SLICE_SLACK_PCT = 0.01  # % of the range a stream's offset may pass its slice (whole blocks)


def three_sigma_points(pct: float, count: float) -> float:
    """The sampling uncertainty (3 σ, in points) of a share of ``pct`` % seen over ``count``
    independent IOs; none for a modelled pattern (no IOs logged)."""
    if count < 1:
        return 0.0
    share = pct / 100
    return 3 * 100 * math.sqrt(share * (1 - share) / count)


def _mix_off(label: str, measured: float, asked: float, count: float) -> list[str]:
    allowed = MIX_POINTS + three_sigma_points(asked, count)
    return ([f"{label}{measured:.1f} % reads against the asked {asked:g} % (allowed "
             f"±{allowed:.1f} points)"] if abs(measured - asked) > allowed else [])


def _whole_file_off(found: dict[str, Any], profile: dict[str, Any]) -> list[str]:
    """A single-stream profile: its mix, alignment, order and, random, spread over the range."""
    off = _mix_off("", float(found["read_pct"]), float(profile["read_pct"]), found["ios"])
    if not found["aligned"]:
        off.append(f"offsets off the {profile['align_kib']:g} KiB alignment")
    sequential = float(found["sequential_pct"])
    if profile["pattern"] == "sequential":
        if sequential < MIN_SEQUENTIAL_PCT:
            off.append(f"only {sequential:.2f} % of the IOs sequential (at least "
                       f"{MIN_SEQUENTIAL_PCT:g} %)")
        distinct = found.get("distinct_pct")
        if distinct is not None and float(distinct) < MIN_DISTINCT_PCT:
            off.append(f"only {float(distinct):.2f} % of the IOs at an offset no other job or "
                       f"host touched in the pass (at least {MIN_DISTINCT_PCT:g} %)")
        return off
    if sequential > MAX_CONTINUING_PCT:
        off.append(f"{sequential:.2f} % of random IOs continue the previous one (at most "
                   f"{MAX_CONTINUING_PCT:g} %)")
    p = found["uniformity_p"]  # null: modelled, no goodness-of-fit test ran
    if p is not None and float(p) < MIN_UNIFORMITY_P:
        off.append(f"offsets not uniform: chi-square p {float(p):.2g} below "
                   f"{MIN_UNIFORMITY_P:g}")
    low, high = float(found["low_pct"]), float(found["high_pct"])
    if low > REACH_PCT or high < 100 - REACH_PCT:
        off.append(f"offsets span {low:.1f}–{high:.1f} % only, not the whole range")
    return off


def _stream_off(seen: dict[str, Any], asked: dict[str, Any], ios: int) -> list[str]:
    """One stream of a multi-stream profile: its share, mix, slice, order and in-band curve
    (``ios``: every IO the profile's log held; 0 when modelled)."""
    label = f"stream {seen['name']}: "
    share, reads = float(seen["share_pct"]), float(seen["read_pct"])
    off = []
    if abs(share - float(asked["share_pct"])) > STREAM_SHARE_POINTS:
        off.append(f"{label}{share:.2f} % of the IOs against the asked "
                   f"{float(asked['share_pct']):g} % (allowed ±{STREAM_SHARE_POINTS:g} point)")
    off += _mix_off(label, reads, float(asked["read_pct"]), ios * share / 100)
    first = float(asked.get("offset_pct", 0.0))
    last = first + float(asked.get("size_pct", 100.0))
    if float(seen["low_pct"]) < first - SLICE_SLACK_PCT or \
            float(seen["high_pct"]) > last + SLICE_SLACK_PCT:
        off.append(f"{label}offsets over {float(seen['low_pct']):.3f}–"
                   f"{float(seen['high_pct']):.3f} % of the range, outside its slice "
                   f"{first:g}–{last:g} %")
    if asked["pattern"] == "sequential" and ios and \
            float(seen["sequential_pct"]) < MIN_SEQUENTIAL_PCT:
        off.append(f"{label}only {float(seen['sequential_pct']):.2f} % of the IOs sequential")
    band_reads = ios * share * reads / 1e4
    for x, measured, reference in seen.get("curve") or ():
        allowed = CURVE_POINTS + three_sigma_points(reference, band_reads)
        if abs(measured - reference) > allowed:
            off.append(f"{label}{measured:.1f} % of its reads in the band's first {x:g} %, "
                       f"the reference curve {reference:.1f} % (allowed ±{allowed:.1f} points)")
    if asked.get("distribution", "uniform") == "reference-hotband-curve" and \
            not seen.get("curve"):
        off.append(f"{label}asked the reference in-band curve, none measured")
    return off


def pattern_off(found: dict[str, Any], method: dict[str, Any]) -> list[str]:
    """How a measured pattern departs from the profile it names in ``method``; [] when it
    is the profile's (method-notes §2)."""
    profile = next((p for p in method.get("profiles", ()) if p["name"] == found["profile"]),
                   None)
    if profile is None:
        return [f"{found['profile']} is no profile of the run's method"]
    asked = {s["name"]: s for s in profile.get("streams") or ()}
    if not asked:
        return _whole_file_off(found, profile)
    streams = found.get("streams") or []
    logged = {s["name"] for s in streams}
    off = [f"stream {name}: no IO logged" for name in asked if name not in logged]
    for seen in streams:
        off += (_stream_off(seen, asked[seen["name"]], found["ios"]) if seen["name"] in asked
                else [f"stream {seen['name']}: not a stream of the profile"])
    return off


def _access_pattern(b: Bundle) -> list[Finding]:
    """Each searched profile's pre-run pattern against its profile (method-notes §2); no
    criterion when no search result holds one (a run stored before the pre-run measured
    patterns, or only trace replays)."""
    measured = [r for r in b.jsonl("search.jsonl") if r.get("pattern")]
    if not measured:
        return []
    off = [f"{r['profile']}: {'; '.join(why)}" for r in measured
           if (why := pattern_off(r["pattern"], b.method))]
    told = ", ".join(f"{r['profile']} ({r['pattern']['ios']} IOs logged)"
                     if r["pattern"]["ios"] else f"{r['profile']} (modelled)" for r in measured)
    return [Finding(ACCESS_PATTERN, not off, "; ".join(off) if off else
                    f"the profile's pattern in each pre-run: {told}", "method-notes §2")]


def _method_numbers(b: Bundle, minimums: dict[str, Any]) -> list[Finding]:
    """The method's interval, durations and sample period against its [compliance] minimums,
    and the category's profile set run to completion (method-notes §2, §3)."""
    interval_s = float(b.method["interval_s"])
    active = [p for p in b.phases if p["kind"] == "active"]
    idle = [p["planned_s"] for p in b.phases if p["kind"] == "ready_idle"]
    period = float(b.method["sample_period_s"])

    def shortest(name: str, values: list[float], minimum: float) -> Finding:
        return Finding(name, bool(values) and min(values) >= minimum,
                       f"shortest {min(values, default=0):g} s, minimum {minimum:g} s",
                       "method-notes §2")
    category = b.run["configuration"]["taxonomy"].rpartition("-")
    category_id = category[0] if category[2].isdigit() else b.run["configuration"]["taxonomy"]
    required = next((s["profiles"] for s in minimums["profile_sets"]
                     if category_id in s["categories"]), None)
    done = {p["profile"] for p in active if p["status"] == "COMPLETED"}
    lacking = [p for p in required or () if p not in done]
    return [
        Finding("Interval length", interval_s == minimums["interval_s"],
                f"interval {interval_s:g} s, required {minimums['interval_s']:g} s",
                "method-notes §2"),
        shortest("Stabilisation", [p["stabilisation_intervals"] * interval_s for p in active],
                 minimums["min_stabilisation_s"]),
        shortest("Measurement", [p["measurement_intervals"] * interval_s for p in active],
                 minimums["min_measurement_s"]),
        shortest("Ready idle", idle, minimums["min_ready_idle_s"]),
        Finding("Sample period", period <= minimums["max_sample_period_s"],
                f"sample period {period:g} s, maximum {minimums['max_sample_period_s']:g} s",
                "method-notes §3"),
        Finding("Profile set", required is not None and not lacking,
                f"{category_id}: " + ("the method states no profile set" if required is None
                                      else f"not completed: {', '.join(lacking)}" if lacking
                                      else f"{' '.join(required)} all completed"),
                "method-notes §2")]


def _run_facts(b: Bundle, limit: int | None, rules: int = RULES_VERSION) -> list[Finding]:
    """What the run itself shows: completed, real instruments, continuous, never resumed,
    calibrated, one configuration (method-notes §2, §3)."""
    cut = [f"{p['name']} {p['status']}" for p in b.phases
           if p["status"] not in ("COMPLETED", "SKIPPED")]
    status = b.run["run"]["status"]
    paused = [f"{p['name']} ({p['attempts']} attempts)" for p in b.phases if p["attempts"] > 1]
    resumed = b.run["resumptions"]
    return [
        Finding("Run completed", status == "COMPLETED" and not cut,
                f"run {status}" + (f": {', '.join(cut)}" if cut else
                                   ", every phase COMPLETED or SKIPPED"), "method-notes §2"),
        _real_instruments(b),
        Finding("Continuous phases", not paused, "not continuous: " + ", ".join(paused)
                if paused else "every phase in one attempt", "method-notes §2"),
        Finding("Resumed after interruption", not resumed,
                f"resumed {len(resumed)} time(s)" if resumed else "never resumed",
                "method-notes §2"),
        _calibration(b, limit, rules),
        Finding("Configuration unchanged", True, "run.json holds one configuration snapshot, "
                                                 "taken at the start", "method-notes §2")]


def derive_compliance(b: Bundle, c: Checklist, rules: int = RULES_VERSION) -> list[Finding]:
    """Every criterion of the station's verdict (its rules 2), in its order."""
    minimums = b.method.get("compliance") if b.method else None
    if not b.method or not minimums:
        findings = [Finding("Method minimums", False, "the method states no [compliance] "
                            "minimums" if b.method else "method.json is null",
                            "method-notes §2")]
    else:
        findings = _method_numbers(b, minimums) + _normative(b, c)
    findings += _run_facts(b, minimums["max_calibration_age_days"] if minimums else None,
                           rules)
    if b.method:
        findings += [Finding("Inlet thermometer", b.run["instruments"]["temperature_meter"]
                             is not None, "an inlet thermometer took part"
                             if b.run["instruments"]["temperature_meter"] else
                             "no inlet thermometer took part", "method-notes §3, §10"),
                     *_metrics_valid(b), _intensity(b), *_pre_run_generator(b),
                     *_access_pattern(b),
                     _classification(b, c)]
    return findings


def check_compliance(b: Bundle, c: Checklist) -> None:
    """Each criterion the verifier derives against the station's of the same name, then the
    overall verdict: COMPLIANT only when every criterion is met."""
    station = b.run["compliance"]
    rules = station.get("rules_version")
    if rules not in RULES_VERSIONS:
        c.not_checked(f"the compliance verdict (station rules {rules}; this verifier derives "
                      f"rules {', '.join(map(str, RULES_VERSIONS))})")
        return
    theirs = {k["name"]: k["verdict"] == "MET" for k in station["criteria"]}
    mine = derive_compliance(b, c, rules)
    for f in mine:
        if f.recorded:
            continue
        verdict = "MET" if f.met else "NOT MET"
        their = theirs.get(f.name)
        c.line(their == f.met, f"{f.name}: {verdict} — {f.evidence} (station "
               + ("no such criterion" if their is None else "MET" if their else "NOT MET")
               + f") — {f.cite}")
    extra = [name for name in theirs if name not in {f.name for f in mine}]
    if extra:
        c.line(False, f"the station's verdict lists criteria the verifier does not derive: "
                      f"{', '.join(extra)}")
    compliant = all(f.met for f in mine)
    failed = [f.name for f in mine if not f.met]
    label = "COMPLIANT" if compliant else "NON-COMPLIANT"
    c.line(compliant == station["compliant"] and not extra,
           f"compliance verdict: {label}"
           + (f" ({len(failed)} criteria not met: {', '.join(failed)})" if failed else "")
           + f" (station {'COMPLIANT' if station['compliant'] else 'NON-COMPLIANT'}) — "
             "method-notes §1, §2, §3")


# --- search, sweep and PTS steps --------------------------------------------------------------

#: a sequential probe gaining less than this over the previous one has levelled off
PLATEAU_GAIN = 1.02
#: a multi-stream probe whose SUT ran less than this share of the asked total is saturated
KEPT_UP_SHARE = 0.95
#: the load generator alone kept up: this share of the asked rate, shares within these points
GENERATOR_KEPT_RATE, GENERATOR_SHARE_PTS = 0.9, 0.5
STEADY_STATE_PHASE = "PTS steady state"  # the matrix's preconditioning phase (method-notes §5)
#: the bisection ran out of steps; a multi-stream profile's steps are total rates, and the
#: station says "rate step" for them (method-notes §2, "A rate step's words")
NO_WHOLE_STEP = "no whole {step} left between the probes"


def _category(b: Bundle) -> str:
    head, _, level = b.run["configuration"]["taxonomy"].rpartition("-")
    return head if level.isdigit() else b.run["configuration"]["taxonomy"]


def run_plan(b: Bundle) -> dict[str, Any] | None:
    """The method's plan for the run's category: the first that lists it."""
    return next((p for p in b.method["plans"] if _category(b) in p["categories"]), None)


def _meets(probe: list[float], limit: float, kept: Any) -> bool:
    return probe[2] <= limit and (kept is None or kept(probe))


def _bracket(probes: list[list[float]], limit: float, kept: Any) -> Any:
    inside = [p for p in probes if _meets(p, limit, kept)]
    if not inside:
        return None
    low = max(inside, key=lambda p: p[0])
    over = [p for p in probes if p[0] > low[0] and not _meets(p, limit, kept)]
    return (low, min(over, key=lambda p: p[0])) if over else None


def _close_enough(resp: float, limit: float, tolerance: float) -> bool:
    return resp <= limit and resp >= limit * (1 - tolerance / 100)


def _next_depth(probes: list[list[float]], limit: float, tolerance: float, kept: Any) -> Any:
    """The bisection's next queue depth, or None when the search is done (method-notes §2)."""
    if any(_close_enough(p[2], limit, tolerance) for p in probes):
        return None
    found = _bracket(probes, limit, kept)
    if found is None:
        return None
    low, high = found[0][0], found[1][0]
    return (low + high) // 2 if high - low > 1 else None


def _over(probes: list[list[float]], random: bool, limit: float, kept: Any) -> bool:
    """The listed probes stop once a random profile misses the limit or a sequential one
    stops gaining (method-notes §2)."""
    if random:
        return not _meets(probes[-1], limit, kept)
    return len(probes) > 1 and probes[-1][1] < probes[-2][1] * PLATEAU_GAIN


def _generator_limited(chosen: list[float], unit: str, generator: list[dict[str, Any]],
                       share: float) -> bool:
    """The chosen figure is not clearly the SUT's: above ``share`` % of what fio alone reached
    at the listed step at or above it, or, for a capped job file, fio alone could not hold
    the asked rate in the asked shares (method-notes §2, "The generator is never the
    bottleneck")."""
    if not generator:
        return False
    at = min((g for g in generator if g["step"] >= chosen[0]), key=lambda g: g["step"],
             default=max(generator, key=lambda g: g["step"]))
    if at["asked_iops"] is not None:
        return not (at["iops"] >= GENERATOR_KEPT_RATE * at["asked_iops"]
                    and at["share_error_pts"] <= GENERATOR_SHARE_PTS)
    return chosen[1] > (at["iops"] if unit == "IOPS" else at["mib_s"]) * share / 100


def search_outcome(b: Bundle, r: dict[str, Any]) -> tuple[str, list[float], list[str]]:
    """(what differs in the probe order, the chosen probe, the note's findings) of one
    searched profile, replayed from its probes (method-notes §2)."""
    cfg, limit = b.method["search"], float(b.method["response_time"]["max_avg_ms"])
    profile = next(p for p in b.method["profiles"] if p["name"] == r["profile"])
    random, probes = profile["pattern"] == "random", [list(p) for p in r["probes"]]
    kept = None
    if profile.get("streams"):
        def kept(p: list[float]) -> bool:
            return p[1] >= KEPT_UP_SHARE * max(2, round(p[0] * cfg["stream_iops_per_step"]))
    depths, n, order = cfg["queue_depths"], 0, ""
    for n, qd in enumerate(depths, 1):  # the listed depths in order, until the stop rule
        if len(probes) < n or probes[n - 1][0] != qd:
            order = f"probe {n} is not the listed queue depth {qd}"
            break
        if _over(probes[:n], random, limit, kept):
            break
    while not order and random and (qd := _next_depth(probes[:n], limit,
                                                      cfg["tolerance_pct"], kept)) is not None:
        if len(probes) <= n or probes[n][0] != qd:
            order = f"probe {n + 1} is not the bisection's queue depth {qd}"
        n += 1
    if not order and n != len(probes):
        order = f"{len(probes)} probes where the rules ask {n}"
    listed = probes[:len(depths)]
    findings = []
    if random:
        inside = [p for p in probes if _meets(p, limit, kept)]
        chosen = max(inside, key=lambda p: p[1]) if inside else probes[0]
        if chosen[2] > limit:
            findings.append(NO_PROBE_WITHIN)
        elif not _close_enough(chosen[2], limit, cfg["tolerance_pct"]):
            findings.append(LOAD_GENERATOR_LIMIT if all(_meets(p, limit, kept) for p in listed)
                            else NO_WHOLE_STEP.format(
                                step="rate step" if profile.get("streams") else "queue depth"))
    else:
        chosen = max(probes, key=lambda p: p[1])
        if len(listed) == len(depths) and not _over(listed, False, limit, kept):
            findings.append(LOAD_GENERATOR_LIMIT)
    if _generator_limited(chosen, r["ops_unit"], r.get("generator") or [],
                          cfg["generator_max_share_pct"]):
        findings.insert(0, LOAD_GENERATOR_LIMIT)
    return order, chosen, findings


def check_search(b: Bundle, c: Checklist) -> None:
    """Each searched profile's probes in the order the rules ask, its chosen intensity and
    its note, replayed from the stored probes (method-notes §2)."""
    share = float(b.method["search"]["generator_max_share_pct"])
    for r in b.jsonl("search.jsonl"):
        if r.get("pre_run_basis"):
            limited = _pre_run_limited(r, share)
            c.line(limited == r["note"].startswith(LOAD_GENERATOR_LIMIT),
                   f"null-engine pre-run of {r['profile']} ({r['pre_run_basis']}): "
                   f"{'load generator limit' if limited else 'the generator kept up'} "
                   f"(station: {r['note'] or 'none'}) — method-notes §2")
            continue
        if r["note"].startswith("re-check before"):
            c.not_checked(f"intensity search of {r['profile']} (re-refined by its re-check: "
                          "the retry's figures are its metric's)")
            continue
        order, chosen, findings = search_outcome(b, r)
        station = [part.split(":")[0] for part in r["note"].split("; ") if part]
        station = [s if not s.startswith(NO_PROBE_WITHIN) else NO_PROBE_WITHIN
                   for s in station]
        same = (not order and chosen[0] == r["queue_depth"] and agree(chosen[1],
                num(r["ops_rate"])) and agree(chosen[2], num(r["avg_response_ms"]))
                and findings == station)
        c.line(same, f"intensity search {r['profile']}: {len(r['probes'])} probes"
                     + (f" ({order})" if order else " in the rules' order")
                     + f", intensity 100 at queue depth {chosen[0]} ({chosen[1]!r} "
                       f"{r['ops_unit']}, {chosen[2]!r} ms; station queue depth "
                       f"{r['queue_depth']}), note: {', '.join(findings) or 'none'} (station: "
                       f"{', '.join(station) or 'none'}) — method-notes §2")


def sweep_stop(points: list[tuple[int, float, float]], limit: float,
               min_gain: float) -> str | None:
    """Why a BSU sweep ends after its last step, or None (method-notes §6: the response time
    past the limit, or IOPS rising less than ``min_gain`` % over the previous step)."""
    units, iops, resp = points[-1]
    if not iops > 0:
        return f"{units} units: no IOPS measured"
    if resp > limit:
        return (f"average response time {resp:.1f} ms at {units} units passed the "
                f"{limit:g} ms limit")
    if len(points) >= 2 and points[-2][1] > 0:
        gain = (iops / points[-2][1] - 1) * 100
        if gain < min_gain:
            return (f"IOPS rose {gain:.1f} % from {points[-2][0]} to {units} units "
                    f"({points[-2][1]:.0f} → {iops:.0f}), less than {min_gain:g} %")
    return None


def check_sweep(b: Bundle, c: Checklist, plan: dict[str, Any]) -> None:
    """The sweep's steps: each run until the stop rule holds on the stored step figures (re-
    derived above as metrics), every later one SKIPPED naming the same reason."""
    sweep, metrics = plan["sweep"], {m["name"]: m for m in b.metrics}
    steps = [p for p in b.phases if p["kind"] == "sweep"][:len(sweep["units"])]
    limit = float(b.method["response_time"]["max_avg_ms"])
    points: list[tuple[int, float, float]] = []
    stopped, wrong = None, []
    for units, phase in zip(sweep["units"], steps):
        if stopped is not None:
            expected = f"sweep stopped before {phase['name']}: {stopped}"
            if phase["status"] != "SKIPPED" or phase["error"] != expected:
                wrong.append(f"{phase['name']} {phase['status']} ({phase['error']!r}, "
                             f"expected SKIPPED: {stopped!r})")
            continue
        metric = metrics.get(f"{sweep['name']}_{sweep['unit']}_{units}")
        if phase["status"] != "COMPLETED" or metric is None:
            break  # the run ended here (aborted, failed): no rule to replay further
        points.append((units, num(metric["ops_rate"]), num(metric["avg_response_ms"])))
        stopped = sweep_stop(points, limit, float(sweep["min_gain_pct"]))
    c.line(not wrong, f"sweep {sweep['name']}: {len(points)} steps measured, "
                      + (f"stopped: {stopped}" if stopped else "no stop rule met")
                      + (f"; {'; '.join(wrong)}" if wrong else "") + " — method-notes §6")


def pts_steady(rounds: list[float], window: int, max_range: float, max_slope: float,
               max_rounds: int) -> tuple[int, float, float, float] | None:
    """(rounds, window average, range %, slope excursion %) at the first window meeting the
    PTS steady state (method-notes §5), or None."""
    values = rounds[:max_rounds]
    for end in range(window, len(values) + 1):
        w = values[end - window:end]
        avg = mean(w)
        if not avg > 0:
            continue
        spread, slope = (max(w) - min(w)) / abs(avg) * 100, abs(drift_pct(w))
        if spread <= max_range and slope <= max_slope:
            return end, avg, spread, slope
    return None


def check_steady_state(b: Bundle, c: Checklist, matrix: dict[str, Any]) -> None:
    """The matrix's preconditioning ends at the first round whose window meets the PTS steady
    state, over the rounds' IOPS (its intervals' rates, re-derived above); the log says so in
    the station's words, or nothing when no window met it."""
    phase = next((p for p in b.phases if p["name"] == STEADY_STATE_PHASE), None)
    if phase is None or not matrix.get("steady_state_rounds"):
        return
    last = max((a["attempt"] for a in b.attempts if a["phase_index"] == phase["index"]),
               default=0)
    rounds = [num(r["ops_rate"]) for r in sorted(
        (r for r in b.intervals if (r["phase_index"], r["attempt"]) == (phase["index"], last)),
        key=lambda r: r["index"])]
    found = None
    for n in range(matrix["steady_state_window"], len(rounds) + 1):  # as the rounds arrive
        found = pts_steady(rounds[:n], matrix["steady_state_window"],
                           matrix["steady_state_range_pct"], matrix["steady_state_slope_pct"],
                           matrix["steady_state_rounds"])
        if found:
            break
    expected = None if found is None else (
        f"{STEADY_STATE_PHASE}: reached after {found[0]} rounds: the last "
        f"{matrix['steady_state_window']} average {found[1]:.0f} IOPS, range {found[2]:.1f} % "
        f"(≤ {matrix['steady_state_range_pct']:g} %), slope {found[3]:.1f} % "
        f"(≤ {matrix['steady_state_slope_pct']:g} %) (method-notes §5)")
    logged = [e["message"] for e in b.jsonl("events.jsonl")
              if e["message"].startswith(f"{STEADY_STATE_PHASE}: reached")]
    ok = logged == ([expected] if expected else [])
    c.line(ok, f"{STEADY_STATE_PHASE}: {len(rounds)} rounds, "
               + (f"steady after {found[0]} (average {found[1]:.0f} IOPS, range "
                  f"{found[2]:.1f} %, slope {found[3]:.1f} %)" if found else "never steady")
               + ("" if ok else f"; the log says {logged or 'nothing'}") + " — method-notes §5")
    check_stored_steady_state(c, phase.get("steady_state"), found, len(rounds),
                              matrix["steady_state_window"])


def check_stored_steady_state(c: Checklist, stored: dict[str, Any] | None,
                              found: tuple[int, float, float, float] | None, rounds: int,
                              window: int) -> None:
    """The verdict the station stored with the phase (``steady_state``, bundles since
    schema revision 0020) against this verifier's own derivation: steady or not, the round
    it was reached at and the window's average, range and slope to 1e-9 relative. A bundle
    without it (a run stored before the station kept it) is named not checked."""
    if stored is None:
        if rounds >= window:
            c.not_checked(f"the stored {STEADY_STATE_PHASE} verdict (none in this bundle: "
                          "the run was stored before the station kept it)")
        return
    at = "?" if stored.get("round_index") is None else stored["round_index"] + 1
    if found is None:
        ok = not stored["steady"]
        detail = "not steady" if ok else f"steady at round {at}"
    else:
        figures = (stored["window_average"], stored["range_pct"],
                   stored["slope_excursion_pct"])
        ok = (bool(stored["steady"]) and stored["round_index"] == found[0] - 1
              and all(agree(num(v), mine) for v, mine in zip(figures, found[1:])))
        detail = (f"steady at round {at}, average "
                  f"{figures[0]} IOPS, range {figures[1]} %, slope {figures[2]} %"
                  if stored["steady"] else f"not steady: {stored['reason']}")
    c.line(ok, f"{STEADY_STATE_PHASE}: the station's stored verdict ({detail}) agrees with the "
               "rounds — method-notes §5")


def check_steps(b: Bundle, c: Checklist) -> None:
    check_search(b, c)
    plan = run_plan(b)
    if plan and plan.get("sweep"):
        check_sweep(b, c, plan)
    if plan and plan.get("demand_intensity"):
        check_steady_state(b, c, plan["demand_intensity"])
        c.not_checked("the demand-intensity matrix's saturation points and sweet spots "
                      "(report views of the cells' metrics, which are checked above; "
                      "method-notes §6)")


# --- capacity-optimisation checks -----------------------------------------------------------

#: the COMs a station checks itself, by the SUT's used capacity around a data set; others are
#: recorded by hand (method-notes §2, phase 4)
DATA_REDUCTION_COMS = ("deduplication", "compression")
MIN_REDUCTION_RATIO = 1.05  # a logical/physical ratio above this: the COM is on and working


def check_coms(b: Bundle, c: Checklist) -> None:
    """One COM check per declared COM, and each check's verdict as its ratio gives it: VALID
    only for a data-reduction COM whose logical/physical ratio reached the threshold after
    data was written; no ratio (no capacity probe, or a COM checked by hand) is never VALID
    (method-notes §2, phase 4)."""
    declared = sorted(b.run["configuration"]["sut"].get("coms_declared") or ())
    checks = {m["name"][4:]: m for m in b.metrics if m["name"].startswith("COM_")}
    phases = {p["profile"][4:]: p["status"] for p in b.phases if p["kind"] == "com_check"}
    if not declared and not checks and not phases:
        return
    ran = sorted(com for com, status in phases.items() if status == "COMPLETED")
    c.line(sorted(phases) == declared and sorted(checks) == ran,
           f"COM checks: {', '.join(sorted(phases)) or 'none'} planned for the declared "
           f"{', '.join(declared) or 'none'}; a result for each one run "
           f"({', '.join(sorted(checks)) or 'none'}) — method-notes §2")
    for com, m in sorted(checks.items()):
        ratio, written = num(m["value"]), num(m["ops_rate"])
        valid = (com in DATA_REDUCTION_COMS and math.isfinite(ratio)
                 and ratio >= MIN_REDUCTION_RATIO and written > 0)
        c.line(valid == m["valid"] and m["unit"] == "ratio",
               f"COM {com}: ratio {ratio!r} after {written!r} GB written → "
               f"{'VALID' if valid else 'not VALID'} (≥ {MIN_REDUCTION_RATIO:g} needed; station "
               f"{'VALID' if m['valid'] else 'not VALID'}) — method-notes §2")
    c.not_checked("the COM ratios themselves (from the SUT's used capacity before and after "
                  "each data set, which the bundle does not carry) and COM results recorded "
                  "by hand (audit.jsonl, taken as recorded)")


# --- maximum power, each figure by its window (issue 42) ----------------------------------

MAX_POWER_WINDOW_S = 1.0  # the windowed maximum's window (method-notes §10)
GAP_PERIODS = 1.5  # readings further apart than this many periods are not consecutive


def median_period(times: list[float]) -> float:
    """The median spacing of consecutive readings, NaN with fewer than two."""
    steps = sorted(b - a for a, b in zip(times, times[1:]) if b - a > 0)
    if not steps:
        return math.nan
    mid = len(steps) // 2
    return steps[mid] if len(steps) % 2 else (steps[mid - 1] + steps[mid]) / 2


def maxima(readings: list[tuple[int, float, float, bool]], names: dict[int, str],
           window_s: float = MAX_POWER_WINDOW_S) -> dict[str, Any]:
    """The highest single reading, 1 s window average and phase average of ``readings``
    ((phase, t, watts, usable) in time order), per phase and overall — method-notes §10."""
    period = median_period([r[1] for r in readings])
    n = max(1, round(window_s / period)) if math.isfinite(period) else 1
    per: dict[int, list[tuple[int, float, float, bool]]] = {}
    for r in readings:
        per.setdefault(r[0], []).append(r)
    singles: list[dict[str, Any]] = []
    windows: list[dict[str, Any]] = []
    averages: list[dict[str, Any]] = []
    for index in sorted(i for i, rs in per.items() if any(r[3] for r in rs)):
        rs, name = per[index], names.get(index, f"phase {index}")
        ok = [r for r in rs if r[3]]
        best = max(ok, key=lambda r: r[2])  # max() keeps the first of equals, as argmax
        singles.append({"where": name, "watts": best[2], "t_s": best[1]})
        averages.append({"where": name, "watts": sum(r[2] for r in ok) / len(ok),
                         "readings": len(ok), "t_first_s": ok[0][1], "t_last_s": ok[-1][1]})
        found: dict[str, Any] | None = None
        for j in range(len(rs) - n + 1):
            run = rs[j:j + n]
            if all(r[3] for r in run) and all(b[1] - a[1] <= GAP_PERIODS * period
                                              for a, b in zip(run, run[1:])):
                watts = sum(r[2] for r in run) / n
                if found is None or watts > found["watts"]:
                    found = {"where": name, "watts": watts, "t_first_s": run[0][1],
                             "t_last_s": run[-1][1], "readings": n}
        if found is not None:
            windows.append(found)

    def overall(items: list[dict[str, Any]]) -> dict[str, Any] | None:
        return {**max(items, key=lambda x: x["watts"]), "where": "overall"} if items else None
    return {"period_s": period, "readings_per_window": n, "single": overall(singles),
            "window": overall(windows), "phase_average": max(
                averages, key=lambda x: x["watts"]) if averages else None,
            "single_per_phase": singles, "window_per_phase": windows,
            "phase_averages": averages}


def _same_figures(mine: Any, station: Any) -> bool:
    """Equal structure, numbers agreeing to 1e-9 relative (null for NaN)."""
    if isinstance(mine, dict) and isinstance(station, dict):
        return mine.keys() <= station.keys() and all(_same_figures(v, station[k])
                                                      for k, v in mine.items())
    if isinstance(mine, list) and isinstance(station, list):
        return len(mine) == len(station) and all(map(_same_figures, mine, station))
    if isinstance(mine, float) and (station is None or isinstance(station, (int, float))):
        return math.isnan(mine) if station is None else agree(mine, float(station))
    return bool(mine == station)


def check_max_power(b: Bundle, c: Checklist) -> None:
    """The SUT input's maximum power by each window, recomputed from power_samples.csv."""
    if b.max_power is None:
        c.not_checked("maximum power by its window (a storwatt-bundle/1 bundle carries none)")
        return
    stored = b.max_power["sut_input"]
    names = {int(p["index"]): p["name"] for p in b.phases}
    mine = maxima([(s.phase, s.t, s.watts, s.usable) for s in b.samples], names)
    top = mine["window"]
    c.line(_same_figures(mine, stored),
           "maximum power of the SUT's input: highest 1 s window average "
           + (f"{top['watts']!r} W ({mine['readings_per_window']} readings of "
              f"{mine['period_s']!r} s)" if top else "none")
           + ", highest phase average and highest single reading, per phase and overall, "
             "agree with the station's — method-notes §10")


NOT_RECOMPUTED = (
    "the meter's resolution against the accuracy table and the thermometer's stated "
    "resolution (the record keeps no per-reading resolution; method-notes §3)",
    "which slices' latency bins make up each histogram (per-slice bins are not in the "
    "bundle; method-notes §5)",
)


#: exit statuses (docs/export-format.md, "Exit status"): a script can tell a verdict from a
#: bundle that could not be judged
AGREES, DISAGREES, UNREADABLE = 0, 1, 2
#: what a check meets in a bundle its schema let through but whose parts do not fit together
#: (a phase index no phase has, a method key missing): the bundle is malformed, not judged
MALFORMED = (KeyError, TypeError, ValueError, IndexError, AttributeError, StopIteration,
             ZeroDivisionError, OverflowError, RecursionError)


def _checks(b: Bundle, c: Checklist, record_sha256: str | None,
            samples_hash: str | None) -> None:
    print(f"StorWatt result bundle: run {b.manifest.get('run_id')}, method "
          f"{b.run['method']['name']} {b.run['method']['version']}, station "
          f"{b.manifest.get('station_version')}", file=c.out)
    check_files(b, c)
    check_flags(b, c)
    check_samples_hash(b, c, samples_hash)
    check_record(b, c, record_sha256)
    if not b.method:
        c.line(False, "method.json: the record does not hold the method it ran (stored before "
                      "the station kept it), so no figure can be recomputed")
    else:
        check_method(b, c)
        derived = check_attempts(b, c)
        check_metrics(b, c, derived)
        check_histograms(b, c)
        check_power_inputs(b, c)
        check_max_power(b, c)
        check_supply_flags(b, c)
        check_steps(b, c)
        check_coms(b, c)
    check_compliance(b, c)


def verify(path: str, record_sha256: str | None = None, samples_hash: str | None = None,
           out: Any = None) -> int:
    """Check the bundle at ``path``: AGREES (0), DISAGREES (1) or UNREADABLE (2), with one
    line saying why when it cannot be judged."""
    out = out or sys.stdout
    try:
        b = read_bundle(path)
        c = Checklist(io.StringIO())
        _checks(b, c, record_sha256, samples_hash)
    except BundleError as exc:
        print(f"storwatt-verify: {exc}", file=out)
        return UNREADABLE
    except MALFORMED as exc:
        where = traceback.extract_tb(exc.__traceback__)[-1]
        print(f"storwatt-verify: malformed bundle: {type(exc).__name__}: "
              f"{str(exc).splitlines()[0][:160] if str(exc) else ''} (in {where.name})",
              file=out)
        return UNREADABLE
    except MemoryError:
        print("storwatt-verify: the bundle needs more memory than this computer gives",
              file=out)
        return UNREADABLE
    print(c.out.getvalue(), end="", file=out)
    for what in [*c.unchecked, *NOT_RECOMPUTED]:
        print(f"not checked: {what}", file=out)
    verdict = "AGREES" if c.failed == 0 else "DISAGREES"
    print(f"{verdict}: {c.passed} criteria agree, {c.failed} disagree", file=out)
    return AGREES if c.failed == 0 else DISAGREES


def version_text() -> str:
    return (f"storwatt-verify {VERIFIER_VERSION}: reads {', '.join(BUNDLE_FORMATS)}; "
            f"rebuilds record formats {', '.join(FLAG_TABLES)}")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # a usage error is exit status 2, in one line
        self.exit(UNREADABLE, f"{self.prog}: {message}\n")


def main(argv: list[str] | None = None) -> int:
    parser = _Parser(
        prog="storwatt-verify",
        description="Recompute a StorWatt result bundle's figures from its raw data and say "
                    "whether they agree with the station's. Exit status: 0 agrees, 1 disagrees, "
                    "2 the bundle cannot be read or is malformed, or the command line is wrong.")
    parser.add_argument("bundle", metavar="BUNDLE", help="the .zip written by storwatt report "
                                                         "RUN --bundle FILE.zip (or the GUI's "
                                                         "Export bundle…)")
    parser.add_argument("--record-sha256", metavar="HASH",
                        help="the record SHA-256 printed in each report page's footer "
                             "(\"Revision N — record SHA-256 …\") and on an approval")
    parser.add_argument("--samples-sha256", metavar="HASH",
                        help="the samples SHA-256 printed in the report's run summary (the "
                             "PDF's cover, the xlsx's Test Data Report sheet)")
    parser.add_argument("--version", action="version", version=version_text())
    args = parser.parse_args(argv)
    return verify(args.bundle, args.record_sha256, args.samples_sha256)


if __name__ == "__main__":
    sys.exit(main())
