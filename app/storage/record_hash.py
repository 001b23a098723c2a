"""The SHA-256 a lab signs: one canonical byte form of a stored run's facts.

A report is the document QA approves, so it carries a hash of what it reports on (issue 14
item 15). Two exports of the same record must print the same hash, on any PC and SQL backend,
and after ``storwatt db copy`` to another database; changing one sample must change it.

**storwatt-record/2** (issue 22) hashes the record's *facts* — configuration, method, samples,
audit entries — and no derived verdict text, so a change of a compliance rule leaves every
hash (and approval) intact; the verdict an approval saw is stored beside it with its rules
version (:mod:`app.signoff.revisions`). Two layers, so each revision of the record is hashed without
re-serialising the samples:

1. **facts** — canonical JSON of ``{"format", "run", "configuration", "method",
   "instruments", "phases", "attempts", "intervals", "workload", "histograms", "search",
   "metrics", "events", "samples_sha256"}``. Each list of child records is in *canonical
   order* — sorted by the canonical JSON bytes of its items — so the database's row ids (which
   ``db copy`` renumbers) never enter the hash. The samples enter through ``samples_sha256``
   (:func:`app.storage.repository.samples_digest`, their own documented byte form).
2. **record** — SHA-256 of canonical JSON ``{"format", "facts_sha256", "entries"}``:
   ``entries`` every verdict-bearing audit entry of the revision (dispositions, COM results:
   kind, subject, outcome, disposition, text, author, time — not the row id), oldest first.
   Notes and approvals are not hashed: a note changes no fact QA signs, and an approval
   attests to a hash, it cannot be part of it.

**storwatt-record/1** (before issue 22) is kept so approvals given under it stay checkable in
their old form: facts in the order the rows were read, and a record layer that also held the
derived compliance criteria (under rules 1), each COM's verdict, the disposition's entry id
and each entry's id (:func:`record_sha256_v1`).

A record field added since (``ADDED_FIELD``, e.g. a search result's measured access pattern)
is left out while it holds None, so a run stored before it existed keeps its hash.

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
from collections.abc import Iterable
from dataclasses import fields, is_dataclass
from enum import Enum
from typing import Any

from app.rules.com_verdict import com_verdicts
from app.rules.compliance import ComplianceVerdict
from app.core.records import ADDED_FIELD, VERDICT_KINDS, AuditEntry, AuditKind
from app.storage.stored import StoredRun

#: names the byte form; a change to it gets a new name, so old hashes stay checkable
FORMAT = "storwatt-record/2"
FORMAT_V1 = "storwatt-record/1"


def _facts(run: StoredRun, form: str, order: Any) -> dict[str, Any]:
    return {
        "format": form,
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
        "phases": order(run.phases), "attempts": order(run.attempts),
        "intervals": order(run.intervals), "workload": order(run.workload),
        "histograms": order(run.histograms), "search": order(run.search_results),
        "metrics": order(run.metrics), "events": order(run.events),
        "samples_sha256": run.samples_sha256,
    }


def canonical_order(items: Iterable[Any]) -> list[Any]:
    """``items`` as plain data sorted by their canonical JSON bytes: the same list whatever
    order (row ids) the database returned them in."""
    return sorted((_plain(i) for i in items), key=_plain_json)


def facts_basis(run: StoredRun) -> str:
    """A fast fingerprint of every fact :func:`facts_sha256` covers: SHA-256 over the
    ``repr`` of each, in the order the run was loaded (~40× faster than the canonical form on
    a 24 h run). Not a signed form — ``repr`` and load order may differ between Python
    versions or databases, which only makes a view compute the hash again — but the key under
    which a computed hash is kept (:mod:`app.storage.record_cache`): any change to a fact
    changes it. Computed once per loaded run (:meth:`StoredRun.once`)."""
    return run.once("facts_basis", _basis)


def _basis(run: StoredRun) -> str:
    digest = hashlib.sha256(FORMAT.encode())
    for key, value in _facts(run, FORMAT, lambda items: items).items():
        digest.update(f"\n{key}:".encode())
        parts = value if isinstance(value, tuple) else (value,)
        digest.update("\x1f".join(map(repr, parts)).encode())
    return digest.hexdigest()


def facts_sha256(run: StoredRun) -> str:
    """SHA-256 of the run's facts (layer 1, storwatt-record/2): independent of row ids."""
    return _sha256(_facts(run, FORMAT, canonical_order))


