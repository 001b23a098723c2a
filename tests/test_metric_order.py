"""One metric order (issue 13): the report, the history list, compare and the run view's
metrics table all show the metrics in ``app.core.records.METRIC_ORDER``, and no other module keeps
its own list of metric names to sort by."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from app.core.records import METRIC_ORDER, PhaseInfo, PhaseKind, in_metric_order

pytest.importorskip("pytestqt")

from ui.run.metrics_table import MetricsTable

ROOT = Path(__file__).resolve().parent.parent


def test_the_emerald_metrics_come_first_in_report_order_the_rest_after_as_given() -> None:
    assert in_metric_order(["COM deduplication", "EP_MW1", "EP_RR", "EP_RI", "EP_RR"]) == [
        "EP_RI", "EP_RR", "EP_MW1", "COM deduplication"]
    assert in_metric_order(reversed(METRIC_ORDER)) == list(METRIC_ORDER)


def metric_name_lists(path: Path) -> list[int]:
    """Lines of tuple/list literals naming three or more EP_ metrics: an ordering of them."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.Tuple, ast.List)):
            names = [e.value for e in node.elts
                     if isinstance(e, ast.Constant) and isinstance(e.value, str)
                     and e.value.startswith("EP_")]
            if len(names) >= 3:
                found.append(node.lineno)
    return found


def test_no_module_but_records_keeps_a_metric_order() -> None:
    offenders = {str(p.relative_to(ROOT)): lines
                 for package in ("app", "ui") for p in sorted((ROOT / package).rglob("*.py"))
                 if (lines := metric_name_lists(p)) and p != ROOT / "app" / "core" / "records.py"}
    assert not offenders, f"use app.core.records.METRIC_ORDER / in_metric_order: {offenders}"


def test_the_run_views_metrics_table_follows_the_one_order(qtbot) -> None:
    phases = (PhaseInfo(0, PhaseKind.ACTIVE, "MW1", "EP_MW1", 60.0, 0, 1),
              PhaseInfo(1, PhaseKind.ACTIVE, "RR", "EP_RR", 60.0, 0, 1),
              PhaseInfo(2, PhaseKind.READY_IDLE, "Ready idle", None, 60.0),
              PhaseInfo(3, PhaseKind.COM_CHECK, "COM deduplication", "COM-deduplication", 60.0))
    table = MetricsTable()
    qtbot.addWidget(table)
    table.plan(None, phases)
    assert [row[0] for row in table.rows()] == ["EP_RI", "EP_RR", "EP_MW1", "COM deduplication"]
