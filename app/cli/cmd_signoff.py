"""``storwatt runs com`` and ``storwatt runs approve``: audited entries that sign a run off.

    storwatt runs com RUN_ID --com ID --result passed|not-passed --evidence TEXT --by NAME
    storwatt runs approve RUN_ID --by NAME --statement TEXT

A COM result is the technician's heuristic check of a COM the station could not observe
(:mod:`app.rules.com_verdict`); it makes a new revision of the record. An approval is QA's, bound
to
the revision and SHA-256 it approves (:mod:`app.signoff.revisions`). Both are append-only audit
entries.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from app.cli.safe_output import indented
from app.core.station_settings import lab_database
from app.storage.errors import RunNotFoundError, StorageError


#: audit entries are added where the station's runs are signed off (docs/storage.md)
AUDIT_DB_HELP = ("database URL (default: the lab database when one is named — where this "
                 "station's runs are signed off — else the station's SQLite file)")


def register_actions(group: argparse._SubParsersAction) -> None:
    """Adds ``com`` and ``approve`` to the ``storwatt runs`` actions."""
    com = group.add_parser("com", help="record a technician's heuristic COM result with its "
                           "evidence (a new revision of the record)")
    com.add_argument("run_id", metavar="RUN_ID", help="run id or an unambiguous prefix")
    com.add_argument("--com", required=True, metavar="ID",
                     help="the COM, e.g. parity-raid or thin-provisioning")
    com.add_argument("--result", required=True, choices=("passed", "not-passed"),
                     help="what the heuristic check showed")
    com.add_argument("--evidence", required=True, help="what was checked and seen")
    com.add_argument("--by", required=True, metavar="NAME", help="who checked")
    approve = group.add_parser("approve", help="QA approves the run's current revision "
                               "(bound to its SHA-256)")
    approve.add_argument("run_id", metavar="RUN_ID", help="run id or an unambiguous prefix")
    approve.add_argument("--by", required=True, metavar="NAME", help="who approves")
    approve.add_argument("--statement", required=True, help="what QA attests")
    approve.add_argument("--confirm", metavar="REASON", default="",
                         help="required to approve a SIMULATED or NON-COMPLIANT revision: why "
                              "QA signs it anyway (printed with the approval on the report)")
    for parser in (com, approve):
        parser.add_argument("--db", help=AUDIT_DB_HELP)
    com.set_defaults(func=com_command)
    approve.set_defaults(func=approve_command)


def com_command(args: argparse.Namespace) -> int:
    from app.signoff.revisions import record_com_result

    return _append("com", args, lambda db, run: record_com_result(
        db, run, args.com, args.result, args.evidence, args.by))


def approve_command(args: argparse.Namespace) -> int:
    from app.signoff.revisions import approve

    return _append("approve", args, lambda db, run: approve(db, run, args.by, args.statement,
                                                           args.confirm))


def on_lab(given: str | None) -> str:
    """Said after an entry added to the lab database by default (no ``--db``)."""
    from app.storage.server_link import shown

    return f"\n(added on the lab database {shown(lab_database())})" \
        if not given and lab_database() else ""


def not_on_lab(exc: StorageError, given: str | None) -> object:
    """A run the lab database (the default) lacks: say how it gets there."""
    if isinstance(exc, RunNotFoundError) and on_lab(given):
        return (f"{exc} in the lab database (audit entries are added there: this station's "
                "runs reach it as they run, storwatt db sync sends the rest now; --db names "
                "another database)")
    return exc


def _append(action: str, args: argparse.Namespace, add: Callable) -> int:
    """Load the run, append the entry ``add`` makes, print it and the revision now."""
    from app.signoff.revisions import remember_record_hashes, sign_off
    from app.storage.audit import audit_database
    from app.storage.opening import open_existing_database
    from app.storage.repository import load_run

    try:
        database = open_existing_database(audit_database(args.db))
        try:
            entry = add(database, load_run(database, args.run_id))
            # the revision just recorded gets its hash stored now, not at its first report
            status = sign_off(remember_record_hashes(database,
                                                     load_run(database, entry.run_id))).status
        finally:
            database.close()
    except StorageError as exc:
        print(f"storwatt runs {action}: {not_on_lab(exc, args.db)}", file=sys.stderr)
        return 1
    print(f"run {entry.run_id}: {indented(entry.describe())}\n{status}{on_lab(args.db)}")
    return 0
