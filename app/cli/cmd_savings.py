"""``storwatt runs savings BASE_ID OPT_ID``: what a COM saves, from two measured runs.

The baseline and optimised runs give capacity, idle and active power and the active IO rate
(:mod:`app.reports.com_savings_runs`); the prices are options whose defaults are the seed's, so a
lab values the savings at its own costs (docs/method-notes.md §6).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path

from app.metrics.com_savings import (DEFAULT_ACTIVE_METRIC, SEED_DRIVE_USD, SEED_ENCLOSURE_USD,
                                     SEED_OPEX_PER_10KW_MONTH_USD, SCALE_KW, ComSavings,
                                     CostRates)
from app.metrics.errors import MetricsError
from app.storage.errors import StorageError


def add_savings_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--opex-per-10kw", type=float, default=SEED_OPEX_PER_10KW_MONTH_USD,
                   metavar="USD", help="cost per month per 10 kW installed (power, cooling, "
                                       "space); default the seed's $%(default)g")
    p.add_argument("--drive-cost", type=float, default=SEED_DRIVE_USD, metavar="USD",
                   help="price of one drive (default the seed's $%(default)g)")
    p.add_argument("--enclosure-cost", type=float, default=SEED_ENCLOSURE_USD, metavar="USD",
                   help="price of one empty drive enclosure (default $%(default)g)")
    p.add_argument("--base-enclosures", type=int, default=0, metavar="N",
                   help="drive enclosures of the baseline configuration")
    p.add_argument("--opt-enclosures", type=int, default=0, metavar="N",
                   help="drive enclosures of the optimised configuration")
    p.add_argument("--active-metric", default=DEFAULT_ACTIVE_METRIC,
                   help="the active profile's metric giving IOPS and active power "
                        "(default %(default)s, the seed's 70/30 random workload)")
    p.add_argument("--xlsx", type=Path, help="also write the table to this xlsx file")
    p.add_argument("--pdf", type=Path, help="also write the table to this PDF file")


def savings_command(args: argparse.Namespace) -> int:
    from app.reports.com_savings_runs import savings_of_runs
    from app.storage.opening import load_one_run

    try:
        rates = CostRates(args.drive_cost, args.enclosure_cost, args.opex_per_10kw)
        savings = savings_of_runs(load_one_run(args.db, args.base_id),
                                  load_one_run(args.db, args.opt_id), rates,
                                  args.active_metric, args.base_enclosures,
                                  args.opt_enclosures)
    except (StorageError, MetricsError) as exc:
        print(f"storwatt runs savings: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(savings_json(savings), indent=2))
    else:
        print(savings_text(savings))
    from app.reports.com_savings_report import write_savings_pdf, write_savings_xlsx
    for path, write in ((args.xlsx, write_savings_xlsx), (args.pdf, write_savings_pdf)):
        if path is not None:
            print(f"wrote {write(savings, path)}", file=sys.stderr if args.json else sys.stdout)
    return 0


def savings_text(savings: ComSavings) -> str:
    head = ("Figure", savings.baseline.label, savings.optimised.label, "Change")
    rows = [head] + [row.texts() for row in savings.rows()]
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = [*savings.caveats]
    lines += ["  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                        for i, (c, w) in enumerate(zip(r, widths))) for r in rows]
    lines.append("")
    lines += [f"{row.figure:32} {row.text()}" for row in savings.cost_rows()]
    return "\n".join(lines)


def savings_json(savings: ComSavings) -> dict[str, object]:
    return {"baseline": asdict(savings.baseline), "optimised": asdict(savings.optimised),
            "rates": asdict(savings.rates),
            "rows": [asdict(r) for r in savings.rows()],
            "caveats": list(savings.caveats),
            "capex_usd": savings.capex_usd, "installed_w_saved": savings.installed_w_saved,
            "opex_usd_per_month": savings.opex_usd_per_month,
            "scaled": {f"{kw:g}kW": dict(zip(("capex_usd", "opex_usd_per_month"),
                                             savings.scaled(kw))) for kw in SCALE_KW}}
