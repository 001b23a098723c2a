"""Which keys of a compliant method are normative, and how a method differs from a registered one.

A lab may set what changes no figure's meaning (fio engine settings, job count, meter ranging
strategy, the confidence levels a report lists); everything else is the method
(docs/method-notes.md, "Normative and lab-settable keys"). Normative keys come in four kinds:

* ``EXACT`` — any change is a deviation: profile definitions and their order, phases and their
  order, the response-time limit and the search rules, WMA points and weights, the resolution
  table, the compliance minimums.
* ``AT_MOST`` / ``AT_LEAST`` — a direction: a smaller uncertainty limit, flagged-sample
  tolerance or WMA tolerance, a longer conditioning is stricter and allowed.
* ``WITHIN`` — a range may be narrower: supply voltage, frequency and inlet classes.
* ``BOUNDED`` — judged against the method's own bound, not the shipped default (interval
  length, sample period and the profiles' durations against ``[compliance]``,
  :mod:`app.rules.compliance`): part of the pinned content, so a changed one makes a variant, but
  never a deviation here.

:func:`normative_content` is the part of a method the registry pins by SHA-256;
:func:`differences` compares two normative contents key by key.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from enum import StrEnum
from pathlib import PurePath
from typing import Any

from app.method.model import DERIVED_RATE_TOLERANCE_PCT, Method


class Kind(StrEnum):
    EXACT = "exact"
    AT_MOST = "at most"
    AT_LEAST = "at least"
    WITHIN = "within"
    BOUNDED = "bounded"  # judged against [compliance] (app.rules.compliance), not the registry
    LAB = "lab-settable"
    IDENTITY = "identity"  # names the method; not content


#: every key of a method, one level into its tables; plans are judged per plan (PLAN_KEYS).
#: tests/test_method_registry.py checks that every key the model has is classified here.
KEYS: dict[str, Kind] = {
    "name": Kind.IDENTITY, "version": Kind.IDENTITY, "title": Kind.IDENTITY,
    "compliant": Kind.IDENTITY, "variant_of": Kind.IDENTITY, "description": Kind.IDENTITY,
    "interval_s": Kind.BOUNDED, "sample_period_s": Kind.BOUNDED,
    "taxonomy_file": Kind.EXACT,
    "stability.wma_points": Kind.EXACT, "stability.weights": Kind.EXACT,
    "stability.tolerance_pct": Kind.AT_MOST, "stability.max_drift_pct": Kind.AT_MOST,
    "stability.max_stabilisation_intervals": Kind.AT_LEAST,
    "response_time.max_avg_ms": Kind.EXACT, "response_time.ceiling_ms": Kind.EXACT,
    "response_time.confidence_levels": Kind.LAB,  # which levels a report lists
    "search.probe_s": Kind.EXACT, "search.queue_depths": Kind.EXACT,
    "search.jobs": Kind.LAB,  # fio job count: the search finds intensity 100 with any
    "search.tolerance_pct": Kind.EXACT, "search.recheck": Kind.EXACT,
    "search.startup_s": Kind.EXACT,
    # a multi-stream profile's rate step is a search rule; the generator check may be longer
    # and its share of the generator's ceiling smaller (stricter), never the other way
    "search.stream_iops_per_step": Kind.EXACT,
    "search.generator_check_s": Kind.AT_LEAST,
    "search.generator_max_share_pct": Kind.AT_MOST,
    # a derived profile's (MW2's) achieved rate may miss its target by this much (§2)
    "search.derived_rate_tolerance_pct": Kind.AT_MOST,
    "instruments.max_power_interval_s": Kind.AT_MOST,
    "instruments.max_uncertainty_pct": Kind.AT_MOST,
    "instruments.min_accuracy": Kind.EXACT,
    "instruments.voltage_ranges": Kind.WITHIN, "instruments.frequency_hz": Kind.WITHIN,
    "instruments.temperature_resolution_c": Kind.AT_MOST,
    "instruments.max_temperature_interval_s": Kind.AT_MOST,
    "instruments.inlet_classes": Kind.WITHIN,
    "instruments.max_flagged_power_samples": Kind.AT_MOST,
    "instruments.max_identical_readings": Kind.AT_MOST,  # a shorter run of repeats is stale
    "instruments.power_plausibility_tolerance_pct": Kind.AT_MOST,
    "profiles": Kind.EXACT, "plans": Kind.EXACT, "coms": Kind.EXACT,
    "compliance": Kind.EXACT,
    "fio.stall_s": Kind.LAB,  # how long fio may stay silent before the run stops
    "ranging.mode": Kind.LAB, "ranging.profile_s": Kind.LAB,  # how ranges are found
    "ranging.headroom_pct": Kind.AT_LEAST, "ranging.min_crest_factor": Kind.AT_LEAST,
    "sampling.meter_silence_limit_s": Kind.LAB,
}

#: keys added after a registry entry was shipped, each with what its absence means: a key left
#: unstated (None) is no part of the normative content, so every earlier entry keeps its
#: SHA-256, and compared with a content that lacks it, the absent side takes this value
LATER_KEYS: dict[str, Any] = {
    "search.derived_rate_tolerance_pct": DERIVED_RATE_TOLERANCE_PCT,
}

#: a plan's keys (plans are matched by name, in order); durations in [compliance] are BOUNDED
PLAN_KEYS: dict[str, Kind] = {
    "categories": Kind.EXACT, "prefill": Kind.EXACT, "prefill_block_kib": Kind.EXACT,
    "prefill_passes": Kind.AT_LEAST, "prefill_max_intervals": Kind.EXACT,
    "conditioning_profile": Kind.EXACT, "conditioning_intervals": Kind.AT_LEAST,
    "active": Kind.EXACT,  # the profile order
    "active_intervals": Kind.BOUNDED,  # (stabilisation, measurement) intervals per profile
    "sweep": Kind.EXACT, "demand_intensity": Kind.EXACT,
    "ready_idle_intervals": Kind.BOUNDED, "com_check_intervals": Kind.AT_LEAST,
}


def _get(data: dict[str, Any], key: str) -> Any:
    node: Any = data
    for part in key.split("."):
        node = node.get(part) if isinstance(node, dict) else None
    return node


def normative_content(method: Method) -> dict[str, Any]:
    """The normative and bounded keys of ``method`` as plain JSON data, ``dotted key →
    value``: what the registry pins. A profile's ``title`` is prose and its ``trace`` the file
    name only (the station resolves it to an absolute path)."""
    data = method.model_dump(mode="json")
    content: dict[str, Any] = {}
    for key, kind in KEYS.items():
        if kind in (Kind.IDENTITY, Kind.LAB):
            continue
        value = _get(data, key)
        if value is None and key in LATER_KEYS:
            continue
        if key == "profiles":
            value = [{**{k: v for k, v in p.items() if k != "title"},
                      "trace": PurePath(p["trace"]).name if p.get("trace") else None}
                     for p in value]
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


def canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False).encode("utf-8")


def normative_sha256(content: dict[str, Any]) -> str:
    return hashlib.sha256(canonical(content)).hexdigest()


@dataclass(frozen=True)
class Difference:
    """One normative key where a method differs from its registry entry; ``allowed`` when the
    change only makes the method stricter (a direction key moved its way, a narrower range)."""

    key: str
    registry: Any
    ours: Any
    kind: Kind
    allowed: bool

    def evidence(self, entry: str) -> str:
        why = "" if self.allowed else f" ({self.kind.value}: {_rule(self.kind)})"
        return f"registry {entry}: {_short(self.registry)}; run: {_short(self.ours)}{why}"


def _rule(kind: Kind) -> str:
    return {Kind.EXACT: "any change is a deviation",
            Kind.AT_MOST: "may only be smaller", Kind.AT_LEAST: "may only be larger",
            Kind.WITHIN: "may only be narrower"}.get(kind, "")


def _short(value: Any, limit: int = 160) -> str:
    text = "(none)" if value is None else json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def differences(registry: dict[str, Any], ours: dict[str, Any]) -> list[Difference]:
    """Every normative key where ``ours`` differs from ``registry`` (both
    :func:`normative_content`), in the registry's key order."""
    found: list[Difference] = []
    for key in list(registry) + [k for k in ours if k not in registry]:
        reg, run = registry.get(key, LATER_KEYS.get(key)), ours.get(key, LATER_KEYS.get(key))
        if key == "plans" and isinstance(reg, list) and isinstance(run, list):
            found += _plan_differences(reg, run)
        elif key == "profiles" and isinstance(reg, list) and isinstance(run, list):
            found += _profile_differences(reg, run)
        elif reg != run:
            kind = KEYS.get(key, Kind.EXACT)
            found.append(Difference(key, reg, run, kind, _stricter(kind, key, reg, run)))
    return found


