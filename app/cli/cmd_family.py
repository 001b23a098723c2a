"""``storwatt family``: a product family's sweet spot from its stored runs (issue 18 §6).

``family list`` names the comparable groups of runs (one model, method and taxonomy);
``family sweet-spot`` sweeps one range variable over them and prints where each metric peaks,
with the disclosure text a Test Data Report carries (app/metrics/best_foot_forward.py).
"""

from __future__ import annotations

import argparse
import json
import sys

from app.cli.safe_output import cell
from app.cli.arguments import add_db_option
from app.storage.errors import StorageError


def register(sub: argparse._SubParsersAction) -> None:
    f = sub.add_parser("family", help="best foot forward: where a product family's metrics peak")
    fs = f.add_subparsers(dest="family_command", metavar="ACTION", required=True)
    ls = fs.add_parser("list", help="product families (model, method, taxonomy) with run counts")
    add_db_option(ls)
    ls.set_defaults(func=list_command)
    spot = fs.add_parser("sweet-spot", help="each metric's peak across a family's runs")
    for flag, what in (("--vendor", "SUT vendor, as described in its runs"),
                       ("--model", "SUT model, as described in its runs")):
        spot.add_argument(flag, required=True, help=what)
    for flag, what in (("--method", "method name (needed when the model ran several)"),
                       ("--taxonomy", "taxonomy id (needed when the model ran several)")):
        spot.add_argument(flag, help=what)
    spot.add_argument("--by", default="drive_count", metavar="VARIABLE",
                      help="the range variable swept: drive_count (default), drive_type, raid")
    add_db_option(spot)
    spot.add_argument("--json", action="store_true")
    spot.set_defaults(func=sweet_spot_command)


def list_command(args: argparse.Namespace) -> int:
    from app.storage.opening import open_for_reading
    from app.storage.family import product_families

    try:
        database = open_for_reading(args.db)
        families = product_families(database)
    except StorageError as exc:
        print(f"storwatt family: {exc}", file=sys.stderr)
        return 1
    if not families:
        print("no COMPLETED runs stored")
    for family, count in families:
        print(f"{count:4d} run{'' if count == 1 else 's'}  {cell(family.describe())}")
    return 0


def sweet_spot_command(args: argparse.Namespace) -> int:
    from app.metrics.best_foot_forward import disclosure, sweet_spots, sweeps
    from app.metrics.formatting import format_figure
    from app.storage.opening import open_for_reading
    from app.storage.family import family_runs, product_families

    try:
        database = open_for_reading(args.db)
        matching = [f for f, _ in product_families(database)
                    if (f.vendor, f.model) == (args.vendor, args.model)
                    and args.method in (None, f.method) and args.taxonomy in (None, f.taxonomy)]
        if len(matching) != 1:
            print(f"storwatt family: {_ambiguity(args, matching)}", file=sys.stderr)
            return 1
        family = matching[0]
        groups = sweeps(family_runs(database, family), args.by)
    except (StorageError, ValueError) as exc:  # ValueError: an unknown range variable
        print(f"storwatt family: {exc}", file=sys.stderr)
        return 1
    results = {fixed: sweet_spots(points) for fixed, points in groups.items()}
    if args.json:
        print(json.dumps({"family": family.describe(), "variable": args.by, "sweeps": [
            {"fixed": fixed, "disclosure": disclosure(f"{family.describe()}, {fixed}", args.by,
                                                      spots),
             "sweet_spots": [{"metric": s.metric, "value": s.value, "unit": s.unit,
                              "setting": s.setting, "run_id": s.run_id, "edge": s.edge,
                              "curve": s.curve} for s in spots]}
            for fixed, spots in results.items()]}, indent=2))
        return 0
    for fixed, spots in results.items():
        print(f"\n{family.describe()}, {fixed}")
        for spot in spots:
            curve = "  ".join(f"{setting}: {format_figure(v)}" for setting, v in spot.curve)
            print(f"  {spot.metric:<7} {curve}")
        print()
        print(disclosure(f"{family.describe()}, {fixed}", args.by, spots))
    return 0


def _ambiguity(args: argparse.Namespace, matching: list) -> str:
    if not matching:
        return (f"no COMPLETED runs of {args.vendor} {args.model}"
                + (f" with method {args.method}" if args.method else "")
                + (f" for {args.taxonomy}" if args.taxonomy else "")
                + "; storwatt family list shows the families stored")
    return ("several families match; add --method and --taxonomy: "
            + "; ".join(f.describe() for f in matching))
