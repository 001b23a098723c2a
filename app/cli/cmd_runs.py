"""``storwatt runs``: list stored runs and show one (phases, metrics, instruments, counts,
COM verdicts, sign-off); ``runs com`` and ``runs approve`` are :mod:`app.cli.cmd_signoff`'s."""

from __future__ import annotations

import argparse
import json
import math
from dataclasses import asdict, fields
from typing import TYPE_CHECKING, Any

from app.cli import arguments, cmd_signoff
from app.cli.safe_output import cell, indented
from app.core.records import RunStatus
from app.cli.cmd_savings import add_savings_options, savings_command
from app.metrics.formatting import format_duration, format_figure
from app.sequencer.capacity_optimisation import is_com_metric
from app.storage.errors import StorageError

if TYPE_CHECKING:  # numpy and SQLAlchemy: imported where a command runs
    from app.storage.stored import RunSummary, StoredRun


#: what ``runs list`` shows unless told: a screenful and more, not a station's whole history
NEWEST_LISTED = 50


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("runs", help="list and show stored runs")
    group = p.add_subparsers(dest="runs_command", metavar="ACTION", required=True)
    ls = group.add_parser("list", help="stored runs, newest first")
    ls.add_argument("--status", help="only runs with this status (COMPLETED, INTERRUPTED …)")
    many = ls.add_mutually_exclusive_group()
    many.add_argument("--limit", type=arguments.whole_number(1, arguments.MAX_LISTED),
                      default=NEWEST_LISTED,
                      help="at most this many runs, newest first (default %(default)s)")
    many.add_argument("--all", action="store_true", help="every stored run (a station of "
                      "10,000 runs prints 20,000 lines)")
    ls.add_argument("--station", help="only runs recorded by the station of this name")
    show = group.add_parser("show", help="one run: phases, metrics, instruments, sample counts")
    show.add_argument("run_id", metavar="ID", help="run id or an unambiguous prefix of it")
    savings = group.add_parser(
        "savings", help="COM savings of an optimised run over a baseline run: GB/W, IO/W, "
                        "CAPEX and OPEX (docs/method-notes.md §6)")
    savings.add_argument("base_id", metavar="BASE_ID", help="baseline run id (or prefix)")
    savings.add_argument("opt_id", metavar="OPT_ID", help="optimised run id (or prefix)")
    add_savings_options(savings)
    for parser in (ls, show, savings):
        parser.add_argument("--json", action="store_true", help="print as JSON")
        parser.add_argument("--db", help="database URL (default: the station's SQLite file)")
    savings.set_defaults(func=savings_command)
    ls.set_defaults(func=list_command)
    show.set_defaults(func=show_command)
    cmd_signoff.register_actions(group)


def _num(x: float | None) -> float | None:
    """JSON has no NaN: a missing number is null."""
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else x


def _phase_span(start: float | None, end: float | None) -> str:
    """``at 7 s … 9 s (2 s)``: run time as every view writes a duration, never raw floats
    (issue 41: ``0.0626708 … 1.07107``)."""
    if _num(start) is None:
        return "not started"
    assert start is not None
    if _num(end) is None:
        return f"at {format_duration(start)} … (not ended)"
    assert end is not None
    return f"at {format_duration(start)} … {format_duration(end)} " \
           f"({format_duration(end - start)})"


def _fmt(x: float | None, digits: int = 3) -> str:
    return "—" if _num(x) is None else f"{x:.{digits}g}"


def list_command(args: argparse.Namespace) -> int:
    from app.storage.opening import open_for_reading
    from app.storage.repository import list_runs
    from app.storage.resumption import resumable_run_ids

    from app.storage.run_pages import count_runs

    narrowed = {f"--{k}": v for k, v in (("status", args.status), ("station", args.station))
                if v is not None}
    try:
        database = open_for_reading(args.db)
        try:
            limit = None if args.all else args.limit
            runs = list_runs(database, status=args.status.upper() if args.status else None,
                             limit=limit, station=args.station)
            resumable = resumable_run_ids(database)
            cut = limit is not None and len(runs) == limit
            stored = count_runs(database) if (narrowed and not runs) or cut else len(runs)
        finally:
            database.close()
    except StorageError as exc:
        return arguments.refuse("runs list", exc, args)
    if args.json:
        print(json.dumps([{**_summary_json(r), "resumable": r.run_id in resumable}
                          for r in runs], indent=2))
        return 0
    if not runs:
        print(_nothing_listed(narrowed, stored, database.url))
        return 0
    # stored text (other stations wrote it): each cell one line, nothing that drives a terminal
    rows = [tuple(map(cell, (r.run_id[:8], r.started_wall,
                             f"{r.status}, resumable" if r.run_id in resumable else str(r.status),
                             f"{r.method_name} {r.method_version}", r.compliance.label,
                             r.taxonomy, r.station or "—", str(r.sut))))
            for r in runs]
    header = ("ID", "STARTED (UTC)", "STATUS", "METHOD", "COMPLIANCE", "TAXONOMY", "STATION",
              "SUT")
    # each column as wide as its widest cell: a long method name never shifts the others
    widths = [max(len(cells[k]) for cells in (header, *rows)) for k in range(len(header) - 1)]
    print("  ".join(f"{c:{w}}" for c, w in zip(header, widths)) + "  " + header[-1])
    for r, cells in zip(runs, rows):
        print("  ".join(f"{c:{w}}" for c, w in zip(cells, widths)) + "  " + cells[-1])
        print(f"{'':10}method: "
              + cell(r.compliance.method_label(r.method_name, r.method_version)))
    print("COMPLIANCE is derived from each run's record (storwatt runs show ID lists every "
          "criterion), not the method file's claim")
    if cut and stored > len(runs):
        print(f"The newest {len(runs)} of {stored} stored runs"
              f"{' (before --status/--station)' if narrowed else ''}: --all lists every run, "
              "--limit N the newest N")
    if any(r.run_id in resumable for r in runs):
        print("\nA resumable run continues with: storwatt run --resume ID (the result is "
              "NON-COMPLIANT: resumed after interruption)")
    return 0


