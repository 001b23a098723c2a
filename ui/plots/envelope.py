"""A live series drawn at a bounded number of points, whatever the run's length.

pyqtgraph's clip-to-view and peak downsampling bound what is *stroked*, but reach it through
work over every point a curve holds: each redraw hands over the whole buffer, its bounds are
scanned for the auto-range and the peak reduction reads every sample in view. At hour 24 with
four inputs that was ~50 ms a redraw on the GUI thread (issue 27) for 16 curves of 86,400
points. :class:`Envelope` keeps a min/max pyramid of its series instead — level ``k`` holds
one (first x, min, max, gap) block per ``BRANCH**k`` samples, built once as samples arrive —
and :meth:`Envelope.points` returns the view's part of the coarsest level that still gives
one or two blocks per pixel: a few thousand points at most, found by binary search. The
pyramid costs about half the series' memory; samples are never dropped (the series keeps them
all, and a zoomed view is drawn from them at full detail).
"""

from __future__ import annotations

import math

import numpy as np

from ui.plots.series import GrowableSeries

#: samples per block of the next level
BRANCH = 4


class _Level:
    """One level's blocks: first x, min and max of the finite values, and whether a gap
    (NaN) lies in the block, in arrays that double when full."""

    __slots__ = ("x", "lo", "hi", "gap", "n")

    def __init__(self) -> None:
        self.x = np.empty(256)
        self.lo = np.empty(256)
        self.hi = np.empty(256)
        self.gap = np.empty(256, dtype=bool)
        self.n = 0

    def add(self, x: np.ndarray, lo: np.ndarray, hi: np.ndarray, gap: np.ndarray) -> None:
        need = self.n + len(x)
        if need > len(self.x):
            size = max(need, 2 * len(self.x))
            for name in ("x", "lo", "hi", "gap"):
                old = getattr(self, name)
                grown = np.empty(size, dtype=old.dtype)
                grown[:self.n] = old[:self.n]
                setattr(self, name, grown)
        for name, values in (("x", x), ("lo", lo), ("hi", hi), ("gap", gap)):
            getattr(self, name)[self.n:need] = values
        self.n = need


class Envelope:
    """The min/max pyramid of one :class:`GrowableSeries` (whose x never decreases)."""

    def __init__(self, series: GrowableSeries) -> None:
        self.series = series
        self._levels: list[_Level] = []
        self._generation = -1

    def _update(self, depth: int) -> None:
        """Blocks completed since the last call, on every level up to ``depth``: work in
        proportion to the samples added since, never to those held."""
        if self._generation != self.series.generation:
            self._levels, self._generation = [], self.series.generation
        while len(self._levels) < depth:
            self._levels.append(_Level())
        x, y = self.series.view()
        below_n = len(x)
        for k, level in enumerate(self._levels):
            first = level.n * BRANCH
            complete = below_n // BRANCH
            if complete > level.n:
                last = complete * BRANCH
                if k == 0:
                    xs, lo, hi = x[first:last], y[first:last], y[first:last]
                    gap = np.isnan(lo)
                else:
                    child = self._levels[k - 1]
                    xs, lo, hi = (child.x[first:last], child.lo[first:last],
                                  child.hi[first:last])
                    gap = child.gap[first:last]
                lo, hi = lo.reshape(-1, BRANCH), hi.reshape(-1, BRANCH)
                level.add(xs[::BRANCH], np.fmin.reduce(lo, axis=1), np.fmax.reduce(hi, axis=1),
                          gap.reshape(-1, BRANCH).any(axis=1))
            below_n = level.n

    def points(self, x_lo: float, x_hi: float, pixels: int) -> tuple[np.ndarray, np.ndarray]:
        """The curve's points for the view ``x_lo … x_hi`` that is ``pixels`` wide: the raw
        samples (one beyond each edge, so the line reaches it) when there are at most two
        per pixel, else min and max of ½ to 2 blocks per pixel of of ``BRANCH**k`` samples — a gap
        inside a block
        ends its line, an all-NaN block is a gap. At most ~6 points per pixel plus the
        unfinished blocks at the end (under ``BRANCH`` per level)."""
        x, y = self.series.view()
        i0 = max(0, int(np.searchsorted(x, x_lo, "left")) - 1)
        i1 = min(len(x), int(np.searchsorted(x, x_hi, "right")) + 1)
        pixels = max(1, pixels)
        if i1 - i0 <= 2 * pixels:
            return x[i0:i1], y[i0:i1]
        depth = max(1, round(math.log((i1 - i0) / pixels, BRANCH)))  # ½–2 blocks/pixel
        self._update(depth)
        size = BRANCH ** depth
        top = self._levels[depth - 1]
        b0, b1 = i0 // size, min(top.n, -(-i1 // size))
        parts = [(top, b0, b1)]
        if -(-i1 // size) > top.n:  # the view reaches the unfinished tail: lower levels
            for k in range(depth - 1, 0, -1):
                parts.append((self._levels[k - 1], self._levels[k].n * BRANCH,
                              self._levels[k - 1].n))
            tail_from = self._levels[0].n * BRANCH
        else:
            tail_from = i1
        xs, ys = zip(*(_block_points(level, a, b) for level, a, b in parts))
        return (np.concatenate((*xs, x[tail_from:i1])), np.concatenate((*ys, y[tail_from:i1])))


def _block_points(level: _Level, a: int, b: int) -> tuple[np.ndarray, np.ndarray]:
    """Blocks ``a … b`` of ``level`` as three points each: (x, min), (x, max), then (x, max)
    again or, after a block with a gap, (x, NaN) so a connect-finite line breaks there."""
    x = level.x[a:b]
    hi = level.hi[a:b]
    third = np.where(level.gap[a:b], np.nan, hi)
    return np.repeat(x, 3), np.column_stack((level.lo[a:b], hi, third)).ravel()