def record_sha256(run: StoredRun, facts: str | None = None) -> str:
    """The storwatt-record/2 hash of the record as ``run`` holds it (its audit trail decides
    the revision); ``facts``: :func:`facts_sha256` of the same run, when the caller has it."""
    entries = [_entry(e) for e in run.audit if e.kind in VERDICT_KINDS]
    return _sha256({"format": FORMAT, "facts_sha256": facts or facts_sha256(run),
                    "entries": entries})


def _entry(e: AuditEntry) -> dict[str, Any]:
    return {"kind": e.kind, "subject": e.subject, "outcome": e.outcome,
            "disposition": e.disposition, "text": e.text, "author": e.author,
            "created_wall": e.created_wall}


def facts_sha256_v1(run: StoredRun) -> str:
    """Layer 1 in the storwatt-record/1 form (the rows in the order they were read)."""
    return _sha256(_facts(run, FORMAT_V1, lambda items: items))


def record_sha256_v1(run: StoredRun, compliance: ComplianceVerdict,
                     facts: str | None = None) -> str:
    """The storwatt-record/1 hash: the facts and the verdicts as derived under rules 1
    (``compliance``: :func:`app.rules.compliance.assess_compliance` with ``rules=1``)."""
    disposition = next((e for e in reversed(run.audit) if e.kind is AuditKind.DISPOSITION),
                       None)
    verdicts = {
        "compliance": {"compliant": compliance.compliant,
                       "criteria": [{"name": c.name, "verdict": c.verdict,
                                     "evidence": c.evidence} for c in compliance.criteria]},
        "coms": [{"id": v.com_id, "available": v.available, "on_during_test": v.on_during_test,
                  "verdict": v.state, "detail": v.detail} for v in com_verdicts(run)],
        "disposition": None if disposition is None else disposition.entry_id,
    }
    entries = [{"id": e.entry_id, **_entry(e)} for e in run.audit if e.kind in VERDICT_KINDS]
    return _sha256({"format": FORMAT_V1, "facts_sha256": facts or facts_sha256_v1(run),
                    "verdicts": verdicts, "entries": entries})


def canonical_json(value: Any) -> bytes:
    """``value`` in the canonical byte form of the module docstring."""
    return _plain_json(_plain(value))


def _plain_json(plain: Any) -> bytes:
    """What :func:`_plain` made of a value, in the canonical byte form (sorting a list by it
    needs no second walk through :func:`_plain`)."""
    return json.dumps(plain, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False).encode("utf-8")


def _sha256(value: Any) -> str:
    return hashlib.sha256(canonical_json(value)).hexdigest()


#: types spelt as they are; checked first, as most of a record's values are of them
_AS_IS = frozenset((str, bool, int, type(None)))
#: each dataclass's fields as (name, added since the format began): looked up once
_FIELDS: dict[type, tuple[tuple[str, bool], ...]] = {}


def _plain(value: Any) -> Any:
    """JSON-able data with one spelling per value (see the module docstring)."""
    kind = type(value)
    if kind in _AS_IS or (kind is float and math.isfinite(value)):
        return value
    if kind in _FIELDS:
        return _plain_fields(value, _FIELDS[kind])
    if kind is dict:
        return {_key(k): _plain(v) for k, v in value.items()}
    if kind is list or kind is tuple:
        return [_plain(v) for v in value]
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
        _FIELDS[kind] = tuple((f.name, bool(f.metadata.get(ADDED_FIELD))) for f in fields(value))
        return _plain(value)
    if isinstance(value, dict):
        return {_key(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if hasattr(value, "item"):  # a numpy scalar
        return _plain(value.item())
    raise TypeError(f"no canonical form for {type(value).__name__}: {value!r}")


def _plain_fields(value: Any, names: tuple[tuple[str, bool], ...]) -> dict[str, Any]:
    """A dataclass as its fields, less an added field that holds None."""
    out = {}
    for name, added in names:
        item = getattr(value, name)
        if not (added and item is None):
            out[name] = _plain(item)
    return out


def _key(key: Any) -> str:
    kind = type(key)
    if kind is str:
        return key
    if kind is int:
        return str(key)
    if isinstance(key, Enum):
        key = key.value
    if isinstance(key, float):
        return repr(key)
    return str(key)
