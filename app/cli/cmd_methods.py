"""``storwatt methods`` and ``storwatt taxonomy``: what the station can run, and how a SUT
classifies."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from app.console import format_duration
from app.method.loader import MethodError, all_methods, load_method
from app.method.model import Method
from app.method.taxonomy import SutAttributes, classify, load_taxonomy
from app.records import RunConfig, SutDescription
from app.sequencer.plan import build_phases


def register(sub: argparse._SubParsersAction) -> None:
    m = sub.add_parser("methods", help="list and show test methods and abbreviated variants")
    ms = m.add_subparsers(dest="methods_command", metavar="ACTION", required=True)
    ls = ms.add_parser("list", help="every method and variant with phases and durations")
    ls.add_argument("--json", action="store_true")
    ls.set_defaults(func=list_command)
    show = ms.add_parser("show", help="one method in full")
    show.add_argument("name")
    show.add_argument("--json", action="store_true")
    show.set_defaults(func=show_command)

    t = sub.add_parser("taxonomy", help="taxonomy categories and classification")
    ts = t.add_subparsers(dest="taxonomy_command", metavar="ACTION", required=True)
    tl = ts.add_parser("list", help="categories, levels and their requirements")
    tl.add_argument("--method", default="emerald-block-v3")
    tl.set_defaults(func=taxonomy_list_command)
    tc = ts.add_parser("classify", help="derive the classification from the SUT's attributes")
    tc.add_argument("--method", default="emerald-block-v3")
    tc.add_argument("--category", required=True)
    tc.add_argument("--connectivity", choices=("not-specified", "host", "network"),
                    default="not-specified")
    for flag, help_text in (("consumer", "a consumer/component product"),
                            ("controller", "integrated storage controller"),
                            ("protection", "storage protection (RAID …)"),
                            ("no-spof", "no single point of failure"),
                            ("non-disruptive", "non-disruptive serviceability"),
                            ("fba-ckd", "FBA/CKD support"), ("robotics", "robotics")):
        tc.add_argument(f"--{flag}", action="store_true", help=help_text)
    tc.add_argument("--max-drives", type=int, default=1,
                    help="maximum configuration (drives) the product supports")
    tc.add_argument("--json", action="store_true")
    tc.set_defaults(func=classify_command)


def plan_summary(method: Method) -> list[dict[str, Any]]:
    """Per plan: categories, phases in execution order and total duration (no COMs)."""
    out = []
    for plan in method.plans:
        config = RunConfig(method=method.name, taxonomy=f"{plan.categories[0]}-1",
                           sut=SutDescription())
        phases = build_phases(method, config)
        out.append({"plan": plan.name, "categories": list(plan.categories),
                    "phases": [p.name for p in phases],
                    "duration_s": method.plan_duration_s(plan),
                    "com_check_s_each": plan.com_check_intervals * method.interval_s})
    return out


def method_summary(method: Method) -> dict[str, Any]:
    return {"name": method.name, "version": method.version, "compliant": method.compliant,
            "variant_of": method.variant_of, "interval_s": method.interval_s,
            "title": method.title, "plans": plan_summary(method)}


def list_command(args: argparse.Namespace) -> int:
    try:
        methods = all_methods()
    except MethodError as exc:
        print(f"storwatt methods: {exc}", file=sys.stderr)
        return 1
    summaries = [method_summary(m) for m in methods.values()]
    if args.json:
        print(json.dumps(summaries, indent=2))
        return 0
    for s in summaries:
        tag = "COMPLIANT" if s["compliant"] else "NON-COMPLIANT abbreviated variant"
        print(f"{s['name']:<18} {s['version']:<20} {tag}  (interval {s['interval_s']:g} s)")
        for plan in s["plans"]:
            print(f"    {'/'.join(plan['categories']):<22} {format_duration(plan['duration_s']):>13}"
                  f"  + pre-fill/search  {' → '.join(plan['phases'])}")
    return 0


def show_command(args: argparse.Namespace) -> int:
    try:
        method = load_method(args.name)
    except MethodError as exc:
        print(f"storwatt methods show: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(method.model_dump(mode="json") | {"plans_summary": plan_summary(method)},
                         indent=2))
        return 0
    print(f"{method.label}\n{method.title}\n{method.description}\n")
    print(f"interval {method.interval_s:g} s, sampling every {method.sample_period_s:g} s")
    st, rt = method.stability, method.response_time
    print(f"stability: {st.wma_points}-point WMA, weights {list(st.weights)}, "
          f"±{st.tolerance_pct:g} %")
    print(f"response time: average ≤ {rt.max_avg_ms:g} ms, ceiling {rt.ceiling_ms:g} ms, "
          f"confidence levels {', '.join(f'{c:g} %' for c in rt.confidence_levels)}\n")
    print(f"{'Profile':<6} {'IO size':>9} {'R/W':>8} {'Intensity':>10} {'Align':>9} "
          f"{'Pattern':<11} Metric")
    for p in method.profiles:
        ref = f" of {p.intensity_of}" if p.intensity_of else ""
        print(f"{p.name:<6} {p.block_size_kib:>5g} KiB {p.read_pct:>3g}/{100 - p.read_pct:<3g} "
              f"{p.intensity_pct:>6g}{ref:<4} {p.align_kib:>5g} KiB {p.pattern:<11} "
              f"{p.metric} ({p.metric_unit})")
    for plan in method.plans:
        print(f"\nplan {plan.name} ({', '.join(plan.categories)}): pre-fill "
              f"{'yes' if plan.prefill else 'no'}, conditioning {plan.conditioning_profile} × "
              f"{format_duration(plan.conditioning_intervals * method.interval_s)}")
        for step in plan.active:
            print(f"    {step.profile:<4} stabilisation "
                  f"{format_duration(step.stabilisation_intervals * method.interval_s):>12}, "
                  f"measurement {format_duration(step.measurement_intervals * method.interval_s)}")
        print(f"    ready idle {format_duration(plan.ready_idle_intervals * method.interval_s)}; "
              f"each COM check {format_duration(plan.com_check_intervals * method.interval_s)}")
    inst = method.instruments
    print(f"\ninstruments: power sample ≤ {inst.max_power_interval_s:g} s, uncertainty ≤ "
          f"{inst.max_uncertainty_pct:g} %, temperature resolution "
          f"{inst.temperature_resolution_c:g} °C every ≤ {inst.max_temperature_interval_s:g} s")
    print("COMs: " + ", ".join(f"{c.id} ({c.title})" for c in method.coms))
    return 0


def taxonomy_list_command(args: argparse.Namespace) -> int:
    taxonomy = load_taxonomy(load_method(args.method))
    for cat in taxonomy.categories:
        state = "" if cat.testable else f"  — not testable: {cat.reason}"
        print(f"{cat.title} ({cat.id}){state}")
        for lv in cat.levels:
            reqs = {k: v for k, v in lv.model_dump().items() if v is not None and k != "level"}
            print(f"    {cat.title} {lv.level} ({taxonomy.level_names.get(lv.level, '')}): "
                  + ", ".join(f"{k}={v}" for k, v in reqs.items()))
    return 0


def classify_command(args: argparse.Namespace) -> int:
    taxonomy = load_taxonomy(load_method(args.method))
    answers = SutAttributes(args.category, args.connectivity, args.consumer, args.controller,
                            args.protection, args.no_spof, args.non_disruptive, args.fba_ckd,
                            args.max_drives, args.robotics)
    try:
        result = classify(taxonomy, answers)
    except ValueError as exc:
        print(f"storwatt taxonomy classify: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps({"id": result.id, "label": result.label,
                          "ruled_out": [list(r) for r in result.ruled_out]}, indent=2))
    else:
        print(result.explanation)
    return 0
