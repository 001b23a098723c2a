"""``storwatt run``: execute a whole phase plan headless, store it, optionally write reports."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from app.cli import arguments
from app.cli.cmd_methods import add_answer_arguments, answers_from_args
from app.core.records import (LAB_KINDS, SIMULATED_LABS, UNDECLARED_SUT, RunConfig, RunStatus,
                              SutDescription)
from app.rules.run_fields import EntryError
from app.storage.errors import StorageError
from app.station.stop_signals import is_hang_up, leave_terminal, run_until_stopped
from drivers.interfaces import InstrumentError, WorkloadError

if TYPE_CHECKING:
    from app.station.run_entries import RunEntries


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
    add_answer_arguments(p, max_drives_default="the SUT's drive count")
    p.add_argument("--db", help="database URL (default: the station's SQLite file)")
    p.add_argument("--lab-db", default=None, metavar="URL",
                   help="copy the run to this lab database while it goes on (default: the "
                        "station's setting, storwatt station lab-db)")
    p.add_argument("--out", type=Path, help="write the PDF and xlsx reports into this folder")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--quiet", action="store_true", help="phases and metrics only")
    p.add_argument("--target", action="append", default=[],
                   help="fio target (repeatable): a scratch file to create (needs "
                   "--target-size), a scratch file StorWatt created before, or an existing "
                   "file or block device confirmed with --confirm-target")
    p.add_argument("--target-size", default="", type=arguments.scratch_size,
                   help="create a missing --target as a scratch file of this size, e.g. 256M "
                   "(fio's M, G: binary), 10GB (decimal, as --capacity-gb) or 10GiB "
                   "(without it a missing target is refused)")
    p.add_argument("--buffered-io", action="store_true",
                   help="write file targets through the page cache (default: direct IO "
                   "wherever their file system allows it; the report says which was used)")
    p.add_argument("--load-host", action="append", default=[],
                   help="fio --server load host HOST[:PORT] (repeatable)")
    p.add_argument("--confirm-target", "--confirm-device", dest="confirm_target",
                   action="append", default=[], metavar="PATH",
                   help="type a --target's path exactly to allow overwriting that block device "
                   "or existing file (repeatable)")
    p.add_argument("--sut", type=Path, metavar="FILE",
                   help="the SUT description file the lab keeps (JSON: vendor, model, serial, "
                   "firmware, raw capacity, drives, RAID, COMs, supply, ASHRAE class, power "
                   "supplies and which input measures which; the wizard saves one, "
                   "docs/user-guide.md shows one); options typed beside it override its fields")
    p.add_argument("--vendor", type=arguments.sut_name("vendor"),
                   help="SUT vendor (outside the simulated labs: printed on the report; or "
                   "give --sut)")
    p.add_argument("--model", type=arguments.sut_name("model"), help="SUT model")
    p.add_argument("--serial", type=arguments.sut_name("serial"), help="SUT serial number")
    p.add_argument("--firmware", type=arguments.sut_name("firmware"),
                   help="SUT firmware version")
    p.add_argument("--capacity-gb", type=arguments.capacity_gb,
                   help="SUT raw capacity in GB (10^9 bytes; or with its unit, e.g. '7.3 TB'); "
                   "required outside the simulated labs (EP_RI divides it by idle power)")
    p.add_argument("--supply", help="SUT nominal supply, one of the method's voltage ranges: "
                   "1P-100-120, 1P-200-240 or 3P-200-480 (storwatt methods show lists them); "
                   "required outside the simulated labs (simulated SUT: 1P-200-240)")
    p.add_argument("--ashrae-class", help="ASHRAE class the SUT is specified for (A1 … A4): "
                   "the inlet's allowable range; required outside the simulated labs "
                   "(simulated SUT: A2)")
    p.add_argument("--drives", type=arguments.drive_count, help="SUT drive count")
    p.add_argument("--drive-type", help="SUT drive type: HDD or SSD")
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
    p.add_argument("--meter-resource", default="",
                   help="the one power meter's address (VISA resource or host:port)")
    p.add_argument("--power-input", dest="power_inputs", action="append", default=[],
                   type=arguments.power_input, metavar="KEY=VALUE,…",
                   help="one of the SUT's power inputs, summed into its power (repeatable): "
                   "name=NAME,driver=DRIVER,resource=RESOURCE[,element=N]"
                   "[,wiring=1P2W|3P3W|3P4W][,calibration=YYYY-MM-DD][,certificate=REF]; "
                   "driver sim in a "
                   "simulated lab takes a simulated model as resource (wt310, wt333e …)")
    p.add_argument("--meter-calibration", type=arguments.calibration_of("meter"), default="",
                   metavar="YYYY-MM-DD", help="the power meter's last calibration date (from "
                   "its certificate; a date after today is refused)")
    p.add_argument("--meter-certificate", type=arguments.certificate_of("meter"), default="",
                   metavar="REF", help="the power meter's calibration certificate reference")
    p.add_argument("--thermo-driver", default="sim",
                   help="the inlet thermometer's driver (storwatt meter drivers lists them; "
                   "sim: the simulated lab's)")
    p.add_argument("--thermo-resource", default="",
                   help="the thermometer's address (VISA resource or host:port)")
    p.add_argument("--thermo-calibration", type=arguments.calibration_of("thermo"),
                   default="",
                   metavar="YYYY-MM-DD", help="the thermometer's last calibration date (from "
                   "its certificate; a date after today is refused)")
    p.add_argument("--thermo-certificate", type=arguments.certificate_of("thermo"),
                   default="",
                   metavar="REF", help="the thermometer's calibration certificate reference")
    p.add_argument("--operator", default="", type=arguments.operator,
                   help="who runs the test (printed on the report)")
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


#: what a real SUT must declare, without --sut: the simulated SUT's example values would be
#: made-up facts about it (a wrong capacity gives a wrong EP_RI; a wrong supply or class
#: checks nothing; a made-up RAID level puts "parity RAID: NOT VERIFIED" in its report; its
#: name would make every run "StorWatt Simulated array")
DECLARED_OUTSIDE_SIMULATION = (("vendor", "--vendor"), ("model", "--model"),
                               ("serial", "--serial"), ("capacity_gb", "--capacity-gb"),
                               ("supply", "--supply"), ("ashrae_class", "--ashrae-class"),
                               ("drives", "--drives"), ("raid", "--raid"))
#: options that override an entry of the SUT description (option key → RunEntries field)
SUT_OPTIONS = (("vendor", "vendor"), ("model", "model"), ("serial", "serial"),
               ("firmware", "firmware"), ("supply", "supply"), ("ashrae_class", "ashrae_class"),
               ("capacity_gb", "capacity"), ("drives", "drive_count"),
               ("drive_type", "drive_type"), ("raid", "raid"))
#: the option a refused entry is typed as (``app.rules.run_fields.EntryError.field``)
ENTRY_OPTIONS = {"vendor": "--vendor", "model": "--model", "serial": "--serial",
                 "firmware": "--firmware", "capacity": "--capacity-gb", "drive_count": "--drives",
                 "drive_type": "--drive-type", "raid": "--raid",
                 "operator": "--operator", "power_inputs": "--power-input",
                 "meter_resource": "--meter-resource", "thermo_resource": "--thermo-resource",
                 "meter_calibration": "--meter-calibration",
                 "meter_certificate": "--meter-certificate",
                 "thermo_calibration": "--thermo-calibration",
                 "thermo_certificate": "--thermo-certificate", "targets": "--target",
                 "load_hosts": "--load-host", "method": "--method"}


def _declared_sut(args: argparse.Namespace) -> SutDescription:
    """The SUT as declared before the options typed beside it: the --sut file, else the
    simulated SUT in a simulated lab and nothing of it elsewhere (UNDECLARED_SUT, every
    field then typed as an option)."""
    from app.station.sut_file import load_sut_file

    if args.sut is not None:
        return load_sut_file(args.sut)
    if args.lab in SIMULATED_LABS:
        return SutDescription()
    missing = [flag for key, flag in DECLARED_OUTSIDE_SIMULATION if getattr(args, key) is None]
    if missing:
        raise ValueError(f"--lab {args.lab} needs --sut FILE (the SUT description) or "
                         f"{', '.join(missing)}: nothing of the simulated SUT is used "
                         "outside the simulated labs (method-notes §3, §4)")
    return UNDECLARED_SUT


def entries_from_args(args: argparse.Namespace) -> RunEntries:
    """The run's entries as the options give them, on top of the declared SUT — the same
    entries the wizard's pages collect, for the one builder (``app.station.run_entries``)."""
    if args.power_inputs and (args.meter_driver != "sim" or args.meter_resource
                              or args.meter_calibration or args.meter_certificate):
        raise ValueError("give the power meter either as --meter-driver/--meter-resource (one "
                         "input) or as --power-input (each input), not both")
    # here, not at the top: it loads the method model (pydantic), and ``storwatt --help``
    # must not (tests/test_cli_startup.py)
    from app.station.run_entries import RunEntries, sut_entries, with_max_config_default

    entries = RunEntries(
        taxonomy=args.taxonomy, classification_answers=answers_from_args(args),
        **sut_entries(_declared_sut(args)),
        workload_mode=("simulated" if args.lab in SIMULATED_LABS
                       else "load-hosts" if args.load_host else "local-fio"),
        simulated_lab=args.lab if args.lab in SIMULATED_LABS else "sim",
        targets=tuple(args.target), target_size=args.target_size,
        confirm_device=",".join(args.confirm_target), load_hosts=tuple(args.load_host),
        buffered_io=args.buffered_io, method=args.method, meter_driver=args.meter_driver,
        meter_resource=args.meter_resource, meter_calibration=args.meter_calibration,
        meter_certificate=args.meter_certificate, thermo_driver=args.thermo_driver,
        thermo_resource=args.thermo_resource, thermo_calibration=args.thermo_calibration,
        thermo_certificate=args.thermo_certificate, operator=args.operator,
        power_inputs=tuple(args.power_inputs))
    typed = {entry: getattr(args, key) for key, entry in SUT_OPTIONS
             if getattr(args, key) not in (None, "")}
    if "capacity" in typed:
        typed["capacity_unit"] = "GB"  # the option's unit, unless one is typed in its value
    if args.com or args.com_off or args.sut is None:  # typed COMs replace the file's
        typed |= {"coms": tuple(args.com), "coms_off": tuple(args.com_off)}
    entries = replace(entries, **typed)
    if not entries.classification_answers:  # no attributes given: nothing derived
        return entries
    entries = with_max_config_default(entries)  # the SUT's drives, as the wizard's default
    return replace(entries, classification_reason=_classification_reason(
        args, entries.classification_answers))


