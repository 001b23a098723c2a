"""``storwatt db``: upgrade the run database's schema, show what it holds, copy runs, and import
run journals (``recover``)."""

from __future__ import annotations

import argparse
import json
from collections import Counter
from dataclasses import asdict
from contextlib import closing
from pathlib import Path

from app.cli import arguments, cmd_db_roles
from app.core.station_settings import lab_database, lab_database_origin
from app.cli.safe_output import cell
from app.storage.errors import StorageError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("db", help="database maintenance (upgrade, info, copy, recover)")
    group = p.add_subparsers(dest="db_command", metavar="ACTION", required=True)
    up = group.add_parser("upgrade", help="bring the database schema to this version's")
    up.add_argument("--db", help="database URL (default: the station's SQLite file)")
    up.set_defaults(func=upgrade_command)
    info = group.add_parser("info", help="URL, schema version and run counts")
    info.add_argument("--db", help="database URL (default: the station's SQLite file)")
    info.add_argument("--json", action="store_true", help="print as JSON")
    info.set_defaults(func=info_command)
    copy = group.add_parser("copy", help="copy runs from one database into another "
                            "(e.g. a station's SQLite file into the lab's PostgreSQL)")
    copy.add_argument("--from", dest="source", required=True, help="source database URL")
    copy.add_argument("--to", dest="destination", required=True, help="destination URL")
    copy.add_argument("--run", action="append", help="copy only this run id (repeatable)")
    copy.set_defaults(func=copy_command)
    rec = group.add_parser("recover", help="import run journals (runs the database could not "
                           "take when they ended) into the database",
                           description="Without --journal: every journal in the station's "
                           "journal folder that belongs to this database. Importing twice "
                           "never duplicates anything; a journal is deleted once imported.")
    rec.add_argument("--db", help="database URL (default: the station's SQLite file)")
    rec.add_argument("--journal", action="append", type=Path, metavar="FILE",
                     help="import this journal file (repeatable), e.g. one copied from "
                          "another station")
    rec.set_defaults(func=recover_command)
    cmd_db_roles.register(group)
    for name, text, func in (
            ("sync", "copy to the lab database every run (or part of one) it lacks",
             sync_command),
            ("status", "what the lab database lacks of this station's runs, and the sender's "
             "last success and error", status_command)):
        action = group.add_parser(name, help=text)
        action.add_argument("--db", help="the station's database (default: its SQLite file)")
        action.add_argument("--lab-db", help="the lab database URL (default: the station's "
                            "setting, storwatt station lab-db)")
        action.add_argument("--json", action="store_true", help="print as JSON")
        action.set_defaults(func=func)


def upgrade_command(args: argparse.Namespace) -> int:
    from app.storage import migrate
    from app.storage.opening import upgrade

    try:
        version = upgrade(args.db)
    except StorageError as exc:
        return arguments.refuse("db upgrade", exc, args)
    print(f"database schema at version {version} (latest {migrate.head()})")
    return 0


def info_command(args: argparse.Namespace) -> int:
    from app.storage import migrate
    from app.storage.opening import open_existing_database
    from app.storage.repository import list_runs

    try:
        database = open_existing_database(args.db)
        try:
            runs = list_runs(database)
            facts = {"url": database.url, "schema_version": migrate.schema_version(database),
                     "latest_schema_version": migrate.head(), "runs": len(runs),
                     "runs_by_status": dict(Counter(str(r.status) for r in runs)),
                     "interrupted_at_open": list(database.interrupted)}
        finally:
            database.close()
    except StorageError as exc:
        return arguments.refuse("db info", exc, args)
    if args.json:
        print(json.dumps(facts, indent=2))
        return 0
    for key, value in facts.items():
        print(f"{key.replace('_', ' '):24} {cell(str(value))}")
    return 0


def copy_command(args: argparse.Namespace) -> int:
    from sqlalchemy.exc import SQLAlchemyError

    from app.storage.opening import open_database, open_existing_database
    from app.storage.run_ids import resolve_run_id
    from app.storage.transfer import copy_runs

    try:
        source = open_existing_database(args.source)
        destination = open_database(args.destination)  # a new file or server: made here
        try:
            ids = [resolve_run_id(source, r) for r in args.run] if args.run else None
            report = copy_runs(source, destination, ids)
        finally:
            source.close()
            destination.close()
    except StorageError as exc:
        return arguments.refuse("db copy", exc, args)
    except SQLAlchemyError as exc:  # a row the destination refused: one line, not a traceback
        first = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0]
        return arguments.refuse("db copy", f"the destination refused a run ({first}); the runs "
                                "copied before it are kept, the refused one is not copied "
                                "(rolled back)", args)
    print(report.summary())
    return 0


