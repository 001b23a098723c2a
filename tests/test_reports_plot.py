"""The PDF charts reduce a dense series to a min/max envelope per pixel column: an 8 h phase at
1 Hz draws a few hundred vertices, and no excursion may disappear on the way."""

from __future__ import annotations

import numpy as np

from app.reports.charts import ops_chart
from app.reports.plot import SOLID_BLACK, Chart, envelope
from app.storage.opening import open_database
from app.storage.repository import load_run
from app.storage.synthetic import full_run
from app.storage.writer import RunWriter
from reportlab.graphics.shapes import Group, PolyLine, String

N, COLUMNS = 30_000, 240


def _buckets(x: np.ndarray, columns: int) -> np.ndarray:
    edges = np.linspace(x[0], x[-1], columns + 1)
    return np.clip(np.searchsorted(edges, x, side="right") - 1, 0, columns - 1)


def test_envelope_keeps_every_columns_min_and_max() -> None:
    rng = np.random.default_rng(7)
    x = np.arange(N, dtype=float)
    y = 100 + rng.normal(0, 1, N)
    y[12_345] = 180.0  # a one-sample spike
    y[20_001] = 20.0  # and a one-sample dip
    ex, ey = envelope(x, y, COLUMNS)
    assert len(ex) <= 2 * COLUMNS
    bucket = _buckets(x, COLUMNS)
    for b in range(COLUMNS):
        inside = (ex >= x[bucket == b][0]) & (ex <= x[bucket == b][-1])
        assert ey[inside].max() == y[bucket == b].max()
        assert ey[inside].min() == y[bucket == b].min()
    assert 180.0 in ey and 20.0 in ey


def test_envelope_keeps_a_spike_beside_an_excluded_sample() -> None:
    """An excluded sample (NaN, drawn as a gap) in the same pixel column as a spike must not
    take the spike with it; a column of excluded samples only stays a gap."""
    x = np.arange(N, dtype=float)
    y = np.full(N, 100.0)
    y[5_000] = 250.0
    y[5_001] = np.nan
    gap = _buckets(x, COLUMNS) == 100
    y[gap] = np.nan
    ex, ey = envelope(x, y, COLUMNS)
    assert np.nanmax(ey) == 250.0
    inside_gap = (ex >= x[gap][0]) & (ex <= x[gap][-1])
    assert inside_gap.any() and np.isnan(ey[inside_gap]).all()


def test_sparse_series_is_drawn_as_is() -> None:
    x, y = np.arange(50.0), np.arange(50.0) ** 2
    ex, ey = envelope(x, y, COLUMNS)
    assert np.array_equal(ex, x) and np.array_equal(ey, y)


def test_dense_power_line_draws_at_most_two_vertices_per_column() -> None:
    chart = Chart(480, 150, "power", "t", "W")
    x = np.arange(N, dtype=float)
    chart.line(x, 100 + np.sin(x), "power", SOLID_BLACK)
    lines = [n for group in chart.drawing().contents if isinstance(group, Group)
             for n in group.contents if isinstance(n, PolyLine)]
    vertices = sum(len(line.points) // 2 for line in lines)
    assert 0 < vertices <= 480


def _texts(node) -> list[str]:
    """Every string drawn in a reportlab drawing (legends, labels)."""
    if isinstance(node, String):
        return [node.text]
    return [t for child in getattr(node, "contents", []) for t in _texts(child)]


def test_each_load_host_reports_its_own_line_in_the_ops_chart(tmp_path) -> None:
    """The synthetic run's phases hold one slice from load host 127.0.0.1:8765 and one local
    slice: each gets its own 'engine reports' line, never one line zig-zagging between them."""
    database = open_database(f"sqlite:///{tmp_path / 'runs.db'}")
    writer = RunWriter(database)
    events = list(full_run())
    for e in events:
        writer(e)
    assert writer.flush(10)
    writer.close()
    run = load_run(database, events[0].run_id)
    database.close()
    phase = next(p for p in run.phases if run.attempt_intervals(p.index)
                 and run.attempt_intervals(p.index)[0].ops_unit)
    texts = _texts(ops_chart(run, phase, run.last_attempt(phase.index), 400, 200))
    assert "engine reports, 127.0.0.1:8765" in texts and "engine reports" in texts
