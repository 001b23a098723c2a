"""The SHA-256 a lab signs: one canonical byte form of a stored run and its verdicts.

A report is the document QA approves, so it carries a hash of what it reports on: the samples,
the configuration, the method text as run, the figures, and the verdicts (issue 14 item 15).
Two exports of the same record must print the same hash, on any PC and SQL backend; changing
one sample or one verdict must change it. The hash is built in two layers so each revision of
the record can be hashed without re-serialising the samples:

1. **facts** — canonical JSON (below) of ``{"format", "run", "configuration", "method",
   "instruments", "phases", "attempts", "intervals", "workload", "histograms", "search",
   "metrics", "events", "samples_sha256"}``. The samples enter through ``samples_sha256``
   (:func:`app.storage.repository.samples_digest`, their own documented byte form).
2. **record** — SHA-256 of canonical JSON ``{"format", "facts_sha256", "verdicts",
   "entries"}``: ``verdicts`` holds the derived compliance criteria, each COM's disclosure and
   verdict (:mod:`app.com_verdict`) and the disposition; ``entries`` every verdict-bearing
   audit entry of the revision (dispositions, COM results: id, kind, subject, outcome, text,
   author, time). Notes and approvals are not hashed: a note changes no verdict, and an
   approval attests to a hash, it cannot be part of it.

Canonical JSON: keys sorted, no whitespace (``","`` and ``":"``), UTF-8 without escaping;
tuples as lists; dictionary keys as strings (an integer key as its decimal digits, a float key
as Python's shortest round-trip ``repr``); a float as Python's shortest round-trip ``repr``;
NaN as ``null`` (storage keeps no NaN either) and ±infinity as the strings ``"inf"``/``"-inf"``;
enumerations as their values. docs/storage.md repeats this for an auditor.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import asdict, is_dataclass
from enum import Enum
from typing import Any

from app.com_verdict import com_verdicts
from app.storage.audit import VERDICT_KINDS, AuditKind
from app.storage.stored import StoredRun

#: names the byte form; a change to it gets a new name, so old hashes stay checkable
FORMAT = "storwatt-record/1"


def facts_sha256(run: StoredRun) -> str:
    """SHA-256 of the run's facts (layer 1): everything but the verdicts and the trail."""
    facts = {
        "format": FORMAT,
        "run": {"run_id": run.run_id, "status": run.status, "started_wall": run.started_wall,
                "finished_wall": run.finished_wall, "planned_s": run.planned_s,
                "duration_s": run.duration_s, "error": run.error,
                "workload_engine": run.workload_engine},
        "configuration": run.config_snapshot,
        "method": {"name": run.method_name, "version": run.method_version,
                   "claims_compliant": run.method_compliant, "resolved": run.method_json,
                   "sha256": run.method_sha256},
        "instruments": {"power_meter": run.power_meter,
                        "temperature_meter": run.temperature_meter},
        "phases": run.phases, "attempts": run.attempts, "intervals": run.intervals,
        "workload": run.workload, "histograms": run.histograms, "search": run.search_results,
        "metrics": run.metrics, "events": run.events, "samples_sha256": run.samples_sha256,
    }
    return _sha256(facts)


def record_sha256(run: StoredRun, facts: str | None = None) -> str:
    """The hash of the record as ``run`` holds it (its audit trail decides the revision);
    ``facts``: :func:`facts_sha256` of the same run, when the caller has it already."""
    disposition = next((e for e in reversed(run.audit) if e.kind is AuditKind.DISPOSITION),
                       None)
    verdicts = {
        "compliance": run.compliance.as_json(),
        "coms": [{"id": v.com_id, "available": v.available, "on_during_test": v.on_during_test,
                  "verdict": v.state, "detail": v.detail} for v in com_verdicts(run)],
        "disposition": None if disposition is None else disposition.entry_id,
    }
    entries = [{"id": e.entry_id, "kind": e.kind, "subject": e.subject, "outcome": e.outcome,
                "disposition": e.disposition, "text": e.text, "author": e.author,
                "created_wall": e.created_wall} for e in run.audit if e.kind in VERDICT_KINDS]
    return _sha256({"format": FORMAT, "facts_sha256": facts or facts_sha256(run),
                    "verdicts": verdicts, "entries": entries})


def canonical_json(value: Any) -> bytes:
    """``value`` in the canonical byte form of the module docstring."""
    return json.dumps(_plain(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False).encode("utf-8")


def _sha256(value: Any) -> str:
    return hashlib.sha256(canonical_json(value)).hexdigest()


def _plain(value: Any) -> Any:
    """JSON-able data with one spelling per value (see the module docstring)."""
    if isinstance(value, Enum):
        return _plain(value.value)
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if math.isnan(value):
            return None
        return value if math.isfinite(value) else ("inf" if value > 0 else "-inf")
    if is_dataclass(value) and not isinstance(value, type):
        return _plain(asdict(value))
    if isinstance(value, dict):
        return {_key(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if hasattr(value, "item"):  # a numpy scalar
        return _plain(value.item())
    raise TypeError(f"no canonical form for {type(value).__name__}: {value!r}")


def _key(key: Any) -> str:
    if isinstance(key, Enum):
        key = key.value
    if isinstance(key, float):
        return repr(key)
    return str(key)