def _nothing_listed(narrowed: dict[str, str], stored: int, url: str) -> str:
    """Why ``runs list`` shows nothing: an empty database, or a filter no run matches (then
    how many runs are stored, so a typo in a status or station name is not read as "no
    runs", issue 40)."""
    if not stored:
        return f"no runs stored in {url}"
    matched = " and ".join(f"{option} {cell(value)}" for option, value in narrowed.items())
    status = narrowed.get("--status", "").upper()
    known = "" if not status or status in RunStatus.__members__ else \
        f" ({cell(status)} is no run status: {', '.join(RunStatus)})"
    return (f"no run matches {matched}{known}; {stored} run{'' if stored == 1 else 's'} "
            f"{'is' if stored == 1 else 'are'} stored in {url} (storwatt runs list shows "
            "them all)")


def _summary_json(r: RunSummary) -> dict[str, Any]:
    data = {f.name: getattr(r, f.name) for f in fields(r) if f.compare}  # not the haystack
    data["status"] = str(r.status)
    data["verdict"] = r.status_text
    data["method_claims_compliant"] = data.pop("method_compliant")  # the file's claim only
    data["compliance"] = r.compliance.as_json()
    data["metrics"] = [{"name": m.name, "value": m.value if math.isfinite(m.value) else None,
                        "unit": m.unit, "valid": m.valid, "reason": m.reason}
                       for m in r.metrics]
    return data


def show_command(args: argparse.Namespace) -> int:
    from app.signoff.revisions import load_signed_run

    try:
        run = load_signed_run(args.db, args.run_id)
    except StorageError as exc:
        return arguments.refuse("runs show", exc, args)
    data = run_json(run)
    if args.json:
        print(json.dumps(data, indent=2))
    else:
        print(_run_text(run, data))
    return 0


def run_json(run: StoredRun) -> dict[str, Any]:
    """The facts ``runs show`` prints, as plain JSON-able data."""
    from app.signoff.revisions import sign_off

    signoff = sign_off(run)
    ident = {role: (asdict(i) if i else None) for role, i in
             (("power_meter", run.power_meter), ("temperature_meter", run.temperature_meter))}
    return {
        "run_id": run.run_id, "status": str(run.status), "verdict": run.verdict.text,
        "error": run.error,
        "method": {"name": run.method_name, "version": run.method_version,
                   "claims_compliant": run.method_compliant},
        "compliance": run.compliance.as_json(),
        "taxonomy": run.taxonomy, "started_wall": run.started_wall,
        "finished_wall": run.finished_wall, "planned_s": run.planned_s,
        "duration_s": run.duration_s, "workload_engine": run.workload_engine,
        "stored_by_login": run.writer_role,  # the lab server's record (docs/security.md)
        "instruments": ident,
        "range_plan": run.range_plan.to_json() if run.range_plan else None,
        "phases": [{"index": p.index, "kind": str(p.info.kind), "name": p.info.name,
                    "profile": p.info.profile, "status": str(p.status),
                    "attempts": p.attempts, "t_start": p.t_start, "t_end": p.t_end,
                    "error": p.error} for p in run.phases],
        "metrics": [{"name": m.name, "value": _num(m.value), "unit": m.unit, "valid": m.valid,
                     "reason": m.reason} for m in run.metrics],
        "errors": [{"t": e.t, "phase_index": e.phase_index, "message": e.message}
                   for e in run.events if e.level == "ERROR"],
        "counts": {"power_samples": len(run.power), "temperature_samples": len(run.temperature),
                   "workload_intervals": len(run.workload), "intervals": len(run.intervals),
                   "log_events": len(run.events)},
        "samples_sha256": run.samples_sha256,
        "coms": [{"id": v.com_id, "available": v.available, "on_during_test": v.on_during_test,
                  "verdict": str(v.state), "detail": v.detail,
                  "audit_entry": v.entry.entry_id if v.entry else None}
                 for v in run.coms],
        "revision": signoff.current.number, "record_sha256": signoff.current.sha256,
        "sign_off": signoff.status,
        "sign_off_on": signoff.home or None,  # the lab database, when not this copy
        "revisions": [{"revision": r.number, "record_sha256": r.sha256, "made_on": r.made_on,
                       "changes": list(r.changes)} for r in signoff.revisions],
        "approvals": [{"revision": a.revision, "record_sha256": a.sha256, "by": a.entry.author,
                       "recorded_utc": a.entry.created_wall, "statement": a.entry.text,
                       "current": a.current, "intact": a.intact,
                       "made_on": a.entry.made_on, "inserted_by": a.entry.db_role}
                      for a in signoff.approvals],
    }