def config_from_args(args: argparse.Namespace) -> RunConfig:
    """The run configuration the options describe, built as the wizard builds it; a refused
    entry names its option."""
    # the method model: see entries_from_args
    from app.station.run_entries import config_from_entries

    entries = entries_from_args(args)
    try:
        return config_from_entries(entries)
    except EntryError as exc:
        option = ENTRY_OPTIONS.get(exc.field)
        raise ValueError(f"{option}: {exc}" if option else str(exc)) from None


#: the clock a run is timed by; None: the station's monotonic clock. Tests set it (a fake
#: clock runs a day-long compliant sequence in seconds); deliberately no command-line option,
#: so no operator can shorten a run's real time
INJECTED_CLOCK = None


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
    return derived.one_line


def run_command(args: argparse.Namespace) -> int:
    from app.cli.console import ConsoleReporter
    from app.sequencer.equipment import LabError
    from app.method.loader import MethodError
    from app.station.session import open_session
    from app.storage.sender import sender_for

    try:
        reporter = ConsoleReporter(sys.stderr if args.json else sys.stdout, quiet=args.quiet)
        if args.resume:
            session = _resumed_session(args, reporter)
        else:
            config = _with_station_calibration(config_from_args(args), reporter.out)
            session = open_session(_confirm_range_plan(args, config),
                                   db_url=args.db, listeners=[reporter],
                                   report_folder=args.out, clock=INJECTED_CLOCK)
    except (MethodError, LabError, KeyError, ValueError, InstrumentError, WorkloadError,
            StorageError) as exc:
        print(f"storwatt run: {arguments.one_line(_message(exc), vars(args).values())}",
              file=sys.stderr)
        return 1

    def stop(signum: int, reason: str) -> None:
        if is_hang_up(signum):
            leave_terminal()
        session.sequencer.abort(reason)

    sender = sender_for(session.database, args.lab_db)

    def run_and_report() -> int:
        try:
            status = session.run()
        except StorageError as exc:  # neither the database nor the journal took everything
            print(f"storwatt run: {exc}", file=sys.stderr)
            return 1
        finally:
            lab_copy = sender.stop(LAB_FINAL_WAIT_S) if sender else None
        reporter.print_final(session.stored.message())  # only now is the run durable
        if lab_copy is not None:
            print(lab_copy.summary() + (f" — {lab_copy.last_error}" if lab_copy.last_error
                                        else ""), file=reporter.out)
        return _finish(args, session, status)

    # the run on a worker, the signals on the waiting main thread (see run_until_stopped);
    # handled until the reports are written: a stop signal then is a no-op, not a lost report
    return run_until_stopped(run_and_report, stop, name=f"run-{session.run_id[:8]}")


