"""The benchmark harness: figures round-trip through docs/performance.md and subsets merge."""

from __future__ import annotations

import math
import sys
import types

import pytest

from bench import run_all
from bench.figure import BenchResult, Figure


def _doc(sections: dict[str, run_all.Section]) -> str:
    return run_all.render(sections, "python -m bench.run_all")


def _section(module: str, *figures: Figure) -> run_all.Section:
    return run_all.Section(module, "2026-01-01 00:00 UTC on test", figures)


def test_rendered_document_parses_back_to_the_same_figures() -> None:
    figs = (Figure("merge | pipes", 22.4, "ms", "≤ 200 ms", True, "cmd a"),
            Figure("ratio", 0.8807, "", "≥ 0.98", False, "cmd b"),
            Figure("count", 1682080, "IOPS", "reference", None, "cmd c"))
    parsed = run_all.parse(_doc({"bench_x": _section("bench_x", *figs)}))
    assert parsed["bench_x"].figures == figs
    assert parsed["bench_x"].measured == "2026-01-01 00:00 UTC on test"


def test_nan_value_survives_the_round_trip() -> None:
    doc = _doc({"bench_p": _section("bench_p", Figure("not measured", math.nan, "", "runs",
                                                      False, "c"))})
    (fig,) = run_all.parse(doc)["bench_p"].figures
    assert math.isnan(fig.value) and fig.passed is False


def test_a_subset_replaces_its_module_and_keeps_the_others() -> None:
    old = {"bench_a": _section("bench_a", Figure("a1", 1, "s", "g", True, "c"),
                               Figure("moved", 2, "s", "g", True, "c")),
           "bench_b": _section("bench_b", Figure("b-old", 3, "s", "g", True, "c"))}
    new = {"bench_b": _section("bench_b", Figure("b-new", 4, "s", "g", False, "c"),
                               Figure("moved", 5, "s", "g", True, "c"))}
    merged = run_all.merge(old, new)
    names = {m: [f.name for f in s.figures] for m, s in merged.items()}
    # b's stale row is gone, a keeps its row, and a figure name appears only once
    assert names == {"bench_a": ["a1"], "bench_b": ["b-new", "moved"]}


def test_a_crashing_bench_becomes_a_failed_row(monkeypatch) -> None:
    module = types.ModuleType("bench.bench_broken")

    def run() -> list[Figure]:
        raise RuntimeError("meter unplugged")

    module.run = run
    monkeypatch.setitem(sys.modules, "bench.bench_broken", module)
    (fig,) = run_all.run_module("bench_broken")
    assert fig.passed is False and "meter unplugged" in fig.name
    assert fig.command == "python -m bench.run_all broken"


def test_bench_entry_and_default_command(monkeypatch) -> None:
    module = types.ModuleType("bench.bench_legacy")
    module.bench = lambda: [BenchResult("legacy", 1.5, "s", "≤ 2 s", True)]
    monkeypatch.setitem(sys.modules, "bench.bench_legacy", module)
    (fig,) = run_all.run_module("bench_legacy")
    assert fig == Figure("legacy", 1.5, "s", "≤ 2 s", True, "python -m bench.run_all legacy")


def test_subset_run_merges_into_the_existing_document(tmp_path, monkeypatch) -> None:
    doc = tmp_path / "performance.md"
    doc.write_text(_doc({"bench_other": _section("bench_other",
                                                 Figure("kept", 7, "ms", "g", True, "c"))}))
    module = types.ModuleType("bench.bench_zzz")
    module.run = lambda: [Figure("fresh", 2.0, "ms", "≤ 3 ms", True)]
    monkeypatch.setitem(sys.modules, "bench.bench_zzz", module)
    monkeypatch.setattr(run_all, "DOC", doc)
    monkeypatch.setattr(run_all, "modules", lambda argv: ["bench_zzz"])
    assert run_all.main(["zzz"]) == 0
    parsed = run_all.parse(doc.read_text())
    assert [f.name for f in parsed["bench_other"].figures] == ["kept"]
    assert [f.name for f in parsed["bench_zzz"].figures] == ["fresh"]
    assert "python -m bench.run_all zzz" in doc.read_text()


def test_unknown_bench_name_is_refused() -> None:
    with pytest.raises(SystemExit, match="no such bench"):
        run_all.modules(["does_not_exist"])
    assert "bench_metrics" in run_all.modules([])
