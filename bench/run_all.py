"""Run the benchmarks and write docs/performance.md.

``python -m bench.run_all`` runs every ``bench/bench_*.py``; ``python -m bench.run_all fio ui``
runs a subset and merges its rows into the existing document (other modules' rows are kept).
Each module exposes ``bench()`` (or ``run()``) returning :class:`bench.figure.BenchResult`-like
records (name, value, unit, goal, passed, command).
"""

from __future__ import annotations

import importlib
import json
import os
import platform
import pkgutil
import sys
import time
from pathlib import Path

import numpy

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "performance.md"
DATA = ROOT / "docs" / "performance.json"


def modules(selected: list[str]) -> list[str]:
    names = sorted(m.name for m in pkgutil.iter_modules([str(Path(__file__).parent)])
                   if m.name.startswith("bench_"))
    wanted = {s if s.startswith("bench_") else f"bench_{s}" for s in selected}
    return [n for n in names if not wanted or n in wanted]


def run_module(name: str) -> list[dict]:
    module = importlib.import_module(f"bench.{name}")
    entry = getattr(module, "bench", None) or getattr(module, "run")
    rows = []
    for r in entry():
        row = {k: getattr(r, k) for k in ("name", "value", "unit", "goal", "passed", "command")}
        rows.append(row)
        mark = {True: "PASS", False: "MISS", None: "info"}[row["passed"]]
        print(f"[{mark}] {name}: {row['name']} = {row['value']} {row['unit']} (goal {row['goal']})",
              flush=True)
    return rows


def machine() -> str:
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                if line.startswith("model name")), platform.processor()) \
        if os.path.exists("/proc/cpuinfo") else platform.processor()
    return (f"{os.cpu_count()} cores ({cpu}), Python {platform.python_version()}, "
            f"numpy {numpy.__version__}, {platform.system()} {platform.release()}")


def write_doc(results: dict[str, list[dict]]) -> None:
    lines = ["# Performance", "",
             "Measured by `make bench` (`python -m bench.run_all`); each row says the command "
             "that made it. Figures are from one run on the machine below, not guesses.", "",
             f"Machine: {machine()}  ", f"Date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}", ""]
    for module, rows in sorted(results.items()):
        lines += [f"## {module}", "", "| figure | value | goal | met | command |",
                  "|---|---|---|---|---|"]
        for r in rows:
            met = {True: "yes", False: "**no**", None: "—"}[r["passed"]]
            lines.append(f"| {r['name']} | {r['value']} {r['unit']} | {r['goal']} | {met} | "
                         f"`{r['command']}` |")
        lines.append("")
    DOC.write_text("\n".join(lines))


def main(argv: list[str]) -> int:
    results = json.loads(DATA.read_text()) if DATA.exists() and argv else {}
    failed = []
    for name in modules(argv):
        try:
            results[name] = run_module(name)
        except Exception as exc:  # noqa: BLE001 - one broken bench must not hide the others
            print(f"[FAIL] {name}: {exc}", file=sys.stderr)
            failed.append(name)
    DATA.write_text(json.dumps(results, indent=1))
    write_doc(results)
    print(f"wrote {DOC.relative_to(ROOT)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