def _with_station_calibration(config: RunConfig, out) -> RunConfig:
    """Each real instrument's calibration not typed, from the station profile
    (``app.station.instrument_profile``), each one said; a broken profile file is a warning."""
    from app.station.instrument_profile import StationProfile, StationProfileError

    try:
        config, notes = StationProfile().fill(config)
    except StationProfileError as exc:
        notes = [f"WARNING: {exc}"]
    for note in notes:
        print(note, file=out)
    return config


#: the sender's last push once the run has ended: the lab copy is complete within this, or
#: catches up later (storwatt db sync, the next run); the run's own result never waits on it
LAB_FINAL_WAIT_S = 15.0


def _resumed_session(args: argparse.Namespace, reporter):
    """Plan the continuation of ``--resume RUN_ID`` (refused with the reason), say what it
    will redo, then build its lab and claim the run (app/station/resume.py)."""
    from app.station.resume import open_resumed_session, prepare_resume
    from app.storage.opening import open_database

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
    from app.station.resume import flat_config

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
    from app.storage.opening import open_database
    from app.storage.range_advisor import advise

    database = open_database(args.db)
    try:
        advised = advise(database, config)
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
    from drivers.fio.safety import GIVE_A_SIZE

    text = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
    # the driver names no front end: on the command line the scratch size is --target-size
    return text.replace(GIVE_A_SIZE, f"{GIVE_A_SIZE} (--target-size)")


def _finish(args: argparse.Namespace, session, status: RunStatus) -> int:
    from app.cli.console import metrics_table
    from app.storage.repository import load_run

    metrics = session.sequencer.metrics
    stored = session.stored
    if args.out and not stored.in_database:
        print(f"storwatt run: reports not written: {stored.message()}, then "
              f"storwatt report {session.run_id}", file=sys.stderr)
    reports = _write_reports(args.out, session) if args.out and stored.in_database else {}
    # derived from the stored record, like every report (app.rules.compliance)
    record = load_run(session.database, session.run_id) if stored.in_database else None
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
    reported = not args.out or bool(reports)  # reports asked for and not written: not a success
    return 0 if status is RunStatus.COMPLETED and stored.in_database and reported else 1


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
