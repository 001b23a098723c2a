"""``storwatt methods`` and ``storwatt taxonomy``: what the station can run, and how a SUT
classifies — so a technician can check a method file and a product's level before a run."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Callable

from app.cli import arguments
from app.metrics.formatting import format_duration
from app.method.taxonomy_terms import DEFAULT_METHOD, NEEDS

if TYPE_CHECKING:  # the method model needs pydantic: imported where a command runs
    from app.method.model import Method, PhasePlan
    from app.method.taxonomy import Category, Taxonomy

#: --flag → SutAttributes field, for the yes/no answers
ANSWER_FLAGS = {"consumer": "consumer_component", "controller": "integrated_controller",
                "protection": "storage_protection", "no-spof": "no_spof",
                "non-disruptive": "non_disruptive_service", "fba-ckd": "fba_ckd",
                "robotics": "robotics"}


def register(sub: argparse._SubParsersAction) -> None:
    m = sub.add_parser("methods", help="list and show test methods and abbreviated variants")
    ms = m.add_subparsers(dest="methods_command", metavar="ACTION", required=True)
    ls = ms.add_parser("list", help="every method and variant with phases and durations")
    ls.add_argument("--json", action="store_true")
    ls.set_defaults(func=_guarded("methods", list_command))
    show = ms.add_parser("show", help="one method in full")
    show.add_argument("name", help="method name or path to a .toml method file")
    show.add_argument("--json", action="store_true")
    show.set_defaults(func=_guarded("methods", show_command))

    t = sub.add_parser("taxonomy", help="taxonomy categories and classification")
    ts = t.add_subparsers(dest="taxonomy_command", metavar="ACTION", required=True)
    tl = ts.add_parser("list", help="categories, levels and their requirements")
    tl.add_argument("--method", default=DEFAULT_METHOD)
    tl.add_argument("--json", action="store_true")
    tl.set_defaults(func=_guarded("taxonomy", taxonomy_list_command))
    tc = ts.add_parser("classify", help="derive the classification from the SUT's attributes")
    tc.add_argument("--method", default=DEFAULT_METHOD)
    tc.add_argument("--category", required=True, help="online, near-online, removable, virtual")
    add_answer_arguments(tc)
    tc.add_argument("--request", metavar="ID",
                    help="check that this taxonomy id (e.g. online-3) is allowed by the answers")
    tc.add_argument("--json", action="store_true")
    tc.set_defaults(func=_guarded("taxonomy", classify_command))


def add_answer_arguments(parser: argparse.ArgumentParser,
                         max_drives_default: str = "1") -> None:
    """The SUT's classification attributes as flags (``taxonomy classify`` and ``run``);
    ``max_drives_default`` says what an unanswered maximum configuration is (``run``: the
    SUT's drive count, ``app.rules.run_fields.default_max_config``)."""
    parser.add_argument("--connectivity", choices=("not-specified", "host", "network"),
                        help="how the product connects (default: not-specified)")
    for flag, attr in ANSWER_FLAGS.items():
        parser.add_argument(f"--{flag}", dest=attr, action="store_true",
                            help=f"the product has: {NEEDS[attr][0]}")
    parser.add_argument("--max-drives", type=int,
                        help="maximum configuration (drives) the product supports "
                             f"(default: {max_drives_default})")


def answers_from_args(args: argparse.Namespace) -> dict[str, object]:
    """The attributes as a run records them (``RunConfig.classification_answers``); ``{}``
    when none was given. The maximum configuration only when ``--max-drives`` is given: a
    run defaults it to its SUT's drive count
    (``app.station.run_entries.with_max_config_default``)."""
    given = (args.connectivity is not None or args.max_drives is not None
             or any(getattr(args, attr) for attr in ANSWER_FLAGS.values()))
    if not given:
        return {}
    most = {} if args.max_drives is None else {"max_drive_count": args.max_drives}
    return {"connectivity": args.connectivity or "not-specified", **most,
            **{attr: bool(getattr(args, attr)) for attr in ANSWER_FLAGS.values()}}


def _guarded(group: str, command: Callable[[argparse.Namespace], int]
             ) -> Callable[[argparse.Namespace], int]:
    """One-line error and exit 1 for a bad method file or a refused classification."""
    def run(args: argparse.Namespace) -> int:
        from app.method.loader import MethodError
        from app.method.taxonomy import TaxonomyError

        try:
            return command(args)
        except (MethodError, TaxonomyError) as exc:
            return arguments.refuse(group, exc, args)
    return run


def _duration(method: Method, intervals: int) -> str:
    return format_duration(intervals * method.interval_s)


# --- storwatt methods ---------------------------------------------------------------------

def list_command(args: argparse.Namespace) -> int:
    from app.method.loader import all_methods

    from app.rules.compliance import assess_method

    methods = list(all_methods().values())
    if args.json:
        print(json.dumps([m.summary().to_dict() | {"method_numbers": assess_method(m).as_json()}
                          for m in methods], indent=2))
        return 0
    for method in methods:
        s = method.summary()
        variant = f", abbreviated variant of {s.variant_of}" if s.variant_of else ""
        print(f"{s.name}  {s.version}  {_numbers_verdict(method)}  (interval "
              f"{s.interval_s:g} s{variant})")
        for plan in s.plans:
            print(f"    {'/'.join(plan.categories):<22} {format_duration(plan.duration_s):>13}  "
                  f"{' → '.join(plan.phases)}")
            extra = (["pre-fill"] if "Pre-fill" in plan.phases else []) + (
                [f"intensity search ≤ {format_duration(plan.search_max_s)}"]
                if plan.search_max_s else []) + [  # a sweep-only plan searches nothing
                f"{format_duration(plan.com_check_s_each)} per declared COM"]
            print(f"    {'':<22} {'':>13}  not counted: {', '.join(extra)}")
    return 0


def show_command(args: argparse.Namespace) -> int:
    from app.method.loader import load_method

    method = load_method(args.name)
    if args.json:
        from app.rules.compliance import assess_method
        from app.method.registry import registry_record

        # registry_entry: the normative content a release pins when it ships this method as
        # compliant (resources/methods/registry/, docs/method.md)
        print(json.dumps(method.model_dump(mode="json")
                         | {"label": method.label, "summary": method.summary().to_dict(),
                            "method_numbers": assess_method(method).as_json(),
                            "registry_entry": registry_record(method)}, indent=2))
        return 0
    for block in (_header(method), _profiles_table(method), *map(
            lambda p: _plan_block(method, p), method.plans), _rules(method),
            _instruments(method), _coms(method)):
        print("\n".join(block) + "\n")
    return 0


def _numbers_verdict(method: Method) -> str:
    """``method numbers COMPLIANT`` or ``method numbers NON-COMPLIANT (not met: interval
    length, …)`` — derived from the file's numbers, never its ``compliant`` claim."""
    from app.rules.compliance import assess_method

    return f"method numbers {assess_method(method).short()}"


def _header(method: Method) -> list[str]:
    from app.rules.compliance import assess_method

    verdict = assess_method(method)
    lines = [f"{method.name} {method.version}  {_numbers_verdict(method)}", method.title,
             f"Method      {verdict.method_line()}",
             f"Method numbers {verdict.label}: the file's numbers against the [compliance] "
             "minimums and its normative keys against the registry of shipped compliant "
             "methods, whatever it claims (compliant = "
             f"{str(method.compliant).lower()}); a run is compliant only if its record also "
             "meets the run criteria: real, calibrated instruments, no pause, every phase "
             "completed"]
    lines += [f"  {c.verdict:8} {c.name}: {c.evidence}" for c in verdict.criteria]
    if method.description:
        lines.append(method.description)
    lines.append(f"interval {method.interval_s:g} s, power sampled every "
                 f"{method.sample_period_s:g} s, taxonomy {method.taxonomy_file}")
    return lines


def _profiles_table(method: Method) -> list[str]:
    rows = [f"{'Profile':<8}{'IO size':>10}{'Read/Write':>12}{'Intensity':>16}{'Align':>10}  "
            f"{'Pattern':<11}Metric"]
    for p in method.profiles:
        intensity = f"{p.intensity_pct:g} %" + (f" of {p.intensity_of}" if p.intensity_of else "")
        mix = f"{p.read_pct:g}/{100 - p.read_pct:g}"
        rows.append(f"{p.name:<8}{p.block_size_kib:>6g} KiB{mix:>12}"
                    f"{intensity:>16}{p.align_kib:>6g} KiB  {p.pattern:<11}"
                    f"{p.metric} ({p.metric_unit})")
        rows += [f"{'':<8}  stream {s.describe()}" for s in p.streams]
        if p.trace:
            rows.append(f"{'':<8}  replays the fio iolog {p.trace}")
    return rows


def _plan_block(method: Method, plan: PhasePlan) -> list[str]:
    summary = next(s for s in method.summary().plans if s.name == plan.name)
    prefill = "no"
    if plan.prefill:
        prefill = (f"{plan.prefill_block_kib:g} KiB sequential writes"
                   + (f", at most {_duration(method, plan.prefill_max_intervals)}"
                      if plan.prefill_max_intervals else " over the whole capacity"))
    lines = [f"Plan {plan.name} ({', '.join(plan.categories)}): "
             f"{format_duration(summary.duration_s)} timed",
             f"    pre-fill          {prefill}",
             f"    intensity search  ≤ {format_duration(summary.search_max_s)} "
             f"({', '.join(method.search_profiles(plan))})"]
    if plan.conditioning_intervals:
        lines.append(f"    conditioning      {plan.conditioning_profile} for "
                     f"{_duration(method, plan.conditioning_intervals)}")
    for step in plan.active:
        lines.append(f"    {step.profile:<17} {_duration(method, step.stabilisation_intervals)} "
                     f"stabilisation + {_duration(method, step.measurement_intervals)} measurement")
    lines.append(f"    ready idle        {_duration(method, plan.ready_idle_intervals)}")
    lines.append(f"    COM check         {_duration(method, plan.com_check_intervals)} "
                 f"per declared COM")
    return lines


def _rules(method: Method) -> list[str]:
    st, rt, se = method.stability, method.response_time, method.search
    weights = ", ".join(f"{w:g}" for w in st.weights)
    return [f"Stability: every interval's efficiency within ±{st.tolerance_pct:g} % of the "
            f"{st.wma_points}-point weighted moving average (weights {weights}, newest first)",
            f"Response time: average ≤ {rt.max_avg_ms:g} ms at intensity 100, ceiling "
            f"{rt.ceiling_ms:g} ms, confidence levels "
            + ", ".join(f"{c:g} %" for c in rt.confidence_levels),
            f"Intensity search: {se.probe_s:g} s per probe, queue depths "
            f"{', '.join(map(str, se.queue_depths))}, {se.jobs} job(s)"]


def _instruments(method: Method) -> list[str]:
    inst = method.instruments
    bands = ", ".join((f"±{b.abs_w:g} W up to {b.up_to_w:g} W" if b.up_to_w is not None
                       else f"±{b.abs_w:g} W above") for b in inst.min_accuracy)
    volts = ", ".join(f"{v.describe()} (--supply {v.id})" for v in inst.voltage_ranges)
    inlet = ", ".join(f"{c.name} {c.min_c:g}–{c.max_c:g} °C" for c in inst.inlet_classes)
    return ["Instruments:",
            f"    power reading at least every {inst.max_power_interval_s:g} s, "
            f"uncertainty ≤ {inst.max_uncertainty_pct:g} %",
            f"    minimum accuracy {bands}",
            f"    input {volts}, {inst.frequency_hz[0]:g}–{inst.frequency_hz[1]:g} Hz",
            f"    at most {inst.max_flagged_power_samples} flagged power sample(s) per "
            "measurement window",
            f"    temperature resolution {inst.temperature_resolution_c:g} °C, "
            f"a reading at least every {inst.max_temperature_interval_s:g} s",
            f"    inlet allowable range by ASHRAE class (--ashrae-class): {inlet}"]


def _coms(method: Method) -> list[str]:
    return ["Capacity optimisation methods (tested when declared):"] + [
        f"    {c.id:<18} {c.title}" for c in method.coms]


# --- storwatt taxonomy --------------------------------------------------------------------

def taxonomy_list_command(args: argparse.Namespace) -> int:
    from app.method.loader import load_method
    from app.method.taxonomy import load_taxonomy

    taxonomy = load_taxonomy(load_method(args.method))
    if args.json:
        print(json.dumps(taxonomy.model_dump(mode="json"), indent=2))
        return 0
    print("\n\n".join(_category_block(taxonomy, c) for c in taxonomy.categories))
    return 0


def _category_block(taxonomy: Taxonomy, category: Category) -> str:
    head = (f"{category.title} ({category.id}): access {category.access_pattern or '—'}, "
            f"MaxTTFD {category.max_ttfd or '—'}, user-accessible data "
            f"{category.user_accessible_data}")
    if not category.testable:
        return f"{head}\n    not testable: {category.reason}"
    lines = [head]
    for n in taxonomy.levels():
        req = category.level(n)
        name = f"{category.level_label(n)} ({taxonomy.level_name(n)})"
        lines.append(f"    {name:<34} " + ("not defined" if req is None else
                                             "needs " + "; ".join(req.requirement_texts())))
    return "\n".join(lines)


def classify_command(args: argparse.Namespace) -> int:
    from app.method.loader import load_method
    from app.method.taxonomy import SutAttributes, allowed, classify, load_taxonomy

    taxonomy = load_taxonomy(load_method(args.method))
    answers = SutAttributes(category=args.category, connectivity=args.connectivity
                            or "not-specified",
                            max_drive_count=1 if args.max_drives is None else args.max_drives,
                            **{attr: getattr(args, attr) for attr in ANSWER_FLAGS.values()})
    result = classify(taxonomy, answers)
    if args.request:
        allowed(result, args.request)
    if args.json:
        print(json.dumps({"category": result.category, "level": result.level, "id": result.id,
                          "label": result.label, "eligible": list(result.eligible),
                          "ruled_out": [r._asdict() for r in result.ruled_out]}, indent=2))
    else:
        print(result.explanation)
        if args.request:
            print(f"Requested {args.request}: allowed by the answers.")
    return 0