def _run_text(run: StoredRun, data: dict[str, Any]) -> str:
    from app.signoff.revisions import INSERTER_NOT_RECORDED

    # what another station typed or its instruments answered stays on its own line (cell):
    # a line feed in a stored name must not print a line of its own, such as a fake verdict
    lines = [f"Run {cell(run.run_id)}  {run.status}"
             + (f"  ({indented(run.error)})" if run.error else ""),
             f"Outcome  {run.verdict.text} (as the run's header, the start page and the "
             "history say it)",
             f"Method   {cell(f'{run.method_name} {run.method_version}')}  "
             f"{run.compliance.label} (derived, see Compliance below)",
             f"Taxonomy {cell(run.taxonomy)}    started {cell(run.started_wall)}    "
             f"duration {format_duration(run.duration_s)} of {format_duration(run.planned_s)} "
             "planned",
             f"Station  {cell(run.config.station or 'not recorded')}    "
             f"operator {cell(run.config.operator or '—')}"
             + (f"    stored by login {cell(run.writer_role)} (recorded by the lab server)"
                if run.writer_role else "")]
    for role, ident in (("Power meter", run.power_meter),
                        ("Thermometer", run.temperature_meter)):
        lines.append(f"{role:12} "
                     + (cell(f"{ident.describe()}  {ident.resource}") if ident else "—"))
    lines.append(f"Workload    {cell(run.workload_engine or '—')}")
    if run.range_plan:  # the fixed ranges of the testing pass (method-notes §3)
        lines.append(f"Ranges      from {run.range_plan.source}")
        lines += [f"            {line}" for line in run.range_plan.describe()]
    lines += run.compliance.lines()
    lines.append("\nPhases")
    for p in run.phases:
        lines.append(f"  {p.index:>2} {cell(p.info.name):20} {p.status:11} "
                     f"{_phase_span(p.t_start, p.t_end)}"
                     + (f" ×{p.attempts}" if p.attempts > 1 else "")
                     + (f"  {indented(p.error)}" if p.error else ""))
    if data["errors"]:
        lines.append("\nErrors (from the run's event log)")
        for error in data["errors"]:
            lines.append(f"  at {_fmt(error['t'], 6)} s: " + indented(error["message"]))
    lines.append("\nMetrics")
    for m in run.metrics:
        if is_com_metric(m.name):  # a COM's state is its verdict (Capacity optimisations)
            continue
        figure = format_figure(m.value)  # the report's digits (method-notes §4)
        shown = (f"{figure} {m.unit}" if m.valid else  # an invalid figure shown as one
                 f"({figure}) {m.unit}  INVALID: {m.reason}" if _num(m.value) is not None
                 else f"INVALID: {m.reason}")
        lines.append(f"  {m.name:10} {shown}")
    counts = data["counts"]
    lines.append(f"\nStored: {counts['power_samples']} meter samples, "
                 f"{counts['temperature_samples']} temperature samples, "
                 f"{counts['workload_intervals']} workload intervals, "
                 f"{counts['log_events']} log lines")
    lines.append("\nCapacity optimisations (available / on during test: verdict)")
    for com in data["coms"]:
        yes = {True: "YES", False: "NO"}
        lines.append(f"  {cell(com['id']):18} {yes[com['available']]:3} / "
                     f"{yes[com['on_during_test']]:3}  {com['verdict']}"
                     + (f": {cell(com['detail'])}" if com["detail"] else ""))
    lines.append(f"Samples SHA-256 {run.samples_sha256}")
    lines.append(f"Record SHA-256  {data['record_sha256']} (revision {data['revision']})")
    lines.append(f"Sign-off        {data['sign_off']}")
    lines.append("Revisions (made on which database)")
    lines += [f"  {r['revision']:>2}  " + cell(f"{r['made_on']}: {'; '.join(r['changes'])}")
              for r in data["revisions"]]
    lines += [f"Approval of revision {a['revision']} by "
              + cell(f"{a['by']}: inserted by {a['inserted_by'] or INSERTER_NOT_RECORDED}")
              for a in data["approvals"]]
    return "\n".join(lines)
