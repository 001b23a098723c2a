"""Method.summary(): the listing figures agree with the sequencer's own phase plan."""

from __future__ import annotations

import json

import pytest

from app.method.loader import all_methods, load_method
from app.core.records import RunConfig, SutDescription
from app.sequencer.plan import build_phases

PLANS = [(name, plan.name, plan.categories[0]) for name, m in sorted(all_methods().items())
         for plan in m.plans]


@pytest.mark.parametrize("method_name,plan_name,category", PLANS)
def test_summary_phases_are_the_phases_a_run_executes(method_name: str, plan_name: str,
                                                      category: str) -> None:
    method = load_method(method_name)
    plan_summary = next(p for p in method.summary().plans if p.name == plan_name)
    config = RunConfig(method=method_name, taxonomy=f"{category}-1", sut=SutDescription())
    assert plan_summary.phases == tuple(p.name for p in build_phases(method, config))
    assert plan_summary.duration_s == method.plan_duration_s(method.plan_for(category))


def test_compliant_summary_figures() -> None:
    s = load_method("emerald-block-v3").summary()
    assert (s.name, s.compliant, s.variant_of, s.interval_s) == ("emerald-block-v3", True, None, 60)
    online, library = s.plans
    # method-notes §2: 12 h conditioning + 6 × (10 + 30) min + 2 h ready idle
    assert online.duration_s == 18 * 3600
    # 5 searched profiles (MW2 derives from MW1) × 9 queue depths × 120 s, and for the 3
    # random ones up to 7 refinement probes (bisecting the widest gap, 128 … 256)
    assert online.search_max_s == (5 * 9 + 3 * 7) * 120
    assert online.com_check_s_each == 600
    assert "pre-fill of the whole capacity" in online.note
    assert "600 s per declared COM" in online.note
    assert library.phases == ("Intensity search", "Ranging pass", "Conditioning", "SW", "SR",
                              "Ready idle")
    # the dedicated ranging pass (method-notes §3): each active profile and idle, 120 s each
    assert "ranging pass 840 s" in online.note
    assert library.duration_s == (60 + 2 * 40 + 120) * 60
    assert "pre-fill" not in library.note


def test_variant_summary_is_labelled_non_compliant_and_serialises() -> None:
    s = load_method("smoke").summary()
    assert not s.compliant and s.variant_of == "emerald-block-v3" and "NON-COMPLIANT" in s.label
    data = json.loads(json.dumps(s.to_dict()))
    assert data["plans"][0]["phases"][0] == "Pre-fill"
    assert data["plans"][0]["duration_s"] == 2 * 6 + 2  # six profiles × 2 s + 2 s ready idle
    assert "pre-fill up to 1 s" in data["plans"][0]["note"]


def test_plan_duration_counts_declared_coms() -> None:
    method = load_method("emerald-block-v3")
    plan = method.plan_for("online")
    assert method.plan_duration_s(plan, declared_coms=2) - method.plan_duration_s(plan) == 1200
