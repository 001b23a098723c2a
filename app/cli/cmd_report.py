"""``storwatt report RUN_ID``: rebuild the PDF Test Data Report and the xlsx export of a stored
run (the run id may be an unambiguous prefix)."""

from __future__ import annotations

import argparse
from pathlib import Path

from app.cli import arguments
from app.storage.errors import StorageError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("report", help="write the PDF test data report and xlsx export of a run",
                       description="Without --pdf/--xlsx/--bundle the PDF and xlsx are written to "
                                   "the current folder as storwatt-<id>-<method>.pdf/.xlsx.")
    p.add_argument("run_id", metavar="RUN_ID", help="run id or an unambiguous prefix of it")
    p.add_argument("--pdf", type=Path, metavar="FILE", help="write the PDF report here")
    p.add_argument("--xlsx", type=Path, metavar="FILE", help="write the xlsx workbook here")
    p.add_argument("--bundle", type=Path, metavar="FILE.zip",
                   help="write the result bundle (raw data, method, manifest) for storwatt-verify "
                        "here (docs/export-format.md, Result bundle)")
    p.add_argument("--db", help="database URL (default: the station's SQLite file)")
    p.set_defaults(func=report_command)


def report_command(args: argparse.Namespace) -> int:
    from app.core.protected import database_files
    from app.reports.export import ReportError, report_stem, write_bundle, write_reports
    from app.signoff.revisions import hashed, store_hashes
    from app.storage.opening import load_one_run

    try:
        # the record hash is computed once for both reports, and stored only once they are
        # written: a refused report leaves the database as it was
        run, new = hashed(load_one_run(args.db, args.run_id))
        pdf, xlsx = args.pdf, args.xlsx
        if pdf is None and xlsx is None and args.bundle is None:
            stem = report_stem(run)
            pdf, xlsx = Path(f"{stem}.pdf"), Path(f"{stem}.xlsx")
        # the run's own database files are never a report's destination (app.core.protected)
        protected = database_files(args.db) if args.db else ()
        if args.bundle is not None and any(
                p is not None and _same_name(p, args.bundle) for p in (pdf, xlsx)):
            raise ReportError(f"--bundle names the file of another report ({args.bundle}): "
                              "give each its own file")
        written = write_reports(run, pdf, xlsx, protected=protected) if pdf or xlsx else {}
        if args.bundle is not None:
            written["bundle"] = write_bundle(run, args.bundle, protected)
        store_hashes(args.db, run.run_id, new)
    except (StorageError, ReportError) as exc:
        return arguments.refuse("report", exc, args)
    for kind, path in written.items():
        print(f"{kind}: {path}")
    return 0


def _same_name(a: Path, b: Path) -> bool:
    return Path(a).resolve() == Path(b).resolve()
