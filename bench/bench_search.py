"""Intensity-search benchmark: what the refinement between probes costs and gains on the
simulated lab, with the compliant method's search (queue depths 1 … 256 × 4 jobs, 120 s per
probe), on a fake clock (a run of minutes takes seconds).

Per random profile: the probe time the refinement adds (its probes × ``probe_s``, station time
on a real lab) and the ops rate gained over the deepest listed probe within the limit — what
the search chose before it refined (issue 14 item 10). Run:
``.venv/bin/python -m bench.run_all search``.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.method.loader import load_method_file
from app.method.model import Method
from app.core.records import RunConfig
from app.sequencer import events as ev
from app.sequencer.equipment import Lab
from app.sequencer.search import within
from app.sequencer.sequencer import Sequencer
from app.labs.simulated import simulated_sut
from bench.figure import Figure
from drivers.clock import FakeClock
from drivers.simulators.direct_meters import SimulatedPowerMeter, SimulatedThermometer
from drivers.simulators.engine import SimulatedWorkloadEngine

COMMAND = ".venv/bin/python -m bench.run_all search"
#: the compliant method's [search], inherited; only the plan is shortened
VARIANT = """base = "emerald-block-v3"
name = "bench-search"
version = "bench"
compliant = false
interval_s = 1.0
[[plans]]
name = "online"
categories = ["online", "near-online"]
prefill = false
ready_idle_intervals = 1
active = [{ profile = "MW1", stabilisation_intervals = 0, measurement_intervals = 1 },
          { profile = "RW", stabilisation_intervals = 0, measurement_intervals = 1 },
          { profile = "RR", stabilisation_intervals = 0, measurement_intervals = 1 }]
"""


def search_results() -> tuple[Method, list[ev.SearchResult]]:
    """The method and the search results of one simulated run."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "bench-search.toml"
        path.write_text(VARIANT, encoding="utf-8")
        method = load_method_file(path)
    clock = FakeClock(0.0)
    config = RunConfig(method=method.name, taxonomy="online-3", lab="sim-direct")
    sut = simulated_sut(config)
    lab = Lab(SimulatedPowerMeter(sut), SimulatedWorkloadEngine(sut, clock),
              SimulatedThermometer(sut), sut.used_capacity_bytes, 0.0, "simulated SUT")
    found: list[ev.SearchResult] = []
    try:
        Sequencer(method, config, lab, clock,
                  [lambda e: found.append(e) if isinstance(e, ev.SearchResult) else None]).run()
    finally:
        lab.close()
    return method, found


def run() -> list[Figure]:
    method, results = search_results()
    probe_s, limit = method.search.probe_s, method.response_time.max_avg_ms
    low = limit * (1 - method.search.tolerance_pct / 100)
    figures = []
    for r in results:
        depths = [qd for qd, _, _ in r.probes]
        listed = depths.index(max(depths)) + 1  # the list runs up to its deepest probe
        before = max((rate for _, rate, ms in r.probes[:listed] if within(ms, limit)),
                     default=float("nan"))
        added = (len(r.probes) - listed) * probe_s
        figures += [
            Figure(f"search.{r.profile}.refinement_probe_time", added, "s", "informative",
                   None, COMMAND),
            Figure(f"search.{r.profile}.rate_gain_over_listed_probe",
                   round((r.ops_rate / before - 1) * 100, 1), "%", "informative", None,
                   COMMAND),
            Figure(f"search.{r.profile}.chosen_avg_response", round(r.avg_response_ms, 2),
                   "ms", f"within {low:g}–{limit:g} ms", low <= r.avg_response_ms <= limit,
                   COMMAND)]
    return figures


if __name__ == "__main__":
    for figure in run():
        print(f"{figure.name:45} {figure.value:>10} {figure.unit:3} goal {figure.goal}")
