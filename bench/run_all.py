"""Run the benchmarks, print their figures and rewrite docs/performance.md.

``python -m bench.run_all`` runs every ``bench/bench_*.py``; ``python -m bench.run_all metrics``
(or ``bench_metrics``) runs a subset and merges its figures into the existing document: rows
are keyed by figure name, a module that ran replaces its own rows, other modules' rows stay.
The document is the only store (no side file): it is parsed back for the merge.
"""

from __future__ import annotations

import importlib
import math
import os
import pkgutil
import platform
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy

from bench.figure import Figure

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "performance.md"
BASE_COMMAND = "python -m bench.run_all"
_MET = {True: "yes", False: "**no**", None: "—"}
_COLUMNS = "| figure | value | unit | goal | met | command |"


@dataclass(frozen=True)
class Section:
    """One bench module's figures and where/when they were measured."""

    module: str
    measured: str  # "2026-11-22 19:10 UTC on <machine>"
    figures: tuple[Figure, ...]


def modules(selected: list[str]) -> list[str]:
    """Bench modules to run: all ``bench_*`` files, or the named ones (prefix optional)."""
    names = sorted(m.name for m in pkgutil.iter_modules([str(Path(__file__).parent)])
                   if m.name.startswith("bench_"))
    wanted = {s if s.startswith("bench_") else f"bench_{s}" for s in selected}
    unknown = wanted - set(names)
    if unknown:
        raise SystemExit(f"no such bench: {', '.join(sorted(unknown))} "
                         f"(have {', '.join(names)})")
    return [n for n in names if not wanted or n in wanted]


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    if os.path.exists("/proc/cpuinfo"):
        with open("/proc/cpuinfo") as f:
            cpu = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")),
                       cpu)
    return (f"nproc {os.cpu_count()} ({cpu}), Python {platform.python_version()}, "
            f"numpy {numpy.__version__}, {platform.system()} {platform.release()}")


def run_module(name: str) -> tuple[Figure, ...]:
    """Import and run one bench; a crash becomes a failed figure so it cannot pass unseen."""
    command = f"{BASE_COMMAND} {name.removeprefix('bench_')}"
    try:
        module = importlib.import_module(f"bench.{name}")
        entry = getattr(module, "run", None) or module.bench
        raw = list(entry())
    except Exception as exc:  # noqa: BLE001 - one broken bench must not hide the others
        return (Figure(f"{name} did not run: {type(exc).__name__}: {exc}", math.nan, "",
                       "runs", False, command),)
    figures = tuple(Figure(r.name, r.value, r.unit, r.goal, r.passed, r.command or command)
                    for r in raw)
    return figures


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _value_text(value: float) -> str:
    return repr(float(value)) if isinstance(value, float) else str(value)


def render(sections: dict[str, Section], command: str) -> str:
    lines = ["# Performance", "",
             f"Written by `make bench` (`{BASE_COMMAND}`); this version by `{command}`. Every "
             "row is a measurement from the run named in its section, not an estimate; rerun a "
             "row with its command.", "", f"Machine of the latest run: {machine()}", ""]
    for module in sorted(sections):
        sec = sections[module]
        lines += [f"## {module}", "", f"Measured {sec.measured}", "", _COLUMNS,
                  "|---|---|---|---|---|---|"]
        lines += [f"| {_cell(f.name)} | {_value_text(f.value)} | {_cell(f.unit)} | "
                  f"{_cell(f.goal)} | {_MET[f.passed]} | `{_cell(f.command)}` |"
                  for f in sec.figures]
        lines.append("")
    return "\n".join(lines)


def _split_row(line: str) -> list[str]:
    cells = re.split(r"(?<!\\)\|", line.strip())[1:-1]
    return [c.strip().replace("\\|", "|") for c in cells]


def _parse_value(text: str) -> float | str:
    """A row's value as written; a hand-written row of several values ("138.8 / 132.5")
    stays text, so one such row cannot stop every bench from writing its figures."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


def parse(text: str) -> dict[str, Section]:
    """Sections of an existing document (the inverse of :func:`render`)."""
    sections: dict[str, Section] = {}
    module, measured = None, ""
    rows: list[Figure] = []
    back = {v: k for k, v in _MET.items()}
    for line in text.splitlines() + ["## <end>"]:
        if line.startswith("## "):
            if module:
                sections[module] = Section(module, measured, tuple(rows))
            module, measured, rows = line[3:].strip(), "", []
        elif module and line.startswith("Measured "):
            measured = line.removeprefix("Measured ").strip()
        elif module and line.startswith("| ") and not line.startswith(("| figure", "|---")):
            cells = _split_row(line)
            if len(cells) == 6:
                name, value, unit, goal, met, cmd = cells
                rows.append(Figure(name, _parse_value(value), unit, goal, back.get(met),
                                   cmd.strip("`")))
    return sections


def merge(old: dict[str, Section], new: dict[str, Section]) -> dict[str, Section]:
    """New sections replace their module; a figure name taken by another module is dropped
    there (names are the key), so a renamed or moved figure never appears twice."""
    fresh = {f.name for sec in new.values() for f in sec.figures}
    kept = {m: Section(m, s.measured, tuple(f for f in s.figures if f.name not in fresh))
            for m, s in old.items() if m not in new}
    return {**{m: s for m, s in kept.items() if s.figures}, **new}


def main(argv: list[str]) -> int:
    names = modules(argv)
    new: dict[str, Section] = {}
    for name in names:
        figures = run_module(name)
        stamp = f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on {machine()}"
        for f in figures:
            mark = {True: "PASS", False: "MISS", None: "info"}[f.passed]
            print(f"[{mark}] {name}: {f.name} = {_value_text(f.value)} {f.unit} "
                  f"(goal {f.goal})", flush=True)
        new[name] = Section(name, stamp, figures)
    old = parse(DOC.read_text()) if argv and DOC.exists() else {}
    command = " ".join([BASE_COMMAND, *argv])
    DOC.write_text(render(merge(old, new), command))
    print(f"wrote {DOC}")
    # a missed goal is a finding to publish, not a harness failure; a crashed bench is
    crashed = [n for n, s in new.items() if any(f.name.startswith(f"{n} did not run")
                                                 for f in s.figures)]
    return 1 if crashed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