def _profile_differences(registry: list[dict[str, Any]], ours: list[dict[str, Any]]
                         ) -> list[Difference]:
    """The profile list's order (names), or each redefined profile by name."""
    names = [p.get("name") for p in registry], [p.get("name") for p in ours]
    if names[0] != names[1]:
        return [Difference("profiles", names[0], names[1], Kind.EXACT, False)]
    return [Difference(f"profiles.{reg['name']}",
                       {k: v for k, v in reg.items() if run.get(k) != v},
                       {k: v for k, v in run.items() if reg.get(k) != v}, Kind.EXACT, False)
            for reg, run in zip(registry, ours) if reg != run]


def _plan_differences(registry: list[dict[str, Any]], ours: list[dict[str, Any]]
                      ) -> list[Difference]:
    names = [p.get("name") for p in registry], [p.get("name") for p in ours]
    if names[0] != names[1]:
        return [Difference("plans", names[0], names[1], Kind.EXACT, False)]
    found = []
    for reg, run in zip(registry, ours):
        for key in list(reg) + [k for k in run if k not in reg]:
            if key == "name" or reg.get(key) == run.get(key):
                continue
            kind = PLAN_KEYS.get(key, Kind.EXACT)
            found.append(Difference(f"plans.{reg['name']}.{key}", reg.get(key), run.get(key),
                                    kind, _stricter(kind, key, reg.get(key), run.get(key))))
    return found