def recover_command(args: argparse.Namespace) -> int:
    from app.storage.opening import open_database
    from app.storage.journal import journal_dir
    from app.storage.recover import recover

    try:
        with closing(open_database(args.db, recover_journals=False)) as database:
            report = recover(database, args.journal)
    except StorageError as exc:
        return arguments.refuse("db recover", exc, args)
    for line in report.lines():  # a typed journal path may hold control characters
        print(arguments.one_line(line, vars(args).values()))
    if not (report.imported or report.in_use or report.failed):
        print(f"no run journals for {database.url} in {journal_dir()}: nothing to recover")
    return 1 if report.failed else 0


def _lab_url(args: argparse.Namespace, command: str) -> tuple[str, str]:
    """The lab database a ``db sync``/``db status`` is about, and where it was named."""
    if args.lab_db:
        return args.lab_db, "--lab-db"
    url = lab_database()
    if not url:
        raise StorageError(f"no lab database: name one with storwatt station lab-db URL or "
                           f"{command} --lab-db URL")
    return url, lab_database_origin()


def _lab_pair(args: argparse.Namespace, url: str):
    """The station's database (which must exist) and the lab's, opened as the sender does;
    a failure says which of the two it is."""
    from app.storage.opening import open_existing_database
    from app.storage.sender import open_lab

    try:
        station = open_existing_database(args.db)
    except StorageError as exc:
        raise StorageError(f"cannot read this station's database: {exc}") from exc
    try:
        return station, open_lab(url)
    except StorageError as exc:
        station.close()
        raise StorageError(f"cannot reach the lab database: {exc}") from exc


def sync_command(args: argparse.Namespace) -> int:
    from app.storage.sender import (SYNC_COMMAND, SenderState, lag, replace_error, save_state,
                                    state_for, sync)
    from app.storage.server_link import shown

    try:
        url, _origin = _lab_url(args, "db sync")
    except StorageError as exc:
        return arguments.refuse("db sync", exc, args)
    try:
        station, lab = _lab_pair(args, url)
        try:
            sent = sync(station, lab)
            left = lag(station, lab)
        finally:
            station.close()
            lab.close()
    except StorageError as exc:  # recorded as the sender's failures are: db status shows it
        save_state(replace_error(state_for(url), str(exc), SYNC_COMMAND))
        return arguments.refuse("db sync", exc, args)
    save_state(SenderState(shown(url), _now(), "", sum(b.events_behind for b in left),
                           SYNC_COMMAND))
    facts = {"rows_sent": sent, "lab": shown(url), "runs_behind": len(left)}
    if args.json:
        print(json.dumps(facts, indent=2))
    else:
        print(f"{sent} rows sent to {shown(url)}; the lab copy now holds "
              + ("every run of this station" if not left else f"all but {len(left)} run(s)"))
    return 0 if not left else 1


def _now() -> str:
    import time

    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def status_command(args: argparse.Namespace) -> int:
    """The lab database this station's runs go to (and where that is set), the last recorded
    outcome of a sync to *that* database, and — when it answers — what it lacks now."""
    from app.core.paths import default_db_url
    from app.storage.sender import lag, state_for
    from app.storage.server_link import shown

    try:
        url, origin = _lab_url(args, "db status")
    except StorageError as exc:
        url, origin, state, reachable = "", "", None, str(exc)
    else:
        state = state_for(url)
        try:
            station, lab = _lab_pair(args, url)
            try:
                behind = lag(station, lab)
            finally:
                station.close()
                lab.close()
            reachable = ""
        except StorageError as exc:
            behind, reachable = [], str(exc)
    station_url = shown(args.db or default_db_url())
    if args.json:
        print(json.dumps({"lab": shown(url) if url else "", "lab_named_by": origin,
                          "station_db": station_url,
                          **({k: v for k, v in asdict(state).items() if k != "lab"}
                             if state else {}),
                          "reachable_error": reachable,
                          "runs_behind": [{"run_id": b.run_id, "status": b.status,
                                           "events_behind": b.events_behind,
                                           "in_lab": b.lab_seq is not None}
                                          for b in (behind if state else [])]}, indent=2))
        return 0 if not reachable else 1
    print(f"station db     {station_url}")
    if state is None:
        print(f"lab database   none configured: {reachable}")
        return 1
    print(f"lab database   {shown(url)} (named by {origin})")
    for line in state.lines():
        print(line)
    if reachable:
        print(f"now            {reachable}")
        return 1
    if not behind:
        print("now            the lab copy holds every run of this station")
    for b in behind:
        where = "not in the lab copy" if b.lab_seq is None else f"{b.events_behind} events behind"
        print(f"run {b.run_id[:8]}   {b.status:11} {where}")
    return 0
