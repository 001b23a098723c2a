"""``storwatt audit``: QA notes and dispositions of stored runs (append-only, see
:mod:`app.storage.audit`).

    storwatt audit add RUN_ID --note TEXT --author NAME
    storwatt audit add RUN_ID --accept|--reject --reason TEXT --author NAME
    storwatt audit list RUN_ID [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict

from app.cli import arguments
from app.cli.cmd_signoff import AUDIT_DB_HELP
from app.cli.safe_output import indented
from app.storage.errors import StorageError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("audit", help="QA notes and accept/reject dispositions of stored runs")
    group = p.add_subparsers(dest="audit_command", metavar="ACTION", required=True)
    add = group.add_parser("add", help="append a note or a disposition (never edits the run)")
    add.add_argument("run_id", metavar="RUN_ID", help="run id or an unambiguous prefix")
    what = add.add_mutually_exclusive_group(required=True)
    what.add_argument("--note", help="a note to append")
    what.add_argument("--accept", action="store_true", help="QA accepts the run")
    what.add_argument("--reject", action="store_true", help="QA rejects the run")
    add.add_argument("--reason", help="why the run is accepted or rejected (required with "
                     "--accept/--reject)")
    add.add_argument("--author", required=True, help="who writes the entry")
    add.add_argument("--confirm", metavar="REASON", default="",
                     help="required with --accept for a SIMULATED or NON-COMPLIANT run: why "
                          "QA accepts it anyway (kept with the disposition)")
    ls = group.add_parser("list", help="a run's audit trail, oldest first")
    ls.add_argument("run_id", metavar="RUN_ID", help="run id or an unambiguous prefix")
    ls.add_argument("--json", action="store_true", help="print as JSON")
    for parser in (add, ls):
        parser.add_argument("--db", help=AUDIT_DB_HELP)
    add.set_defaults(func=add_command)
    ls.set_defaults(func=list_command)


def add_command(args: argparse.Namespace) -> int:
    from app.cli.cmd_signoff import not_on_lab, on_lab
    from app.storage.audit import add_audit_entry, audit_database
    from app.storage.opening import open_existing_database
    from app.storage.repository import load_run

    if args.note is not None and args.reason:
        print("storwatt audit add: --reason goes with --accept/--reject; a note is its own "
              "text", file=sys.stderr)
        return 2
    if args.note is None and not (args.reason or "").strip():
        print("storwatt audit add: --accept/--reject needs --reason (why)", file=sys.stderr)
        return 2
    kind, disposition = (("note", None) if args.note is not None else
                         ("disposition", "accepted" if args.accept else "rejected"))
    try:
        database = open_existing_database(audit_database(args.db))
        try:
            if disposition == "accepted":
                from app.signoff.revisions import accept

                entry = accept(database, load_run(database, args.run_id), args.author,
                               args.reason, args.confirm)
            else:
                entry = add_audit_entry(database, args.run_id, kind,
                                        args.note if args.note is not None else args.reason,
                                        args.author, disposition)
        finally:
            database.close()
    except StorageError as exc:
        return arguments.refuse("audit add", not_on_lab(exc, args.db), args)
    print(f"run {entry.run_id}: {indented(entry.describe())}{on_lab(args.db)}")
    return 0


def list_command(args: argparse.Namespace) -> int:
    from app.cli.cmd_signoff import not_on_lab
    from app.storage.audit import audit_database, audit_entries
    from app.storage.opening import open_existing_database

    try:
        database = open_existing_database(audit_database(args.db))
        try:
            entries = audit_entries(database, args.run_id)
        finally:
            database.close()
    except StorageError as exc:
        return arguments.refuse("audit list", not_on_lab(exc, args.db), args)
    if args.json:
        print(json.dumps([asdict(e) for e in entries], indent=2, default=str))
    elif not entries:
        print("no notes or dispositions for this run")
    else:
        for e in entries:
            print(indented(e.describe()))
    return 0
