"""A live curve's points come from its series' min/max pyramid (ui/plots/envelope.py, issue 27):
bounded by the view's pixels whatever the series holds, never hiding a peak or a gap, and
the same whether the series grew in one piece or sample by sample."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings, strategies as st

from ui.plots.envelope import BRANCH, Envelope
from ui.plots.series import GrowableSeries


def _series(n: int, seed: int, gaps: int) -> GrowableSeries:
    rng = np.random.default_rng(seed)
    y = np.cumsum(rng.normal(0, 1, n))
    y[rng.integers(0, n, gaps)] = np.nan
    series = GrowableSeries()
    series.extend(np.arange(n, dtype=float), y)
    return series


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 20_000), seed=st.integers(0, 1000), gaps=st.integers(0, 5),
       lo=st.floats(-100, 20_000), span=st.floats(1, 30_000), pixels=st.integers(1, 1500))
def test_a_views_points_are_bounded_and_keep_every_peak(n, seed, gaps, lo, span,
                                                        pixels) -> None:
    series = _series(n, seed, gaps)
    x, y = series.view()
    px, py = Envelope(series).points(lo, lo + span, pixels)
    levels = math.ceil(math.log(max(n, 2), BRANCH))
    assert len(px) <= 6 * pixels + 3 * BRANCH * levels + 2
    assert np.all(np.diff(px) >= 0)
    shown = (x >= lo) & (x <= lo + span) & ~np.isnan(y)
    if shown.any():  # what the view holds lies within what is drawn: no peak is cut
        assert np.nanmin(py) <= y[shown].min() and np.nanmax(py) >= y[shown].max()
    drawn = py[~np.isnan(py)]
    assert np.isin(drawn, y).all()  # every drawn value is a reading, none is made up
    if np.isnan(y[(x >= lo) & (x <= lo + span)]).any():
        assert np.isnan(py).any()  # a gap in view stays a gap


def test_a_series_grown_sample_by_sample_draws_as_one_grown_at_once() -> None:
    whole = _series(5000, 7, 3)
    x, y = whole.view()
    grown = GrowableSeries()
    envelope = Envelope(grown)
    for i in range(0, 5000, 37):
        grown.extend(x[i:i + 37], y[i:i + 37])
        envelope.points(-math.inf, math.inf, 200)  # the pyramid builds as the data arrive
    for view in ((-math.inf, math.inf), (100.0, 4321.0), (4990.0, 6000.0)):
        got, want = envelope.points(*view, 200), Envelope(whole).points(*view, 200)
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])


def test_a_cleared_series_forgets_its_pyramid() -> None:
    series = _series(50_000, 1, 0)
    envelope = Envelope(series)
    envelope.points(-math.inf, math.inf, 100)
    series.clear()
    series.extend(np.arange(10.0), np.full(10, 5.0))
    assert list(envelope.points(-math.inf, math.inf, 100)[1]) == [5.0] * 10
