"""``storwatt run``: execute a whole phase plan headless, store it, optionally write reports."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

from app.cli import arguments
from app.cli.cmd_methods import add_answer_arguments, answers_from_args
from app.records import (LAB_KINDS, SIMULATED_LABS, InstrumentConfig, RunConfig, RunStatus,
                         SutDescription)
from app.sequencer.capacity_optimisation import declare_coms
from app.storage.errors import StorageError
from app.stop_signals import is_hang_up, leave_terminal, run_until_stopped
from drivers.interfaces import InstrumentError, WorkloadError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="run a test sequence headless and store it",
                       description="Run a whole phase plan (conditioning, active profiles, "
                       "ready idle, COM checks) and store every sample.")
    p.add_argument("--lab", choices=LAB_KINDS, default="sim",
                   help="sim = built-in simulated lab (default); local-fio = real IO with fio")
    p.add_argument("--method", default="demo", help="method or variant name (default: demo)")
    p.add_argument("--taxonomy", default="online-3",
                   help="classification, e.g. online-3: checked against the attributes below "
                        "(as storwatt taxonomy classify takes them) and refused if they rule it "
                        "out; without attributes the run records none and is NON-COMPLIANT "
                        "(classification not derived)")
    add_answer_arguments(p)
    p.add_argument("--db", help="database URL (default: the station's SQLite file)")
    p.add_argument("--out", type=Path, help="write the PDF and xlsx reports into this folder")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--quiet", action="store_true", help="phases and metrics only")
    p.add_argument("--target", action="append", default=[],
                   help="fio target (repeatable): a scratch file to create (needs "
                   "--target-size), a scratch file StorWatt created before, or an existing "
                   "file or block device confirmed with --confirm-target")
    p.add_argument("--target-size", default="", type=arguments.scratch_size,
                   help="create a missing --target as a scratch file of this size, e.g. 256M "
                   "(without it a missing target is refused)")
    p.add_argument("--load-host", action="append", default=[],
                   help="fio --server load host HOST[:PORT] (repeatable)")
    p.add_argument("--confirm-target", "--confirm-device", dest="confirm_target",
                   action="append", default=[], metavar="PATH",
                   help="type a --target's path exactly to allow overwriting that block device "
                   "or existing file (repeatable)")
    p.add_argument("--capacity-gb", type=arguments.capacity_gb,
                   help="SUT raw capacity in GB (10^9 bytes); required outside the simulated "
                   "labs (EP_RI divides it by idle power)")
    p.add_argument("--supply", help="SUT nominal supply, one of the method's voltage ranges: "
                   "1P-100-120, 1P-200-240 or 3P-200-480 (storwatt methods show lists them); "
                   "required outside the simulated labs (simulated SUT: 1P-200-240)")
    p.add_argument("--ashrae-class", help="ASHRAE class the SUT is specified for (A1 … A4): "
                   "the inlet's allowable range; required outside the simulated labs "
                   "(simulated SUT: A2)")
    p.add_argument("--drives", type=arguments.drive_count, help="SUT drive count")
    p.add_argument("--drive-type", choices=("HDD", "SSD"), help="SUT drive type")
    p.add_argument("--com", action="append", default=[],
                   help="capacity optimisation available in the SUT and on during the test "
                   "(repeatable), e.g. deduplication; storwatt methods show lists the ids")
    p.add_argument("--com-off", action="append", default=[], metavar="COM",
                   help="capacity optimisation available in the SUT but off during the test "
                   "(repeatable), e.g. thin-provisioning")
    p.add_argument("--raid", help="SUT RAID level, e.g. 'RAID 6' (default) or 'RAID 10': "
                   "parity RAID is on exactly for RAID 5/6/50/60")
    p.add_argument("--meter-driver", default="sim",
                   help="the one power meter's driver (shorthand for one --power-input)")
    p.add_argument("--meter-resource", default="")
    p.add_argument("--power-input", dest="power_inputs", action="append", default=[],
                   type=arguments.power_input, metavar="KEY=VALUE,…",
                   help="one of the SUT's power inputs, summed into its power (repeatable): "
                   "name=NAME,driver=DRIVER,resource=RESOURCE[,element=N]"
                   "[,wiring=1P2W|3P3W|3P4W][,calibration=YYYY-MM-DD]; driver sim in a "
                   "simulated lab takes a simulated model as resource (wt310, wt333e …)")
    p.add_argument("--thermo-driver", default="sim")
    p.add_argument("--thermo-resource", default="")
    p.add_argument("--operator", default="")
    p.add_argument("--resume", metavar="RUN_ID",
                   help="continue this INTERRUPTED run (id or unique prefix) from the next phase "
                   "boundary the method allows, with its own stored configuration; the result "
                   "is NON-COMPLIANT (resumed after interruption). Run options given with it "
                   "must match the run's")
    p.add_argument("--ranging", choices=("method", "advisor"), default="method",
                   help="method: range the meter as the method's [ranging] says; advisor: "
                        "reuse the range plan of the latest completed run of the same SUT "
                        "(shown, then confirmed) instead of a ranging pass (method-notes §3)")
    p.add_argument("--range-plan-from", default="", metavar="RUN_ID",
                   help="reuse the range plan stored with this earlier run of the same SUT "
                        "(typing its id confirms it)")
    p.set_defaults(func=run_command)


#: what a real SUT must declare: the simulated SUT's example values would be made-up facts
#: about it (a wrong capacity gives a wrong EP_RI; a wrong supply or class checks nothing)
DECLARED_OUTSIDE_SIMULATION = (("capacity_gb", "--capacity-gb"), ("supply", "--supply"),
                               ("ashrae_class", "--ashrae-class"))


def config_from_args(args: argparse.Namespace) -> RunConfig:
    if args.lab not in SIMULATED_LABS:
        missing = [flag for key, flag in DECLARED_OUTSIDE_SIMULATION
                   if getattr(args, key) is None]
        if missing:
            raise ValueError(f"--lab {args.lab} needs {', '.join(missing)}: the defaults "
                             "describe the simulated SUT (7300 GB, 1P-200-240, A2), not yours "
                             "(method-notes §3, §4)")
    names = [i.name for i in args.power_inputs]
    if len(set(names)) < len(names):
        raise ValueError(f"--power-input names must differ; given: {', '.join(names)}")
    if args.power_inputs and (args.meter_driver != "sim" or args.meter_resource):
        raise ValueError("give the power meter either as --meter-driver/--meter-resource (one "
                         "input) or as --power-input (each input), not both")
    sut = SutDescription()
    if args.supply is not None:
        sut = replace(sut, supply=args.supply)
    if args.ashrae_class is not None:
        sut = replace(sut, ashrae_class=args.ashrae_class)
    if args.capacity_gb is not None:
        sut = replace(sut, raw_capacity_bytes=int(args.capacity_gb * 1e9))
    if args.drives is not None:
        sut = replace(sut, drive_count=args.drives)
    if args.drive_type:
        sut = replace(sut, drive_type=args.drive_type)
    if args.raid is not None:
        sut = replace(sut, raid=args.raid)
    answers = answers_from_args(args)
    reason = _classification_reason(args, answers)
    available, on = declare_coms(args.com, args.com_off)
    sut = replace(sut, coms_declared=available, coms_on_during_test=on,
                  targets=tuple(args.target), load_hosts=tuple(args.load_host))
    return RunConfig(method=args.method, taxonomy=args.taxonomy, lab=args.lab, sut=sut,
                     power_meter=InstrumentConfig(args.meter_driver, args.meter_resource),
                     power_inputs=tuple(args.power_inputs),
                     temperature_meter=InstrumentConfig(args.thermo_driver, args.thermo_resource),
                     operator=args.operator, target_size=args.target_size,
                     confirm_device=",".join(args.confirm_target),
                     classification_reason=reason, classification_answers=answers)


def _classification_reason(args: argparse.Namespace, answers: dict[str, object]) -> str:
    """Why ``--taxonomy`` (the derivation from the attributes given); a level the attributes
    rule out is refused before anything runs (method-notes §1)."""
    if not answers:
        return ""
    from app.method.loader import load_method
    from app.method.taxonomy import TaxonomyError, recorded_classification

    try:
        derived = recorded_classification(load_method(args.method), args.taxonomy, answers)
    except TaxonomyError as exc:
        raise ValueError(f"--taxonomy {exc}") from None
    return derived.explanation.replace("\n", "; ")


def run_command(args: argparse.Namespace) -> int:
    from app.console import ConsoleReporter
    from app.sequencer.lab import LabError
    from app.method.loader import MethodError
    from app.session import open_session

    try:
        reporter = ConsoleReporter(sys.stderr if args.json else sys.stdout, quiet=args.quiet)
        if args.resume:
            session = _resumed_session(args, reporter)
        else:
            session = open_session(_confirm_range_plan(args, config_from_args(args)),
                                   db_url=args.db, listeners=[reporter],
                                   report_folder=args.out)
    except (MethodError, LabError, KeyError, ValueError, InstrumentError, WorkloadError,
            StorageError) as exc:
        print(f"storwatt run: {arguments.one_line(_message(exc), vars(args).values())}",
              file=sys.stderr)
        return 1

    def stop(signum: int, reason: str) -> None:
        if is_hang_up(signum):
            leave_terminal()
        session.sequencer.abort(reason)

    def run_and_report() -> int:
        try:
            status = session.run()
        except StorageError as exc:  # neither the database nor the journal took everything
            print(f"storwatt run: {exc}", file=sys.stderr)
            return 1
        reporter.print_final(session.stored.message())  # only now is the run durable
        return _finish(args, session, status)

    # the run on a worker, the signals on the waiting main thread (see run_until_stopped);
    # handled until the reports are written: a stop signal then is a no-op, not a lost report
    return run_until_stopped(run_and_report, stop, name=f"run-{session.run_id[:8]}")


def _resumed_session(args: argparse.Namespace, reporter):
    """Plan the continuation of ``--resume RUN_ID`` (refused with the reason), say what it
    will redo, then build its lab and claim the run (app/resume.py)."""
    from app.resume import open_resumed_session, prepare_resume
    from app.storage.db import open_database

    database = open_database(args.db)
    try:
        plan = prepare_resume(database, args.resume, given=_typed_settings(args))
    finally:
        database.close()
    for line in plan.lines():
        print(line, file=reporter.out)
    return open_resumed_session(plan, db_url=args.db, listeners=[reporter],
                                report_folder=args.out)


def _typed_settings(args: argparse.Namespace) -> dict:
    """The run settings the operator typed beside ``--resume`` (flat configuration keys whose
    value differs from the options' defaults): each must equal the interrupted run's."""
    from app.resume import flat_config

    parser = argparse.ArgumentParser(add_help=False)
    register(parser.add_subparsers())
    defaults = flat_config(config_from_args(parser.parse_args(["run"])).snapshot())
    typed = flat_config(config_from_args(args).snapshot())
    return {key: value for key, value in typed.items() if defaults.get(key) != value}


def _confirm_range_plan(args: argparse.Namespace, config: RunConfig) -> RunConfig:
    """``--ranging advisor``: show the plan the advisor offers and have the operator confirm
    it (a prompt on a terminal; elsewhere the run id must be typed as --range-plan-from)."""
    if args.range_plan_from or args.ranging != "advisor":
        return replace(config, range_plan_from=args.range_plan_from)
    from app.storage.db import open_database
    from app.storage.range_advisor import advise

    database = open_database(args.db)
    try:
        advised = advise(database, config.sut)
    finally:
        database.close()
    print("\n".join(advised.lines()), file=sys.stderr)
    if not sys.stdin.isatty():
        raise ValueError(f"the range advisor offers the plan of run {advised.run_id[:8]} "
                         f"(above); confirm it with --range-plan-from {advised.run_id[:8]}")
    answer = input("Use this range plan for the testing pass instead of a ranging pass? [y/N] ")
    if answer.strip().lower() not in ("y", "yes"):
        raise ValueError("range plan not confirmed; run with --ranging method to range again")
    return replace(config, range_plan_from=advised.run_id)


def _message(exc: Exception) -> str:
    return exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)


def _finish(args: argparse.Namespace, session, status: RunStatus) -> int:
    from app.console import metrics_table

    metrics = session.sequencer.metrics
    stored = session.stored
    if args.out and not stored.in_database:
        print(f"storwatt run: reports not written: {stored.message()}, then "
              f"storwatt report {session.run_id}", file=sys.stderr)
    reports = _write_reports(args.out, session) if args.out and stored.in_database else {}
    # derived from the stored record, like every report (app.compliance)
    record = session.database.load_run(session.run_id) if stored.in_database else None
    verdict = record.compliance if record else None
    if record and session.sequencer.continuation:  # with the results kept from before
        metrics = list(record.metrics)
    if args.json:
        print(json.dumps({"run_id": session.run_id, "status": str(status),
                          "error": session.sequencer.error,
                          "stored": "database" if stored.in_database else "journal",
                          "journals": [str(p) for p in stored.journals],
                          "metrics": [_metric_json(m) for m in metrics],
                          "compliance": verdict.as_json() if verdict else None,
                          "reports": {k: str(v) for k, v in reports.items()}}, indent=2))
    else:
        print()
        print(metrics_table(metrics))
        print(f"\nRun {session.run_id} {status}; {stored.message()}")
        if verdict is not None:
            print("\n".join(verdict.lines()))
        if session.sequencer.error:
            print(f"Reason: {session.sequencer.error}")
        if status is RunStatus.FAILED:
            db = f" --db {args.db}" if args.db else ""
            print(f"The run's event log, with the traceback of an unexpected error: "
                  f"storwatt runs show {session.run_id[:8]}{db}")
        for kind, path in reports.items():
            print(f"{kind} report: {path}")
    return 0 if status is RunStatus.COMPLETED and stored.in_database else 1


def _metric_json(m) -> dict:
    def num(x: float) -> float | None:
        return x if x == x else None

    return {"name": m.name, "value": num(m.value), "unit": m.unit, "valid": m.valid,
            "reason": m.reason, "run_length_s": m.run_length_s, "avg_power_w": num(m.avg_power_w),
            "ops_rate": num(m.ops_rate), "ops_unit": m.ops_unit,
            "avg_response_ms": num(m.avg_response_ms)}


def _write_reports(out: Path, session) -> dict[str, Path]:
    from app.reports.export import ReportError, export_run

    try:
        return export_run(session.database, session.run_id, out)
    except (ReportError, OSError) as exc:
        print(f"storwatt run: the run is stored, but its reports could not be written: {exc}",
              file=sys.stderr)
        return {}
