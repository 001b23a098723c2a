"""``storwatt station``: show or set this station's name (recorded in every run)."""

from __future__ import annotations

import argparse
import sys

from app.cli.arguments import refuse
from app.core.station_settings import (StationNameError, configured_name, lab_database,
                                       set_lab_database, set_station_name, station_file,
                                       station_name)
from app.storage.errors import StorageError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("station", help="this station's name, recorded in every run")
    group = p.add_subparsers(dest="station_command", metavar="ACTION", required=True)
    show = group.add_parser("show", help="the name runs started here record")
    show.set_defaults(func=show_command)
    name = group.add_parser("name", help="set this station's name (once per station)")
    name.add_argument("name", metavar="NAME", help="e.g. 'bench-3' (1–64 characters)")
    name.add_argument("--rename", action="store_true",
                      help="replace a name already set (recorded runs keep theirs)")
    name.set_defaults(func=name_command)
    lab = group.add_parser("lab-db", help="the lab's PostgreSQL this station copies its runs to "
                           "(docs/storage.md, \"Local first\")")
    lab.add_argument("url", metavar="URL", nargs="?", default="",
                     help="e.g. postgresql+psycopg://bench_3@lab-db/storwatt; "
                          "empty: stop copying. Checked first: it must answer within seconds, "
                          "hold this StorWatt's schema and let the role store a run")
    lab.add_argument("--offline", action="store_true",
                     help="set it without checking (the server is not reachable from here "
                          "now); the first sync says what is wrong with it")
    lab.set_defaults(func=lab_db_command)


def show_command(_args: argparse.Namespace) -> int:
    if configured_name():
        print(f"Station: {configured_name()} (set in {station_file()})")
    else:
        print(f"Station: {station_name()} (the host name: no name set; set one with "
              "storwatt station name NAME)")
    print(f"Lab database: {_shown(lab_database()) or 'none (runs stay on this station)'}")
    return 0


def lab_db_command(args: argparse.Namespace) -> int:
    from app.storage.lab_link import check_lab_database

    checked = ""
    if args.url and not args.offline:
        try:
            role = check_lab_database(args.url)
        except StorageError as exc:
            return refuse("station lab-db", f"{exc}; the lab database setting is unchanged "
                          "(--offline sets it unchecked)", args)
        checked = f" (checked: schema current{f', role {role!r} may store runs' if role else ''})"
    try:
        set_lab_database(args.url)
    except OSError as exc:
        print(f"storwatt station lab-db: {exc}", file=sys.stderr)
        return 1
    if not args.url:
        print("Runs of this station stay on it (no lab database)")
    elif args.offline:
        print(f"Runs of this station are copied to {_shown(args.url)} — set UNCHECKED "
              "(--offline): storwatt db status or the first run's sender says whether it works")
    else:
        print(f"Runs of this station are copied to {_shown(args.url)}{checked}")
    return 0


def _shown(url: str) -> str:
    from app.storage.server_link import shown

    return shown(url) if url else ""


def name_command(args: argparse.Namespace) -> int:
    try:
        name = set_station_name(args.name, rename=args.rename)
    except (StationNameError, OSError) as exc:
        print(f"storwatt station name: {exc}", file=sys.stderr)
        return 1
    print(f"Station named {name!r}: every run started here records it")
    return 0