def _stricter(kind: Kind, key: str, registry: Any, ours: Any) -> bool:
    """Whether a change of a direction or range key keeps within the registry's value (a
    bounded key is judged against [compliance] instead, so never a deviation here)."""
    if kind is Kind.BOUNDED:
        return True
    try:
        if kind is Kind.AT_MOST:
            return ours <= registry
        if kind is Kind.AT_LEAST:
            return ours >= registry
        if kind is Kind.WITHIN:
            return _within(key, registry, ours)
    except TypeError:  # a missing or mistyped value is never stricter
        return False
    return False


def _within(key: str, registry: Any, ours: Any) -> bool:
    if key.endswith("frequency_hz"):
        return registry[0] <= ours[0] <= ours[1] <= registry[1]
    if key.endswith("voltage_ranges"):
        return bool(ours) and all(any(r["phases"] == o["phases"] and r["min_v"] <= o["min_v"]
                                      and o["max_v"] <= r["max_v"] for r in registry)
                                  for o in ours)
    if key.endswith("inlet_classes"):
        by_name = {r["name"]: r for r in registry}
        return bool(ours) and all(o["name"] in by_name and by_name[o["name"]]["min_c"]
                                  <= o["min_c"] and o["max_c"] <= by_name[o["name"]]["max_c"]
                                  for o in ours)
    return False
